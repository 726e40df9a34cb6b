import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

// What the core's tests share: the in-memory world, its clock, and shorthands.

let password = "correct horse battery staple"
let start = Date(timeIntervalSince1970: 1_800_000_000)
let gmt = TimeZone(identifier: "GMT") ?? .current

/// A test clock that moves only when told.
final class TestClock: @unchecked Sendable {
  var now = start
  func advance(_ seconds: TimeInterval) { now += seconds }
}

/// An in-memory world: store, clock, fast hasher.
struct World {
  let store: SQLiteStore
  let clock = TestClock()
  var hasher = PasswordHasher(iterations: 1000)
  var blocklist: PasswordBlocklist?
  /// This client's session file, shared by every flow of the world.
  let sessions = MemorySessionKeeper()
  /// The key file beside the database.
  let keys = MemorySealingKeyStore()
  var sessionPolicy = SessionPolicy.standard
  /// This host's login cache, when the test keeps one.
  var loginCacheFiles: (any LoginCacheFiles)?

  init() throws {
    store = try SQLiteStore.inMemory()
  }

  func environment(_ console: ScriptedConsole) -> AccountsEnvironment {
    var env = AccountsEnvironment(
      console: console, store: store, now: { [clock] in clock.now }, hasher: hasher,
      blocklist: blocklist, sessions: sessions, keys: keys, sessionPolicy: sessionPolicy)
    env.loginCacheFiles = loginCacheFiles
    return env
  }

  /// Activates alice through the flow, from a pipe.
  func activateAlice(fullName: String = "Alice Liddell", secret: String = password) throws {
    let console = ScriptedConsole([secret])
    try ActivationFlow.run(
      environment(console),
      options: ActivationOptions(
        username: "Alice", fullName: fullName, email: "alice@example.org",
        passwordFromStandardInput: true))
  }

  /// Logs in from a pipe; returns Home or the error, and what was said.
  func login(_ name: String, _ secret: String) -> (
    Result<HomeScreen, AccountsError>, ScriptedConsole
  ) {
    let console = ScriptedConsole([name, secret])
    let result = Result { () throws(AccountsError) in
      try LoginFlow.run(environment(console), options: LoginOptions())
    }
    return (result, console)
  }
}

/// Replaces the stored hash through the store's own write path.
func replaceHash(_ store: SQLiteStore, with hash: String) throws {
  let key = try #require(try store.user()).usernameKey
  try store.updatePasswordHash(usernameKey: key, to: hash, at: start)
}

extension Result where Failure == AccountsError {
  var exitStatus: AccountsCore.ExitStatus {
    switch self {
    case .success: return .success
    case .failure(let error): return error.exitStatus
    }
  }

  var errorText: String {
    if case .failure(let error) = self { return error.description }
    return ""
  }
}
