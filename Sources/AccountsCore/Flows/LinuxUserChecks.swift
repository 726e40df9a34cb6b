/// The checks of an account as a Linux user shared by the flows that add and change accounts.
enum LinuxUser {
  /// `path`, given with `option`, if it is one a user record can hold.
  static func path(_ path: String, _ option: String) throws(AccountsError) -> String {
    guard LinuxPathRules.isValid(path), LinuxPathRules.isNormalized(path) else {
      throw .invalidLinuxPath(option: option, path: path)
    }
    return path
  }

  /// Refuses `name` when this host keeps user records of the store and its name service already
  /// knows a user or group of that name (whose record would never be served: /etc/passwd comes
  /// first).
  static func refuseKnownName(_ name: String, env: AccountsEnvironment, reader: any AccountReader)
    throws(AccountsError)
  {
    guard let names = env.nameService, LinuxNameRules.isValid(name),
      try reader.userdbHost(named: env.hostName) != nil
    else { return }
    if names.uid(ofUser: name) != nil || names.gid(ofGroup: name) != nil {
      throw .linuxNameTaken(name)
    }
  }
}
