import FoundationEssentials

/// How a store is opened.
public enum StoreAccess: Sendable, Equatable {
  /// Reading only; a missing store is not created.
  case readOnly
  /// Reading and writing; a missing store is created, private to its owner.
  case readWrite
  /// Reading an existing store to decide on a change, for writing where it can be written, so
  /// that the change uses the same connection; a missing store is not created.
  case change
}

/// Where the accounts live, in the flows' words: the seam between the core and a backend.
///
/// The core decides (the lockout arithmetic, who may be removed, what the audit log says); a
/// repository stores and answers, and makes each `write` one transaction, so that a crash or a
/// second process sees all of it or none of it. Races are decided by the backend: a `write`
/// runs alone against other writes (SQLite: an IMMEDIATE transaction; PostgreSQL: a lock on the
/// activation row taken first), and a user name stays unique by its own constraint. The SQLite
/// implementation is AccountsStore's `SQLiteStore`, the PostgreSQL one AccountsPostgres's
/// `PostgresStore`; the contract every implementation must meet is the test suite
/// `RepositoryContract`.
public protocol AccountRepository: AnyObject {
  /// Where the store is, as messages name it (a file's path, a URI without its password).
  var location: String { get }

  /// Whether the store's server keeps the second factors' secrets and checks codes itself (a
  /// PostgreSQL store): a host then holds no key file and reads no secret.
  var keepsSecondFactorsOnServer: Bool { get }

  /// What an authenticator app's entry names after the person's user name (`carol@NAME`): the
  /// same for every host of a shared store (its database's name, as its server calls it), nil
  /// for a store of one device (the entry then names the device's host).
  func authenticatorDomain() throws(AccountsError) -> String?

  /// The secret of `key` when the store's server does not keep it yet, still sealed under a key
  /// file (a store from before its server kept them); given only with `proof`, the account's
  /// whole password hash, to a caller that does not administer. Nil when there is none.
  func keyFileSealedSecret(key: String, proof: String) throws(AccountsError)
    -> KeyFileSealedSecret?

  /// The host this process writes as (its node name, or `ACCOUNTS_HOST_NAME`).
  ///
  /// Every audit event appended and every session started without a host of its own is stamped
  /// with it, so no flow has to name the host and none can forget it. The environment sets it
  /// on every store it opens; nil stamps none.
  var writingHost: String? { get set }

  /// Runs `body` against one consistent view of the store.
  ///
  /// A store that was never written reads as an empty Public device.
  func read<T>(_ body: (any AccountReader) throws(AccountsError) -> T) throws(AccountsError) -> T

  /// Runs `body` in one transaction: everything it writes is kept if it returns, nothing if it
  /// throws (its error is rethrown as it is).
  func write<T>(_ body: (any AccountWriter) throws(AccountsError) -> T) throws(AccountsError) -> T

  /// The backend's own integrity problems and the facts the device's rules are judged on (see
  /// `consistencyProblems`, which judges them).
  func consistencyFacts() throws(AccountsError) -> ConsistencyFacts

  // MARK: Login steps (the core's generic ones are in LoginSteps.swift)

  /// The account of `key`, its tally, the reference hash and its second factor, read together
  /// (with no key: the reference hash alone).
  func loginFacts(key: String?) throws(AccountsError) -> LoginFacts
  /// Counts a failed login in one transaction (`LoginRecorder.recordFailure`).
  func recordLoginFailure(_ record: LoginFailureRecord) throws(AccountsError)
    -> LoginFailureOutcome
  /// Logs a refused attempt and returns the lock's end when `usernameKey` is locked at `now`;
  /// writes nothing and returns nil otherwise.
  func recordLoginRefusal(username: String, usernameKey: String, at now: Date, detail: String)
    throws(AccountsError) -> Date?
  /// Records a successful login in one transaction (`LoginRecorder.recordSuccess`).
  func recordLoginSuccess(_ record: LoginSuccessRecord) throws(AccountsError)
    -> LoginSuccessOutcome

  // MARK: A host's other steps (the core's generic ones are in HostSteps.swift)

