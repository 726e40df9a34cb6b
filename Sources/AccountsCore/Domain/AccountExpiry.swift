import FoundationEssentials

/// What `--expires` sets: a moment from which the account cannot log in, or never.
public enum AccountExpiry: Equatable, Sendable {
  /// The account never expires (`never`).
  case never
  /// The account expires at this moment.
  case at(Date)

  /// The moment, nil for `never`.
  public var date: Date? {
    if case .at(let date) = self { return date }
    return nil
  }

  /// Reads `never`, a date `YYYY-MM-DD` (00:00 UTC of that day, as shadow's expire field counts
  /// UTC days) or an RFC 3339 time with its zone (`2026-12-31T18:00:00Z`,
  /// `2026-12-31T19:00:00.5+01:00`; kept to the millisecond); nil for anything else, an
  /// impossible date or time included.
  public init?(parsing text: String) {
    if text == "never" {
      self = .never
      return
    }
    let bytes = Array(text.utf8)
    if bytes.count == 10 {
      guard let date = Timestamp.date(from: text + "T00:00:00.000Z") else { return nil }
      self = .at(date)
      return
    }
    guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T") else { return nil }
    let base = String(decoding: bytes[0..<19], as: UTF8.self)
    var index = 19
    var millis = ""
    if bytes[index] == UInt8(ascii: ".") {
      index += 1
      let start = index
      while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
      guard index > start else { return nil }
      millis = String(decoding: bytes[start..<min(index, start + 3)], as: UTF8.self)
    }
    millis += String(repeating: "0", count: 3 - millis.count)
    guard let local = Timestamp.date(from: base + "." + millis + "Z"),
      let offset = Self.offset(bytes[index...])
    else { return nil }
    self = .at(local.addingTimeInterval(-offset))
  }

  /// The zone's offset east of UTC in seconds: `Z`, or `+HH:MM` / `-HH:MM`.
  private static func offset(_ zone: ArraySlice<UInt8>) -> TimeInterval? {
    let zone = Array(zone)
    if zone == [UInt8(ascii: "Z")] { return 0 }
    guard zone.count == 6, zone[0] == UInt8(ascii: "+") || zone[0] == UInt8(ascii: "-"),
      zone[3] == UInt8(ascii: ":"), [1, 2, 4, 5].allSatisfy({ isDigit(zone[$0]) })
    else { return nil }
    func digit(_ index: Int) -> Int { Int(zone[index] - UInt8(ascii: "0")) }
    let hours = digit(1) * 10 + digit(2)
    let minutes = digit(4) * 10 + digit(5)
    guard hours < 24, minutes < 60 else { return nil }
    let seconds = TimeInterval(hours * 3600 + minutes * 60)
    return zone[0] == UInt8(ascii: "-") ? -seconds : seconds
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }
}
