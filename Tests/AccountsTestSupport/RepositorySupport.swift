import AccountsCore
import AccountsStore
import Foundation

// Shorthands over the repository for tests, one transaction each through `AccountRepository`.

extension AccountRepository {
  /// The device's state.
  public func status() throws -> DeviceStatus {
    try read { reader throws(AccountsError) in try reader.deviceStatus() }
  }

  /// The owner; nil on a Public device.
  public func user() throws -> Account? {
    try read { reader throws(AccountsError) in try reader.owner() }
  }

  /// How many accounts there are.
  public func accountCount() throws -> Int {
    try read { reader throws(AccountsError) in try reader.accountCount() }
  }

  /// The account with `key`.
  public func account(key: String) throws -> Account? {
    try read { reader throws(AccountsError) in try reader.account(key: key) }
  }

  /// The newest `limit` events (all when nil), oldest first.
  public func auditEvents(limit: Int? = nil) throws -> [AuditEvent] {
    try read { reader throws(AccountsError) -> [AuditEvent] in
      var events: [AuditEvent] = []
      try reader.forEachEvent(AuditQuery(limit: limit)) { event throws(AccountsError) in
        events.append(event)
      }
      return events
    }
  }

  /// Activates with `user` as owner and logs it, as `accounts activate` does.
  public func activate(_ user: NewAccount, at date: Date) throws {
    try write { writer throws(AccountsError) in
      _ = try writer.activate(owner: user, at: date)
      try writer.append(
        AuditRecord(.activation, at: date, username: user.username, usernameKey: user.usernameKey))
    }
  }

  /// The name's tally.
  public func tally(key: String) throws -> ThrottleState {
    try read { reader throws(AccountsError) in try reader.tally(key: key) }
  }

  /// Replaces the account's stored hash.
  public func updatePasswordHash(usernameKey: String, to hash: String, at date: Date) throws {
    try write { writer throws(AccountsError) in
      guard var account = try writer.account(key: usernameKey) else { return }
      account.passwordHash = hash
      account.updatedAt = date
      try writer.update(account)
    }
  }
}

extension AccountRepository {
  /// `LoginRecorder.recordFailure` on this store.
  public func recordLoginFailure(
    username: String, usernameKey: String, at date: Date, policy: LockoutPolicy,
    detail: String = Messages.detailInvalidCredentials
  ) throws -> LoginFailureOutcome {
    try LoginRecorder.recordFailure(
      self, username: username, usernameKey: usernameKey, at: date, policy: policy,
      detail: detail)
  }

  /// `LoginRecorder.recordSuccess` on this store.
  public func recordLoginSuccess(username: String, usernameKey: String, at date: Date) throws
    -> LoginSuccessOutcome
  {
    try LoginRecorder.recordSuccess(self, username: username, usernameKey: usernameKey, at: date)
  }

  /// `LoginRecorder.unlock` on this store.
  @discardableResult
  public func unlock(username: String, usernameKey: String, at date: Date) throws -> ThrottleState {
    try LoginRecorder.unlock(self, username: username, usernameKey: usernameKey, at: date)
  }

  /// Makes the device Public as `accounts reset` does; false when it already was.
  @discardableResult
  public func reset(at date: Date) throws -> Bool {
    try write { writer throws(AccountsError) -> Bool in
      guard try writer.deviceStatus().state == .activated else { return false }
      let owner = try writer.owner()
      _ = try writer.makePublic(at: date)
      try writer.append(
        AuditRecord(.reset, at: date, username: owner?.username, usernameKey: owner?.usernameKey))
      return true
    }
  }

  /// The account, tally and owner's hash a login reads.
  public func loginRecord(usernameKey: String) throws -> (
    user: Account?, tally: ThrottleState, referenceHash: String?
  ) {
    try read { reader throws(AccountsError) in
      (
        try reader.account(key: usernameKey), try reader.tally(key: usernameKey),
        try reader.owner()?.passwordHash
      )
    }
  }
}

extension SQLiteStore {
  /// The device's state, failing with the store's own error.
  public func storeStatus() throws(StoreError) -> DeviceStatus {
    do {
      return try read { reader throws(AccountsError) in try reader.deviceStatus() }
    } catch {
      if case .storage(let error) = error { throw error }
      throw .failure(location: path, reason: error.description)
    }
  }
}
