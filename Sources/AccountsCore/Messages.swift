import FoundationEssentials

/// Every sentence `accounts` shows a person, in one place.
///
/// The first four are fixed by the product, word for word.
public enum Messages {
  /// A form field was left empty (white space alone counts as empty).
  public static let fillAllFields = "Please fill all fields!"
  /// The two passwords of the activation form differ.
  public static let passwordsMustMatch = "Passwords must match!"
  /// A login failed; the same words whichever of the two was wrong.
  public static let invalidCredentials = "Invalid user name or password!"
  /// Home, after a successful login.
  public static func welcomeBack(_ fullName: String) -> String { "Welcome back \(fullName)!" }

  /// The activation screen's first line.
  public static let notActivatedYet = "This device is not activated yet."
  /// The activation screen's question.
  public static let activateNowPrompt = "Activate now? [Y/n] "
  /// Login, or the bare command, on a Public device.
  public static let runActivateFirst =
    "This device is not activated yet. Run `accounts activate` to activate it."
  /// Activation on a device that already is.
  public static let alreadyActivated =
    "This device is already activated. An administrator can run `accounts reset` to make it Public again."
  /// After a successful activation.
  public static func activated(_ username: String) -> String {
    "Device activated for \(username)."
  }
  /// Between activation and login in the bare command.
  public static let logInToContinue = "Log in to continue."
  /// What end of input meant, at each place it can happen.
  public static func inputEnded(_ stage: InputStage) -> String {
    switch stage {
    case .activationQuestion:
      return "Input ended at the activation question; nothing was stored."
    case .form:
      return "Input ended before all fields were given; nothing was stored."
    case .login:
      return "Input ended before the login was complete; you are not logged in."
    case .loginAfterActivation(let username):
      return "Input ended before the login; the device stays activated for \(username). "
        + "Run `accounts login` to log in."
    case .resetConfirmation:
      return "Input ended before the reset was confirmed; nothing was changed."
    case .removalConfirmation:
      return "Input ended before the removal was confirmed; nothing was changed."
    case .newPasswordAtLogin:
      return "Input ended before a new password was chosen; you are not logged in."
    case .passwordChange:
      return "Input ended before the new password was given; nothing was changed."
    case .enrollment:
      return "Input ended before a verification code was given; two-factor authentication was "
        + "not turned on."
    case .secondFactorChange:
      return "Input ended before the verification code was given; nothing was changed."
    }
  }
  /// After `Please fill all fields!`: which fields were empty.
  public static func emptyFields(_ fields: [String]) -> String {
    "Empty: \(fields.joined(separator: ", "))."
  }
  /// Said at a terminal before the password is asked.
  public static let passwordRules =
    "Choose a password of 15 to 1,024 characters (a few unrelated words work well); not your "
    + "user name, name or e-mail, not easy to guess (a common password, a keyboard row, a "
    + "repeat, a run like 12345, a date), not on the administrator's list."
  /// The person answered no to a question.
  public static let activationDeclined = "Activation cancelled; nothing was stored."

  /// Form prompts, in the order they are asked.
  public static let usernamePrompt = "User name"
  /// Form prompt.
  public static let fullNamePrompt = "Full name"
  /// Form prompt.
  public static let emailPrompt = "E-mail address"
  /// Form prompt.
  public static let passwordPrompt = "Password"
  /// Form prompt.
  public static let passwordAgainPrompt = "Password again"

  /// Lock message: always contains "Too many failed attempts".
  public static func tooManyAttempts(until: String, remaining: String) -> String {
    "Too many failed attempts! Try again in \(remaining), after \(until)."
  }
  /// Home's second line.
  public static func lastLogin(_ when: String) -> String { "Last login: \(when)" }
  /// Home's third line, when there were failures: since the last login, or since activation
  /// when there was none.
  public static func failedAttemptsSince(_ count: Int, sinceActivation: Bool) -> String {
    let since = sinceActivation ? "since activation" : "since your last login"
    return count == 1 ? "1 failed attempt \(since)" : "\(count) failed attempts \(since)"
  }
  /// The audit log's word for a failed login.
  public static let detailInvalidCredentials = "invalid user name or password"
  /// The audit log's word for a login refused because the stored hash cannot be used.
  public static let detailDamagedHash =
    "the stored password hash is damaged (unreadable, or more iterations than the ceiling)"

