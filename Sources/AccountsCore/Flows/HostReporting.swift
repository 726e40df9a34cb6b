/// `userdb sync` tells the store how it went (`AccountRepository.reportHost`), so that
/// `store health` can say which hosts are silent, behind or failing.
///
/// A report is a convenience, never a reason for a sync to fail: one that cannot be written is
/// left out (the next sync reports again). A failure while the server cannot be reached is not
/// reported (the report could not reach it either, and trying would wait a second connect
/// timeout): the system log has it, and the next sync that works reports it reached.
public enum HostReporting {
  /// Reports a sync that worked, its records holding `outcome.applied`.
  public static func synced(
    _ env: AccountsEnvironment, _ outcome: UserdbFlow.Outcome, release: String
  ) {
    send(env, HostReport(host: env.hostName, applied: outcome.applied, release: release))
  }

  /// Reports a sync that failed with `error`, unless the store could not be reached or this
  /// host keeps no records of it.
  public static func failed(_ env: AccountsEnvironment, _ error: AccountsError, release: String) {
    switch error {
    case .storage(.cannotConnect), .storage(.connectionLost), .serverAway, .userdbNotEnabled,
      .noDatabase:
      return
    default:
      send(
        env,
        HostReport(
          host: env.hostName, applied: nil, release: release,
          failure: oneLine(error.description)))
    }
  }

  private static func send(_ env: AccountsEnvironment, _ report: HostReport) {
    guard let store = try? env.readableStore() else { return }
    try? store.reportHost(report)
  }

  /// `text` on one line of at most 300 characters.
  static func oneLine(_ text: String) -> String {
    let joined = text.split(whereSeparator: \.isNewline).joined(separator: " ")
    return joined.count <= 300 ? joined : String(joined.prefix(299)) + "…"
  }
}
