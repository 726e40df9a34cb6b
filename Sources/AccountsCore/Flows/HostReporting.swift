/// `userdb sync` tells the store how it went (`AccountRepository.reportHost`), so that
/// `store health` can say which hosts are silent, behind, failing or cut off from the server.
///
/// A report is a convenience, never a reason for a sync to fail: one that cannot be written is
/// left out (the next sync reports again). A failure while the server cannot be reached cannot
/// be reported then (the report could not reach it either, and trying would wait a second
/// connect timeout): this host keeps it (`UnreachedSyncsKeeper`: how many, the first and the
/// last, the last reason) and the next report that is written carries them, after which they
/// are forgotten here.
public enum HostReporting {
  /// Reports a sync that worked, its records holding `outcome.applied`.
  public static func synced(
    _ env: AccountsEnvironment, _ outcome: UserdbFlow.Outcome, release: String
  ) {
    send(env, HostReport(host: env.hostName, applied: outcome.applied, release: release))
  }

  /// Reports a sync that failed with `error`, unless this host keeps no records of the store;
  /// one that could not reach the server is kept on this host for the next report.
  public static func failed(_ env: AccountsEnvironment, _ error: AccountsError, release: String) {
    switch error {
    case .storage(.cannotConnect), .storage(.connectionLost), .serverAway:
      keepUnreached(env, error)
    case .userdbNotEnabled, .noDatabase:
      return
    default:
      send(
        env,
        HostReport(
          host: env.hostName, applied: nil, release: release,
          failure: oneLine(error.description)))
    }
  }

  /// Counts a sync that could not reach the server for `error`; a keeper that cannot be
  /// written leaves the sync's own error as it is.
  static func keepUnreached(_ env: AccountsEnvironment, _ error: AccountsError) {
    let now = env.now()
    let reason = error.description
    try? env.unreachedSyncs?.update { kept in
      guard let kept, kept.host == env.hostName else {
        return UnreachedSyncs(host: env.hostName, count: 1, first: now, last: now, reason: reason)
      }
      return kept.adding(reason: reason, at: now)
    }
  }

  /// Sends `report` with the unreached syncs this host keeps, and forgets those once it is
  /// written (a report that fails keeps them for the next).
  private static func send(_ env: AccountsEnvironment, _ report: HostReport) {
    var report = report
    let kept = (try? env.unreachedSyncs?.load()).flatMap { $0 }
    if let kept, kept.host == env.hostName { report.unreached = kept }
    guard let store = try? env.readableStore() else { return }
    do {
      try store.reportHost(report)
    } catch {
      return
    }
    guard let reported = report.unreached else { return }
    // Only what was reported goes: a sync that failed meanwhile is kept for the next report.
    try? env.unreachedSyncs?.update { kept in kept == reported ? nil : kept }
  }

  /// `text` on one line of at most 300 characters.
  static func oneLine(_ text: String) -> String {
    let joined = text.split(whereSeparator: \.isNewline).joined(separator: " ")
    return joined.count <= 300 ? joined : String(joined.prefix(299)) + "…"
  }
}
