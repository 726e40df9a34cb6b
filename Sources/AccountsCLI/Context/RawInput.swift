import FoundationEssentials
import Glibc

/// The command line and the environment as the system gave them: bytes, which Swift's strings
/// show with U+FFFD where they are not UTF-8.
enum RawInput {
  /// The bytes of the argument that reads as `value` (or as `--name=value`), when they are not
  /// UTF-8; nil when `value` came from UTF-8 (or from no argument).
  static func undecodableArgument(_ value: String) -> [UInt8]? {
    guard value.unicodeScalars.contains("\u{FFFD}") else { return nil }
    for index in 1..<Int(CommandLine.argc) {
      guard let pointer = CommandLine.unsafeArgv[index] else { continue }
      let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map {
        UInt8(bitPattern: $0)
      }
      guard String(validating: bytes, as: UTF8.self) == nil else { continue }
      let text = String(decoding: bytes, as: UTF8.self)
      if text == value { return bytes }
      if text.hasPrefix("--"), text.hasSuffix("=" + value),
        let equals = bytes.firstIndex(of: UInt8(ascii: "="))
      {
        return Array(bytes[(equals + 1)...])
      }
    }
    return nil
  }

  /// The bytes of the environment variable `name`, when they are not UTF-8.
  static func undecodableVariable(_ name: String) -> [UInt8]? {
    guard let pointer = getenv(name) else { return nil }
    let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map {
      UInt8(bitPattern: $0)
    }
    return String(validating: bytes, as: UTF8.self) == nil ? bytes : nil
  }
}
