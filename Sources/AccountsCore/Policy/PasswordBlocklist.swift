import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a blocklist's source cannot be read.
public enum BlocklistSourceFailure: Error, Equatable, Sendable {
  /// It cannot be opened (missing, not allowed).
  case cannotOpen
  /// It is not a regular file (a device, a FIFO, a directory).
  case notRegularFile
}

/// Where a blocklist's bytes come from: the command line opens the file and hands it over, as
/// the core never touches a file.
public protocol BlocklistSource: Sendable {
  /// Where the list is, as messages name it.
  var path: String { get }
  /// Opens the list for reading, refusing what is not a regular file before reading anything.
  func open() throws(BlocklistSourceFailure) -> any BlocklistReader
}

/// An opened blocklist, read from the start in chunks; closed when released.
public protocol BlocklistReader: AnyObject {
  /// Reads the next bytes into `buffer`: how many, 0 at the end, nil when reading fails.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> Int?
}

/// The administrator's list of forbidden passwords: a text file, one password per line.
///
/// Named by the `ACCOUNTS_PASSWORD_BLOCKLIST` environment variable. A line matches when, without
/// a trailing `\r`, NFKC-normalized and lowercased, it equals the password normalized the same
/// way; a line that is not UTF-8 never matches; the last line counts without a newline.
///
/// Only a regular file is read: the source refuses a device, a FIFO or a directory before
/// anything is read. It is read once, in linear time, through one fixed buffer, so memory stays
/// bounded whatever its size; a line longer than ``maximumLineLength`` is skipped as it streams
/// past.
public struct PasswordBlocklist: Sendable {
  /// The longest line, in bytes before its newline, that is compared; longer lines never match.
  ///
  /// A password has at most 1,024 characters after NFKC, and NFKC makes one character out of at
  /// most four code points of at most four bytes each, so a line that normalizes to a password
  /// has at most 16 KiB. The bound leaves four times that, for lowercasing, which can lengthen a
  /// character (`İ` becomes `i` and a combining dot).
  public static let maximumLineLength = 64 * 1024

  /// Where the list comes from.
  public let source: any BlocklistSource

  /// The list's path, as messages name it.
  public var path: String { source.path }

  /// A blocklist read from `source`.
  public init(source: any BlocklistSource) {
    self.source = source
  }

  /// Checks that the list can be opened and is a regular file, without reading it.
  ///
  /// Lets a flow refuse an unusable blocklist before it changes anything.
  public func checkReadable() throws(AccountsError) {
    _ = try open()
  }

  /// True when `password` is a line of the list.
  public func contains(_ password: String) throws(AccountsError) -> Bool {
    var reader = LineReader(file: try open(), matcher: try LineMatcher(password))
    defer { reader.deallocate() }
    guard let found = reader.findMatch() else {
      throw .blocklistUnreadable(path: path, reason: "reading it failed")
    }
    return found
  }

  private func open() throws(AccountsError) -> any BlocklistReader {
    do throws(BlocklistSourceFailure) {
      return try source.open()
    } catch {
      switch error {
      case .cannotOpen:
        throw .blocklistUnreadable(path: path, reason: "it cannot be opened")
      case .notRegularFile:
        throw .blocklistUnreadable(path: path, reason: "it is not a regular file")
      }
    }
  }
}

/// Compares lines of the blocklist with one password.
private struct LineMatcher {
  /// The password, NFKC-normalized and lowercased: what a line must equal after the same.
  private let wanted: String
  /// The bytes an all-ASCII line must have after ASCII lowercasing, or nil when no all-ASCII
  /// line can equal `wanted`.
  private let wantedASCII: [UInt8]?
  /// utf8proc, for the lines beyond ASCII (opened here, as setting a password opens zxcvbn).
  private let forms: UnicodeForms

  init(_ password: String) throws(AccountsError) {
    forms = try UnicodeForms.loaded()
    wanted = PasswordRules.normalized(password, forms: forms).lowercased()
    // String equality is canonical equivalence, so an ASCII line equals `wanted` exactly when it
    // equals wanted's NFC form byte for byte, and only if that form is ASCII. A line never holds
    // a newline, so a password with one matches nothing.
    let canonical = forms.nfc(wanted).utf8
    wantedASCII =
      canonical.allSatisfy { $0 < 0x80 } && !canonical.contains(newline) ? Array(canonical) : nil
  }

  /// The length of an all-ASCII line that can match (without a final `\r`), or nil when none
  /// can.
  var asciiLength: Int? { wantedASCII?.count }

