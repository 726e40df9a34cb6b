import AccountsCore

/// The offline events of a host's login cache, each one call of the migration "v16" function.
extension PostgresStore {
  public func appendOfflineEvent(_ event: QueuedEvent) throws(AccountsError) -> Bool {
    let record = event.record
    let (rows, access) = try statement(
      """
      SELECT accounts.audit_offline_event($1, $2::timestamptz, $3, $4, $5, $6, $7, $8::integer)
      """,
      [
        .text(event.offlineID), PGValue(record.occurredAt), .text(record.kind.rawValue),
        PGValue(record.username), PGValue(record.usernameKey), PGValue(record.detail),
        PGValue(record.host), waitMilliseconds,
      ], for: .readWrite)
    return try access.decoded { () throws(PGUnreadableValue) in
      try rows.decode(Bool.self, 0, 0)
    }
  }
}
