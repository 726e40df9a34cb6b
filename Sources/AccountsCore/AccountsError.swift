import AccountsCrypto
import AccountsStore
import Foundation

/// Exit codes; stable and documented in README.
public enum ExitStatus: Int32, Sendable {
  /// It worked.
  case success = 0
  /// Refused: a form that fails validation, wrong credentials, the wrong state, cancelled.
  case refused = 1
  /// The command line is wrong (unknown flag, missing argument).
  case usage = 2
  /// The database or the environment is unusable (path, permissions, corrupt, busy, disk full).
  case storage = 3
  /// The user name is locked after too many failed logins.
  case locked = 4
  /// Interrupted by Ctrl-C (SIGINT).
  case interrupted = 130
}

/// Where input ended, which says what was (and was not) done.
public enum InputStage: Equatable, Sendable {
  /// At the bare command's "Activate now?" question.
  case activationQuestion
  /// In the Activation Form.
  case form
  /// At the login prompts.
  case login
  /// At the login prompts, right after activating `username` in the bare command.
  case loginAfterActivation(username: String)
  /// At the reset confirmation.
  case resetConfirmation
}

/// Everything a command can refuse or fail with; each prints as one sentence (a refused form
/// may add a line naming the fields).
public enum AccountsError: Error, Equatable, CustomStringConvertible {
  /// The form failed a rule; the associated text is the fixed message.
  case invalidForm(String)
  /// The password is too easy to guess (zxcvbn estimates under 10^8 guesses), mostly because of
  /// the given kind of pattern.
  case guessablePassword(PasswordWeakness)
  /// Fields were left empty: `Please fill all fields!`, then which.
  case incompleteForm(empty: [String])
  /// Login failed: wrong user name or password (never says which).
  case invalidCredentials
  /// The name is locked until the date; `message` says when.
  case locked(until: Date, message: String)
  /// Login or the flow on a Public device.
  case notActivated
  /// Activation on an Activated device.
  case alreadyActivated
  /// Input ended at the given stage; nothing more was done.
  case inputEnded(InputStage)
  /// The person declined (activation question or reset confirmation).
  case declined(String)
  /// Reset with no terminal and no `--yes`.
  case confirmationRequired
  /// zxcvbn's library, which checks new passwords, could not be opened or lacks a function.
  case passwordCheckerUnavailable(library: String, reason: String)
  /// The password blocklist is configured but cannot be read.
  case blocklistUnreadable(path: String, reason: String)
  /// A setting from the environment has a value `accounts` cannot use.
  case invalidSetting(name: String, value: String, expected: String)
  /// An administrator command named a database that does not exist.
  case noDatabase(path: String)
  /// The database failed.
  case storage(StoreError)
  /// The system's cryptography failed.
  case crypto(CryptoError)

  /// The exit code this error ends the process with.
  public var exitStatus: ExitStatus {
    switch self {
    case .invalidForm, .guessablePassword, .incompleteForm, .invalidCredentials, .notActivated,
      .alreadyActivated, .inputEnded, .declined, .confirmationRequired, .noDatabase:
      return .refused
    case .invalidSetting: return .usage
    case .locked: return .locked
    case .passwordCheckerUnavailable, .blocklistUnreadable, .storage, .crypto: return .storage
    }
  }

  /// True for a form that failed its rules (which a terminal asks again).
  public var isFormProblem: Bool {
    switch self {
    case .invalidForm, .guessablePassword, .incompleteForm: return true
    default: return false
    }
  }

  /// The lines it prints: one sentence, and for an incomplete form a second line naming the
  /// empty fields. (Text inside a sentence, such as a path, never makes a line of its own.)
  public var lines: [String] {
    if case .incompleteForm(let empty) = self {
      return [Messages.fillAllFields, Messages.emptyFields(empty)]
    }
    return [description]
  }

