import FoundationEssentials

/// Whether the device has been activated.
public enum ActivationState: String, Sendable, Equatable {
  /// Not activated: nobody can log in; anyone can activate.
  case publicState = "Public"
  /// Activated: its accounts can log in.
  case activated = "Activated"
}

/// The device's state and, when activated, since when.
public struct DeviceStatus: Equatable, Sendable {
  /// Public or Activated.
  public var state: ActivationState
  /// When the state last changed; nil for a database that was never written.
  public var changedAt: Date?

  /// Creates a status.
  public init(state: ActivationState, changedAt: Date?) {
    self.state = state
    self.changedAt = changedAt
  }
}

/// An account to store; every field already validated and the password hashed.
public struct NewAccount: Equatable, Sendable {
  /// The user name as first entered.
  public var username: String
  /// The user name's comparison key (RFC 8265 case mapping).
  public var usernameKey: String
  /// The full name, as shown at Home.
  public var fullName: String
  /// The e-mail address.
  public var email: String
  /// The password hash in Django's format; never the password.
  public var passwordHash: String
  /// True when the next login must choose a new password first.
  public var mustChangePassword: Bool
  /// True for an account stored disabled (an import of an inactive user).
  public var disabled: Bool
  /// From when the account cannot log in; nil when it never expires.
  public var expiresAt: Date?
  /// Its home folder as a Linux user; nil for the default, `/home/NAME`.
  public var home: String?
  /// Its login shell as a Linux user; nil for the default, `/bin/bash`.
  public var shell: String?

  /// Creates a new account.
  public init(
    username: String, usernameKey: String, fullName: String, email: String, passwordHash: String,
    mustChangePassword: Bool = false, disabled: Bool = false, expiresAt: Date? = nil,
    home: String? = nil, shell: String? = nil
  ) {
    self.home = home
    self.shell = shell
    self.username = username
    self.usernameKey = usernameKey
    self.fullName = fullName
    self.email = email
    self.passwordHash = passwordHash
    self.mustChangePassword = mustChangePassword
    self.disabled = disabled
    self.expiresAt = expiresAt
  }
}

/// A stored account.
public struct Account: Equatable, Sendable {
  /// The store's identifier; stable while the account exists.
  public var id: Int64
  /// The user name as entered.
  public var username: String
  /// The user name's comparison key.
  public var usernameKey: String
  /// The full name.
  public var fullName: String
  /// The e-mail address.
  public var email: String
  /// The password hash in Django's format.
  public var passwordHash: String
  /// True for the device's owner (the one the activation names).
  public var isOwner: Bool
  /// True when the next login must choose a new password first.
  public var mustChangePassword: Bool
  /// Since when the account cannot log in; nil when enabled.
  public var disabledAt: Date?
  /// When the account was stored.
  public var createdAt: Date
  /// When the account last changed.
  public var updatedAt: Date
  /// When its password was last set (a stronger hash of the same password does not count):
  /// what tells a check that raced a password change from one that raced a rehash.
  public var passwordChangedAt: Date
  /// When the account last logged in successfully, if ever.
  public var lastLoginAt: Date?
  /// From when the account cannot log in (as a disabled one cannot); nil when it never expires.
  public var expiresAt: Date?
  /// Its uid as a Linux user (its per-user group's gid too); nil until its first user record.
  public var uid: Int64?
  /// Its home folder as stored; nil for the default (`homeDirectory` gives the one in force).
  public var home: String?
  /// Its login shell as stored; nil for the default (`loginShell` gives the one in force).
  public var shell: String?

  /// Creates an account value.
  public init(
    id: Int64, username: String, usernameKey: String, fullName: String, email: String,
    passwordHash: String, isOwner: Bool, mustChangePassword: Bool, disabledAt: Date?,
    createdAt: Date, updatedAt: Date, passwordChangedAt: Date, lastLoginAt: Date?,
    expiresAt: Date? = nil, uid: Int64? = nil, home: String? = nil, shell: String? = nil
  ) {
    self.uid = uid
    self.home = home
    self.shell = shell
    self.id = id
    self.username = username
    self.usernameKey = usernameKey
    self.fullName = fullName
    self.email = email
    self.passwordHash = passwordHash
    self.isOwner = isOwner
    self.mustChangePassword = mustChangePassword
    self.disabledAt = disabledAt
    self.createdAt = createdAt
    self.updatedAt = updatedAt
    self.passwordChangedAt = passwordChangedAt
    self.lastLoginAt = lastLoginAt
    self.expiresAt = expiresAt
  }

