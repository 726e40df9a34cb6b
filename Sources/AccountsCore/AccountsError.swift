import AccountsCrypto
import FoundationEssentials

/// Exit codes; stable and documented in docs/commands.md.
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
  /// An administrator command named an account, session or group that does not exist.
  case noSuchAccount = 5
  /// Interrupted by Ctrl-C (SIGINT).
  case interrupted = 130
}

/// Where input ended, which says what was (and was not) done.
public enum InputStage: Equatable, Sendable {
  /// At the bare command's "Activate now?" question.
  case activationQuestion
  /// In the Activation Form (or `user add`'s).
  case form
  /// At the login prompts.
  case login
  /// At the login prompts, right after activating `username` in the bare command.
  case loginAfterActivation(username: String)
  /// At the reset confirmation.
  case resetConfirmation
  /// At the confirmation of an account's removal.
  case removalConfirmation
  /// At the new-password prompts a login asks when the password must change.
  case newPasswordAtLogin
  /// At `passwd`'s or `user passwd`'s prompts.
  case passwordChange
  /// At `2fa enable`'s verification code.
  case enrollment
  /// At the verification code of `2fa disable` or `2fa recovery-codes`.
  case secondFactorChange
}

/// What a person can decline.
public enum Declined: Equatable, Sendable {
  /// The bare command's "Activate now?".
  case activation
  /// `reset`'s confirmation.
  case reset
  /// `user remove`'s confirmation.
  case removal
}

/// Which rule of a form was broken; `Messages.formProblem` says it in words.
public enum FormProblem: Equatable, Sendable {
  /// `Passwords must match!`
  case passwordsMustMatch
  /// The user name breaks the naming rules.
  case usernameRule
  /// The user name is all digits (programs would read it as a uid, as `useradd` says).
  case usernameAllDigits
  /// The e-mail address does not look like one.
  case emailRule
  /// The full name is longer than 256 characters.
  case fullNameTooLong
  /// The password is shorter than 15 characters.
  case passwordTooShort
  /// The password is longer than 1,024 characters.
  case passwordTooLong
  /// The password is the user name, full name or e-mail (or repeats of one).
  case passwordIsPersonal
  /// The password is on the administrator's blocklist.
  case passwordIsBlocked
  /// zxcvbn estimates fewer than 10^8 guesses, mostly because of the given pattern.
  case guessable(PasswordWeakness)
  /// A new password equal to the current one.
  case passwordUnchanged
  /// A field's bytes are not UTF-8.
  case invalidUTF8(field: String)
  /// A field holds a control or invisible formatting character.
  case controlCharacters(field: String)
  /// A line longer than any field allows.
  case tooLong(field: String)
}

