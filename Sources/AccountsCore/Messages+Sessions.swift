import FoundationEssentials

/// The sentences of sessions and the second factor.
extension Messages {
  // MARK: Sessions

  /// `whoami` (and the commands that need a session) when there is none.
  public static let notLoggedIn = "Not logged in."
  /// `whoami`'s first line.
  public static func loggedInAs(_ username: String, fullName: String) -> String {
    "Logged in as \(username) (\(fullName))."
  }
  /// `whoami`'s second line.
  public static func sessionEnds(at end: String, idle: String) -> String {
    "The session ends at \(end), or sooner after \(idle) without use."
  }
  /// `logout`.
  public static let loggedOut = "Logged out."
  /// `logout --all`.
  public static func loggedOutAll(_ count: Int) -> String {
    "Logged out: \(count) \(count == 1 ? "session" : "sessions") ended."
  }
  /// `session revoke ID`.
  public static func sessionEnded(_ id: Int64, username: String) -> String {
    "Session \(id) of \(username) ended."
  }
  /// `session revoke --user NAME`.
  public static func sessionsEnded(_ count: Int, username: String) -> String {
    "Ended \(count) \(count == 1 ? "session" : "sessions") of \(username)."
  }
  /// `session revoke` of an unknown or ended session.
  public static func noSuchSession(_ id: Int64) -> String { "No session \(id)." }
  /// `session revoke` with both or neither of ID and --user.
  public static let revokeNeedsOneTarget = "Give a session ID or --user NAME (one of them)."
  /// Audit detail: which session (an id, or a mark a store puts it in for).
  public static func detailSession(_ id: some CustomStringConvertible) -> String {
    "session \(id)"
  }
  /// Audit detail of `logout --all`.
  public static func detailSessions(_ count: Int) -> String {
    count == 1 ? "1 session" : detailManySessions(count)
  }
  /// Audit detail of `logout --all` that ended more than one session (a count, or a mark).
  public static func detailManySessions(_ count: some CustomStringConvertible) -> String {
    "\(count) sessions"
  }

  // MARK: The second factor

  /// The second step's prompt.
  public static let verificationCodePrompt = "Verification code"
  /// A wrong code (or an unknown or used recovery code).
  public static let invalidVerificationCode = "Invalid verification code!"
  /// A right code of a step already used.
  public static let replayedVerificationCode = "That code was already used; wait for the next one."
  /// After the second step.
  public static let successfullyAuthorized = "You are successfully authorized."
  /// A recovery code was used.
  public static func recoveryCodeAccepted(left: Int) -> String {
    "Recovery code accepted; \(left) left."
  }
  /// Few recovery codes left.
  public static func fewRecoveryCodesLeft(_ count: Int) -> String {
    "Only \(count) recovery \(count == 1 ? "code" : "codes") left: make new ones with "
      + "accounts 2fa recovery-codes."
  }
  /// Enrollment: a code of a step outside the window.
  public static func clockOff(seconds: Int) -> String {
    "That code is for a time about \(abs(seconds)) seconds "
      + "\(seconds > 0 ? "ahead of" : "behind") this device's clock: set the clock right and "
      + "try again."
  }
  /// `2fa enable` on an account that has a second factor.
  public static func secondFactorAlreadyOn(_ name: String) -> String {
    "Two-factor authentication is already on for \(name)."
  }
  /// A change of a second factor that is not there.
  public static func secondFactorNotOn(_ name: String) -> String {
    "Two-factor authentication is not on for \(name)."
  }
  /// `2fa enable --confirm` with no pending secret.
  public static func noPendingSecondFactor(_ name: String) -> String {
    "No new secret waits for a code for \(name): run accounts 2fa enable --begin first."
  }
  /// `2fa enable --confirm` after the pending secret expired.
  public static func pendingSecondFactorExpired(_ name: String) -> String {
    "The new secret for \(name) expired unconfirmed and was deleted: run accounts 2fa enable "
      + "--begin again."
  }
  /// `2fa enable --begin` done.
  public static func pendingSecondFactorKept(_ name: String, until: String) -> String {
    "Two-factor authentication for \(name) waits for a code from the app until \(until): run "
      + "accounts 2fa enable --confirm."
  }
  /// `2fa status`: a pending secret.
  public static func pendingSecondFactorStatus(_ name: String, until: String) -> String {
    "A new secret for \(name) waits for its first code until \(until) "
      + "(accounts 2fa enable --confirm)."
  }
  /// `2fa enable --begin` with `--confirm`.
  public static let enableStepsConflict =
    "Give --begin or --confirm, not both."
  /// `2fa enable --qr` with `--confirm`.
  public static let confirmShowsNoQR =
    "--confirm shows no QR code: leave --qr out."
  /// Before the QR code.
  public static let scanThis =
    "Scan this QR code with your authenticator app, or type the key below into it."
  /// Before the key, where no QR code is drawn (`--qr none`).
  public static let typeThis =
    "Type the key below into your authenticator app, or open the URI with it."
  /// The URI line.
  public static func uriLine(_ uri: String) -> String { "URI: \(uri)" }
  /// The key line.
  public static func keyLine(_ key: String) -> String { "Key: \(key)" }
  /// Enrollment done.
  public static func secondFactorOn(_ name: String) -> String {
    "Two-factor authentication is on for \(name)."
  }
  /// Before the first recovery codes.
  public static let recoveryCodesIntro =
    "Recovery codes (each works once in place of a code; they are not shown again):"
  /// Before a new set of recovery codes.
  public static func newRecoveryCodesIntro(_ name: String) -> String {
    "New recovery codes for \(name) (the old ones no longer work; these are not shown again):"
  }
  /// `2fa disable`.
  public static func secondFactorOff(_ name: String) -> String {
    "Two-factor authentication is off for \(name)."
  }
  /// `2fa status`, on.
  public static func secondFactorStatusOn(_ name: String, since: String, left: Int) -> String {
    "Two-factor authentication is on for \(name) since \(since); \(left) recovery "
      + "\(left == 1 ? "code" : "codes") left."
  }
  /// `user reset-2fa`.
  public static func secondFactorReset(_ name: String) -> String {
    "Two-factor authentication turned off for \(name); their sessions ended."
  }
  /// `user show`'s line.
  public static func secondFactorDetail(since: String?, left: Int) -> String {
    guard let since else { return "Two-factor: off" }
    return "Two-factor: on since \(since) (\(left) recovery \(left == 1 ? "code" : "codes") left)"
  }
  /// Audit details.
  public static let detailWrongCode = "wrong verification code"
  /// Audit detail of a replayed code.
  public static let detailReplayedCode = "verification code replayed"
  /// Audit detail: how many recovery codes remain.
  public static func detailCodesLeft(_ count: Int) -> String { "\(count) left" }
  /// `detailCodesLeft` for every count a store can have left (index = count).
  public static let detailsCodesLeft = (0...SecondFactor.recoveryCodeCount).map(detailCodesLeft)

