/// The arguments after `pam-helper` in the forms the module writes, read without
/// ArgumentParser; the standard library only, so that a fuzz target (Tests/fuzz) compiles this
/// file alone.
///
/// It reads the stage, then `--name value` (or `--name=value`) options, each once, and the flags
/// `--expired-only` and `--authenticated`. Nil for anything else (help, a repeated or unknown option, a value that
/// looks like an option, is no number or is missing after `=`): ArgumentParser then reads them as
/// ever, with its messages. Why by hand: ArgumentParser's reflection over the command (its
/// completion-script check above all) took 1.3 ms of every PAM stage, more than the rest of its
/// start-up, and the module runs the helper for each stage of every login.
struct PamHelperArguments: Equatable {
  static let databaseOption = "database"
  static let keyFileOption = "key-file"
  static let loginCacheOption = "login-cache"
  static let timeLimitOption = "time-limit"
  static let allowGroupsOption = "allow-groups"
  static let expiredOnlyOption = "expired-only"
  static let authenticatedOption = "authenticated"
  static let sessionLoginOption = "session-login"
  /// The options that take a value.
  static let valueOptions = [
    databaseOption, keyFileOption, loginCacheOption, timeLimitOption, allowGroupsOption,
    sessionLoginOption,
  ]

  var stage: String
  var database: String?
  var keyFile: String?
  var loginCache: String?
  /// Nil when the line gives none.
  var timeLimit: UInt32?
  var allowGroups: String?
  var expiredOnly = false
  var authenticated = false
  var sessionLogin: String?

  init(
    stage: String, database: String? = nil, keyFile: String? = nil, loginCache: String? = nil,
    timeLimit: UInt32? = nil, allowGroups: String? = nil, expiredOnly: Bool = false,
    authenticated: Bool = false, sessionLogin: String? = nil
  ) {
    self.stage = stage
    self.database = database
    self.keyFile = keyFile
    self.loginCache = loginCache
    self.timeLimit = timeLimit
    self.allowGroups = allowGroups
    self.expiredOnly = expiredOnly
    self.authenticated = authenticated
    self.sessionLogin = sessionLogin
  }

  /// Nil unless `arguments` are one of the forms above.
  init?(_ arguments: [String]) {
    var stage: String?
    var values: [String: String] = [:]
    var expiredOnly = false
    var authenticated = false
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      guard argument.hasPrefix("--") else {
        guard stage == nil, !argument.hasPrefix("-") else { return nil }
        stage = argument
        continue
      }
      let option = argument.dropFirst(2)
      if option == Self.expiredOnlyOption {
        guard !expiredOnly else { return nil }
        expiredOnly = true
        continue
      }
      if option == Self.authenticatedOption {
        guard !authenticated else { return nil }
        authenticated = true
        continue
      }
      let name: String
      let value: String
      if let equals = option.firstIndex(of: "=") {
        name = String(option[..<equals])
        value = String(option[option.index(after: equals)...])
        // ArgumentParser reads `--name=` as a missing value, not an empty one.
        guard !value.isEmpty else { return nil }
      } else {
        guard let next = rest.popFirst(), !next.hasPrefix("-") else { return nil }
        name = String(option)
        value = next
      }
      guard Self.valueOptions.contains(name), values.updateValue(value, forKey: name) == nil
      else {
        return nil
      }
    }
    guard let stage else { return nil }
    self.stage = stage
    database = values[Self.databaseOption]
    keyFile = values[Self.keyFileOption]
    loginCache = values[Self.loginCacheOption]
    allowGroups = values[Self.allowGroupsOption]
    sessionLogin = values[Self.sessionLoginOption]
    self.expiredOnly = expiredOnly
    self.authenticated = authenticated
    if let limit = values[Self.timeLimitOption] {
      guard let seconds = UInt32(limit) else { return nil }
      timeLimit = seconds
    }
  }
}
