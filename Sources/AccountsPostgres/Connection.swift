import AccountsCore
import AccountsCrypto
import CLibPQ
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Held while standard error points at /dev/null for a connection being made.
let standardErrorSwap = Mutex(())

/// A value bound to a statement's parameter: text (numbers, times and booleans in PostgreSQL's
/// text form) or bytes (sent in binary, for `bytea`).
enum PGValue {
  case null
  case text(String)
  case bytes([UInt8])

  init(_ number: Int64) { self = .text(String(number)) }
  init(_ number: Int) { self = .text(String(number)) }
  init(_ flag: Bool) { self = .text(flag ? "true" : "false") }
  init(_ date: Date) { self = .text(Timestamp.string(from: date)) }
  init(_ date: Date?) { self = date.map { .text(Timestamp.string(from: $0)) } ?? .null }
  init(_ text: String?) { self = text.map { .text($0) } ?? .null }
  init(_ value: StoreValue) {
    switch value {
    case .null: self = .null
    case .integer(let number): self = .text(String(number))
    case .text(let text): self = .text(text)
    case .blob(let bytes): self = .bytes(bytes)
    }
  }
}

/// Why a statement failed: the server's SQLSTATE and message, or a lost connection.
struct PGFailure: Error {
  /// The five-character SQLSTATE (nil when the server gave none).
  var sqlState: String?
  /// The server's or libpq's message, one line.
  var message: String
  /// True when the connection is gone (server stopped, connection killed).
  var connectionLost: Bool
  /// True when the connection's first statement got no answer in time (a pooler whose server
  /// is away holds it): the server is as unreachable as one that refuses connections.
  var unanswered = false
}

/// One connection to a PostgreSQL server through libpq: statements in, rows out.
///
/// Written by hand because libpq is a C library with no Swift package that would not bring its
/// own TLS stack (postgres-nio: 9 minutes to build, and a client that retried a wrong password
/// for 70 s): the wrapper is the few calls below, typed and safe, with no pointer leaving it.
final class PGConnection {
  let library: LibPQ
  let handle: OpaquePointer
  /// The seconds the first statement may wait for its answer (`awaitFirstAnswer`).
  var firstAnswerTimeout = 10
  /// True once the server answered a statement on this connection.
  var answered = false
  /// Where the server is, in words: `at HOST:PORT` or `on the socket FOLDER (port PORT)`.
  let server: String
  private var cursors = 0
  /// True once the session's search path was pinned (`pinPath`).
  private var pathPinned = false
  /// The statements prepared in the current transaction: their SQL, and each one's name.
  ///
  /// Released before the transaction ends (`releasePrepared`): behind a pooler in
  /// transaction mode (PgBouncer), the next transaction may run on another server connection,
  /// where the name means nothing, and this one may serve another client.
  private var prepared: [String: String] = [:]
  /// What this connection's statement names begin with: a name left on a pooled server
  /// connection by a process that died mid-transaction is never one another process prepares.
  private let statementPrefix = "accounts_\(String(UInt64.random(in: 0...UInt64.max), radix: 36))_"

  /// A number no other cursor of this connection has had.
  func nextCursorNumber() -> Int {
    cursors += 1
    return cursors
  }

  private init(library: LibPQ, handle: OpaquePointer, server: String) {
    self.library = library
    self.handle = handle
    self.server = server
  }

  deinit { library.finish(handle) }

