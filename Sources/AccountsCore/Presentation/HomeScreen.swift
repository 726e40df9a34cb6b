import FoundationEssentials

/// Home, after a successful login.
public struct HomeScreen: Equatable, Sendable {
  /// The user's full name.
  public var fullName: String
  /// The login before this one, if any.
  public var previousLogin: Date?
  /// Failed attempts since that login (or since activation, when there was none).
  public var failuresSince: Int

  /// Creates a Home screen.
  public init(fullName: String, previousLogin: Date?, failuresSince: Int) {
    self.fullName = fullName
    self.previousLogin = previousLogin
    self.failuresSince = failuresSince
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