/// Everything a command can refuse or fail with: data, not sentences.
///
/// Each prints as one sentence from `Messages` (an incomplete form adds a line naming the
/// fields).
public enum AccountsError: Error, Equatable, CustomStringConvertible {
  /// The form failed a rule.
  case invalidForm(FormProblem)
  /// Fields were left empty: `Please fill all fields!`, then which.
  case incompleteForm(empty: [String])
  /// Login failed: wrong user name or password, or a disabled account (never says which).
  case invalidCredentials
  /// The name is locked until `until`; `now` and `timeZone` say how the sentence tells it.
  case locked(until: Date, now: Date, timeZone: TimeZone)
  /// Login, the flow or an account command on a Public device.
  case notActivated
  /// Activation on an Activated device.
  case alreadyActivated
  /// Input ended at the given stage; nothing more was done.
  case inputEnded(InputStage)
  /// The person declined.
  case declined(Declined)
  /// A destructive command with no terminal and no `--yes`.
  case confirmationRequired(Declined)
  /// An administrator command named an account that does not exist.
  case noSuchAccount(String)
  /// Another account already has this user name (compared case-insensitively).
  case usernameTaken(String)
  /// The owner cannot be removed while other accounts exist.
  case ownerCannotBeRemoved(String)
  /// The last account cannot be removed (reset makes the device Public).
  case lastAccount(String)
  /// zxcvbn's library, which checks new passwords, could not be opened or lacks a function.
  case passwordCheckerUnavailable(library: String, reason: String)
  /// libqrencode, which draws QR codes, could not be opened or lacks a function.
  case qrEncoderUnavailable(library: String, reason: String)
  /// utf8proc, which normalizes names and passwords beyond ASCII, could not be opened.
  case unicodeUnavailable(library: String, reason: String)
  /// The password blocklist is configured but cannot be read.
  case blocklistUnreadable(path: String, reason: String)
  /// A setting from the environment has a value `accounts` cannot use.
  case invalidSetting(name: String, value: String, expected: String)
  /// An administrator command named a database that does not exist.
  case noDatabase(location: String)
  /// The store failed.
  case storage(StoreError)
  /// The system's cryptography failed.
  case crypto(CryptoError)
  /// No live session for this database in this client's session file.
  case notLoggedIn
  /// A verification code that is neither a code of the window nor an unused recovery code.
  case invalidVerificationCode
  /// A right code of a time step already used.
  case replayedVerificationCode
  /// At enrollment: a right code of a step `seconds` away (positive: the phone is ahead).
  case clockOff(seconds: Int)
  /// `2fa enable` for an account that has a second factor.
  case secondFactorAlreadyOn(String)
  /// `2fa disable` (and the like) for an account that has none.
  case secondFactorNotOn(String)
  /// `2fa enable --confirm` for an account with no pending secret.
  case noPendingSecondFactor(String)
  /// `2fa enable --confirm` after the pending secret expired (it is deleted).
  case pendingSecondFactorExpired(String)
  /// No live session with this number.
  case noSuchSession(Int64)
  /// The session file or the key file cannot be used.
  case clientFile(ClientFileProblem)
  /// `user import` found only names the store already has (each said on its line); nothing
  /// was imported.
  case importRefused(problems: Int)
  /// An import file with problems of its own (a bad line, a damaged hash, a name twice):
  /// nothing imported.
  case importInvalid(problems: Int)
  /// `user import` could not tell the file's format.
  case importFormatUnknown(String)
  /// `user import` of a shadow or htpasswd file without `--email-domain`.
  case importNeedsEmailDomain(String)
  /// `user import` named a file that cannot be opened or read (missing, a folder, not ours to
  /// read): the person's input, not the store's.
  case importFileUnreadable(path: String, reason: String)
  /// `user export --output` named a file that exists.
  case exportFileExists(String)
  /// `store copy` to a store that already holds data.
  case copyTargetNotEmpty(location: String, accounts: Int, events: Int)
  /// `store copy` with the same store on both sides.
  case copyToItself(String)
  /// A group name that breaks Linux's naming rules.
  case invalidGroupName(String)
  /// `group add` of a name a group already has.
  case groupNameTaken(String)
  /// An administrator command named a group that does not exist.
  case noSuchGroup(String)
  /// `user edit --remove-group` of a group the account is not in.
  case notInGroup(username: String, group: String)
  /// `--shell` or `--home` that is not an absolute path without ':' or control characters.
  case invalidLinuxPath(option: String, path: String)
  /// `--home` naming a folder another account was given (a home is never given twice).
  case homeTaken(String)
  /// A `--uids` range that is not FIRST-LAST within 1000 to 2147483647.
  case invalidPosixIDRange(String)
  /// `user add` of a name this system already knows as a user (user records are kept here).
  case linuxNameTaken(String, systemName: String)
  /// An SSH key line refused (numbered from 1), and why.
  case sshKeyRefused(line: Int, problem: SSHKeyProblem)
  /// `user ssh-key add` given no key at all.
  case noSSHKeys
  /// `user ssh-key add FILE` of a file that cannot be read.
  case keyFileUnreadable(path: String, reason: String)
  /// `user ssh-key remove` of a fingerprint the account has no key of.
  case noSuchSSHKey(username: String, fingerprint: String)
  /// A user record command that changes files run by another user than root.
  case userdbNeedsRoot
  /// `userdb disable` or `sync` where this host keeps no user records of the store.
  case userdbNotEnabled(host: String)
  /// `userdb enable --folder` naming another folder than the one this host already uses.
  case userdbFolderInUse(host: String, folder: String)
  /// The records folder (or a record) cannot be trusted or used: `reason` says why.
  case userdbFolder(path: String, reason: String)
  /// The store's change is kept, but the records could not be brought up to date.
  case userdbBehind(folder: String, reason: String)
  /// `store hosts add` on a store whose fleet roles `store roles --apply` has not recorded.
  case fleetRolesUnknown
  /// `store hosts add` of a host name already recorded.
  case fleetHostTaken(String)
  /// `store hosts add` of a role that already exists.
  case fleetRoleTaken(String)
  /// `store hosts remove` of a host that is not recorded.
  case noSuchFleetHost(String)
  /// `store hosts add` or `remove` run by a role that may not make or change roles.
  case cannotManageRoles(role: String)
  /// `store cache` where the store is no PostgreSQL server's.
  case loginCacheNeedsServer(location: String)
  /// `store cache` run by another user than root.
  case loginCacheNeedsRoot
  /// `store cache status` or `disable` where this host keeps no cache.
  case loginCacheNotEnabled(path: String)
  /// The server cannot be reached and this host's login cache cannot answer for the person.
  case serverAway(location: String)