  /// Records a use of the live session whose token hashes to `tokenHash`: its last use `now`,
  /// its idle limit moved on; false when there is no such live session.
  func touchSession(tokenHash: [UInt8], at now: Date) throws(AccountsError) -> Bool
  /// Ends the session whose token hashes to `ending.tokenHash` (or every session of its
  /// account) and logs the logout; returns how many ended.
  func endSessions(_ ending: SessionEnding) throws(AccountsError) -> Int
  /// Stores a person's own new password in one transaction (`Authenticator.changePassword`).
  func changeOwnPassword(_ record: PasswordChangeRecord) throws(AccountsError)
    -> PasswordChangeOutcome
  /// A person's own second factor enabled, disabled or given new recovery codes, in one
  /// transaction.
  func changeOwnSecondFactor(_ change: SecondFactorChange) throws(AccountsError)
    -> SecondFactorChangeOutcome
  /// Keeps a new secret pending for a person's account after their password was checked
  /// (`2fa enable --begin`), replacing any pending one, in one transaction.
  func beginSecondFactor(_ begin: SecondFactorBegin) throws(AccountsError)
    -> SecondFactorBeginOutcome
  /// Turns a person's pending secret into their second factor, or deletes it when it expired
  /// (`2fa enable --confirm`), in one transaction.
  func confirmSecondFactor(_ confirmation: SecondFactorConfirmation) throws(AccountsError)
    -> SecondFactorConfirmOutcome
  /// Logs PAM's session stage for `account`; false when it is gone.
  func recordPamSession(of account: Account, opened: Bool, at now: Date, detail: String?)
    throws(AccountsError) -> Bool
  /// Logs what PAM's stages decided about `account`: a login (which stamps its last login) or
  /// a refusal; false when it is gone (a login also when it is disabled or expired at `now`).
  func recordPamDecision(
    _ decision: PamDecision, of account: Account, at now: Date, detail: String?
  ) throws(AccountsError) -> Bool
  /// Logs a change of this host's user records.
  func recordUserdbChange(_ change: UserdbChange, at now: Date, detail: String)
    throws(AccountsError)
  /// Keeps `host` as a host with user records of this store (its entry's time renewed), in
  /// one transaction, unless the host keeps them in another folder already; returns the folder
  /// its entry names (another one: nothing changed). The defaults are in UserdbSteps.swift.
  func keepUserdbHost(_ host: UserdbHost) throws(AccountsError) -> String
  /// Appends an event a host's login cache queued while the server was away, marked offline,
  /// in one transaction; false when an event of its id is in the log already (delivered
  /// before).
  func appendOfflineEvent(_ event: QueuedEvent) throws(AccountsError) -> Bool
  /// Forgets the host named `host` and runs `body` (the removal of its files) in the same
  /// transaction, before it commits, logging `userdb_disabled` with the detail `body` gives
  /// (nil: nothing logged); nil, with `body` not run, when the host kept no records.
  func forgetUserdbHost<T>(
    named host: String, at now: Date, _ body: () throws(AccountsError) -> (T, detail: String?)
  ) throws(AccountsError) -> T?
  /// Records that this host was heard from and how its last sync went (`store health` reads
  /// it); written only when something changed or the last contact is a minute old. The
  /// default, for a store one machine keeps (no fleet to watch), records nothing.
  func reportHost(_ report: HostReport) throws(AccountsError)
}

/// What the flows read.
public protocol AccountReader {
  /// Public or Activated, and since when.
  func deviceStatus() throws(AccountsError) -> DeviceStatus
  /// The account whose user name has the comparison key `key`, if any.
  func account(key: String) throws(AccountsError) -> Account?
  /// The device's owner; nil on a Public device.
  func owner() throws(AccountsError) -> Account?
  /// How many accounts there are.
  func accountCount() throws(AccountsError) -> Int
  /// The failed-login tally of the user name key `key` (clear when none is stored).
  func tally(key: String) throws(AccountsError) -> ThrottleState
  /// How many events of `kind` about `key` follow the newest event about `key` of any of
  /// `kinds` (all of them when there is none).
  func eventCount(key: String, kind: AuditEventKind, afterLatestOf kinds: [AuditEventKind])
    throws(AccountsError) -> Int
  /// Every account with its tally, in user-name-key order, one at a time (a million accounts
  /// are never held in memory at once).
  func forEachAccount(_ body: (AccountListing) throws(AccountsError) -> Void)
    throws(AccountsError)
  /// The events `query` selects, oldest first, one at a time.
  func forEachEvent(_ query: AuditQuery, _ body: (AuditEvent) throws(AccountsError) -> Void)
    throws(AccountsError)

  // MARK: Sessions and second factors

