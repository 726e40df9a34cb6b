import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// A session belongs to its store: another URI of the same store keeps it, another store is
/// never asked about its token.
@Suite("Sessions and the store's identity")
struct SessionStoreIdentityTests {
  /// The world's environment, its store named by `location` (a PostgreSQL URI).
  func environment(_ world: World, _ location: String) -> AccountsEnvironment {
    var env = world.environment(ScriptedConsole([]))
    env.storeLocation = location
    return env
  }

  /// A file that names the store by one URI and records its identity (as a login on a
  /// PostgreSQL store writes it): `whoami` through another URI of the same store finds the
  /// session, and the file then names that URI.
  @Test func anotherURIOfTheSameStoreKeepsTheSession() throws {
    // Given alice's live session, the file naming this store by one URI and by its identity
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    let id = try world.store.read { reader throws(AccountsError) in
      try reader.userdbSettings().storeID
    }
    var saved = try #require(world.sessions.saved)
    saved.database = "postgresql:///accounts"
    saved.storeID = id
    world.sessions.saved = saved
    // When whoami runs through another URI of the same store
    let other = "postgresql://?host=%2Frun%2Fpostgresql&dbname=accounts"
    let found = try SessionFlow.whoami(environment(world, other))
    // Then it is her session, and the file names the URI used now
    #expect(found.account.username == "Alice")
    #expect(world.sessions.saved?.database == other)
    #expect(world.sessions.saved?.storeID == id)
    #expect(world.sessions.saved?.token == saved.token)
  }

  /// A file that records another store's identity: not logged in, the file as it was, even
  /// though this store holds a live session with the token's hash.
  @Test func anotherStoreIsNotAskedAboutTheToken() throws {
    // Given alice's live session, the file naming another store's identity
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    var saved = try #require(world.sessions.saved)
    saved.database = "postgresql:///first"
    saved.storeID = String(repeating: "f", count: 32)
    world.sessions.saved = saved
    // When whoami runs through another URI
    // Then not logged in, and the file is left as it is
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(environment(world, "postgresql:///second"))
    }
    #expect(world.sessions.saved == saved)
  }

  /// A file without a store's identity (an earlier version's) names its URI only.
  @Test func aFileWithoutIdentityNamesItsURIOnly() throws {
    let world = try World()
    try world.activateAlice()
    try world.loginAlice()
    var saved = try #require(world.sessions.saved)
    saved.database = "postgresql:///first"
    world.sessions.saved = saved
    #expect(throws: AccountsError.notLoggedIn) {
      try SessionFlow.whoami(environment(world, "postgresql:///second"))
    }
    #expect(try SessionFlow.whoami(environment(world, "postgresql:///first")).account.id == 1)
  }
}