  /// True when `line` (without its newline) matches.
  func matches(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
    guard line.count <= PasswordBlocklist.maximumLineLength else { return false }
    if line.allSatisfy({ $0 < 0x80 }) { return matchesASCII(line) }
    // A line with other characters may still normalize to an ASCII password (fullwidth letters,
    // the "ﬁ" ligature, the Kelvin sign), so it takes the full path.
    let text = String(validating: Self.droppingReturn(line), as: UTF8.self)
    return text.map { PasswordRules.normalized($0, forms: forms).lowercased() == wanted } ?? false
  }

  /// True when `line` (without its newline), if all ASCII, matches; false for any other line.
  func matchesASCII(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
    guard line.count <= PasswordBlocklist.maximumLineLength, let wantedASCII else { return false }
    let line = Self.droppingReturn(line)
    guard line.count == wantedASCII.count else { return false }
    // NFKC leaves ASCII text as it is and lowercasing it is ASCII lowercasing; a byte that is
    // not ASCII never equals an ASCII one.
    return wantedASCII.withUnsafeBufferPointer { wanted in
      for index in 0..<line.count where Self.asciiLowercased(line[index]) != wanted[index] {
        return false
      }
      return true
    }
  }

  private static func droppingReturn(_ line: UnsafeBufferPointer<UInt8>)
    -> UnsafeBufferPointer<UInt8>
  {
    line.last == UInt8(ascii: "\r") ? UnsafeBufferPointer(rebasing: line.dropLast()) : line
  }

  private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
    byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
  }
}

/// The byte that ends a line.
private let newline = UInt8(ascii: "\n")

/// Reads a file through one fixed buffer and looks for a line that matches.
///
/// Lines are not visited one by one. In each buffer of complete lines, an ASCII line that can
/// match lies between two newlines the password's length apart (plus one for a final `\r`), and
/// such pairs are found eight bytes at a time; the rare lines with other bytes are found by their
/// first such byte. Every byte is read a bounded number of times, and only the partial line at
/// the end of the buffer (at most ``PasswordBlocklist/maximumLineLength`` bytes) is ever moved.
private struct LineReader {
  /// Room for one line of the longest length compared and at least as much again to read into.
  private static let capacity = 2 * PasswordBlocklist.maximumLineLength

  private let file: any BlocklistReader
  private let matcher: LineMatcher
  private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
  /// Where the first line not yet checked begins.
  private var start = 0
  /// Where the bytes read end.
  ///
  /// Between reads, the bytes from `start` to here hold no newline.
  private var end = 0
  /// True while the rest of an over-long line is being dropped.
  private var skipping = false

  init(file: any BlocklistReader, matcher: LineMatcher) {
    self.file = file
    self.matcher = matcher
  }

  /// Frees the buffer.
  func deallocate() {
    buffer.deallocate()
  }

  /// True when a line matches, false at the end of the file without one, nil when reading fails.
  mutating func findMatch() -> Bool? {
    while true {
      let previousEnd = end
      let room = UnsafeMutableRawBufferPointer(start: buffer + end, count: Self.capacity - end)
      guard let count = file.read(into: room) else { return nil }
      if count == 0 { break }
      end += count
      if matchesCompleteLine(searchingFrom: previousEnd) { return true }
      if skipping || end - start > PasswordBlocklist.maximumLineLength {
        // Too long to match: drop what is here and the rest of the line as it arrives.
        skipping = true
        start = end
      }
      compact()
    }
    return !skipping && start < end && matcher.matches(bytes(from: start, to: end))
  }

  /// Checks the lines that newlines at or after `position` complete, and moves `start` past
  /// them; true when one matches.
  private mutating func matchesCompleteLine(searchingFrom position: Int) -> Bool {
    guard let first = firstNewline(from: position, to: end) else { return false }
    var last = end - 1
    while buffer[last] != newline { last -= 1 }
    let firstLine = bytes(from: start, to: first)
    start = last + 1
    if skipping {
      skipping = false
    } else if matcher.matches(firstLine) {
      return true
    }
    // Every line between the newlines at `first` and `last` is complete.
    guard let length = matcher.asciiLength else {
      return matchesOtherLine(between: first, and: last)
    }
    var sawOtherBytes = false
    if matchesASCIILine(between: first, and: last, length: length, sawOtherBytes: &sawOtherBytes) {
      return true
    }
    return sawOtherBytes && matchesOtherLine(between: first, and: last)
  }

