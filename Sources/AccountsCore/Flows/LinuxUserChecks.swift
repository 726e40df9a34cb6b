import FoundationEssentials

/// The checks of an account as a Linux user shared by the flows that add and change accounts.
enum LinuxUser {
  /// `path`, given with `option`, if it is one a user record can hold.
  static func path(_ path: String, _ option: String) throws(AccountsError) -> String {
    guard LinuxPathRules.isValid(path), LinuxPathRules.isNormalized(path) else {
      throw .invalidLinuxPath(option: option, path: path)
    }
    return path
  }

  /// The users and groups of this system `name` would be taken for, asked of NSS before any
  /// write (a slow name service must not hold the store's write turn): `name` itself, and its
  /// lower-case form for a name with capitals (`Root` would own files as a near-twin of
  /// `root`); empty when there are none, or no name service.
  static func systemNamesLike(_ name: String, env: AccountsEnvironment) -> [SystemName] {
    guard let names = env.nameService, LinuxNameRules.isValid(name) else { return [] }
    return Set([name, name.lowercased()]).sorted().compactMap { candidate in
      let (uid, gid) = (names.uid(ofUser: candidate), names.gid(ofGroup: candidate))
      return uid == nil && gid == nil ? nil : SystemName(name: candidate, uid: uid, gid: gid)
    }
  }

  /// Refuses `name`, which NSS knows as `like`, when the store's accounts are Linux users: a
  /// host keeps their records, or the store gives them numbers (`givesPosixIDs`), also where
  /// this host keeps none.
  ///
  /// Its record would never be served here (/etc/passwd comes first), at a PAM login it is the
  /// system's user, not the account, and a uid given to it would be one no record here uses. A
  /// user or group that is `account`'s own record (its uid, its per-user group) is no clash: a
  /// rename that changes only case.
  static func refuse(
    _ name: String, like: [SystemName], account: Account? = nil, env: AccountsEnvironment,
    reader: any AccountReader
  ) throws(AccountsError) {
    let own = account?.uid
    let clashes = like.filter { own == nil || ($0.uid ?? own) != own || ($0.gid ?? own) != own }
    guard let clash = clashes.first, try reader.givesPosixIDs() else { return }
    throw .linuxNameTaken(name, systemName: clash.name)
  }

  /// Gives the account of uid `uid` its home folder: `wanted` (the one it names, or
  /// `/home/NAME`) unless another account was given that before, then that path with `-UID`
  /// (and a count, if that is taken too); recorded, so that it is never given again.
  static func giveHome(_ wanted: String, uid: Int64, writer: any AccountWriter, at date: Date)
    throws(AccountsError) -> String
  {
    if try writer.giveHome(wanted, uid: uid, at: date) { return wanted }
    for count in 1...100 {
      let candidate = wanted + "-\(uid)" + (count == 1 ? "" : "-\(count)")
      if try writer.giveHome(candidate, uid: uid, at: date) { return candidate }
    }
    throw .homeTaken(wanted)
  }

  /// Refuses `--home PATH` for `account` (nil: a new one) when another account was given it.
  static func refuseTakenHome(_ path: String, account: Account?, reader: any AccountReader)
    throws(AccountsError)
  {
    guard let owner = try reader.homeOwner(path), owner != account?.uid else { return }
    throw .homeTaken(path)
  }

  /// A user or group NSS knows by a name.
  struct SystemName {
    var name: String
    var uid: Int64?
    var gid: Int64?
  }
}

/// What the system's name service (NSS) says of a name a program asks to log in, read before
/// the store: a name is an account's Linux identity only when NSS gives the uid its record holds.
///
/// The PAM paths (`pam_accounts.so`, `pam-auth`) answer for the name the calling program will
/// run a session as: an account named like a system user (`root`, `daemon`) must never open
/// that user. A name NSS does not know at all stays a virtual user (a VPN or a mail server
/// checking passwords through PAM without Unix accounts).
public enum SystemIdentity: Equatable, Sendable {
  /// Nothing was asked (no name service: in-process tests).
  case notAsked
  /// NSS knows no user of that name.
  case unknown
  /// A user of `/etc/passwd`, the system's own files: never an account's (accounts become
  /// Linux users through user records only).
  case localUser
  /// A user NSS gives from a source other than a user record (a directory, another program):
  /// never an account's either.
  case otherUser
  /// A user NSS gives `uid` from a user record (perhaps an account's).
  case user(uid: Int64)

  /// What `names` says of `name`.
  public static func of(_ name: String, names: (any NameService)?) -> SystemIdentity {
    guard let names else { return .notAsked }
    if names.isLocalUser(name) { return .localUser }
    guard let uid = names.uid(ofUser: name) else { return .unknown }
    return names.hasUserRecord(named: name, uid: uid) ? .user(uid: uid) : .otherUser
  }

  /// True for a user NSS gives that cannot be any account's, known without the store.
  public var isNeverAnAccount: Bool { self == .localUser || self == .otherUser }

  /// True when a login of the name may reach `account`: NSS gives it no user, or the uid of the
  /// account's own record.
  public func allows(_ account: Account) -> Bool { allows(uid: account.uid) }

  /// True when a login of the name may reach an account whose record gives `uid` (nil: none
  /// yet).
  public func allows(uid accountUID: Int64?) -> Bool {
    switch self {
    case .notAsked, .unknown: return true
    case .localUser, .otherUser: return false
    case .user(let uid): return accountUID == uid
    }
  }
}
