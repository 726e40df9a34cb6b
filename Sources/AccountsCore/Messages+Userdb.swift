/// The sentences of user records (`userdb`), home folders, shells and SSH keys.
extension Messages {
  /// `--shell`, `--home` or `--folder` that is no usable path.
  public static func invalidLinuxPath(_ option: String, _ path: String) -> String {
    "\(option) \(path) is not valid: give an absolute path without ':', control characters, "
      + "empty, . or .. parts, or a trailing /."
  }
  /// `--uids` that is no range.
  public static func invalidPosixIDRange(_ text: String) -> String {
    "--uids \(text) is not valid: give FIRST-LAST, two numbers from 1000 to 2147483647, FIRST "
      + "not above LAST."
  }
  /// `--uids` overlapping a range systemd or Debian reserves (`reserved`, whose it is).
  public static func reservedPosixIDRange(_ text: String, reserved: String, whose: String)
    -> String
  {
    "--uids \(text) overlaps \(reserved), \(whose): choose a range outside it (such as "
      + "200000-399999)."
  }
  /// A new user name (`user add`, `user edit --username`, `user import`) this system already
  /// has, as `systemName` (the same, or its lower-case form).
  public static func linuxNameTaken(_ name: String, systemName: String) -> String {
    guard name != systemName else {
      return "\(name) is already a user or group of this system (getent passwd \(name)); "
        + "choose another user name!"
    }
    return "\(name) differs only in case from \(systemName), a user or group of this system "
      + "(getent passwd \(systemName)); choose another user name!"
  }
  /// `--home` naming another account's home, now or before.
  public static func homeTaken(_ path: String) -> String {
    "--home \(path) was given to another account, and a home folder is never given twice "
      + "(its files are that account's); choose another!"
  }
  /// A record's home that is not the one the account named: that one was another account's.
  public static func homeMoved(_ name: String, wanted: String, given: String) -> String {
    "\(name) gets the home folder \(given): \(wanted) was given to another account before."
  }
  /// `userdb status`: sshd would not run this program as its `AuthorizedKeysCommand`, with the
  /// line its log would give.
  public static func sshdWouldRefuse(_ path: String, reason: String) -> String {
    "sshd would refuse it (Unsafe AuthorizedKeysCommand \"\(path)\": \(reason)); install the "
      + "program where root owns every folder above it and nobody else may write them "
      + "(Scripts/install --prefix /usr/local)"
  }
  /// `user show`'s line on the uid.
  public static func uidDetail(_ uid: Int64?) -> String {
    "UID: " + (uid.map(String.init) ?? "- (given with its first user record)")
  }

  // MARK: SSH keys

  /// A refused key line.
  public static func sshKeyRefused(_ line: Int, _ problem: SSHKeyProblem) -> String {
    let why: String
    switch problem {
    case .malformed:
      why = "it is not an SSH public key (TYPE BASE64 [COMMENT], as ssh-keygen writes it)"
    case .refusedType(let type):
      why =
        "keys of type \(type) are not accepted (use ssh-ed25519, ecdsa-sha2-nistp256/384/521, "
        + "their sk- forms, or ssh-rsa of at least 2048 bits)"
    case .rsaTooShort(let bits):
      why = "its RSA key has \(bits) bits, fewer than 2048"
    case .options:
      why = "it starts with options (command=, from=, …), which accounts never stores"
    case .badComment:
      why = "its comment holds control characters or is longer than 1024 bytes"
    }
    return "Key on line \(line) refused: \(why); no key was added."
  }
  /// `user ssh-key add FILE` of a file that cannot be read.
  public static func keyFileUnreadable(_ path: String, reason: String) -> String {
    "Cannot read the key file \(path): \(reason). Name a readable file, or - for standard input."
  }
  /// `user ssh-key add` of an input without keys.
  public static let noSSHKeys = "No SSH key found in the input; no key was added."
  /// `user ssh-key remove` of an unknown fingerprint.
  public static func noSuchSSHKey(_ username: String, fingerprint: String) -> String {
    "\(username) has no SSH key \(fingerprint) (see accounts user ssh-key list \(username))."
  }
  /// A key added.
  public static func sshKeyAdded(_ username: String, fingerprint: String) -> String {
    "SSH key added to \(username): \(fingerprint)."
  }
  /// A key the account has already.
  public static func sshKeyAlreadyThere(_ username: String, fingerprint: String) -> String {
    "\(username) already has SSH key \(fingerprint); nothing changed."
  }
  /// A key removed.
  public static func sshKeyRemoved(_ username: String, fingerprint: String) -> String {
    "SSH key removed from \(username): \(fingerprint)."
  }
  /// The audit detail of a key added or removed.
  public static func detailSSHKey(type: String?, fingerprint: String) -> String {
    (type.map { $0 + " " } ?? "") + fingerprint
  }
  /// `user ssh-key list` of an account without keys.
  public static func noSSHKeysOf(_ username: String) -> String { "\(username) has no SSH keys." }

  // MARK: User records

