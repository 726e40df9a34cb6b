import FoundationEssentials

/// Home, after a successful login.
public struct HomeScreen: Equatable, Sendable {
  /// The user's full name.
  public var fullName: String
  /// The login before this one, if any.
  public var previousLogin: Date?
  /// Failed attempts since that login (or since activation, when there was none).
  public var failuresSince: Int
  /// The second factor's secret and the step accepted, or nil.
  ///
  /// Given only when the store's server checked a TOTP code and accepted it with the password
  /// (a PostgreSQL store): what a host's offline-login cache may keep, sealed under a key
  /// derived from the password.
  public var learnedSecondFactor: LearnedSecondFactor?
  /// The hashes of the unused recovery codes, or nil.
  ///
  /// Given only when the store's server took a second step with the password and the login
  /// asked for them (`LoginCompletion.keepsRecoveryCodes`): what a host's login cache keeps
  /// when this host may not read them itself.
  public var learnedRecoveryCodes: [[UInt8]]?
  /// The identity of the store that let the login in (a PostgreSQL store's `store_id`), or nil:
  /// what the session file records beside the store's URI.
  public var storeID: String?

  /// Creates a Home screen.
  public init(
    fullName: String, previousLogin: Date?, failuresSince: Int,
    learnedSecondFactor: LearnedSecondFactor? = nil, learnedRecoveryCodes: [[UInt8]]? = nil,
    storeID: String? = nil
  ) {
    self.fullName = fullName
    self.previousLogin = previousLogin
    self.failuresSince = failuresSince
    self.learnedSecondFactor = learnedSecondFactor
    self.learnedRecoveryCodes = learnedRecoveryCodes
    self.storeID = storeID
  }

  /// The lines Home prints: welcome, last login, failures.
  public func lines(timeZone: TimeZone) -> [String] {
    var lines = [Messages.welcomeBack(fullName)]
    if let previousLogin {
      lines.append(Messages.lastLogin(TimeText.long(previousLogin, timeZone: timeZone)))
    }
    if failuresSince > 0 {
      lines.append(
        Messages.failedAttemptsSince(failuresSince, sinceActivation: previousLogin == nil))
    }
    return lines
  }
}

/// A second factor's secret as the store's server gives it to a login it accepted with the
/// password and a TOTP code, and the time step of that code.
public struct LearnedSecondFactor: Equatable, Sendable {
  /// The TOTP secret, in the clear: keep it only sealed under a key derived from the password.
  public var secret: [UInt8]
  /// The time step of the code accepted (no later code of it or before it is accepted).
  public var step: UInt64

  /// Creates a learned second factor.
  public init(secret: [UInt8], step: UInt64) {
    self.secret = secret
    self.step = step
  }
}
