/// Base16 (RFC 4648 §8) in lowercase, as the key file and the session file hold bytes.
public enum Hex {
  /// `bytes` as lowercase hex digits.
  public static func encode(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0xF)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The bytes of lowercase hex `text`; nil when it is not that.
  public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ digit: UInt8) -> UInt8? {
      switch digit {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
      default: return nil
      }
    }
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let high = value(digits[index]), let low = value(digits[index + 1]) else {
        return nil
      }
      result.append(high << 4 | low)
    }
    return result
  }
}
