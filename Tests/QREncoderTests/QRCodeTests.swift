import AccountsTestSupport
import Foundation
import QREncoder
import Testing

/// The QR code a terminal shows, read back the way a camera would: Debian's `zbarimg` is the
/// oracle, on an image made from the printed characters and their colours.
@Suite("QR codes")
struct QRCodeTests {
  /// The printed lines back to pixels: each `▀` is the upper module in the foreground colour and
  /// the lower one in the background colour (SGR 30/97 and 40/107).
  func pixels(_ lines: [String]) -> [[Bool]] {
    var rows: [[Bool]] = []
    for line in lines {
      var upper: [Bool] = []
      var lower: [Bool] = []
      var foreground = false
      var background = false
      var scalars = line.unicodeScalars.makeIterator()
      while let scalar = scalars.next() {
        if scalar == "\u{1B}" {
          var sequence = ""
          while let next = scalars.next(), next != "m" { sequence.unicodeScalars.append(next) }
          for code in sequence.dropFirst().split(separator: ";").compactMap({ Int($0) }) {
            switch code {
            case 30: foreground = true
            case 97: foreground = false
            case 40: background = true
            case 107: background = false
            default: break
            }
          }
        } else if scalar == "▀" {
          upper.append(foreground)
          lower.append(background)
        } else {
          Issue.record("unexpected character \(scalar) in a QR line")
        }
      }
      rows.append(upper)
      rows.append(lower)
    }
    return rows
  }

  /// What `zbarimg` reads from the pixels, scaled up 6 times, as a PGM image.
  func decode(_ rows: [[Bool]]) throws -> String {
    let scale = 6
    let width = (rows.first?.count ?? 0) * scale
    var image = Array("P5\n\(width) \(rows.count * scale)\n255\n".utf8)
    for row in rows {
      let line = row.flatMap { dark in [UInt8](repeating: dark ? 0 : 255, count: scale) }
      for _ in 0..<scale { image += line }
    }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID()).pgm")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data(image).write(to: file)
    let (status, output) = try runTool("/usr/bin/zbarimg", ["--raw", "--quiet", file.path])
    #expect(status == 0)
    return output
  }

  /// An otpauth URI drawn for the terminal decodes to exactly that URI.
  @Test(arguments: [
    "otpauth://totp/accounts:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=accounts",
    "otpauth://totp/accounts:%C3%A9lodie.o-brien?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
      + "&issuer=accounts&algorithm=SHA1&digits=6&period=30",
  ])
  func decodesToTheURI(_ uri: String) throws {
    let code = try QRCode.encode(uri)
    let lines = code.terminalLines()
    #expect(lines.count == (code.size + 8 + 1) / 2)
    let rows = pixels(lines)
    #expect(rows.first?.count == code.size + 8)
    #expect(try decode(rows) == uri)
  }

  /// The quiet zone is light all round: four modules on every side.
  @Test func quietZone() throws {
    let code = try QRCode.encode("otpauth://totp/a?secret=AAAA")
    let rows = pixels(code.terminalLines())
    for row in rows.prefix(4) + rows.dropLast(rows.count % 2 == 0 ? 0 : 1).suffix(4) {
      #expect(!row.contains(true))
    }
    for row in rows { #expect(!row.prefix(4).contains(true) && !row.suffix(4).contains(true)) }
  }
}
