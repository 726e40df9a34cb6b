/// What the PAM conversation answered to a question about a password.
public enum PamAnswer: Equatable, Sendable {
  /// The person typed it at this question.
  case typed([UInt8])
  /// An earlier module of the stack had it (`use_first_pass`, `try_first_pass`): nobody typed
  /// it for this module, so a wrong one may be asked for again.
  case stacked([UInt8])
  /// No answer: the conversation failed, or the service line forbids asking.
  case none

  /// The answer's bytes; nil for `none`.
  public var bytes: [UInt8]? {
    switch self {
    case .typed(let bytes), .stacked(let bytes): return bytes
    case .none: return nil
    }
  }
}

/// The questions `pam_accounts.so` relays to the calling program's conversation (`login`,
/// `sshd`, `su`…), in the flows' own words; the CLI speaks the module's line protocol.
///
/// The core asks through it, never through a terminal: the module decides whether a password
/// comes from the stack (`use_first_pass`) or from the person.
public protocol PamConversation: AnyObject {
  /// The account's current password for authentication (PAM_AUTHTOK).
  func password(prompt: String) -> PamAnswer
  /// The account's current password for a change (PAM_OLDAUTHTOK).
  func oldPassword(prompt: String) -> PamAnswer
  /// Another answer typed with echo off (a verification code, a new password).
  func secret(prompt: String) -> PamAnswer
  /// A line the person is shown (PAM_TEXT_INFO).
  func info(_ text: String)
  /// A line the person is shown as an error (PAM_ERROR_MSG).
  func error(_ text: String)
  /// A line for the system log: what went wrong for the administrator (never a secret).
  func log(_ text: String)
}

/// What `pam_accounts.so` returns to the calling program, by the name the line protocol uses.
public enum PamVerdict: String, Sendable, CaseIterable {
  /// PAM_SUCCESS.
  case success
  /// PAM_AUTH_ERR: wrong user name, password or code, or an account that cannot log in.
  case authenticationError = "auth_err"
  /// PAM_MAXTRIES: the user name is locked after too many failures.
  case maximumTries = "maxtries"
  /// PAM_USER_UNKNOWN: no such account (a stack falls through to pam_unix).
  case userUnknown = "user_unknown"
  /// PAM_ACCT_EXPIRED: the account is disabled or past its expiry date.
  case accountExpired = "acct_expired"
  /// PAM_NEW_AUTHTOK_REQD: the password must be changed before the login goes on.
  case newPasswordRequired = "new_authtok_reqd"
  /// PAM_PERM_DENIED: the account is in none of the groups the service line allows.
  case permissionDenied = "perm_denied"
  /// PAM_AUTHINFO_UNAVAIL: the store cannot be read (unreachable, busy, damaged).
  case storeUnavailable = "authinfo_unavail"
  /// PAM_AUTHTOK_ERR: a new password was refused.
  case passwordChangeError = "authtok_err"
  /// PAM_AUTHTOK_RECOVERY_ERR: the current password for a change was wrong.
  case passwordRecoveryError = "authtok_recovery_err"
  /// PAM_SYSTEM_ERR: anything else.
  case systemError = "system_err"
}