  /// Connects with the URI `uri` (libpq's rules: PG* variables, ~/.pgpass, service files);
  /// `location` is how errors name the store.
  static func open(uri: String, location: String, connectTimeout: Int = 10)
    throws(StoreError) -> PGConnection
  {
    let library: LibPQ
    do {
      library = try LibPQ.shared()
    } catch {
      throw .failure(
        location: location,
        reason: "the PostgreSQL client library \(error.library) cannot be loaded "
          + "(\(error.reason)); install it (Debian: libpq5)")
    }
    // Earlier entries are overridden by the URI's own parameters (libpq reads the arrays in
    // order, the URI expanded where `dbname` stands): a connect timeout of our own only when
    // neither the URI nor PGCONNECT_TIMEOUT gives one.
    // Over TCP, a server that vanishes mid-command (a host down, a cable out) is noticed within
    // about 20 seconds, not the system's 2 hours of keepalive silence.
    var keywords = [
      "fallback_application_name", "keepalives_idle", "keepalives_interval", "keepalives_count",
      "tcp_user_timeout",
    ]
    var values = ["accounts", "10", "3", "3", "20000"]
    if getenv("PGCONNECT_TIMEOUT") == nil {
      keywords.append("connect_timeout")
      values.append(String(connectTimeout))
    }
    keywords.append("dbname")
    values.append(uri)
    // What the server says while the connection is being made (a WARNING or FATAL of a server
    // shutting down) goes to libpq's default notice processor, which writes it to standard
    // error: ours can only be set once the connection exists. So standard error points at
    // /dev/null meanwhile; the connection's failure, if any, is reported in our own words.
    // (libpq's asynchronous connect would allow it, at the price of re-implementing its
    // connect_timeout across several hosts.)
    // The swap is process-wide: two connections made at once (the contract tests copy between
    // two servers in one process) take turns, or the second would save the first's /dev/null
    // as "standard error" and leave it there for good.
    let connection: OpaquePointer? = standardErrorSwap.withLock { _ in
      let savedError = dup(STDERR_FILENO)
      let discard = Glibc.open("/dev/null", O_WRONLY | O_CLOEXEC)
      if savedError >= 0 && discard >= 0 { dup2(discard, STDERR_FILENO) }
      let made: OpaquePointer? = withCStrings(keywords) { keywordPointers in
        withCStrings(values) { valuePointers in
          library.connect(keywordPointers, valuePointers, 1)
        }
      }
      if savedError >= 0 && discard >= 0 { dup2(savedError, STDERR_FILENO) }
      if savedError >= 0 { close(savedError) }
      if discard >= 0 { close(discard) }
      return made
    }
    guard let connection else {
      throw .cannotConnect(location: location, server: "", reason: "out of memory")
    }
    // libpq names the host and port as it read them: from a malformed URI, pieces of it.
    let server = StoreLocation.scrubbed(
      describeServer(library: library, connection: connection), of: uri)
    guard library.status(connection) == CONNECTION_OK else {
      let reason = StoreLocation.scrubbed(
        connectionReason(library.errorMessage(connection).map { String(cString: $0) }), of: uri)
      library.finish(connection)
      throw .cannotConnect(location: location, server: server, reason: reason)
    }
    // Notices (such as "schema already exists") are not for the person at the terminal.
    _ = library.setNoticeProcessor(connection, { _, _ in }, nil)
    let opened = PGConnection(library: library, handle: connection, server: server)
    opened.firstAnswerTimeout = effectiveConnectTimeout(uri: uri, default: connectTimeout)
    return opened
  }

  /// Pins the session's search path, sent with the first statement (no round trip of its own).
  ///
  /// Every name of ours is written with its schema; the functions and operators SQL itself
  /// calls (count, coalesce, =) are looked up in pg_catalog alone, so that no other role's
  /// objects in a schema on the search path can stand in for them (CVE-2018-1058). The
  /// session's temporary schema is named last: left out, PostgreSQL searches it first for
  /// tables and types.
  static let pinPath =
    "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false);"

  /// Runs `sql` (one statement, or several with no parameters) and returns the last result.
  ///
  /// With `prepared`, the statement is parsed and planned once per transaction (what a
  /// statement run for every row of an import or a copy needs) and run by name after that;
  /// outside a transaction it runs unnamed, as any other. Without `pinning`, the statement
  /// does not wait for the search path to be pinned: it names every object with its schema and
  /// calls only functions of ours (which pin their own), so no search path can change it.
  @discardableResult
  func run(
    _ sql: String, _ parameters: [PGValue] = [], prepared: Bool = false, pinning: Bool = true
  ) throws(PGFailure) -> PGRows {
    var sql = sql
    // A transaction pins its own (`SET LOCAL`), and a BEGIN must come first in its message.
    if !pathPinned && pinning && !inTransaction && !sql.hasPrefix("BEGIN") {
      // Sent ahead of the first statement, in the same message where it has no parameters;
      // a failure leaves it to be sent again with the next one.
      if parameters.isEmpty && !(prepared && inTransaction) {
        sql = Self.pinPath + " " + sql
      } else {
        try check(perform(Self.pinPath, []))
      }
      pathPinned = true
    }
    do {
      return try send(sql, parameters, prepared: prepared)
    } catch {
      if sql.hasPrefix(Self.pinPath) { pathPinned = false }
      throw error
    }
  }

