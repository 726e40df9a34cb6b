import CLibPQ
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The first statement of a connection, answered within the connect timeout.
///
/// A pooler (PgBouncer) accepts the connection itself whatever its server's state, and holds a
/// statement until a server connection frees up: with the server away, for its
/// `query_wait_timeout` (120 s by default), and then says the connection was lost. Until the
/// server has answered once, a statement is sent without blocking and waited for at most as long
/// as connecting may take; past that the server counts as unreachable. Later statements wait
/// as long as they need (a large import is no absent server).
extension PGConnection {
  /// Sends `sql` and waits for all its results until the deadline; the last result (the first
  /// failed one when one failed), as `PQexec` returns it.
  func awaitFirstAnswer(_ sql: String, _ parameters: [PGValue]) throws(PGFailure)
    -> OpaquePointer?
  {
    let sent =
      parameters.isEmpty
      ? library.sendQuery(handle, sql) == 1
      : execute(sql, parameters, name: nil, sending: true) != nil
    guard sent else { return nil }
    let deadline = Self.monotonicSeconds() + Double(firstAnswerTimeout)
    let socket = library.socket(handle)
    while library.isBusy(handle) == 1 {
      let remaining = deadline - Self.monotonicSeconds()
      guard remaining > 0 else {
        throw PGFailure(
          sqlState: nil, message: "it gave no answer within \(firstAnswerTimeout) seconds",
          connectionLost: true, unanswered: true)
      }
      var waiting = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      let ready = poll(&waiting, 1, Int32(min(remaining * 1000, Double(Int32.max))) + 1)
      if ready < 0 && errno != EINTR { return nil }
      guard library.consumeInput(handle) == 1 else { return nil }
    }
    var kept: OpaquePointer?
    while let next = library.getResult(handle) {
      if let kept, Self.failed(library.resultStatus(kept)) {
        library.clear(next)
        continue
      }
      if let kept { library.clear(kept) }
      kept = next
    }
    return kept
  }

  private static func failed(_ status: ExecStatusType) -> Bool {
    status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK
  }

  private static func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }
}

/// The connect timeout libpq applies: the URI's `connect_timeout`, else PGCONNECT_TIMEOUT,
/// else `fallback` (a value below 2 counts as 2, as libpq counts it).
func effectiveConnectTimeout(uri: String, default fallback: Int) -> Int {
  var given: Int?
  if let parameter = uri.split(whereSeparator: { $0 == "?" || $0 == "&" }).first(where: {
    $0.hasPrefix("connect_timeout=")
  }) {
    given = Int(parameter.dropFirst("connect_timeout=".count))
  } else if let variable = getenv("PGCONNECT_TIMEOUT") {
    given = Int(String(cString: variable))
  }
  guard let given, given > 0 else { return fallback }
  return max(given, 2)
}
