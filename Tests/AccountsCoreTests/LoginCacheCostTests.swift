import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// On a host that keeps a login cache, a refused online login costs the same PBKDF2 work
/// whoever the name is and whatever was wrong: a person cached here, one who is not, a name
/// nobody has, a disabled account's right password and its wrong one (counted, not timed).
@Suite struct LoginCacheCostTests {
  let bobPassword = "a different long passphrase"

  /// The world with a cache in a private folder of its own, alice cached by a login, bob not.
  func cachedWorld(_ meter: WorkMeter) throws -> (World, any LoginCache, URL) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cost-\(UUID())")
    try FileManager.default.createDirectory(
      at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    var world = try World()
    let files = LoginCacheFile.Files(path: folder.appendingPathComponent("cache").path)
    let cache = try files.enable(days: 7, at: start)
    world.loginCacheFiles = files
    world.hasher = PasswordHasher(iterations: 5000, meter: meter)
    try world.activateAlice()
    try UserAddFlow.run(
      world.environment(ScriptedConsole([bobPassword])),
      options: ActivationOptions(
        username: "bob", fullName: "Bob", email: "bob@example.org",
        passwordFromStandardInput: true))
    _ = try world.login("alice", password).0.get()
    return (world, cache, folder)
  }

  /// The work one refused login of `name` with `secret` costs.
  func cost(_ world: World, _ meter: WorkMeter, _ name: String, _ secret: String) -> Int {
    let before = meter.iterations
    let (result, _) = world.login(name, secret)
    #expect(throws: AccountsError.invalidCredentials) { try result.get() }
    return meter.iterations - before
  }

  /// A wrong password of a cached person costs what one of a person not cached and an unknown
  /// name cost; the entry stays (a wrong password is not the one the server changed to).
  @Test func aCachedPersonCostsWhatOthersCost() throws {
    let meter = WorkMeter()
    let (world, cache, folder) = try cachedWorld(meter)
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(try cache.entry(key: "alice") != nil)
    #expect(try cache.entry(key: "bob") == nil)
    let wrong = "not the password at all"
    let costs = [
      "alice": cost(world, meter, "alice", wrong), "bob": cost(world, meter, "bob", wrong),
      "nobody-here": cost(world, meter, "nobody-here", wrong),
    ]
    #expect(costs == ["alice": 10_000, "bob": 10_000, "nobody-here": 10_000])
    #expect(try cache.entry(key: "alice") != nil)
  }

  /// A disabled account's right password costs what its wrong one costs while its entry is
  /// here; the right one takes the entry away.
  @Test func aDisabledAccountsRightPasswordCostsAWrongOne() throws {
    let meter = WorkMeter()
    let (world, cache, folder) = try cachedWorld(meter)
    defer { try? FileManager.default.removeItem(at: folder) }
    try UserStateFlow.run(
      world.environment(ScriptedConsole([])), username: "alice", disabled: true)
    let wrong = cost(world, meter, "alice", "not the password at all")
    #expect(try cache.entry(key: "alice") != nil)
    let right = cost(world, meter, "alice", password)
    #expect(try cache.entry(key: "alice") == nil)
    #expect(right == wrong)
    #expect(wrong == 10_000)
  }
}
