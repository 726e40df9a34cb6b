/// The elements of a JSON document that is one list (`[…, …]`), read from an import's input a
/// block at a time and handed on one by one, each as its own bytes: memory holds one element
/// and a block, never the document.
///
/// Hand-written because Foundation has no streaming JSON parser: JSONDecoder takes a whole document (a Django dump of a million users made about 60 times
/// its size in objects). This reader only finds where each element of the top-level list
/// begins and ends (strings, their escapes, and the nesting of objects and lists); each
/// element is then decoded alone (`JSONValue`, through JSONDecoder), which checks everything
/// else.
struct JSONListReader {
  /// One element of the list: its bytes, and the line of the file it starts on.
  struct Element {
    var bytes: [UInt8]
    var line: Int
    /// True when the element is longer than `JSONListReader.elementLimit` (its bytes are
    /// then cut there).
    var isTooLong = false
  }

  /// Why the list cannot be read on.
  enum Failure: Error, Equatable {
    /// The document does not start with `[`.
    case notAList
    /// Something other than `,` or `]` after an element, or the document ends before the
    /// list does, on `line`.
    case broken(line: Int)
    /// More than white space after the list's `]`, on `line`.
    case trailing(line: Int)
  }

  /// The longest element kept (a Django user is well under 1 KiB).
  static let elementLimit = 1 << 20

  private let input: any ImportInput
  private var block: [UInt8] = []
  private var index = 0
  private var atEnd = false
  /// The line the next byte is on.
  private(set) var line = 1
  private var started = false
  private var finished = false

  init(input: any ImportInput) { self.input = input }

  /// The next element; nil after the list's `]` (and nothing but white space after it).
  mutating func next() throws(AccountsError) -> Result<Element, Failure>? {
    if finished { return nil }
    if !started {
      started = true
      guard try skipSpace() == UInt8(ascii: "[") else { return fail(.notAList) }
      index += 1
      if try skipSpace() == UInt8(ascii: "]") {
        index += 1
        return try end()
      }
    } else {
      switch try skipSpace() {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "]"):
        index += 1
        return try end()
      default:
        return fail(.broken(line: line))
      }
    }
    guard let first = try skipSpace(), first != UInt8(ascii: "]") else {
      return fail(.broken(line: line))
    }
    return try element()
  }

  /// After the list's `]`: only white space may follow.
  private mutating func end() throws(AccountsError) -> Result<Element, Failure>? {
    if try skipSpace() != nil { return fail(.trailing(line: line)) }
    finished = true
    return nil
  }

  private mutating func fail(_ failure: Failure) -> Result<Element, Failure>? {
    finished = true
    return .failure(failure)
  }

  /// Reads one element, from its first byte (not white space) to its last.
  private mutating func element() throws(AccountsError) -> Result<Element, Failure>? {
    var element = Element(bytes: [], line: line)
    var depth = 0
    var inString = false
    var escaped = false
    while let byte = try peek() {
      if !inString && depth == 0 && !element.bytes.isEmpty
        && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || Self.isSpace(byte))
      {
        // The end of a number, `true`, `false` or `null` (the only elements that end so).
        return .success(element)
      }
      index += 1
      if byte == UInt8(ascii: "\n") { line += 1 }
      if element.bytes.count < Self.elementLimit {
        element.bytes.append(byte)
      } else {
        element.isTooLong = true
      }
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
          if depth == 0 { return .success(element) }
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth <= 0 { return .success(element) }
      default: break
      }
    }
    // The document ended inside the element, or right after a scalar one (no `]`).
    return depth == 0 && !inString && !element.bytes.isEmpty
      ? .success(element) : fail(.broken(line: line))
  }

  /// Moves past white space; returns the next byte (not consumed), nil at the end.
  private mutating func skipSpace() throws(AccountsError) -> UInt8? {
    while let byte = try peek() {
      guard Self.isSpace(byte) else { return byte }
      if byte == UInt8(ascii: "\n") { line += 1 }
      index += 1
    }
    return nil
  }

  /// The next byte, not consumed; nil at the end of the input.
  private mutating func peek() throws(AccountsError) -> UInt8? {
    while index >= block.count {
      if atEnd { return nil }
      guard let more = try input.nextBlock() else {
        atEnd = true
        return nil
      }
      block = more
      index = 0
    }
    return block[index]
  }

  /// JSON's white space.
  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }
}
