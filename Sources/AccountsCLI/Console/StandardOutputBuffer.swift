import AccountsCore
import FoundationEssentials
import Glibc

/// Standard output in 64 KiB blocks: a million lines cost a few hundred `write` calls, not a
/// million.
final class StandardOutputBuffer: BulkOutput {
  private static let blockSize = 65536
  private var buffer: [UInt8] = []

  init() { buffer.reserveCapacity(Self.blockSize + 4096) }

  func line(_ text: String) {
    buffer.append(contentsOf: Escaping.visible(text).utf8)
    buffer.append(UInt8(ascii: "\n"))
    if buffer.count >= Self.blockSize { flush() }
  }

  func escapedLine(_ body: (inout [UInt8]) -> Void) {
    body(&buffer)
    buffer.append(UInt8(ascii: "\n"))
    if buffer.count >= Self.blockSize { flush() }
  }

  func flush() {
    guard !buffer.isEmpty else { return }
    buffer.withUnsafeBytes { StandardStreams.write(bytes: $0, to: STDOUT_FILENO) }
    buffer.removeAll(keepingCapacity: true)
  }
}
