import AccountsCore

/// A password blocklist held in memory, handed to the core a few bytes at a time (so lines
/// cross the chunks), or one that cannot be opened.
public struct BlocklistText: BlocklistSource {
  /// The name messages give it.
  public let path: String
  private let bytes: [UInt8]
  private let failure: BlocklistSourceFailure?

  /// A list of `text`.
  public init(_ text: String, path: String = "blocklist.txt") {
    self.path = path
    bytes = Array(text.utf8)
    failure = nil
  }

  /// A list at `path` that fails to open with `failure`.
  public init(failing failure: BlocklistSourceFailure, path: String) {
    self.path = path
    bytes = []
    self.failure = failure
  }

  /// The text from its start, or the failure.
  public func open() throws(BlocklistSourceFailure) -> any BlocklistReader {
    if let failure { throw failure }
    return Reader(bytes)
  }

  private final class Reader: BlocklistReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
      self.bytes = bytes
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
      let count = min(buffer.count, bytes.count - offset, 7)
      bytes[offset..<(offset + count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
      offset += count
      return count
    }
  }
}