  /// The account with the id `id`, if any.
  func account(id: Int64) throws(AccountsError) -> Account?
  /// The session whose token has the SHA-256 `tokenHash`, live or not.
  func session(tokenHash: [UInt8]) throws(AccountsError) -> Session?
  /// The session numbered `id`, live or not.
  func session(id: Int64) throws(AccountsError) -> Session?
  /// The sessions live at `now` (of one account, or all), in id order, with user names.
  func forEachSession(
    accountID: Int64?, liveAt now: Date, _ body: (SessionListing) throws(AccountsError) -> Void
  ) throws(AccountsError)
  /// The account's TOTP second factor, if it has one.
  func secondFactor(accountID: Int64) throws(AccountsError) -> StoredSecondFactor?
  /// True when the account has an unused recovery code with hash `hash`.
  func hasRecoveryCode(accountID: Int64, hash: [UInt8]) throws(AccountsError) -> Bool
  /// The hashes of the account's unused recovery codes (what a host's login cache keeps).
  func unusedRecoveryCodeHashes(accountID: Int64) throws(AccountsError) -> [[UInt8]]
  /// How many of the account's recovery codes are unused.
  func recoveryCodesLeft(accountID: Int64) throws(AccountsError) -> Int
  /// The keys (`SealingKey.id`) the stored secrets are sealed under.
  func secondFactorKeyIDs() throws(AccountsError) -> Set<String>
  /// The account's pending secret (`2fa enable --begin`), expired or not, if it has one.
  func pendingSecondFactor(accountID: Int64) throws(AccountsError) -> PendingSecondFactor?

  // MARK: Groups

  /// The names of the groups the account belongs to, sorted (bytewise).
  func groups(accountID: Int64) throws(AccountsError) -> [String]
  /// The group named exactly `name`, if any.
  func group(named name: String) throws(AccountsError) -> AccountGroup?
  /// Every group with its member count, in name order, one at a time.
  func forEachGroup(_ body: (GroupListing) throws(AccountsError) -> Void) throws(AccountsError)
  /// The user names of the group's members, in user-name-key order.
  func members(groupID: Int64) throws(AccountsError) -> [String]

  // MARK: Linux users

  /// The store's identity and uid range.
  func userdbSettings() throws(AccountsError) -> UserdbSettings
  /// The host named `host`, if it keeps user records of this store.
  func userdbHost(named host: String) throws(AccountsError) -> UserdbHost?
  /// The highest uid or gid ever given within `range`; nil when none was.
  func lastPosixID(in range: PosixIDRange) throws(AccountsError) -> Int64?
  /// True when the store gives accounts and groups their numbers as they are made: once a
  /// host keeps its user records, or any number was given.
  func givesPosixIDs() throws(AccountsError) -> Bool
  /// True when this connection may give numbers (a fleet host's role may not).
  func mayGivePosixIDs() throws(AccountsError) -> Bool
  /// The uid the home folder `path` was given to; nil when no account was ever given it.
  func homeOwner(_ path: String) throws(AccountsError) -> Int64?
  /// The account's SSH keys, oldest first.
  func sshKeys(accountID: Int64) throws(AccountsError) -> [StoredSSHKey]
  /// The store's change counter: one more, in the same transaction, for every change of a row
  /// a user record reads (accounts, groups, memberships, SSH keys).
  func userdbGeneration() throws(AccountsError) -> Int64
  /// The accounts and groups (ids, removed ones included) whose last change came after the
  /// counter's value `generation`.
  func userdbChanges(after generation: Int64) throws(AccountsError) -> UserdbEntities
  /// True when some account has no uid or some group no gid yet.
  func hasUnnumbered() throws(AccountsError) -> Bool
  /// The accounts without a uid and the groups without a gid, each in id order.
  func unnumbered() throws(AccountsError) -> UserdbEntities
  /// The group whose id is `id`, if any.
  func group(id: Int64) throws(AccountsError) -> AccountGroup?

  // MARK: Copying a whole store

  /// How many rows `table` holds.
  func rowCount(_ table: StoreRecordKind) throws(AccountsError) -> Int
  /// Every row of `table`, its values in `table.fields` order, in key order, one at a time.
  func forEachRow(of table: StoreRecordKind, _ body: ([StoreValue]) throws(AccountsError) -> Void)
    throws(AccountsError)
  /// The last ids given in the tables that never reuse one.
  func idPositions() throws(AccountsError) -> IDPositions
}

