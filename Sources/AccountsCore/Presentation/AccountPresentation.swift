import FoundationEssentials

/// How `user list` and `user show` print an account.
public enum AccountPresentation {
  /// The header of `user list`'s text form.
  public static let header = row(
    "USER NAME", "FULL NAME", "E-MAIL", "STATUS", "LAST LOGIN")

  /// One line of `user list`: user name, full name, e-mail, status words, last login.
  public static func line(_ listing: AccountListing, now: Date) -> String {
    let account = listing.account
    return row(
      account.username, account.fullName, account.email, status(listing, now: now),
      account.lastLoginAt.map(Timestamp.string(from:)) ?? "never")
  }

  /// `owner,disabled,expired,locked,must-change` as they apply, or `-`.
  static func status(_ listing: AccountListing, now: Date) -> String {
    var words: [String] = []
    if listing.account.isOwner { words.append("owner") }
    if listing.account.isDisabled { words.append("disabled") }
    if listing.account.isExpired(at: now) { words.append("expired") }
    if listing.tally.lock(at: now) != nil { words.append("locked") }
    if listing.account.mustChangePassword { words.append("must-change") }
    return words.isEmpty ? "-" : words.joined(separator: ",")
  }

  /// Columns padded to fixed widths (a long value pushes the rest right, as `ps` does), so a
  /// million lines stream without a first pass to measure them.
  private static func row(
    _ name: String, _ fullName: String, _ email: String, _ status: String, _ last: String
  ) -> String {
    pad(name, 16) + "  " + pad(fullName, 24) + "  " + pad(email, 28) + "  " + pad(status, 12)
      + "  " + last
  }

  /// `text` padded with spaces to `width` characters (never cut); shared by the other tables.
  static func pad(_ text: String, _ width: Int) -> String {
    let count = text.count
    return count >= width ? text : text + String(repeating: " ", count: width - count)
  }

  /// One JSON object; every key always present, in a fixed order.
  public static func json(_ listing: AccountListing, now: Date) -> String {
    var bytes: [UInt8] = []
    json(listing, now: now, into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The same object appended to `bytes`: what `user list --json` writes a million times.
  ///
  /// Everything a terminal could act on is escaped as `\u` (see `JSON`).
  public static func json(_ listing: AccountListing, now: Date, into bytes: inout [UInt8]) {
    let account = listing.account
    let lock = listing.tally.lock(at: now)
    JSON.key("username", first: true, to: &bytes)
    JSON.append(account.username, to: &bytes)
    JSON.key("fullName", to: &bytes)
    JSON.append(account.fullName, to: &bytes)
    JSON.key("email", to: &bytes)
    JSON.append(account.email, to: &bytes)
    JSON.key("owner", to: &bytes)
    JSON.append(account.isOwner, to: &bytes)
    JSON.key("disabled", to: &bytes)
    JSON.append(account.isDisabled, to: &bytes)
    JSON.key("locked", to: &bytes)
    JSON.append(lock != nil, to: &bytes)
    JSON.key("lockedUntil", to: &bytes)
    JSON.append(lock, to: &bytes)
    JSON.key("mustChangePassword", to: &bytes)
    JSON.append(account.mustChangePassword, to: &bytes)
    JSON.key("failures", to: &bytes)
    bytes.append(contentsOf: String(max(listing.tally.failures, 0)).utf8)
    JSON.key("createdAt", to: &bytes)
    JSON.append(account.createdAt, to: &bytes)
    JSON.key("lastLogin", to: &bytes)
    JSON.append(account.lastLoginAt, to: &bytes)
    JSON.key("expiresAt", to: &bytes)
    JSON.append(account.expiresAt, to: &bytes)
    JSON.key("expired", to: &bytes)
    JSON.append(account.isExpired(at: now), to: &bytes)
    JSON.key("groups", to: &bytes)
    JSON.append(listing.groups, to: &bytes)
    JSON.key("uid", to: &bytes)
    bytes.append(contentsOf: (account.uid.map(String.init) ?? "null").utf8)
    JSON.key("home", to: &bytes)
    JSON.append(account.homeDirectory, to: &bytes)
    JSON.key("shell", to: &bytes)
    JSON.append(account.loginShell, to: &bytes)
    bytes.append(UInt8(ascii: "}"))
  }

  /// `user show`'s lines: one field each.
  public static func details(_ listing: AccountListing, now: Date) -> [String] {
    let account = listing.account
    return [
      "\(Messages.usernamePrompt): \(account.username)",
      "\(Messages.fullNamePrompt): \(account.fullName)",
      "\(Messages.emailPrompt): \(account.email)",
      "Owner: \(account.isOwner ? "yes" : "no")",
      "Disabled: "
        + (account.disabledAt.map { "since \(Timestamp.string(from: $0))" } ?? "no"),
      "Must change password: \(account.mustChangePassword ? "yes" : "no")",
      "Locked: "
        + (listing.tally.lock(at: now).map { "until \(Timestamp.string(from: $0))" } ?? "no"),
      "Failed logins: \(max(listing.tally.failures, 0))",
      "Created: \(Timestamp.string(from: account.createdAt))",
      "Last login: \(account.lastLoginAt.map(Timestamp.string(from:)) ?? "never")",
      Messages.expiryDetail(
        account.expiresAt.map(Timestamp.string(from:)), expired: account.isExpired(at: now)),
      Messages.groupsDetail(listing.groups),
      Messages.uidDetail(account.uid),
      "Home: \(account.homeDirectory)",
      "Shell: \(account.loginShell)",
    ]
  }
}

/// How `accounts log` prints an event.
public enum AuditPresentation {
  /// One line of text: time, event, user name, detail, `on <host>` when the event names
  /// the host that wrote it (escaped unambiguously), and `offline` for a login a host's login
  /// cache answered.
  public static func line(_ event: AuditEvent) -> String {
    var line = "\(Timestamp.string(from: event.occurredAt))  "
    // Padded, never cut: a longer kind pushes the rest right.
    let kind = event.kind.rawValue
    line += kind + String(repeating: " ", count: max(0, 16 - kind.count))
    line += "  \(event.username.map(Escaping.unambiguous) ?? "-")"
    if let detail = event.detail { line += "  (\(Escaping.unambiguous(detail)))" }
    if let host = event.host { line += "  on \(Escaping.unambiguous(host))" }
    if event.offline { line += "  offline" }
    return line
  }

  /// One JSON object; every key always present (`null` when absent).
  public static func json(_ event: AuditEvent) -> String {
    JSON.object([
      "time": JSON.string(Timestamp.string(from: event.occurredAt)),
      "event": JSON.string(event.kind.rawValue),
      "user": JSON.string(event.username),
      "detail": JSON.string(event.detail),
      "host": JSON.string(event.host), "offline": JSON.bool(event.offline),
    ])
  }
}

/// How `accounts status` prints.
public enum StatusPresentation {
  /// `State: …` and `Database: …` lines.
  public static func lines(_ report: StatusReport, path: String) -> [String] {
    [
      "State: \(report.state.rawValue)",
      report.databaseExists
        ? "Database: \(path)" : Messages.databaseMissing(path, in: report.container),
    ]
  }

  /// One JSON object; every key always present.
  public static func json(_ report: StatusReport, path: String) -> String {
    JSON.object([
      "state": JSON.string(report.state.rawValue), "database": JSON.string(path),
      "exists": JSON.bool(report.databaseExists),
      "changedAt": JSON.string(report.changedAt.map(Timestamp.string(from:))),
    ])
  }
}
