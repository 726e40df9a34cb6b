import FoundationEssentials

/// One file of a records folder: a JSON record, or a link to one (`UID.user` → `NAME.user`).
public struct UserRecordFile: Equatable, Sendable {
  /// Its name in the folder (`alice.user`, `20000.user`, `alice:staff.membership`).
  public var name: String
  /// The JSON text of a record; nil for a link.
  public var content: [UInt8]?
  /// The name a link points to (in the same folder); nil for a record.
  public var linkTarget: String?
  /// Whose file it is: `u` and an account's id, `g` and a group's (a folder's manifest keeps
  /// each one's files together, so that a change reads and writes only the changed ones').
  public var owner: String

  /// A record file of `owner`.
  public static func record(_ name: String, _ content: [UInt8], owner: String = "")
    -> UserRecordFile
  {
    UserRecordFile(name: name, content: content, linkTarget: nil, owner: owner)
  }

  /// A link to `target`, of `owner`.
  public static func link(_ name: String, to target: String, owner: String = "")
    -> UserRecordFile
  {
    UserRecordFile(name: name, content: nil, linkTarget: target, owner: owner)
  }
}

/// What bringing a folder up to date did (or, for a check, would do).
public struct UserRecordChanges: Equatable, Sendable {
  /// Files written (new or changed).
  public var written: [String] = []
  /// Files of this store removed.
  public var removed: [String] = []
  /// Names wanted but held by a file `accounts` did not write (left alone).
  public var foreign: [String] = []
  /// Files of this store changed by someone else (left alone, no longer this store's).
  public var leftAlone: [String] = []

  /// Nothing to do.
  public init() {}

  /// True when the folder was (or is) as the store says.
  public var isEmpty: Bool { written.isEmpty && removed.isEmpty }
}

/// What removing a store's files from a folder did.
public struct UserRecordRemoval: Equatable, Sendable {
  /// Files removed: records, links and memberships (what `enable` and `sync` count as written).
  public var files: Int
  /// True when the store's manifest was removed.
  public var manifestRemoved: Bool
  /// True when the folder went too (accounts made it and nothing else was left in it).
  public var folderRemoved: Bool

  /// A removal of `files` files, of the manifest if `manifestRemoved`, and of the folder if
  /// `folderRemoved`.
  public init(files: Int = 0, manifestRemoved: Bool = false, folderRemoved: Bool = false) {
    self.files = files
    self.manifestRemoved = manifestRemoved
    self.folderRemoved = folderRemoved
  }
}

/// A records folder opened by one process: it holds the folder's lock (no other `accounts`
/// changes it meanwhile) until `close`.
public protocol UserRecordFolderSession: AnyObject {
  /// The store's change counter as the folder last applied it; nil when unknown (nothing
  /// written yet, a manifest of an earlier release, or a folder changed since by another hand
  /// or another store): then only a whole comparison tells what is behind.
  var generation: Int64? { get }
  /// How many user and group records the manifest lists.
  var recordCounts: (users: Int, groups: Int) { get }
  /// Told how many files of how many are written, while many are.
  var progress: ((_ done: Int, _ total: Int) -> Void)? { get set }
  /// Makes the folder hold exactly `files` of this store (the store's own files not among them
  /// are removed; files not written by it are never touched), and notes that it applied the
  /// counter's value `generation`; with `owners`, only the files of those owners are looked at
  /// (the others are left as they are); with `dryRun`, only tells.
  func apply(
    _ files: [UserRecordFile], owners: Set<String>?, generation: Int64, dryRun: Bool
  ) throws(AccountsError) -> UserRecordChanges
  /// Removes every file of this store, its manifest, and the folder if enabling created it and
  /// it is empty; returns how many files went, and whether the folder did.
  func removeAll() throws(AccountsError) -> UserRecordRemoval
  /// How many files the store's manifest lists.
  func manifestCount() -> Int
  /// Lets the folder go (its lock).
  func close()
}

/// Where records folders are opened: the live one writes files as root; tests keep them in
/// memory.
public protocol UserRecordFolders {
  /// Opens `folder` (absolute) for the store `storeID`, creating it (mode 0755) when `create`
  /// and it is missing; nil when it is missing and not `create`. With `repair`, a damaged
  /// manifest is dropped (the next whole comparison lists again the files that hold what the
  /// store would write) instead of refused.
  func open(_ folder: String, storeID: String, create: Bool, repair: Bool) throws(AccountsError)
    -> (any UserRecordFolderSession)?
}

/// What this system's name service (NSS: /etc/passwd, /etc/group and the user records) knows.
public protocol NameService: Sendable {
  /// The uid of the user named `name`, if any.
  func uid(ofUser name: String) -> Int64?
  /// The gid of the group named `name`, if any.
  func gid(ofGroup name: String) -> Int64?
  /// True when some user has uid `number`.
  func knowsUID(_ number: Int64) -> Bool
  /// True when some group has gid `number`.
  func knowsGID(_ number: Int64) -> Bool
  /// True when `/etc/passwd` itself (NSS's `files`) holds a user named `name`.
  func isLocalUser(_ name: String) -> Bool
  /// True when a folder systemd reads user records from (`/etc/userdb`, `/run/userdb`, …)
  /// holds the link `UID.user` → `NAME.user` that the records `accounts` writes have: the user
  /// NSS gives may be a record of a store, not a directory's or another program's.
  func hasUserRecord(named name: String, uid: Int64) -> Bool
}