  /// Reset: the word to type.
  public static let resetWord = "reset"
  /// Reset: what will happen.
  public static func resetWarning(accounts: Int) -> String {
    accounts == 0
      ? "This makes this device Public again."
      : "This deletes every account (\(accounts)) and makes this device Public again."
  }
  /// Reset: the question.
  public static let resetPrompt = "Type \"reset\" to confirm: "
  /// Reset: done.
  public static let resetDone = "Device reset: it is Public again and its accounts were deleted."
  /// Reset on a Public device.
  public static let alreadyPublic = "This device is already Public; nothing to reset."
  /// What was declined, and that nothing happened.
  public static func declined(_ what: Declined) -> String {
    switch what {
    case .activation: return activationDeclined
    case .reset: return "Reset cancelled; nothing was changed."
    case .removal: return "Removal cancelled; nothing was changed."
    }
  }
  /// A destructive command without a terminal and without `--yes`.
  public static func needsConfirmation(_ what: Declined) -> String {
    switch what {
    case .activation, .reset:
      return "Refusing to reset without confirmation: run it at a terminal or pass --yes."
    case .removal:
      return "Refusing to remove an account without confirmation: run it at a terminal or pass "
        + "--yes."
    }
  }

  // Accounts (administrator commands).

  /// `user add` done.
  public static func accountAdded(_ name: String) -> String { "Account added: \(name)." }
  /// `user edit` changed fields.
  public static func accountEdited(_ name: String) -> String { "Account edited: \(name)." }
  /// `user edit --owner` done.
  public static func ownershipMoved(_ name: String) -> String { "Ownership moved to \(name)." }
  /// `user edit` with values equal to the stored ones.
  public static func nothingToEdit(_ name: String) -> String { "Nothing to change for \(name)." }
  /// `user disable` done.
  public static func accountDisabled(_ name: String) -> String { "Account disabled: \(name)." }
  /// `user disable` of a disabled account.
  public static func alreadyDisabled(_ name: String) -> String {
    "\(name) is already disabled; nothing changed."
  }
  /// `user enable` done.
  public static func accountEnabled(_ name: String) -> String { "Account enabled: \(name)." }
  /// `user enable` of an enabled account.
  public static func notDisabled(_ name: String) -> String {
    "\(name) is not disabled; nothing changed."
  }
  /// `user remove`: what will happen.
  public static func removalWarning(_ name: String) -> String {
    "This deletes the account \(name)."
  }
  /// `user remove`: the word to type.
  public static let removalWord = "remove"
  /// `user remove`: the question.
  public static let removalPrompt = "Type \"remove\" to confirm: "
  /// `user remove` done.
  public static func accountRemoved(_ name: String) -> String { "Account removed: \(name)." }
  /// `user passwd` done.
  public static func passwordSet(_ name: String, mustChange: Bool) -> String {
    mustChange
      ? "Password set for \(name); it must be changed at the next login."
      : "Password set for \(name)."
  }
  /// `passwd` done.
  public static func passwordChanged(_ name: String) -> String {
    "Password changed for \(name)."
  }
  /// Login of an account that must change its password, before the new-password prompts.
  public static let mustChangePassword = "You must choose a new password before you continue."
  /// Prompt of `passwd`.
  public static let currentPasswordPrompt = "Current password"
  /// Prompt of `passwd`, `user passwd` and a forced change at login.
  public static let newPasswordPrompt = "New password"
  /// Second prompt of the same.
  public static let newPasswordAgainPrompt = "New password again"
  /// An administrator command naming an unknown account.
  public static func noSuchAccount(_ name: String) -> String { "No account named \(name)." }
  /// A user name already used (compared case-insensitively).
  public static func usernameTaken(_ name: String) -> String {
    "User name \(name) is already taken!"
  }
  /// Removing the owner while others exist.
  public static func ownerCannotBeRemoved(_ name: String) -> String {
    "\(name) owns this device; first move ownership with `accounts user edit OTHER --owner`."
  }
  /// Removing the last account.
  public static func lastAccount(_ name: String) -> String {
    "\(name) is the last account; run `accounts reset` to make the device Public instead."
  }
  /// The audit log's word for a login refused because the account is disabled.
  public static let detailDisabled = "account disabled"
  /// The audit log's word for a login refused because the account has expired.
  public static let detailExpired = "account expired"
  /// The audit log's word for an administrator's password that must be changed.
  public static let detailMustChange = "must change at next login"
  /// The audit log's word for a password changed because a login required it.
  public static let detailRequiredAtLogin = "required at login"
  /// The audit log's word for an attempt refused while the name is locked.
  public static let detailLocked = "locked"
  /// The audit log's words for a lock earned.
  public static func detailLockedUntil(_ time: String) -> String { "locked until \(time)" }
  /// The audit log's words for a rename, in `account_edited`.
  public static func detailRenamed(_ old: String, _ new: String) -> String {
    "user name \(old) -> \(new)"
  }
  /// The audit log's word for a changed full name, in `account_edited`.
  public static let detailFullName = "full name"
  /// The audit log's word for a changed e-mail address, in `account_edited`.
  public static let detailEmail = "e-mail"
  /// The audit log's words for a reset.
  public static func detailAccountsDeleted(_ count: Int) -> String {
    count == 1 ? "1 account deleted" : "\(count) accounts deleted"
  }
  /// The audit log's words for ownership moved away from `previous`.
  public static func detailOwnershipFrom(_ previous: String) -> String { "from \(previous)" }