  /// The exit code this error ends the process with.
  public var exitStatus: ExitStatus {
    switch self {
    case .invalidForm, .incompleteForm, .invalidCredentials, .notActivated, .alreadyActivated,
      .inputEnded, .declined, .confirmationRequired, .noDatabase, .usernameTaken,
      .ownerCannotBeRemoved, .lastAccount, .notLoggedIn, .invalidVerificationCode,
      .replayedVerificationCode, .clockOff, .secondFactorAlreadyOn, .secondFactorNotOn,
      .noPendingSecondFactor, .pendingSecondFactorExpired, .importRefused, .exportFileExists,
      .copyTargetNotEmpty, .invalidGroupName,
      .groupNameTaken, .notInGroup, .linuxNameTaken, .homeTaken, .sshKeyRefused, .noSSHKeys,
      .userdbNeedsRoot, .userdbNotEnabled, .userdbFolderInUse, .fleetRolesUnknown,
      .fleetHostTaken, .fleetRoleTaken, .loginCacheNeedsServer, .loginCacheNeedsRoot,
      .loginCacheNotEnabled:
      return .refused
    case .invalidSetting, .importFormatUnknown, .importNeedsEmailDomain, .copyToItself,
      .importInvalid, .importFileUnreadable, .invalidLinuxPath, .invalidPosixIDRange:
      return .usage
    case .locked: return .locked
    case .noSuchAccount, .noSuchSession, .noSuchGroup, .noSuchSSHKey, .noSuchFleetHost:
      return .noSuchAccount
    case .passwordCheckerUnavailable, .qrEncoderUnavailable, .unicodeUnavailable,
      .blocklistUnreadable, .storage, .serverAway,
      .crypto, .clientFile, .userdbFolder, .userdbBehind, .keyFileUnreadable, .cannotManageRoles:
      return .storage
    }
  }

