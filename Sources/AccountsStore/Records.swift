import Foundation

/// Whether the device has been activated.
public enum ActivationState: String, Sendable, Equatable {
  /// Not activated: nobody can log in; anyone can activate.
  case publicState = "Public"
  /// Activated: its user can log in.
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

/// A user to store at activation; every field already validated and the password hashed.
public struct NewUser: Equatable, Sendable {
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

  /// Creates a new user.
  public init(
    username: String, usernameKey: String, fullName: String, email: String, passwordHash: String
  ) {
    self.username = username
    self.usernameKey = usernameKey
    self.fullName = fullName
    self.email = email
    self.passwordHash = passwordHash
  }
}

/// The stored user of an activated device.
public struct StoredUser: Equatable, Sendable {
  /// The user name as first entered.
  public var username: String
  /// The user name's comparison key.
  public var usernameKey: String
  /// The full name.
  public var fullName: String
  /// The e-mail address.
  public var email: String
  /// The password hash in Django's format.
  public var passwordHash: String
  /// When the user was stored.
  public var createdAt: Date
  /// When the user last logged in successfully, if ever.
  public var lastLoginAt: Date?
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

/// What login needs to read in one go: the account (if any), the name's tally, and a stored
/// hash whose cost an unknown name must match.
public struct LoginRecord: Equatable, Sendable {
  /// The account with the name's key, if any.
  public var user: StoredUser?
  /// The name's failed-login tally.
  public var tally: ThrottleState
  /// The password hash of the device's account (whatever name was typed), nil on a Public device.
  public var referenceHash: String?
}

/// The kinds of event in the audit log.
public enum AuditEventKind: String, Sendable, Equatable, CaseIterable {
  /// The device was activated.
  case activation
  /// A login succeeded.
  case loginSuccess = "login_success"
  /// A login failed (wrong name or password, or refused while locked).
  case loginFailure = "login_failure"
  /// A user name earned a lock.
  case lockout
  /// An administrator cleared a user name's failures and lock.
  case unlock
  /// An administrator returned the device to Public.
  case reset
}

/// One line of the audit log.
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

  /// Creates an event.
  public init(
    id: Int64, occurredAt: Date, kind: AuditEventKind, username: String?, detail: String?
  ) {
    self.id = id
    self.occurredAt = occurredAt
    self.kind = kind
    self.username = username
    self.detail = detail
  }
}

/// What recording a failed login did.
public enum LoginFailureOutcome: Equatable, Sendable {
  /// The failure was counted; `failures` in a row so far.
  case counted(failures: Int)
  /// This failure earned a lock until the date.
  case lockedNow(until: Date)
  /// The name was already locked until the date; nothing was checked.
  case alreadyLocked(until: Date)
}

/// What recording a successful login found.
public enum LoginSuccessOutcome: Equatable, Sendable {
  /// Logged in; the previous login's time and the failures since it.
  case loggedIn(previousLogin: Date?, failuresSince: Int)
  /// The name was locked meanwhile (by a concurrent process); the login is refused.
  case locked(until: Date)
}