  private func send(_ sql: String, _ parameters: [PGValue], prepared: Bool)
    throws(PGFailure) -> PGRows
  {
    let result: OpaquePointer?
    if prepared && inTransaction {
      let name: String
      if let known = self.prepared[sql] {
        name = known
      } else {
        name = statementPrefix + String(self.prepared.count + 1)
        try check(library.prepare(handle, name, sql, Int32(parameters.count), nil))
        self.prepared[sql] = name
      }
      result = execute(sql, parameters, name: name)
    } else {
      result = try perform(sql, parameters)
    }
    return try check(result)
  }

  /// The rows of `result`, or the failure it reports (freed either way when it failed).
  @discardableResult
  private func check(_ result: OpaquePointer?) throws(PGFailure) -> PGRows {
    // A failure with no SQLSTATE is libpq's own: the connection broke (the server closed it,
    // crashed or was stopped at once), not a statement the server refused.
    guard let result else {
      throw PGFailure(
        sqlState: nil, message: lastError(), connectionLost: true, unanswered: !answered)
    }
    let status = library.resultStatus(result)
    guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
      let state = library.resultErrorField(result, Int32(UInt8(ascii: "C"))).map {
        String(cString: $0)
      }
      let message =
        library.resultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
        ?? lastError()
      library.clear(result)
      let lost = !isAlive || state.map { $0.hasPrefix("08") || $0.hasPrefix("57P") } ?? true
      // Lost before the server ever answered (a pooler's own refusal of a server it cannot
      // reach): the server is unreachable.
      throw PGFailure(
        sqlState: state, message: firstLine(message), connectionLost: lost,
        unanswered: lost && !answered)
    }
    return PGRows(library: library, handle: result)
  }

  /// True while the connection is open.
  var isAlive: Bool { library.status(handle) == CONNECTION_OK }

  /// Forgets the statements prepared in this transaction, on the server too.
  ///
  /// Called before the transaction ends, and again (failures ignored) after a rollback, when an
  /// aborted transaction refused it.
  func releasePrepared() {
    for name in prepared.values {
      if let result = library.exec(handle, "DEALLOCATE \(name)") { library.clear(result) }
    }
    prepared.removeAll()
  }

  /// True when a transaction is open (or failed and not yet rolled back).
  var inTransaction: Bool {
    let status = library.transactionStatus(handle)
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
  }

  func lastError() -> String {
    firstLine(library.errorMessage(handle).map { String(cString: $0) } ?? "no reason given")
  }

  /// Runs an unprepared statement: the connection's first within `firstAnswerTimeout`.
  private func perform(_ sql: String, _ parameters: [PGValue]) throws(PGFailure) -> OpaquePointer? {
    guard answered else {
      let result = try awaitFirstAnswer(sql, parameters)
      if let result {
        let status = library.resultStatus(result)
        answered = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
      }
      return result
    }
    return parameters.isEmpty ? library.exec(handle, sql) : execute(sql, parameters, name: nil)
  }

  /// Runs `sql` with `parameters` (the prepared statement `name`, when given) and returns its
  /// result; with `sending`, only sends it (`PQsendQueryParams`) and returns the connection's
  /// handle when it went out, nil when it did not.
  func execute(
    _ sql: String, _ parameters: [PGValue], name: String?, sending: Bool = false
  ) -> OpaquePointer? {
    var buffers: [UnsafeMutablePointer<CChar>?] = []
    var lengths: [Int32] = []
    var formats: [Int32] = []
    defer { for buffer in buffers { buffer?.deallocate() } }
    for parameter in parameters {
      switch parameter {
      case .null:
        buffers.append(nil)
        lengths.append(0)
        formats.append(0)
      case .text(let text):
        let bytes = Array(text.utf8)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
        buffer[bytes.count] = 0
        buffers.append(buffer)
        lengths.append(Int32(bytes.count))
        formats.append(0)
      case .bytes(let bytes):
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
        for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
        buffers.append(buffer)
        lengths.append(Int32(bytes.count))
        formats.append(1)
      }
    }
    let values = buffers.map { UnsafePointer($0) }
    return values.withUnsafeBufferPointer { valuePointers in
      lengths.withUnsafeBufferPointer { lengthPointers in
        formats.withUnsafeBufferPointer { formatPointers in
          if sending {
            let sent = library.sendQueryParams(
              handle, sql, Int32(parameters.count), nil, valuePointers.baseAddress,
              lengthPointers.baseAddress, formatPointers.baseAddress, 0)
            return sent == 1 ? handle : nil
          }
          if let name {
            return library.execPrepared(
              handle, name, Int32(parameters.count), valuePointers.baseAddress,
              lengthPointers.baseAddress, formatPointers.baseAddress, 0)
          }
          return library.execParams(
            handle, sql, Int32(parameters.count), nil, valuePointers.baseAddress,
            lengthPointers.baseAddress, formatPointers.baseAddress, 0)
        }
      }
    }
  }

  /// `at HOST:PORT`, or `on the socket FOLDER (port PORT)` for a Unix socket.
  private static func describeServer(library: LibPQ, connection: OpaquePointer) -> String {
    let host = library.host(connection).map { String(cString: $0) } ?? ""
    let port = library.port(connection).map { String(cString: $0) } ?? ""
    if host.isEmpty { return "" }
    if host.hasPrefix("/") || host.hasPrefix("@") {
      return port.isEmpty ? "on the socket \(host)" : "on the socket \(host) (port \(port))"
    }
    return port.isEmpty ? "at \(host)" : "at \(host):\(port)"
  }

  /// libpq's reason for a failed connection, without its preamble: `connection to server at
  /// "h", port 5432 failed: FATAL:  password authentication failed for user "u"` gives
  /// `password authentication failed for user "u"`.
  private static func connectionReason(_ message: String?) -> String {
    let line = firstLine(message ?? "")
    var reason = Substring(line)
    if let failed = reason.firstRange(of: " failed: ") { reason = reason[failed.upperBound...] }
    for prefix in ["FATAL:  ", "ERROR:  "] where reason.hasPrefix(prefix) {
      reason = reason.dropFirst(prefix.count)
    }
    let trimmed = reason.trimmingSpaces()
    // libpq's words, with what to do where they leave it out.
    switch trimmed {
    case "": return "no reason given"
    case "fe_sendauth: no password supplied":
      return "the server asks for a password and none was found (keep it in ~/.pgpass)"
    case "No such file or directory", "Connection refused":
      return "\(trimmed) (is the server running?)"
    case "SSL error: certificate verify failed":
      return "the server's certificate could not be verified against the CA that sslrootcert"
        + " names (another CA signed it, or it has expired)"
    default: return trimmed
    }
  }
}