  // MARK: Files

  /// What is wrong with the session file or the key file.
  public static func clientFile(_ problem: ClientFileProblem) -> String {
    func name(_ kind: ClientFileProblem.Kind, _ path: String) -> String {
      switch kind {
      case .sessionFile: return "The session file \(path)"
      case .keyFile: return "The key file \(path)"
      case .unreachedSyncsFile: return "The file of syncs that could not reach the server \(path)"
      }
    }
    func remedy(_ kind: ClientFileProblem.Kind) -> String {
      switch kind {
      case .sessionFile: return "Remove it and log in again."
      case .keyFile: return "Make it yours with mode 0600 (chmod 600), or restore it from a backup."
      case .unreachedSyncsFile: return "Remove it (it only counts syncs for store health)."
      }
    }
    switch problem {
    case .notPrivate(let kind, let path, let mode):
      return "\(name(kind, path)) can be read or written by others (mode \(mode)); it was not "
        + "used. \(remedy(kind))"
    case .wrongOwner(let kind, let path, let owner):
      return "\(name(kind, path)) belongs to another user (uid \(owner)); it was not used. "
        + remedy(kind)
    case .notAFile(let kind, let path):
      return "\(name(kind, path)) is not a regular file (a link or a folder); it was not used. "
        + remedy(kind)
    case .damaged(let kind, let path):
      return "\(name(kind, path)) is damaged; it was not used. "
        + (kind == .keyFile ? "Restore it from a backup." : remedy(kind))
    case .unusable(let kind, let path, let reason):
      return "\(name(kind, path)) cannot be used: \(reason)."
    case .keyMissing(let path):
      return "The key file \(path) is missing, so verification codes cannot be checked. Restore "
        + "it from a backup, or an administrator can turn the second factor off with "
        + "accounts user reset-2fa NAME (recovery codes still work)."
    case .wrongKey(let path):
      return "The key file \(path) is not the key the second factor was sealed with. Restore "
        + "the right one from a backup, or an administrator can turn the second factor off "
        + "with accounts user reset-2fa NAME (recovery codes still work)."
    case .folderNotPrivate(let kind, let path):
      return "\(name(kind, path)) is in a folder that other users can write to or that is not "
        + "yours; it was not used."
    case .unsafeFolder(let kind, let path, let folder, .ownedBy(let owner)):
      return "Cannot use \(name(kind, path).lowercasingFirst): its folder \(folder) belongs to "
        + "the user \(owner), who could replace the file. Keep it in a folder of your own."
    case .unsafeFolder(let kind, let path, let folder, .writableByOthers(let mode)):
      return "Cannot use \(name(kind, path).lowercasingFirst): other users may write its folder "
        + "\(folder) (mode \(String(mode, radix: 8)), not sticky) and replace the file. Run "
        + "`chmod go-w \(folder)` or keep it in a private folder."
    }
  }
}

extension String {
  /// The text with its first letter lowercased ("The key file" in the middle of a sentence).
  fileprivate var lowercasingFirst: String { prefix(1).lowercased() + dropFirst() }
}