  /// `status` where no store exists: the second line.
  public static func databaseMissing(_ path: String, in container: StoreContainer) -> String {
    switch container {
    case .sharedDatabase: return "Database: \(path) (this database holds no accounts store yet)"
    case .ownFile: return "Database: \(path) (no database exists at this path)"
    }
  }
  /// An administrator command on a database that does not exist.
  public static func noDatabase(_ path: String) -> String {
    "No database exists at \(path); nothing was changed. Check --database or ACCOUNTS_DATABASE."
  }
  /// A setting from the environment that cannot be used.
  public static func invalidSetting(_ name: String, value: String, expected: String) -> String {
    "\(name) must be \(expected), not \"\(value)\"."
  }

  // The command line's own refusals (exit 2), as the argument parser prints them.

  /// `log --limit` below 1.
  public static let limitAtLeastOne = "--limit must be at least 1."
  /// `log --user ""`.
  public static let userFilterEmpty = "--user must not be empty."
  /// `log --host ""`.
  public static let hostFilterEmpty = "--host must not be empty."
  /// `log --event` of a kind that does not exist.
  public static var eventKinds: String {
    "--event must be one of: \(AuditEventKind.known.map(\.rawValue).joined(separator: ", "))."
  }
  /// `log --since` that is no date, time or age.
  public static let sinceForms =
    "--since must be a UTC date (2026-11-23), a UTC time (2026-11-23T10:00:00Z) or an age "
    + "(90s, 30m, 2h, 7d)."
  /// `verify` without `--password-stdin`.
  public static let verifyNeedsPasswordStdin =
    "--password-stdin is required: verify reads the password as one line of standard input."
  /// `user edit` with nothing to change.
  public static let editNeedsAChange =
    "Give at least one of --full-name, --email, --username, --owner, --expires, --add-group, "
    + "--remove-group."

  /// Unlock done.
  public static func unlocked(_ username: String, failures: Int, wasLocked: Bool) -> String {
    if wasLocked { return "Unlocked \(username): its lock and failed-login count are cleared." }
    if failures > 0 { return "Unlocked \(username): its failed-login count is cleared." }
    return "\(username) was not locked and had no failed logins; nothing to clear."
  }

  // Field rules, in the seed's style: one sentence naming the field, ending in "!".

