import FoundationEssentials

/// How `whoami`, `session list` and `2fa status` print.
public enum SessionPresentation {
  /// `whoami`'s lines.
  public static func whoami(_ who: LoggedIn, timeZone: TimeZone) -> [String] {
    [
      Messages.loggedInAs(who.account.username, fullName: who.account.fullName),
      Messages.sessionEnds(
        at: TimeText.long(who.session.expiresAt, timeZone: timeZone),
        idle: TimeText.span(TimeInterval(who.session.idleSeconds))),
    ]
  }

  /// `whoami --json`: one object, every key always present.
  public static func whoamiJSON(_ who: LoggedIn) -> String {
    var bytes: [UInt8] = []
    JSON.key("loggedIn", first: true, to: &bytes)
    bytes.append(contentsOf: "true".utf8)
    JSON.key("username", to: &bytes)
    JSON.append(who.account.username, to: &bytes)
    JSON.key("fullName", to: &bytes)
    JSON.append(who.account.fullName, to: &bytes)
    JSON.key("session", to: &bytes)
    bytes.append(contentsOf: String(who.session.id).utf8)
    times(who.session, into: &bytes)
    bytes.append(UInt8(ascii: "}"))
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `whoami --json` when nobody is logged in.
  public static let notLoggedInJSON = #"{"loggedIn":false}"#

  /// The header of `session list`.
  public static let header = row(
    "ID", "USER NAME", "STARTED", "LAST SEEN", "ENDS", "2FA", "HOST")

  /// One line of `session list`.
  public static func line(_ listing: SessionListing) -> String {
    let session = listing.session
    return row(
      String(session.id), listing.username, Timestamp.string(from: session.createdAt),
      Timestamp.string(from: session.lastSeenAt), Timestamp.string(from: session.endsAt),
      session.secondFactor ? "yes" : "no", session.host ?? "-")
  }

  /// One object of `session list --json`.
  public static func json(_ listing: SessionListing) -> String {
    var bytes: [UInt8] = []
    JSON.key("session", first: true, to: &bytes)
    bytes.append(contentsOf: String(listing.session.id).utf8)
    JSON.key("username", to: &bytes)
    JSON.append(listing.username, to: &bytes)
    times(listing.session, into: &bytes)
    JSON.key("host", to: &bytes)
    JSON.append(listing.session.host, to: &bytes)
    bytes.append(UInt8(ascii: "}"))
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The keys both objects share, in order.
  private static func times(_ session: Session, into bytes: inout [UInt8]) {
    JSON.key("startedAt", to: &bytes)
    JSON.append(session.createdAt, to: &bytes)
    JSON.key("lastSeenAt", to: &bytes)
    JSON.append(session.lastSeenAt, to: &bytes)
    JSON.key("expiresAt", to: &bytes)
    JSON.append(session.expiresAt, to: &bytes)
    JSON.key("idleUntil", to: &bytes)
    JSON.append(session.idleUntil, to: &bytes)
    JSON.key("secondFactor", to: &bytes)
    JSON.append(session.secondFactor, to: &bytes)
  }

  private static func row(
    _ id: String, _ name: String, _ started: String, _ seen: String, _ ends: String,
    _ factor: String, _ host: String
  ) -> String {
    let pad = AccountPresentation.pad
    return pad(id, 6) + "  " + pad(name, 16) + "  " + pad(started, 24) + "  " + pad(seen, 24) + "  "
      + pad(ends, 24) + "  " + pad(factor, 3) + "  " + host
  }

  /// `2fa status`'s sentence.
  public static func secondFactor(_ status: SecondFactorStatus) -> String {
    guard let since = status.enabledAt else { return Messages.secondFactorOff(status.username) }
    return Messages.secondFactorStatusOn(
      status.username, since: Timestamp.string(from: since), left: status.recoveryCodesLeft)
  }

  /// `2fa status`'s sentence about a pending secret; nil when none waits.
  public static func pendingSecondFactor(_ status: SecondFactorStatus) -> String? {
    status.pendingUntil.map { until in
      Messages.pendingSecondFactorStatus(status.username, until: Timestamp.string(from: until))
    }
  }

  /// `2fa status --json`.
  public static func secondFactorJSON(_ status: SecondFactorStatus) -> String {
    var bytes: [UInt8] = []
    JSON.key("username", first: true, to: &bytes)
    JSON.append(status.username, to: &bytes)
    JSON.key("enabled", to: &bytes)
    JSON.append(status.enabledAt != nil, to: &bytes)
    JSON.key("enabledAt", to: &bytes)
    JSON.append(status.enabledAt, to: &bytes)
    JSON.key("recoveryCodesLeft", to: &bytes)
    bytes.append(contentsOf: String(status.recoveryCodesLeft).utf8)
    bytes.append(UInt8(ascii: "}"))
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `user show`'s two more lines.
  public static func accountDetails(_ status: SecondFactorStatus, sessions: Int) -> [String] {
    [
      Messages.secondFactorDetail(
        since: status.enabledAt.map(Timestamp.string(from:)), left: status.recoveryCodesLeft),
      "Sessions: \(sessions)",
    ]
  }
}
