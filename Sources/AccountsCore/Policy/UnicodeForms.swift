import CUTF8Proc

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unicode's normalization forms, as RFC 8265 uses them for user names and passwords.
///
/// Made by utf8proc (Debian's libutf8proc, the library Julia and PostgreSQL's tools normalize
/// with), not Foundation: Foundation's `precomposedString…Mapping` is in its
/// internationalization part, which brings in ICU and its 34 MB of data. An all-ASCII string is
/// in every form already and is returned as it is, without a call.
public enum UnicodeForms {
  /// Canonical composition (NFC).
  public static func nfc(_ text: String) -> String {
    normalized(text, compatibility: false)
  }

  /// Compatibility composition (NFKC): full-width letters, ligatures and the like replaced by
  /// their plain forms, then composed.
  public static func nfkc(_ text: String) -> String {
    normalized(text, compatibility: true)
  }

  private static func normalized(_ text: String, compatibility: Bool) -> String {
    if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
    var options = UTF8PROC_STABLE.rawValue | UTF8PROC_COMPOSE.rawValue
    if compatibility { options |= UTF8PROC_COMPAT.rawValue }
    var source = text
    return source.withUTF8 { bytes in
      var mapped: UnsafeMutablePointer<utf8proc_uint8_t>? = nil
      let count = utf8proc_map(
        bytes.baseAddress, utf8proc_ssize_t(bytes.count), &mapped,
        utf8proc_option_t(rawValue: options))
      defer { free(mapped) }
      // A Swift string is valid UTF-8, so the only failure left is memory: the program cannot go
      // on then anyway, and a name or password compared unnormalized only fails to match.
      guard count >= 0, let mapped else { return String(decoding: bytes, as: UTF8.self) }
      return String(decoding: UnsafeBufferPointer(start: mapped, count: count), as: UTF8.self)
    }
  }
}
