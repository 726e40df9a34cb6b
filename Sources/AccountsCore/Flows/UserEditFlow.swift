/// What `accounts user edit` changes; nil leaves a field as it is.
public struct AccountEdit: Equatable, Sendable {
  /// `--username NEW`.
  public var username: String?
  /// `--full-name`.
  public var fullName: String?
  /// `--email`.
  public var email: String?
  /// `--owner`: make this account the device's owner.
  public var makeOwner: Bool
  /// `--expires`: when the account expires, or never.
  public var expiry: AccountExpiry?
  /// `--add-group`: groups the account joins (each must exist).
  public var addGroups: [String]
  /// `--remove-group`: groups the account leaves (each must exist and hold it).
  public var removeGroups: [String]
  /// `--home`: its home folder as a Linux user.
  public var home: String?
  /// `--shell`: its login shell as a Linux user.
  public var shell: String?

  /// Creates an edit.
  public init(
    username: String? = nil, fullName: String? = nil, email: String? = nil,
    makeOwner: Bool = false, expiry: AccountExpiry? = nil, addGroups: [String] = [],
    removeGroups: [String] = [], home: String? = nil, shell: String? = nil
  ) {
    self.home = home
    self.shell = shell
    self.username = username
    self.fullName = fullName
    self.email = email
    self.makeOwner = makeOwner
    self.expiry = expiry
    self.addGroups = addGroups
    self.removeGroups = removeGroups
  }

  /// True when nothing is asked for.
  public var isEmpty: Bool {
    username == nil && fullName == nil && email == nil && !makeOwner && expiry == nil
      && addGroups.isEmpty && removeGroups.isEmpty && home == nil && shell == nil
  }
}

/// `accounts user edit NAME`: an account's details and the device's ownership (administrator).
public enum UserEditFlow {
  /// Applies `edit` (the form's rules for each field given) in one transaction; returns the
  /// sentences said.
  @discardableResult
  public static func run(_ env: AccountsEnvironment, username: String, edit: AccountEdit)
    throws(AccountsError) -> [String]
  {
    let newName = try edit.username.map { name throws(AccountsError) in
      try DetailRules.username(.text(name))
    }
    let fullName = try edit.fullName.map { name throws(AccountsError) in
      try DetailRules.fullName(.text(name))
    }
    let email = try edit.email.map { mail throws(AccountsError) in
      try DetailRules.email(.text(mail))
    }
    let home = try edit.home.map { path throws(AccountsError) in
      try LinuxUser.path(path, "--home")
    }
    let shell = try edit.shell.map { path throws(AccountsError) in
      try LinuxUser.path(path, "--shell")
    }
    let said = try AccountChange.run(env, username: username) {
      writer, account throws(AccountsError) -> [String] in
      let now = env.now()
      var changed = account
      var fields: [String] = []
      if let (name, key) = newName, name != account.username {
        if key != account.usernameKey, try writer.account(key: key) != nil {
          throw .usernameTaken(name)
        }
        try LinuxUser.refuseKnownName(name, env: env, reader: writer)
        fields.append(Messages.detailRenamed(account.username, name))
        changed.username = name
        changed.usernameKey = key
      }
      if let fullName, fullName != account.fullName {
        fields.append(Messages.detailFullName)
        changed.fullName = fullName
      }
      if let email, email != account.email {
        fields.append(Messages.detailEmail)
        changed.email = email
      }
      if let home, home != account.homeDirectory || account.home == nil {
        fields.append(Messages.detailHome(home))
        changed.home = home
      }
      if let shell, shell != account.loginShell || account.shell == nil {
        fields.append(Messages.detailShell(shell))
        changed.shell = shell
      }
      var said: [String] = []
      if !fields.isEmpty { said.append(Messages.accountEdited(changed.username)) }
      if let expiry = edit.expiry, expiry.date != account.expiresAt {
        let text = expiry.date.map(Timestamp.string(from:))
        fields.append(Messages.detailExpiry(text))
        changed.expiresAt = expiry.date
        said.append(Messages.expiryChanged(changed.username, expires: text))
      }
      if !fields.isEmpty {
        changed.updatedAt = now
        try writer.update(changed)
        try writer.append(
          AuditRecord(
            .accountEdited, at: now, username: changed.username,
            usernameKey: changed.usernameKey, detail: fields.joined(separator: ", ")))
      }
      said += try GroupFlow.leave(changed, groups: edit.removeGroups, writer: writer, at: now)
      said += try GroupFlow.join(changed, groups: edit.addGroups, writer: writer, at: now)
      if edit.makeOwner && !account.isOwner {
        let previous = try writer.owner()
        try writer.moveOwnership(to: changed, at: now)
        try writer.append(
          AuditRecord(
            .ownershipMoved, at: now, username: changed.username,
            usernameKey: changed.usernameKey,
            detail: previous.map { Messages.detailOwnershipFrom($0.username) }))
        said.append(Messages.ownershipMoved(changed.username))
      }
      return said.isEmpty ? [Messages.nothingToEdit(account.username)] : said
    }
    said.forEach(env.console.output)
    return said
  }
}
