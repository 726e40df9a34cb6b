import AccountsCore
import ArgumentParser
import Foundation

extension ImportFormat: ExpressibleByArgument {}
extension ExportFormat: ExpressibleByArgument {}

extension AccountsCommand {
  /// `accounts user import FILE`.
  struct UserImport: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "import",
      abstract: "Import accounts from Django, /etc/shadow, htpasswd or CSV, their hashes kept.",
      discussion: """
        All or nothing, in one transaction: every name, full name, e-mail and hash is checked \
        first, and any problem (each said with its line or Django entry) imports nothing: \
        exit 2 when the file has a problem of its own, exit 1 when its only problems are names \
        the store already has. Hashes kept: pbkdf2_sha256 (Django), yescrypt, SHA-512/256-crypt and bcrypt \
        (replaced by PBKDF2 at the first login), each in its scheme's form and within a cost \
        ceiling that keeps every login to seconds: bcrypt cost 17 (htpasswd -B's highest), \
        9,999,999 SHA-crypt rounds, yescrypt 1 GiB with p=1 and t=0 (mkpasswd -R 11); a hash \
        over it is refused. MD5-crypt, apr1, {SHA}, DES crypt and plain text are refused by \
        name. A NUL byte in a line is refused; Django's is_active must be a JSON boolean or 1 \
        or 0. The file is read as it comes, in memory bounded by one csv record or Django entry \
        (at most 1 MiB each). shadow and htpasswd files need --email-domain. FILE - reads \
        standard input. In csv, a cell that starts with ' followed by ' characters and then =, \
        +, -, @, a tab or a carriage return loses its first ' (how user export writes a cell a \
        spreadsheet would run as a formula); any other ' is kept.
        """)

    @Argument(help: "The file to import (- for standard input).")
    var file: String

    @Option(
      name: .customLong("format"), help: "django, shadow, htpasswd or csv (default: guessed).")
    var format: ImportFormat?

    @Option(
      name: .customLong("email-domain"),
      help: "For shadow and htpasswd: e-mail addresses are NAME@DOMAIN.")
    var emailDomain: String?

    @Flag(name: .customLong("dry-run"), help: "Check everything; write nothing.")
    var dryRun = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let input = try FileImportInput(path: file)
      try ImportFlow.run(
        context.environment, input: input,
        options: ImportOptions(
          format: format, emailDomain: emailDomain, dryRun: dryRun, name: file))
    }
  }

  /// `accounts user export`.
  struct UserExport: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "export",
      abstract: "Export every account with its password hash, for user import (or Django).",
      discussion: """
        json is Django's dumpdata form (manage.py loaddata reads it); csv has the columns \
        username, full_name, email, password_hash, disabled, must_change_password, created_at, \
        last_login. The hashes are secrets: --output writes a new file of mode 0600 (an \
        existing one is never overwritten). A csv cell that a spreadsheet would run as a \
        formula (it starts with =, +, -, @, a tab or a carriage return, after any ' characters, \
        such as a full name =HYPERLINK(...)) is written quoted with a ' before it, as OWASP \
        advises: spreadsheets show it as text. user import takes that ' off again, so an \
        export imports back exactly.
        """)

    @Option(name: .customLong("format"), help: "json (default) or csv.")
    var format: ExportFormat = .json

    @Option(
      name: .customLong("output"),
      help: ArgumentHelp("A new file to write (default: standard output).", valueName: "file"))
    var output: String?

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let sink = try ExportSink(path: output)
      do {
        try ExportFlow.run(
          context.environment, format: format,
          finish: { () throws(AccountsError) in try sink.finish() },
          write: { sink.write($0) })
      } catch {
        sink.discard()
        throw error
      }
    }
  }
}

/// `user import`'s input: a file or standard input, read in blocks, handed on line by line.
final class FileImportInput: ImportInput {
  /// The longest line kept; the rest of a longer one is dropped (it cannot pass the rules).
  static let lineLimit = 1 << 20

  private let fd: Int32
  private let name: String
  private let size: Int?
  private var buffer: [UInt8] = []
  private var start = 0
  private var consumed = 0
  /// Bytes of an overlong line dropped so far.
  private var dropped = 0
  private var ended = false