  /// True when the account was disabled (it cannot log in).
  public var isDisabled: Bool { disabledAt != nil }

  /// True when the account has expired at `now`: from its expiry moment on (`expiresAt <= now`)
  /// it cannot log in, as a disabled one cannot.
  public func isExpired(at now: Date) -> Bool {
    guard let expiresAt else { return false }
    return expiresAt <= now
  }

  /// True when `name` is the stored user name byte for byte (not merely the same key, nor
  /// canonically equivalent Unicode, which Swift's `==` would accept).
  public func isNamed(exactly name: String) -> Bool {
    username.utf8.elementsEqual(name.utf8)
  }
}

/// An account with its name's failed-login tally: one line of `user list`.
public struct AccountListing: Equatable, Sendable {
  /// The account.
  public var account: Account
  /// Its user name's tally.
  public var tally: ThrottleState
  /// The names of the groups it belongs to, sorted.
  public var groups: [String]

  /// Creates a listing.
  public init(account: Account, tally: ThrottleState, groups: [String] = []) {
    self.account = account
    self.tally = tally
    self.groups = groups
  }
}

/// The failed-login tally of one user name.
public struct ThrottleState: Equatable, Sendable {
  /// Failures since the last success or the last lock.
  public var failures: Int
  /// How many times a lock has been earned since the last success or unlock.
  public var lockouts: Int
  /// Until when attempts are refused, if locked.
  public var lockedUntil: Date?

  /// No failures, no lock.
  public static let clear = ThrottleState(failures: 0, lockouts: 0, lockedUntil: nil)

  /// Creates a tally.
  public init(failures: Int, lockouts: Int, lockedUntil: Date?) {
    self.failures = failures
    self.lockouts = lockouts
    self.lockedUntil = lockedUntil
  }

  /// The lock's end if it is still in force at `now`.
  public func lock(at now: Date) -> Date? {
    guard let lockedUntil, lockedUntil > now else { return nil }
    return lockedUntil
  }
}

/// How many failures earn a lock and how long it lasts.
public struct LockoutPolicy: Equatable, Sendable {
  /// Consecutive failures that earn a lock.
  public var threshold: Int
  /// The first lock's length in seconds; each further one lasts twice as long.
  public var firstLock: TimeInterval
  /// The longest lock in seconds.
  public var longestLock: TimeInterval
  /// How long a name's count and lock history is kept after its last failure once no lock is
  /// in force, in seconds; the same for every name, known or not, so that it reveals nothing.
  public var forgetAfter: TimeInterval

  /// Five failures, one minute doubling up to one hour; forgotten after a day without failures.
  public static let standard = LockoutPolicy(
    threshold: 5, firstLock: 60, longestLock: 3600, forgetAfter: 86_400)

  /// Creates a policy.
  public init(
    threshold: Int, firstLock: TimeInterval, longestLock: TimeInterval,
    forgetAfter: TimeInterval = 86_400
  ) {
    self.threshold = threshold
    self.firstLock = firstLock
    self.longestLock = longestLock
    self.forgetAfter = forgetAfter
  }

  /// The length of the `count`-th lock (1-based); any stored count, however absurd, gives a
  /// length between the first and the longest lock.
  public func duration(ofLock count: Int) -> TimeInterval {
    let doublings = count <= 1 ? 0 : min(count - 1, 30)
    return min(firstLock * Double(1 << doublings), longestLock)
  }

  /// The tally after one more failure at `date`: counts saturate instead of overflowing (a
  /// damaged or tampered count still counts the attempt), and the threshold earns a lock.
  public func tally(afterFailure tally: ThrottleState, at date: Date) -> (ThrottleState, Date?) {
    var next = tally
    next.lockouts = max(tally.lockouts, 0)
    next.failures = max(tally.failures, 0).addingSaturating(1)
    guard next.failures >= threshold else { return (next, nil) }
    next.lockouts = next.lockouts.addingSaturating(1)
    next.failures = 0
    let until = date.addingTimeInterval(duration(ofLock: next.lockouts))
    next.lockedUntil = until
    return (next, until)
  }
}

extension Int {
  /// `self + other`, or `Int.max` where that would overflow.
  func addingSaturating(_ other: Int) -> Int {
    let (sum, overflow) = addingReportingOverflow(other)
    return overflow ? .max : sum
  }
}