/// The first line of `text`, trimmed, without a severity (`FATAL:  `) or a final period.
private func firstLine(_ text: String) -> String {
  var line = Substring(text.split(separator: "\n", maxSplits: 1).first ?? "")
  for severity in ["FATAL:  ", "ERROR:  ", "PANIC:  ", "WARNING:  "] where line.hasPrefix(severity)
  {
    line = line.dropFirst(severity.count)
  }
  var trimmed = line.trimmingSpaces()
  if trimmed.hasSuffix(".") { trimmed.removeLast() }
  return trimmed
}

/// Calls `body` with a C array of the NUL-ended copies of `strings`, itself NULL-ended.
private func withCStrings<T>(
  _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T
) -> T {
  let copies = strings.map { strdup($0) }
  defer { for copy in copies { free(copy) } }
  var pointers = copies.map { UnsafePointer($0) } + [nil]
  // The array is never empty (its final NULL), so its first element's address is the array's.
  return body(&pointers)
}

/// The rows of one statement's result, in PostgreSQL's text form: stored values are read with
/// `decode` (by type), the catalog's answers with `text` and `flag`.
final class PGRows {
  private let library: LibPQ
  private let handle: OpaquePointer
  /// How many rows there are.
  let count: Int

  fileprivate init(library: LibPQ, handle: OpaquePointer) {
    self.library = library
    self.handle = handle
    count = Int(library.tupleCount(handle))
  }

  deinit { library.clear(handle) }

  /// How many rows the statement changed (INSERT, UPDATE, DELETE).
  var changed: Int {
    library.affectedRows(handle).flatMap { Int(String(cString: $0)) } ?? 0
  }

  /// Column `column` of row `row` as text; nil for NULL.
  func text(_ row: Int, _ column: Int) -> String? {
    guard row < count, library.isNull(handle, Int32(row), Int32(column)) == 0,
      let value = library.value(handle, Int32(row), Int32(column))
    else { return nil }
    let length = Int(library.length(handle, Int32(row), Int32(column)))
    return value.withMemoryRebound(to: UInt8.self, capacity: length) {
      String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
  }

  /// Column `column` of row `row`, a boolean, as a Bool (`t`).
  func flag(_ row: Int, _ column: Int) -> Bool { text(row, column) == "t" }
}