  init(path: String) throws(AccountsError) {
    name = path
    if path == "-" {
      fd = STDIN_FILENO
    } else {
      fd = open(path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else {
        throw .storage(.cannotOpen(path: path, reason: String(cString: strerror(errno))))
      }
    }
    var status = stat()
    if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      throw .storage(.cannotOpen(path: path, reason: "it is a folder"))
    }
    size =
      fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
      ? Int(status.st_size) : nil
  }

  deinit { if fd != STDIN_FILENO { close(fd) } }

  var fraction: Double? { size.map { $0 > 0 ? Double(consumed) / Double($0) : 1 } }

  /// Reads one more block; false at the end.
  private func fill() throws(AccountsError) -> Bool {
    if ended { return false }
    if start > 0 && start >= buffer.count / 2 {
      buffer.removeFirst(start)
      start = 0
    }
    let old = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: 65_536))
    while true {
      let got = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return -1 }
        return read(fd, base + old, 65_536)
      }
      if got < 0 && errno == EINTR { continue }
      guard got >= 0 else {
        buffer.removeLast(65_536)
        throw .storage(.cannotOpen(path: name, reason: String(cString: strerror(errno))))
      }
      buffer.removeLast(65_536 - got)
      if got == 0 { ended = true }
      return got > 0
    }
  }

  func peek(_ count: Int) throws(AccountsError) -> [UInt8] {
    while buffer.count - start < count, try fill() {}
    return Array(buffer[start..<min(buffer.count, start + count)])
  }

  func nextLine() throws(AccountsError) -> [UInt8]? {
    // How much past `start` has been searched already (kept relative: `fill` may move the
    // buffer's contents to its front).
    var scanned = 0
    while true {
      if let newline = buffer[(start + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
        var end = newline
        if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let line = Array(buffer[start..<min(end, start + Self.lineLimit)])
        consumed += newline + 1 - start + dropped
        dropped = 0
        start = newline + 1
        return line
      }
      if buffer.count - start > Self.lineLimit {
        // Keep the start of an endless line, drop the rest of it as it comes.
        dropped += buffer.count - (start + Self.lineLimit)
        buffer.removeSubrange((start + Self.lineLimit)..<buffer.count)
      }
      scanned = buffer.count - start
      if try !fill() {
        guard start < buffer.count else { return nil }
        let line = Array(buffer[start..<buffer.count])
        consumed += buffer.count - start + dropped
        dropped = 0
        start = buffer.count
        return line
      }
    }
  }

  func nextBlock() throws(AccountsError) -> [UInt8]? {
    if start >= buffer.count, try !fill() { return nil }
    defer {
      consumed += buffer.count - start
      start = buffer.count
    }
    return Array(buffer[start...])
  }
}

/// Where `user export` writes: standard output, or a new private file.
final class ExportSink {
  private let fd: Int32
  private let path: String?
  private var buffer: [UInt8] = []
  private var failed: Int32 = 0
  private var closed = false

  init(path: String?) throws(AccountsError) {
    self.path = path
    guard let path else {
      fd = STDOUT_FILENO
      return
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else {
      if errno == EEXIST { throw .exportFileExists(path) }
      throw .storage(.cannotOpen(path: path, reason: String(cString: strerror(errno))))
    }
  }

  func write(_ bytes: [UInt8]) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= 65_536 { flush() }
  }

  private func flush() {
    guard path != nil else {
      // Standard output: a failure ends the program there (StandardStreams.outputFailed).
      buffer.withUnsafeBytes { StandardStreams.write(bytes: $0, to: fd) }
      buffer.removeAll(keepingCapacity: true)
      return
    }
    var offset = 0
    while offset < buffer.count && failed == 0 {
      let done = buffer.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return -1 }
        return Glibc.write(fd, base + offset, raw.count - offset)
      }
      if done < 0 && errno == EINTR { continue }
      if done <= 0 {
        failed = errno == 0 ? EIO : errno
        break
      }
      offset += done
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Writes what is left; a file is synced and closed.
  ///
  /// Throws when anything failed to write to a file (standard output ends the program instead).
  func finish() throws(AccountsError) {
    flush()
    if let path {
      if failed == 0 && fsync(fd) != 0 { failed = errno }
      close(fd)
      closed = true
      if failed != 0 {
        unlink(path)
        throw .storage(.cannotOpen(path: path, reason: String(cString: strerror(failed))))
      }
    }
  }

  /// After a failure: a half-written file is removed.
  func discard() {
    guard let path else { return }
    if !closed { close(fd) }
    closed = true
    unlink(path)
  }
}