/// What the flows write, inside `AccountRepository.write`.
public protocol AccountWriter: AccountReader {
  /// Stores the device's first account and makes it the owner of an Activated device; the
  /// device is Public (`activate`, which the flows call, has checked).
  func storeActivation(owner: NewAccount, at date: Date) throws(AccountsError) -> Account
  /// Deletes every account, group and tally, and makes the device Public; returns how many
  /// accounts were deleted.
  func makePublic(at date: Date) throws(AccountsError) -> Int
  /// Stores one more account on an Activated device.
  ///
  /// Throws `.usernameTaken` when its key is already used.
  func insert(_ account: NewAccount, at date: Date) throws(AccountsError) -> Account
  /// Stores several more accounts on an Activated device, in their order; returns each one's
  /// id, nil where its key was taken (before, or by an earlier account of `accounts`).
  ///
  /// A refused account draws no id: the ids given grow by one in the order of `accounts`, as
  /// `user import` relies on to name the line a duplicate first appeared on.
  func insert(_ accounts: [NewAccount], at date: Date) throws(AccountsError) -> [Int64?]
  /// Stores every field of `account` (found by its `id`) as given; `isOwner` is not changed
  /// here (see `moveOwnership`).
  ///
  /// Throws `.usernameTaken` when a new user name's key is already used.
  func update(_ account: Account) throws(AccountsError)
  /// Deletes the account with its memberships (never the owner: the store refuses that too).
  func delete(_ account: Account) throws(AccountsError)
  /// Makes `account` the device's owner.
  func moveOwnership(to account: Account, at date: Date) throws(AccountsError)
  /// Stores the tally of `key` (nil forgets it).
  func setTally(_ tally: ThrottleState?, key: String, at date: Date) throws(AccountsError)
  /// Forgets the tallies whose last failure came before `cutoff`, unless locked at `now`.
  func forgetTallies(lastFailureBefore cutoff: Date, notLockedAt now: Date)
    throws(AccountsError)
  /// Appends an event to the audit log.
  func append(_ event: AuditRecord) throws(AccountsError)

  // MARK: Sessions and second factors

  /// Stores a new session.
  func startSession(_ session: NewSession) throws(AccountsError) -> Session
  /// Records a use of session `id` at `date`: its last use and idle end.
  func touchSession(id: Int64, at date: Date, idleUntil: Date) throws(AccountsError)
  /// Deletes session `id`; false when there was none.
  func endSession(id: Int64) throws(AccountsError) -> Bool
  /// Deletes the account's sessions, but the one numbered `keeping`; returns the ids deleted.
  func endSessions(accountID: Int64, keeping: Int64?) throws(AccountsError) -> [Int64]
  /// Deletes every session no longer live at `now`.
  func endSessions(deadAt now: Date) throws(AccountsError)
  /// Replaces the account's second factor's secret (its last step, time and recovery codes
  /// kept); false when it has none.
  func replaceSecondFactorSecret(accountID: Int64, sealedSecret: [UInt8], keyID: String)
    throws(AccountsError) -> Bool
  /// Stores the account's second factor and its recovery codes' hashes (replacing any).
  func storeSecondFactor(_ factor: StoredSecondFactor, recoveryCodeHashes: [[UInt8]])
    throws(AccountsError)
  /// Deletes the account's second factor and recovery codes; false when it had none.
  func removeSecondFactor(accountID: Int64) throws(AccountsError) -> Bool
  /// Stores the account's pending secret (replacing any).
  func storePendingSecondFactor(_ pending: PendingSecondFactor) throws(AccountsError)
  /// Deletes the account's pending secret; false when it had none.
  func removePendingSecondFactor(accountID: Int64) throws(AccountsError) -> Bool
  /// Records `step` as the account's last accepted step if it is later than the stored one;
  /// false (and nothing written) otherwise. One conditional update: of two processes accepting
  /// the same code, one wins.
  func acceptStep(_ step: UInt64, accountID: Int64) throws(AccountsError) -> Bool
  /// Replaces the account's recovery codes.
  func replaceRecoveryCodes(accountID: Int64, hashes: [[UInt8]]) throws(AccountsError)
  /// Marks the unused recovery code with hash `hash` used; false when there is none.
  func useRecoveryCode(accountID: Int64, hash: [UInt8], at date: Date) throws(AccountsError)
    -> Bool

  // MARK: Groups

  /// Stores a new group.
  ///
  /// Throws `.groupNameTaken` when a group of that name exists.
  func insertGroup(named name: String, at date: Date) throws(AccountsError) -> AccountGroup
  /// Deletes the group and its memberships (never an account).
  func deleteGroup(id: Int64) throws(AccountsError)
  /// Makes the account a member of the group; false (nothing written) when it already is.
  func addMember(accountID: Int64, groupID: Int64) throws(AccountsError) -> Bool
  /// Ends the account's membership of the group; false when it was not a member.
  func removeMember(accountID: Int64, groupID: Int64) throws(AccountsError) -> Bool

