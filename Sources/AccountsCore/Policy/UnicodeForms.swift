import CUTF8Proc
import DynamicLibrary

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
/// in every form already and is returned as it is, without a call; the library is opened the
/// first time another string is normalized (a command that never sees one, `status` or a login
/// with an ASCII name and password, never loads it), and a missing library is said then, as
/// `.unicodeUnavailable`.
public struct UnicodeForms: Sendable {
  /// The libraries tried: Debian 12's libutf8proc2 (what this project builds and tests with),
  /// then Debian 13's libutf8proc3 (`utf8proc_map` is the same in both).
  static let sonames = ["libutf8proc.so.2", "libutf8proc.so.3"]

  private static let library = LazyLibrary(sonames: sonames) {
    library throws(DynamicLibrary.Failure) in try UnicodeForms(library)
  }

  private let map: accounts_utf8proc_map_fn

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    map = try library.function("utf8proc_map", as: accounts_utf8proc_map_fn.self)
  }

  /// The forms, the library opened on first use; throws `.unicodeUnavailable` when it cannot
  /// be.
  public static func loaded() throws(AccountsError) -> UnicodeForms {
    do throws(DynamicLibrary.Failure) {
      return try library.functions()
    } catch {
      throw .unicodeUnavailable(library: error.library, reason: error.reason)
    }
  }

  /// Canonical composition (NFC).
  public static func nfc(_ text: String) throws(AccountsError) -> String {
    isASCII(text) ? text : try loaded().nfc(text)
  }

  /// Compatibility composition (NFKC): full-width letters, ligatures and the like replaced by
  /// their plain forms, then composed.
  public static func nfkc(_ text: String) throws(AccountsError) -> String {
    isASCII(text) ? text : try loaded().nfkc(text)
  }

  /// `text` in NFC.
  public func nfc(_ text: String) -> String { normalized(text, compatibility: false) }

  /// `text` in NFKC.
  public func nfkc(_ text: String) -> String { normalized(text, compatibility: true) }

  static func isASCII(_ text: String) -> Bool { text.utf8.allSatisfy { $0 < 0x80 } }

  private func normalized(_ text: String, compatibility: Bool) -> String {
    if Self.isASCII(text) { return text }
    var options = UTF8PROC_STABLE.rawValue | UTF8PROC_COMPOSE.rawValue
    if compatibility { options |= UTF8PROC_COMPAT.rawValue }
    var source = text
    return source.withUTF8 { bytes in
      var mapped: UnsafeMutablePointer<utf8proc_uint8_t>? = nil
      let count = map(
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
