import CQRencode
import DynamicLibrary

/// A QR code's modules, made by the system's libqrencode (no QR encoder is written here).
public struct QRCode: Equatable, Sendable {
  /// Modules per side.
  public let size: Int
  /// The modules, row by row; true for dark.
  public let modules: [Bool]

  /// The library opened, as Debian's and Ubuntu's libqrencode4 package installs it.
  public static let soname = "libqrencode.so.4"

  /// Encodes `text` (8-bit mode, case kept, error correction M, the smallest version that fits).
  ///
  /// Opens libqrencode on first use; throws why when it cannot be opened, lacks a function or
  /// cannot encode the text.
  public static func encode(_ text: String) throws(DynamicLibrary.Failure) -> QRCode {
    try LibQRencode.library.functions().encode(text)
  }

  /// True for the dark module at column `x`, row `y`; outside the code (the quiet zone), light.
  public func isDark(_ x: Int, _ y: Int) -> Bool {
    guard x >= 0, y >= 0, x < size, y < size else { return false }
    return modules[y * size + x]
  }

  /// The code as terminal lines: each character is two modules, one above the other (`▀`
  /// drawn in the upper module's colour on the lower one's), with explicit black and white so
  /// that it scans on dark and light terminals alike, and a quiet zone of `quietZone` modules.
  ///
  /// The lines hold SGR colour sequences: print them as they are, at a terminal only.
  public func terminalLines(quietZone: Int = 4) -> [String] {
    let escape = "\u{1B}["
    let first = -quietZone
    let last = size + quietZone
    var lines: [String] = []
    for top in stride(from: first, to: last, by: 2) {
      var line = ""
      var current: (Bool, Bool)?
      for x in first..<last {
        let colours = (isDark(x, top), top + 1 < last && isDark(x, top + 1))
        if current.map({ $0 != colours }) ?? true {
          // 30/40 black, 97/107 bright white: foreground paints the upper half.
          line += "\(escape)\(colours.0 ? 30 : 97);\(colours.1 ? 40 : 107)m"
          current = colours
        }
        line += "▀"
      }
      lines.append(line + "\(escape)0m")
    }
    return lines
  }
}

/// The two functions of the system's libqrencode that accounts calls.
///
/// Opened the first time a QR code is shown (only second-factor enrollment needs it; nothing else
/// pays for it). Their types come from its header (CQRencode's shim.h).
struct LibQRencode: Sendable {
  static let library = LazyLibrary(sonames: [QRCode.soname]) {
    library throws(DynamicLibrary.Failure) in try LibQRencode(library)
  }

  private let encodeString: accounts_QRcode_encodeString_fn
  private let free: accounts_QRcode_free_fn

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    encodeString = try library.function(
      "QRcode_encodeString", as: accounts_QRcode_encodeString_fn.self)
    free = try library.function("QRcode_free", as: accounts_QRcode_free_fn.self)
  }

  func encode(_ text: String) throws(DynamicLibrary.Failure) -> QRCode {
    let code = text.withCString { encodeString($0, 0, QR_ECLEVEL_M, QR_MODE_8, 1) }
    guard let code else {
      throw DynamicLibrary.Failure(library: QRCode.soname, reason: "it could not encode the text")
    }
    defer { free(code) }
    let size = Int(code.pointee.width)
    let modules = (0..<(size * size)).map { code.pointee.data[$0] & 1 == 1 }
    return QRCode(size: size, modules: modules)
  }
}