  // MARK: Linux users

  /// Stores `host` (replacing the entry of the same host name).
  func setUserdbHost(_ host: UserdbHost) throws(AccountsError)
  /// Forgets the host named `host`; false when it kept no records.
  func removeUserdbHost(named host: String) throws(AccountsError) -> Bool
  /// Makes `range` the one uids and gids are given from.
  func setPosixIDRange(_ range: PosixIDRange) throws(AccountsError)
  /// Records `number` as given to the account or group `name`; false (nothing written) when it
  /// was given before.
  func givePosixID(_ number: Int64, kind: PosixIDKind, name: String, at date: Date)
    throws(AccountsError) -> Bool
  /// Sets the account's uid (a number `givePosixID` recorded) and the home given with it (one
  /// `giveHome` recorded).
  func setUID(_ uid: Int64, home: String, accountID: Int64) throws(AccountsError)
  /// Records the home folder `path` as given to `uid`; false (nothing written) when it was
  /// given to another uid before (true again for the same uid).
  func giveHome(_ path: String, uid: Int64, at date: Date) throws(AccountsError) -> Bool
  /// Sets the group's gid (a number `givePosixID` recorded).
  func setGID(_ gid: Int64, groupID: Int64) throws(AccountsError)
  /// Stores an SSH key of the account; false (nothing written) when it has one of that
  /// fingerprint.
  func insertSSHKey(_ key: SSHKey, accountID: Int64, at date: Date) throws(AccountsError) -> Bool
  /// Deletes the account's key of fingerprint `fingerprint`; false when it has none.
  func deleteSSHKey(accountID: Int64, fingerprint: String) throws(AccountsError) -> Bool

  // MARK: Copying a whole store

  /// Stores rows of `table` as they are, ids included (the one `activation` row is replaced).
  func insertRows(_ rows: [[StoreValue]], into table: StoreRecordKind) throws(AccountsError)
  /// Makes the next ids follow `positions` (or the highest stored id, if higher).
  func raiseIDPositions(to positions: IDPositions) throws(AccountsError)
}

extension AccountReader {
  /// Throws `.alreadyActivated` unless the device is Public.
  public func requirePublic() throws(AccountsError) {
    guard try deviceStatus().state == .publicState else { throw .alreadyActivated }
  }

  /// Throws `.notActivated` unless the device is Activated.
  public func requireActivated() throws(AccountsError) {
    guard try deviceStatus().state == .activated else { throw .notActivated }
  }
}

extension AccountWriter {
  /// Stores the device's first account and makes it the owner of an Activated device.
  ///
  /// Throws `.alreadyActivated` when the device is already activated: asked inside the write,
  /// which runs alone, so that of two activations the second finds the first's owner.
  public func activate(owner: NewAccount, at date: Date) throws(AccountsError) -> Account {
    try requirePublic()
    return try storeActivation(owner: owner, at: date)
  }
}

extension AccountRepository {
  /// The device's state read through `read`, every failure as a store error about `location`:
  /// how a status read answers when it cannot take a faster way.
  public func storedStatus() throws(StoreError) -> DeviceStatus {
    do {
      return try read { reader throws(AccountsError) in try reader.deviceStatus() }
    } catch {
      if case .storage(let error) = error { throw error }
      throw .failure(location: location, reason: error.description)
    }
  }
}

extension AccountRepository {
  /// False: the secrets are sealed under a key file the process holds (an SQLite store).
  public var keepsSecondFactorsOnServer: Bool { false }

  /// Nil: a store of one device.
  public func authenticatorDomain() throws(AccountsError) -> String? { nil }

  /// Nil: a store that keeps no secret for its server keeps every one under the key file.
  public func keyFileSealedSecret(key: String, proof: String) throws(AccountsError)
    -> KeyFileSealedSecret?
  { nil }
}

/// A second factor's secret a store whose server keeps the others still keeps sealed under a
/// key file, as it was sealed before the server kept them.
public struct KeyFileSealedSecret: Equatable, Sendable {
  /// The sealed secret (AES-256-GCM, bound to the account's id).
  public var sealed: [UInt8]
  /// The id of the key file's key it is sealed under.
  public var keyID: String

  /// Creates one.
  public init(sealed: [UInt8], keyID: String) {
    self.sealed = sealed
    self.keyID = keyID
  }
}