  /// True for a form that failed its rules (which a terminal asks again).
  public var isFormProblem: Bool {
    switch self {
    case .invalidForm, .incompleteForm: return true
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
    case .invalidForm(let problem): return Messages.formProblem(problem)
    case .incompleteForm: return lines.joined(separator: "\n")
    case .invalidCredentials: return Messages.invalidCredentials
    case .locked(let until, let now, let timeZone):
      return Messages.tooManyAttempts(
        until: TimeText.clock(until, timeZone: timeZone),
        remaining: TimeText.duration(until.timeIntervalSince(now)))
    case .notActivated: return Messages.runActivateFirst
    case .alreadyActivated: return Messages.alreadyActivated
    case .inputEnded(let stage): return Messages.inputEnded(stage)
    case .declined(let what): return Messages.declined(what)
    case .confirmationRequired(let what): return Messages.needsConfirmation(what)
    case .noSuchAccount(let name): return Messages.noSuchAccount(name)
    case .usernameTaken(let name): return Messages.usernameTaken(name)
    case .ownerCannotBeRemoved(let name): return Messages.ownerCannotBeRemoved(name)
    case .lastAccount(let name): return Messages.lastAccount(name)
    case .passwordCheckerUnavailable(let library, let reason):
      return Messages.passwordCheckerUnavailable(library, reason: reason)
    case .qrEncoderUnavailable(let library, let reason):
      return Messages.qrEncoderUnavailable(library, reason: reason)
    case .unicodeUnavailable(let library, let reason):
      return Messages.unicodeUnavailable(library, reason: reason)
    case .blocklistUnreadable(let path, let reason):
      return Messages.blocklistUnreadable(path, reason: reason)
    case .invalidSetting(let name, let value, let expected):
      return Messages.invalidSetting(name, value: value, expected: expected)
    case .noDatabase(let path): return Messages.noDatabase(path)
    case .storage(let error): return Messages.storage(error)
    case .crypto(let error): return error.description
    case .notLoggedIn: return Messages.notLoggedIn
    case .invalidVerificationCode: return Messages.invalidVerificationCode
    case .replayedVerificationCode: return Messages.replayedVerificationCode
    case .clockOff(let seconds): return Messages.clockOff(seconds: seconds)
    case .secondFactorAlreadyOn(let name): return Messages.secondFactorAlreadyOn(name)
    case .secondFactorNotOn(let name): return Messages.secondFactorNotOn(name)
    case .noPendingSecondFactor(let name): return Messages.noPendingSecondFactor(name)
    case .pendingSecondFactorExpired(let name): return Messages.pendingSecondFactorExpired(name)
    case .noSuchSession(let id): return Messages.noSuchSession(id)
    case .clientFile(let problem): return Messages.clientFile(problem)
    case .importRefused(let problems), .importInvalid(let problems):
      return Messages.nothingImported(problems)
    case .importFormatUnknown(let name): return Messages.importFormatUnknown(name)
    case .importNeedsEmailDomain(let format): return Messages.importNeedsEmailDomain(format)
    case .importFileUnreadable(let path, let reason):
      return Messages.importFileUnreadable(path, reason: reason)
    case .exportFileExists(let path): return Messages.exportFileExists(path)
    case .copyTargetNotEmpty(let location, let accounts, let events):
      return Messages.copyTargetNotEmpty(location, accounts: accounts, events: events)
    case .copyToItself(let location): return Messages.copyToItself(location)
    case .invalidGroupName(let name): return Messages.invalidGroupName(name)
    case .groupNameTaken(let name): return Messages.groupNameTaken(name)
    case .noSuchGroup(let name): return Messages.noSuchGroup(name)
    case .notInGroup(let username, let group): return Messages.notInGroup(username, group: group)
    case .invalidLinuxPath(let option, let path): return Messages.invalidLinuxPath(option, path)
    case .homeTaken(let path): return Messages.homeTaken(path)
    case .invalidPosixIDRange(let text): return Messages.invalidPosixIDRange(text)
    case .linuxNameTaken(let name, let systemName):
      return Messages.linuxNameTaken(name, systemName: systemName)
    case .sshKeyRefused(let line, let problem): return Messages.sshKeyRefused(line, problem)
    case .noSSHKeys: return Messages.noSSHKeys
    case .keyFileUnreadable(let path, let reason):
      return Messages.keyFileUnreadable(path, reason: reason)
    case .noSuchSSHKey(let username, let fingerprint):
      return Messages.noSuchSSHKey(username, fingerprint: fingerprint)
    case .userdbNeedsRoot: return Messages.userdbNeedsRoot
    case .userdbNotEnabled(let host): return Messages.userdbNotEnabled(host)
    case .userdbFolderInUse(let host, let folder):
      return Messages.userdbFolderInUse(host, folder: folder)
    case .userdbFolder(let path, let reason): return Messages.userdbFolder(path, reason: reason)
    case .userdbBehind(let folder, let reason): return Messages.userdbBehind(folder, reason: reason)
    case .fleetRolesUnknown: return Messages.fleetRolesUnknown
    case .fleetHostTaken(let name): return Messages.fleetHostTaken(name)
    case .fleetRoleTaken(let role): return Messages.fleetRoleTaken(role)
    case .noSuchFleetHost(let name): return Messages.noSuchFleetHost(name)
    case .cannotManageRoles(let role): return Messages.cannotManageRoles(role)
    case .loginCacheNeedsServer(let location): return Messages.loginCacheNeedsServer(location)
    case .loginCacheNeedsRoot: return Messages.loginCacheNeedsRoot
    case .loginCacheNotEnabled(let path): return Messages.loginCacheNotEnabled(path)
    case .serverAway(let location): return Messages.serverAway(location)
    }
  }
}

/// What is wrong with the session file or the key file.
public enum ClientFileProblem: Equatable, Sendable {
  /// Which file.
  public enum Kind: Equatable, Sendable {
    /// `$XDG_STATE_HOME/accounts/session`.
    case sessionFile
    /// `<database>.key`, `ACCOUNTS_KEY_FILE` or `--key-file`.
    case keyFile
    /// `unreached-syncs` beside the login cache.
    case unreachedSyncsFile
  }
  /// Group or others may read or write it (`mode` as octal digits).
  case notPrivate(Kind, path: String, mode: String)
  /// Another user owns it.
  case wrongOwner(Kind, path: String, owner: UInt32)
  /// It is a symbolic link, a folder or another kind of file.
  case notAFile(Kind, path: String)
  /// Its content is not what `accounts` writes.
  case damaged(Kind, path: String)
  /// It cannot be read or written (the system's reason).
  case unusable(Kind, path: String, reason: String)
  /// The key file is missing although secrets are sealed under it.
  case keyMissing(path: String)
  /// The key file is not the key a secret was sealed under.
  case wrongKey(path: String)
  /// Its folder is not private (writable by others, or another user's).
  case folderNotPrivate(Kind, path: String)
  /// A folder holding it (`folder`, or one above) lets another user replace it: refused as the
  /// database is.
  case unsafeFolder(Kind, path: String, folder: String, reason: StoreError.FolderProblem)
}