  /// User name rule.
  public static let usernameRule =
    "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
  /// A user name of digits only.
  public static let usernameAllDigits =
    "User name must not be all digits (programs would take it for a uid)!"
  /// E-mail rule.
  public static let emailRule =
    "E-mail address must look like name@example.org, with no spaces!"
  /// Full name too long.
  public static let fullNameTooLong = "Full name must be at most 256 characters!"
  /// Password too short.
  public static let passwordTooShort = "Password must be at least 15 characters!"
  /// Password too long.
  public static let passwordTooLong = "Password must be at most 1024 characters!"
  /// Password is the user's own details.
  public static let passwordIsPersonal =
    "Password must not be your user name, full name or e-mail address!"
  /// Password is too easy to guess (under 10^8 guesses), and what made it so.
  public static func passwordIsGuessable(_ weakness: PasswordWeakness) -> String {
    let why: String
    switch weakness {
    case .commonWords: why = "it is a common password or common words"
    case .keyboardRow: why = "it is a row of keys on the keyboard"
    case .repetition: why = "it is a repeat of a shorter pattern"
    case .sequence: why = "it is a run like 12345 or abcde"
    case .date: why = "it is a date or years"
    case .personalDetails: why = "it is mostly words from your name or e-mail"
    case .tooSimple: why = "add a few more unrelated words"
    }
    return "Password is too easy to guess: \(why)!"
  }
  /// zxcvbn's library is missing or broken.
  public static func passwordCheckerUnavailable(_ library: String, reason: String) -> String {
    "zxcvbn's \(library) is needed to check new passwords but could not be loaded (\(reason)); "
      + "install it (the libzxcvbn0 package on Debian and Ubuntu) and try again."
  }
  /// libqrencode is missing or broken.
  public static func qrEncoderUnavailable(_ library: String, reason: String) -> String {
    "libqrencode's \(library) is needed to show a QR code but could not be loaded (\(reason)); "
      + "install it (the libqrencode4 package on Debian and Ubuntu) or skip the QR code."
  }
  /// utf8proc's library is missing or broken.
  public static func unicodeUnavailable(_ library: String, reason: String) -> String {
    "utf8proc's \(library) is needed to compare names and passwords beyond ASCII but could not "
      + "be loaded (\(reason)); install it (the libutf8proc2 or libutf8proc3 package on Debian "
      + "and Ubuntu) and try again."
  }
  /// Password is on the blocklist.
  public static let passwordIsBlocked =
    "Password is on the administrator's list of forbidden passwords!"
  /// A new password equal to the current one.
  public static let passwordUnchanged = "New password must differ from the current one!"
  /// The blocklist cannot be read.
  public static func blocklistUnreadable(_ path: String, reason: String) -> String {
    "Cannot read the password blocklist \(path): \(reason)."
  }

  /// A form's broken rule, in words.
  public static func formProblem(_ problem: FormProblem) -> String {
    switch problem {
    case .passwordsMustMatch: return passwordsMustMatch
    case .usernameRule: return usernameRule
    case .usernameAllDigits: return usernameAllDigits
    case .emailRule: return emailRule
    case .fullNameTooLong: return fullNameTooLong
    case .passwordTooShort: return passwordTooShort
    case .passwordTooLong: return passwordTooLong
    case .passwordIsPersonal: return passwordIsPersonal
    case .passwordIsBlocked: return passwordIsBlocked
    case .guessable(let weakness): return passwordIsGuessable(weakness)
    case .passwordUnchanged: return passwordUnchanged
    case .invalidUTF8(let field): return invalidUTF8(field)
    case .controlCharacters(let field): return controlCharacters(field)
    case .tooLong(let field): return tooLong(field)
    }
  }

  /// A field held bytes that are not UTF-8 text.
  public static func invalidUTF8(_ field: String) -> String {
    "\(field) must be valid UTF-8 text!"
  }
  /// A field held a NUL, a control character or an invisible formatting character.
  public static func controlCharacters(_ field: String) -> String {
    "\(field) must not contain control or invisible formatting characters!"
  }
  /// A line longer than any field allows.
  public static func tooLong(_ field: String) -> String {
    "\(field) is too long!"
  }
}
