import FoundationEssentials

/// A kind of event in the audit log.
///
/// A struct, not an enum: a log written by a newer version may hold kinds this build does not
/// know, and they read back as themselves. The store keeps the kinds in a table of their own,
/// so a new kind is a row added by a migration, never a rebuilt table.
public struct AuditEventKind: RawRepresentable, Hashable, Sendable, Comparable {
  /// The name stored and shown (`login_success`).
  public var rawValue: String

  /// A kind by its stored name.
  public init(rawValue: String) { self.rawValue = rawValue }

  /// The device was activated (its owner's account created).
  public static let activation = Self(rawValue: "activation")
  /// A login succeeded (the detail says with which factors, or how PAM's session came).
  public static let loginSuccess = Self(rawValue: "login_success")
  /// A login failed (wrong name or password, disabled, or refused while locked).
  public static let loginFailure = Self(rawValue: "login_failure")
  /// A user name earned a lock.
  public static let lockout = Self(rawValue: "lockout")
  /// An administrator cleared a user name's failures and lock.
  public static let unlock = Self(rawValue: "unlock")
  /// An administrator returned the device to Public.
  public static let reset = Self(rawValue: "reset")
  /// An administrator added an account.
  public static let accountAdded = Self(rawValue: "account_added")
  /// An administrator changed an account's user name, full name or e-mail.
  public static let accountEdited = Self(rawValue: "account_edited")
  /// An administrator disabled an account.
  public static let accountDisabled = Self(rawValue: "account_disabled")
  /// An administrator enabled an account again.
  public static let accountEnabled = Self(rawValue: "account_enabled")
  /// An administrator removed an account.
  public static let accountRemoved = Self(rawValue: "account_removed")
  /// A person changed their own password (with the current one).
  public static let passwordChanged = Self(rawValue: "password_changed")
  /// An administrator set an account's password (without the current one).
  public static let passwordSet = Self(rawValue: "password_set")
  /// An administrator moved the device's ownership to another account.
  public static let ownershipMoved = Self(rawValue: "ownership_moved")
  /// A person ended their session (or all of them).
  public static let logout = Self(rawValue: "logout")
  /// An administrator ended a session.
  public static let sessionRevoked = Self(rawValue: "session_revoked")
  /// A person turned the TOTP second factor on.
  public static let secondFactorEnabled = Self(rawValue: "second_factor_enabled")
  /// A person turned their second factor off.
  public static let secondFactorDisabled = Self(rawValue: "second_factor_disabled")
  /// An administrator turned an account's second factor off (a lost phone).
  public static let secondFactorReset = Self(rawValue: "second_factor_reset")
  /// A new set of recovery codes replaced the old one.
  public static let recoveryCodesMade = Self(rawValue: "recovery_codes_made")
  /// A recovery code was used in place of a TOTP code.
  public static let recoveryCodeUsed = Self(rawValue: "recovery_code_used")
  /// An administrator imported accounts from another system's file.
  public static let accountsImported = Self(rawValue: "accounts_imported")
  /// An administrator exported every account with its hash.
  public static let accountsExported = Self(rawValue: "accounts_exported")
  /// An administrator added a group.
  public static let groupAdded = Self(rawValue: "group_added")
  /// An administrator removed a group (its memberships went with it).
  public static let groupRemoved = Self(rawValue: "group_removed")
  /// An account joined a group (the detail names the group).
  public static let groupMemberAdded = Self(rawValue: "group_member_added")
  /// An account left a group (the detail names the group).
  public static let groupMemberRemoved = Self(rawValue: "group_member_removed")
  /// The PAM module opened a session for an account.
  public static let pamSessionOpened = Self(rawValue: "pam_session_opened")
  /// The PAM module closed a session of an account.
  public static let pamSessionClosed = Self(rawValue: "pam_session_closed")
  /// An administrator added an SSH key to an account (the detail names its fingerprint).
  public static let sshKeyAdded = Self(rawValue: "ssh_key_added")
  /// An administrator removed an SSH key of an account (the detail names its fingerprint).
  public static let sshKeyRemoved = Self(rawValue: "ssh_key_removed")
  /// PAM's account stage refused an account.
  ///
  /// Disabled, expired, or in none of the allowed groups: the detail says why and where from.
  /// Not a failed login: no tally counts it.
  public static let accessRefused = Self(rawValue: "access_refused")
  /// An administrator turned user records on for a host (the detail names the folder).
  public static let userdbEnabled = Self(rawValue: "userdb_enabled")
  /// An administrator turned user records off for a host (the detail says what was removed).
  public static let userdbDisabled = Self(rawValue: "userdb_disabled")
  /// A sync wrote or removed user records in a host's folder (the detail counts them).
  public static let userdbSynced = Self(rawValue: "userdb_synced")
  /// A fleet host was given a PostgreSQL role of its own (`store hosts add`; the detail names
  /// the host and the role).
  public static let fleetHostAdded = Self(rawValue: "fleet_host_added")
  /// A fleet host's own role was withdrawn (`store hosts remove`; the detail names the host and
  /// the role).
  public static let fleetHostRemoved = Self(rawValue: "fleet_host_removed")
  /// The owner upgraded a shared store (`store upgrade`; the detail names the release and the
  /// steps applied).
  public static let storeUpgraded = Self(rawValue: "store_upgraded")