  /// True when an all-ASCII line of `length` bytes (without a final `\r`) between the newlines
  /// at `first` and `last` matches; `sawOtherBytes` is set when a byte there is not ASCII.
  private func matchesASCIILine(
    between first: Int, and last: Int, length: Int, sawOtherBytes: inout Bool
  ) -> Bool {
    // Such a line begins after a newline and ends at the newline `gap` bytes on, or one
    // further after a `\r`.
    let gap = length + 1
    // A local copy stays in a register.
    let bytes = buffer
    var position = first
    var seen: UInt64 = 0
    // Eight positions at a time, with no branch per line: most lines are short and a branch
    // per line costs more than the search. Below `limit`, the eight bytes at the position and
    // the nine `gap` bytes on are all in the buffer, so the index arithmetic cannot overflow.
    let limit = min(last, end - gap - 8)
    while position < limit {
      let word = Self.word(at: bytes + position)
      seen |= word
      let closings = Self.newlines(in: Self.word(at: bytes + (position &+ gap)))
      // The newlines one byte further on: the same bits a byte lower, and the ninth byte.
      let ninth: UInt64 = bytes[position &+ gap &+ 8] == newline ? 1 << 63 : 0
      var pairs = Self.newlines(in: word) & (closings | closings >> 8 | ninth)
      while pairs != 0 {
        let opening = position &+ pairs.trailingZeroBitCount / 8
        if matchesASCIILine(after: opening, gap: gap, last: last) { return true }
        pairs &= pairs &- 1
      }
      position &+= 8
    }
    while position < last {
      seen |= UInt64(bytes[position])
      if bytes[position] == newline && matchesASCIILine(after: position, gap: gap, last: last) {
        return true
      }
      position += 1
    }
    sawOtherBytes = seen & 0x8080_8080_8080_8080 != 0
    return false
  }

  /// True when the line after the newline at `opening` ends at the newline `gap` bytes on, or
  /// one further, at or before `last`, and matches.
  private func matchesASCIILine(after opening: Int, gap: Int, last: Int) -> Bool {
    var lineEnd = opening + gap
    guard lineEnd <= last else { return false }
    if buffer[lineEnd] != newline {
      lineEnd += 1
      guard lineEnd <= last, buffer[lineEnd] == newline else { return false }
    }
    // A newline between the two makes this no line, and it cannot equal the password.
    return matcher.matchesASCII(bytes(from: opening + 1, to: lineEnd))
  }

  /// True when a line between the newlines at `first` and `last` that holds a byte other than
  /// ASCII matches.
  private func matchesOtherLine(between first: Int, and last: Int) -> Bool {
    var position = first + 1
    while position < last {
      let other = Self.firstNonASCII(buffer, from: position, to: last)
      guard other < last, let lineEnd = firstNewline(from: other, to: last + 1) else {
        return false
      }
      var lineStart = other
      while buffer[lineStart - 1] != newline { lineStart -= 1 }
      if matcher.matches(bytes(from: lineStart, to: lineEnd)) { return true }
      position = lineEnd + 1
    }
    return false
  }

  /// Moves the partial line to the front of the buffer.
  private mutating func compact() {
    guard start > 0 else { return }
    let kept = end - start
    if kept > 0 { memmove(buffer, buffer + start, kept) }
    end = kept
    start = 0
  }

  private func bytes(from lineStart: Int, to lineEnd: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: buffer + lineStart, count: lineEnd - lineStart)
  }

  /// The position of the first newline from `from` to `to`, or nil.
  private func firstNewline(from: Int, to: Int) -> Int? {
    guard from < to, let found = memchr(buffer + from, Int32(newline), to - from) else {
      return nil
    }
    return UnsafeRawPointer(buffer).distance(to: UnsafeRawPointer(found))
  }

  /// The eight bytes at `bytes`, the first in the lowest bits.
  private static func word(at bytes: UnsafeMutablePointer<UInt8>) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(bytes).loadUnaligned(as: UInt64.self))
  }

  /// The high bit of each byte of `word` that is a newline.
  private static func newlines(in word: UInt64) -> UInt64 {
    let differences = word ^ 0x0A0A_0A0A_0A0A_0A0A
    let low = UInt64(0x7F7F_7F7F_7F7F_7F7F)
    // Exact for every byte (no carry crosses a byte): the high bit stays clear when the byte
    // differs from a newline in any bit.
    return ~(((differences & low) &+ low) | differences | low)
  }

  /// The position of the first byte from `from` to `to` that is not ASCII, or `to`.
  private static func firstNonASCII(_ bytes: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
    var index = from
    // Eight bytes at a time: one high bit among them is a byte that is not ASCII.
    while index + 8 <= to {
      let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
      if word & 0x8080_8080_8080_8080 != 0 { break }
      index += 8
    }
    while index < to, bytes[index] < 0x80 { index += 1 }
    return index
  }
}