  /// One sentence: what is wrong and what to do.
  public var description: String {
    switch self {
    case .invalidForm(let message): return message
    case .guessablePassword(let weakness): return Messages.passwordIsGuessable(weakness)
    case .incompleteForm: return lines.joined(separator: "\n")
    case .invalidCredentials: return Messages.invalidCredentials
    case .locked(_, let message): return message
    case .notActivated: return Messages.runActivateFirst
    case .alreadyActivated: return Messages.alreadyActivated
    case .inputEnded(let stage): return Messages.inputEnded(stage)
    case .declined(let message): return message
    case .confirmationRequired: return Messages.resetNeedsConfirmation
    case .passwordCheckerUnavailable(let library, let reason):
      return Messages.passwordCheckerUnavailable(library, reason: reason)
    case .blocklistUnreadable(let path, let reason):
      return "Cannot read the password blocklist \(path): \(reason)."
    case .invalidSetting(let name, let value, let expected):
      return Messages.invalidSetting(name, value: value, expected: expected)
    case .noDatabase(let path): return Messages.noDatabase(path)
    case .storage(let error): return Self.describe(error)
    case .crypto(let error): return error.description
    }
  }

  /// Wraps a store error, turning `alreadyActivated` into the refusal it is.
  static func from(_ error: StoreError) -> AccountsError {
    error == .alreadyActivated ? .alreadyActivated : .storage(error)
  }

  private static func describe(_ error: StoreError) -> String {
    switch error {
    case .alreadyActivated:
      return Messages.alreadyActivated
    case .isDirectory(let path):
      return "Cannot use the database \(path): it is a directory, not a file."
    case .cannotCreateFolder(let path, let reason):
      return "Cannot create the folder \(path) for the database: \(reason)."
    case .notADatabase(let path):
      return "Cannot use the database \(path): it is not an SQLite database. Move it aside or "
        + "choose another file with --database."
    case .foreignDatabase(let path):
      return "Cannot use the database \(path): it was not made by accounts. Choose another file "
        + "with --database."
    case .corrupt(let path):
      return "Cannot use the database \(path): the file is damaged. Restore it from a backup or "
        + "move it aside."
    case .newerSchema(let path):
      return "Cannot use the database \(path): it was written by a newer version of accounts. "
        + "Upgrade accounts to use it."
    case .readOnly(let path):
      return "Cannot write the database \(path): the file or its folder is read-only."
    case .busy(let path, let seconds):
      return "The database \(path) is busy: another program held it for more than "
        + "\(Int(seconds)) seconds. Try again later."
    case .diskFull(let path):
      return "Cannot write the database \(path): the disk is full. Nothing was changed."
    case .cannotOpen(let path, let reason):
      return "Cannot open the database \(path): \(reason)."
    case .inconsistent(let path):
      return "The database \(path) refused a change that would break its rules; nothing was "
        + "changed."
    case .failure(let path, let reason):
      return "The database \(path) failed: \(reason)."
    case .symlink(let path, let file):
      let what = file == path ? "it is" : "\(file) is"
      return "Cannot use the database \(path): \(what) a symbolic link, which accounts does not "
        + "follow. Name the file itself with --database (links to folders are fine)."
    case .notOurs(let path, let file, let owner, let me):
      return "Cannot use the database \(path): \(file) belongs to the user \(owner), not to you "
        + "(\(me)). If it is yours, run `chown \(me) \(file)`; otherwise use it as \(owner)."
    case .notPrivate(let path, let file, let mode):
      return "Cannot use the database \(path): other users may read or write \(file) (mode "
        + "\(String(mode, radix: 8))). Run `chmod 600 \(file)` to make it private."
    case .unsafeFolder(let path, let folder, .ownedBy(let owner)):
      return "Cannot use the database \(path): its folder \(folder) belongs to the user "
        + "\(owner), who could replace the file. Choose a folder of your own with --database."
    case .unsafeFolder(let path, let folder, .writableByOthers(let mode)):
      return "Cannot use the database \(path): other users may write its folder \(folder) "
        + "(mode \(String(mode, radix: 8)), not sticky) and replace the file. Run "
        + "`chmod go-w \(folder)` or choose a private folder with --database."
    }
  }
}