  /// A user records command run by another user than root.
  public static let userdbNeedsRoot =
    "User records are written as root (they must be owned by root): run this command as root."
  /// `userdb disable` or `sync` where no records are kept.
  public static func userdbNotEnabled(_ host: String) -> String {
    "This host (\(host)) keeps no user records of this store; run accounts userdb enable first."
  }
  /// `userdb enable --folder` naming another folder than the one in use.
  public static func userdbFolderInUse(_ host: String, folder: String) -> String {
    "This host (\(host)) already keeps the user records of this store in \(folder); run "
      + "accounts userdb disable first to move them."
  }
  /// A folder or record that cannot be trusted or used.
  public static func userdbFolder(_ path: String, reason: String) -> String {
    "The user records folder \(path) cannot be used: \(reason)."
  }
  /// A change kept, its records not written.
  public static func userdbBehind(_ folder: String, reason: String) -> String {
    "The change is saved, but the user records in \(folder) are not up to date (\(reason)); "
      + "run accounts userdb sync as root."
  }
  /// Numbers used up.
  public static func posixIDsUsedUp(range: String, left: Int) -> String {
    "The uid range \(range) is used up: \(left) "
      + (left == 1 ? "account or group has" : "accounts or groups have")
      + " no number and no record; widen it with accounts userdb enable --uids FIRST-LAST."
  }
  /// Accounts or groups made before the store gave numbers, found by a role that may not
  /// give them (a fleet host's).
  public static func posixIDsForAdministrator(_ count: Int) -> String {
    (count == 1 ? "1 account or group has" : "\(count) accounts or groups have")
      + " no number yet, and this host's role may not give one: the administrator's accounts "
      + "userdb sync gives them theirs."
  }
  /// An account without a uid yet.
  public static func noRecordNoUID(_ name: String) -> String {
    "No user record for \(name): it has no uid yet."
  }
  /// An account name Linux cannot take.
  public static func noRecordNotLinuxName(_ name: String) -> String {
    "No user record for \(name): Linux user names are 1 to 32 of A-Z, a-z, 0-9, ., _ and -, "
      + "starting with a letter or _."
  }
  /// An account name this system already has.
  public static func noRecordNameKnown(_ name: String) -> String {
    "No user record for \(name): this system already has a user or group of that name."
  }
  /// A group without a gid yet.
  public static func noGroupRecordNoGID(_ name: String) -> String {
    "No group record for \(name): it has no gid yet."
  }
  /// A group name this system (or an account's own group) already has.
  public static func noGroupRecordNameKnown(_ name: String) -> String {
    "No group record for \(name): this system or an account already has a group of that name."
  }
  /// A name wanted, held by a file accounts did not write.
  public static func foreignRecord(_ folder: String, _ name: String) -> String {
    "Left alone: \(folder)/\(name) was not written by accounts (no record of that name was "
      + "written)."
  }
  /// A file of this store changed by someone else.
  public static func recordChangedElsewhere(_ folder: String, _ name: String) -> String {
    "Left alone: \(folder)/\(name) was changed by someone else since accounts wrote it."
  }
  /// `userdb enable` and `sync` done.
  public static func userdbSynced(_ outcome: UserdbFlow.Outcome) -> String {
    "User records in \(outcome.host.folder) (uids \(outcome.range)): \(outcome.users) "
      + (outcome.users == 1 ? "user" : "users") + ", \(outcome.groups) "
      + (outcome.groups == 1 ? "group" : "groups") + "; \(outcome.changes.written.count) "
      + (outcome.changes.written.count == 1 ? "file" : "files") + " written, "
      + "\(outcome.changes.removed.count) removed."
  }
  /// Progress at a terminal while many record files are written.
  public static func userdbProgress(_ done: Int, of total: Int) -> String {
    "Writing user records: \(done.grouped) of \(total.grouped) files…"
  }
  /// `userdb disable` done.
  public static func userdbDisabled(_ folder: String, _ removal: UserRecordRemoval) -> String {
    let files = "\(removal.files) " + (removal.files == 1 ? "file" : "files")
    switch (removal.manifestRemoved, removal.folderRemoved) {
    case (true, true):
      return "User records turned off: \(files), the manifest and the folder \(folder) removed."
    case (false, true): return "User records turned off: \(files) and the folder \(folder) removed."
    case (true, false):
      return "User records turned off: \(files) and the manifest removed from \(folder)."
    case (false, false): return "User records turned off: \(files) removed from \(folder)."
    }
  }
}

extension Messages {
  /// The audit detail of `userdb enable` and of a `sync` that changed the folder.
  public static func detailUserdbSynced(_ outcome: UserdbFlow.Outcome) -> String {
    "\(outcome.host.folder): \(outcome.changes.written.count) written, "
      + "\(outcome.changes.removed.count) removed"
  }
  /// The audit detail of `userdb disable`.
  public static func detailUserdbDisabled(_ folder: String, _ removal: UserRecordRemoval)
    -> String
  {
    "\(folder): \(removal.files) removed" + (removal.folderRemoved ? ", folder removed" : "")
  }
  /// The audit detail of a home folder changed.
  public static func detailHome(_ path: String) -> String { "home \(path)" }
  /// The audit detail of a shell changed.
  public static func detailShell(_ path: String) -> String { "shell \(path)" }
}
