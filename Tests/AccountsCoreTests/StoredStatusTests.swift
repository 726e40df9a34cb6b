import AccountsCore
import Testing

/// A status read through the repository turns every failure into a store error, once.
@Suite("Stored status")
struct StoredStatusTests {
  /// A repository whose every call fails with `error`.
  private final class FailingStore: AccountRepository {
    let location = "/srv/accounts.sqlite3"
    var writingHost: String?
    let error: AccountsError
    init(_ error: AccountsError) { self.error = error }
    func read<T>(_ body: (any AccountReader) throws(AccountsError) -> T) throws(AccountsError) -> T
    { throw error }
    func write<T>(_ body: (any AccountWriter) throws(AccountsError) -> T) throws(AccountsError)
      -> T
    { throw error }
    func consistencyFacts() throws(AccountsError) -> ConsistencyFacts { throw error }
    func appendOfflineEvent(_ event: QueuedEvent) throws(AccountsError) -> Bool { throw error }
  }

  /// A store error comes out as it is.
  @Test func storeErrorAsItIs() {
    let store = FailingStore(.storage(.busy(location: "/srv/accounts.sqlite3", seconds: 5)))
    #expect(throws: StoreError.busy(location: "/srv/accounts.sqlite3", seconds: 5)) {
      try store.storedStatus()
    }
  }

  /// Any other error becomes a store failure about the store's location, in its own words.
  @Test func otherErrorsAsStoreFailure() {
    let store = FailingStore(.notActivated)
    #expect(
      throws: StoreError.failure(
        location: "/srv/accounts.sqlite3", reason: AccountsError.notActivated.description)
    ) {
      try store.storedStatus()
    }
  }
}
