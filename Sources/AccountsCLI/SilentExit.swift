import AccountsCore

/// Ends the process with `status` and prints nothing (`verify`'s and `pam-auth`'s answers).
struct SilentExit: Error {
  var status: ExitStatus

  /// Ends with `status`.
  init(status: ExitStatus) { self.status = status }

  /// The silent answer to a refused check (a wrong password or code: 1; locked: 4); nil for
  /// any other error, which says its sentence.
  init?(answering error: AccountsError) {
    switch error {
    case .invalidCredentials, .invalidVerificationCode, .replayedVerificationCode:
      status = .refused
    case .locked: status = .locked
    default: return nil
    }
  }
}