  /// Every kind this build writes, in the order docs/commands.md lists them.
  public static let known: [AuditEventKind] = [
    .activation, .loginSuccess, .loginFailure, .lockout, .unlock, .reset, .accountAdded,
    .accountEdited, .accountDisabled, .accountEnabled, .accountRemoved, .passwordChanged,
    .passwordSet, .ownershipMoved, .logout, .sessionRevoked, .secondFactorEnabled,
    .secondFactorDisabled, .secondFactorReset, .recoveryCodesMade, .recoveryCodeUsed,
    .accountsImported, .accountsExported, .groupAdded, .groupRemoved, .groupMemberAdded,
    .groupMemberRemoved, .pamSessionOpened, .pamSessionClosed, .sshKeyAdded, .sshKeyRemoved,
    .accessRefused, .userdbEnabled, .userdbDisabled, .userdbSynced, .fleetHostAdded,
    .fleetHostRemoved, .storeUpgraded,
  ]

  /// Orders by name.
  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An event to append to the log: what the core decided to say about a change.
public struct AuditRecord: Equatable, Sendable {
  /// When it happened.
  public var occurredAt: Date
  /// What happened.
  public var kind: AuditEventKind
  /// The user name as typed or stored, if the event concerns one.
  public var username: String?
  /// Its comparison key, by which the log is searched.
  public var usernameKey: String?
  /// A few words more, never a secret.
  public var detail: String?
  /// The host that writes it: the store's writer sets it (`AccountRepository.writingHost`) when
  /// it is nil, so no flow has to and none can forget.
  public var host: String?

  /// Creates an event to append.
  public init(
    _ kind: AuditEventKind, at occurredAt: Date, username: String? = nil,
    usernameKey: String? = nil, detail: String? = nil, host: String? = nil
  ) {
    self.occurredAt = occurredAt
    self.kind = kind
    self.username = username
    self.usernameKey = usernameKey
    self.detail = detail
    self.host = host
  }
}

/// One line of the audit log as stored.
public struct AuditEvent: Equatable, Sendable {
  /// Its position in the log, increasing.
  public var id: Int64
  /// When it happened.
  public var occurredAt: Date
  /// What happened.
  public var kind: AuditEventKind
  /// The user name as typed, if the event concerns one.
  public var username: String?
  /// A few words more, never a secret.
  public var detail: String?
  /// The host that wrote it; nil for an event a version before hosts wrote.
  public var host: String?
  /// True for an event of a login a host's login cache answered while the server was away,
  /// delivered later.
  public var offline: Bool

  /// Creates an event.
  public init(
    id: Int64, occurredAt: Date, kind: AuditEventKind, username: String?, detail: String?,
    host: String? = nil, offline: Bool = false
  ) {
    self.id = id
    self.occurredAt = occurredAt
    self.kind = kind
    self.username = username
    self.detail = detail
    self.host = host
    self.offline = offline
  }
}

/// Which events `accounts log` shows: every condition given must hold.
public struct AuditQuery: Equatable, Sendable {
  /// Only events about this user name key.
  public var usernameKey: String?
  /// Only events of this kind.
  public var kind: AuditEventKind?
  /// Only events at or after this time.
  public var since: Date?
  /// Only events written by the host of exactly this name.
  public var host: String?
  /// Only the newest this many (still shown oldest first).
  public var limit: Int?

  /// Creates a query; with no argument, every event.
  public init(
    usernameKey: String? = nil, kind: AuditEventKind? = nil, since: Date? = nil,
    host: String? = nil, limit: Int? = nil
  ) {
    self.usernameKey = usernameKey
    self.kind = kind
    self.since = since
    self.host = host
    self.limit = limit
  }
}
