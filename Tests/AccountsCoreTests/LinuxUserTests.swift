import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// Keys made by ssh-keygen (OpenSSH 9.2), with what `ssh-keygen -l -E sha256` printed.
let ed25519Line =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMhXuQrKswCU5QWvbiXqNOBVLKiT44OtJmQVVdn4Jfls c-ed25519"
let ecdsa256Line =
  "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBC4fYQvA5TGTN3IDnjigkAz47sVmAgsMjNcSzY33t/BmT7fLl0DsdTbLsZ6KPfZGlRpgGq34QkCi06p8lCAHIMY= c-ecdsab256"
let rsa2048Line =
  "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDTbEBgTDl9gSA+bk5JImDU6CABQTfMepCyAeshnXnycC9D2uOsGcXsRYfS6pNHRo41wpa4hswS0RyA7fqbaJcwbLUksLr7Y5KUO074UtjxL7UvCeGe0vc3YEF3CchalAPnnEmZCbqFdcV3teOAKSN24ApZVOVg4vvEIixHjtabGjtvB/8e0RkYxQ1E32RPY3Mid70o7Xe3TRU9VumoNbnrRIkzxxy61wW0Jn2jxdl69ouSlKULPFjA3jn+vq5D1pgANr1tXKsT5no+dozTeQpA5AiRDwv2866RRcaI06oCqyqtw56j+VGEOgb370N+eYS3Mja0/RqAt2r7vLKIe9t/ c-rsab2048"
let rsa1024Line =
  "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDBSaAw/0IxhhrBYdeOs65Zuo7uq9n/l0YIflMBGrXeoKaCnX4Wg9I3jpx27U9J6XX3XR0ln+0Fc/lsimakB197Zl18SeH8NesBx5btEoOP/Yh0VjhApWAQY37n8tgD9z/bt57UbrOaOpuGQaLA/T95vErWtgLmD/nfoGOW6IB0rQ== c-rsab1024"
let dsaLine =
  "ssh-dss AAAAB3NzaC1kc3MAAACBAKQ4j7sx0Ob+6eBDn+76oQ32INKri0jN0/o8E+GRCXDL13H7MEEOxLNyr15YbgA9QYBgzJ51JvZc60ooRungv/JkSy8Z+ObbLxsb+CmJne/pqiKO1nCMfB1rE+0hQe/6ymFkQLeVP9sj5Rq+7yA+bV4UmmgZRThqtPDjI+s3Mo+zAAAAFQDgpgofOdPDZfqwjoi+BXw5owjN0wAAAIAjVq8ozgoxn2wgXEbT4WZhe+RvWYKxBCP+jfIXvyUOSu0PoU8dYjyWW4XyrLnYt+nf73q+QdTKW1G/zkeneyaJ2+Pl8Z+sKbHF5y9Oiw6wf1Pyn2iNGaahTAjQysW95OmjWMVXxsdehOOQN97sxtjVsfHAZ4zzYp5ril+n1b6DxAAAAIAoXJEDjlLlNmL69+Aq8mnh0TUWmRW1z8D2cxQe7GqVo0wpyGoH7TeFE4JIVxS3fCgLKJG/Mxla5gpnYz+TjpyUaiLgRKqi6QtKDE/KLWzZn3A1YW0X89yXN865MtyMGulUkucNvPo43faQvEznZF6z+kq4YGEJtQu321YWRsWrnw== c-dsa"

func fingerprint(_ blob: [UInt8]) throws(AccountsError) -> String {
  do {
    return SSHKeyParser.fingerprint(digest: try SHA256.hash(blob))
  } catch {
    throw .crypto(error)
  }
}

@Suite("SSH keys")
struct SSHKeyParserTests {
  /// Fingerprints, sizes and comments are what ssh-keygen printed for the same keys.
  @Test func matchesSSHKeygen() throws {
    let keys = try SSHKeyParser.keys(
      in: [ed25519Line, "", "# a comment", ecdsa256Line, rsa2048Line].joined(separator: "\n"),
      fingerprint: fingerprint)
    #expect(
      keys.map(\.fingerprint) == [
        "SHA256:5lg3DbxDz7e8oRzRFHXbPst5h+oblZHWalu63TuoQ/A",
        "SHA256:9ZlBKk5mixpdybBxzRp8iSur1BHN79jPMiIajv4ukYU",
        "SHA256:TBkMMvfjqUE1wvsOmupTA7gFTXgsZSqWry5lUf+8JHg",
      ])
    #expect(keys.map(\.bits) == [256, 256, 2048])
    #expect(keys.map(\.comment) == ["c-ed25519", "c-ecdsab256", "c-rsab2048"])
    #expect(keys.first?.line == ed25519Line)
  }

  /// DSA, short RSA, options, a certificate type, a blob of another type, a cut blob, trailing
  /// bytes and nonsense are refused, each with its line number.
  @Test func refusals() throws {
    func problem(_ line: String) -> SSHKeyProblem? {
      if case .failure(let problem) = SSHKeyParser.parse(line) { return problem }
      return nil
    }
    #expect(problem(dsaLine) == .refusedType("ssh-dss"))
    #expect(problem(rsa1024Line) == .rsaTooShort(bits: 1024))
    #expect(problem("command=\"/bin/true\" " + ed25519Line) == .options)
    #expect(problem("no-pty " + ed25519Line) == .options)
    #expect(problem("from=\"10.0.0.1\",no-pty " + ed25519Line) == .options)
    let blob = ed25519Line.split(separator: " ")[1]
    #expect(problem("ssh-rsa \(blob)") == .malformed)
    #expect(
      problem("ssh-ed25519-cert-v01@openssh.com \(blob)")
        == .refusedType("ssh-ed25519-cert-v01@openssh.com"))
    #expect(problem("ssh-ed25519 \(blob.dropLast(8))") == .malformed)
    #expect(problem("ssh-ed25519 AAAA") == .malformed)
    #expect(problem("ssh-ed25519") == .malformed)
    #expect(problem("hello world") == .malformed)
    #expect(problem(ed25519Line + "\u{7}") == .badComment)
    let trailing = Data(Data(base64Encoded: String(blob))! + [0]).base64EncodedString()
    #expect(problem("ssh-ed25519 \(trailing)") == .malformed)
    #expect(throws: AccountsError.sshKeyRefused(line: 2, problem: .rsaTooShort(bits: 1024))) {
      try SSHKeyParser.keys(in: ed25519Line + "\n" + rsa1024Line, fingerprint: fingerprint)
    }
  }

  /// Security keys (sk-) carry their application after the key and are accepted.
  @Test func securityKeys() throws {
    func string(_ bytes: [UInt8]) -> [UInt8] {
      let count = UInt32(bytes.count)
      return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: count >> $0) } + bytes
    }
    let ed =
      string(Array("sk-ssh-ed25519@openssh.com".utf8)) + string([UInt8](repeating: 7, count: 32))
      + string(Array("ssh:".utf8))
    let line = "sk-ssh-ed25519@openssh.com " + Data(ed).base64EncodedString() + " yubikey"
    let parsed = try SSHKeyParser.keys(in: line, fingerprint: fingerprint)
    #expect(parsed.map(\.bits) == [256])
    let ecdsa =
      string(Array("sk-ecdsa-sha2-nistp256@openssh.com".utf8)) + string(Array("nistp256".utf8))
      + string([4] + [UInt8](repeating: 9, count: 64)) + string(Array("ssh:".utf8))
    let ecdsaLine = "sk-ecdsa-sha2-nistp256@openssh.com " + Data(ecdsa).base64EncodedString()
    #expect(try SSHKeyParser.keys(in: ecdsaLine, fingerprint: fingerprint).map(\.bits) == [256])
    #expect(
      SSHKeyParser.parse("sk-ssh-ed25519@openssh.com " + Data(ed.dropLast(8)).base64EncodedString())
        == .failure(.malformed))
  }
}

/// A name service that knows what a test says.
final class FakeNameService: NameService, @unchecked Sendable {
  var users: [String: Int64] = [:]
  var groups: [String: Int64] = [:]
  /// The users of /etc/passwd (also in `users`).
  var localUsers: Set<String> = []
  func uid(ofUser name: String) -> Int64? { users[name] }
  func isLocalUser(_ name: String) -> Bool { localUsers.contains(name) }
  /// The users NSS gives from user records: every one in `users` but `otherUsers`.
  var otherUsers: Set<String> = []
  func hasUserRecord(named name: String, uid: Int64) -> Bool {
    users[name] == uid && !otherUsers.contains(name) && !localUsers.contains(name)
  }
  func gid(ofGroup name: String) -> Int64? { groups[name] }
  func knowsUID(_ number: Int64) -> Bool { users.values.contains(number) }
  func knowsGID(_ number: Int64) -> Bool { groups.values.contains(number) }
}

/// A records folder in memory: what each file holds, and the store's change counter it applied.
final class MemoryFolders: UserRecordFolders, UserRecordFolderSession, @unchecked Sendable {
  var files: [String: UserRecordFile] = [:]
  var generation: Int64?
  var progress: ((Int, Int) -> Void)?
  /// The files each apply wrote or removed.
  var touched: [[String]] = []
  /// Whose files each apply looked at (nil: all).
  var scopes: [Set<String>?] = []
  var recordCounts: (users: Int, groups: Int) {
    let records = files.values.filter { $0.content != nil && !$0.name.contains(":") }
    return (
      records.filter { $0.name.hasSuffix(".user") }.count,
      records.filter { $0.name.hasSuffix(".group") }.count
    )
  }
  func open(_ folder: String, storeID: String, create: Bool, repair: Bool)
    -> (any UserRecordFolderSession)?
  {
    self
  }
  func apply(_ wanted: [UserRecordFile], owners: Set<String>?, generation: Int64, dryRun: Bool)
    -> UserRecordChanges
  {
    var changes = UserRecordChanges()
    let names = Set(wanted.map(\.name))
    changes.written = wanted.filter { files[$0.name] != $0 }.map(\.name).sorted()
    changes.removed = files.values.filter {
      (owners?.contains($0.owner) ?? true) && !names.contains($0.name)
    }.map(\.name).sorted()
    if !dryRun {
      for name in changes.removed { files[name] = nil }
      for file in wanted { files[file.name] = file }
      self.generation = generation
      touched.append(changes.written + changes.removed)
      scopes.append(owners)
    }
    return changes
  }
  func removeAll() -> UserRecordRemoval {
    defer { files = [:] }
    return UserRecordRemoval(files: files.count, manifestRemoved: true)
  }
  func manifestCount() -> Int { files.count }
  func close() {}

  /// The JSON object of a record.
  func object(_ name: String) -> [String: Any]? {
    guard let content = files[name]?.content else { return nil }
    return try? JSONSerialization.jsonObject(with: Data(content)) as? [String: Any]
  }
}

/// A suite about user records: its world, name service and folders, and the environment of a
/// host (`h1`) that keeps records in those folders.
protocol UserRecordsWorld {
  var world: World { get }
  var names: FakeNameService { get }
  var folders: MemoryFolders { get }
}

extension UserRecordsWorld {
  func env(_ console: ScriptedConsole = ScriptedConsole([])) -> AccountsEnvironment {
    var env = world.environment(console)
    env.nameService = names
    env.userRecords = folders
    env.hostName = "h1"
    return env
  }
}

@Suite("User records")
struct UserRecordTests: UserRecordsWorld {
  let world: World
  let names = FakeNameService()
  let folders = MemoryFolders()

  init() throws {
    world = try World()
    try world.activateAlice()
  }

  func add(_ name: String, fullName: String, home: String? = nil, shell: String? = nil) throws {
    try UserAddFlow.run(
      env(ScriptedConsole([password])),
      options: ActivationOptions(
        username: name, fullName: fullName, email: "\(name)@example.org",
        passwordFromStandardInput: true), home: home, shell: shell)
  }

  /// Enabling gives numbers from the range, skipping one the system knows as a uid and one it
  /// knows as a gid; records hold the spec's fields and no secret.
  @Test func recordsAndNumbers() throws {
    names.users["local"] = 21000
    names.groups["lgroup"] = 21001
    let outcome = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21005"))
    #expect(outcome.users == 1)
    let alice = try #require(folders.object("Alice.user"))
    #expect(alice["uid"] as? Int == 21002)
    #expect(alice["gid"] as? Int == 21002)
    #expect(alice["userName"] as? String == "Alice")
    #expect(alice["realName"] as? String == "Alice Liddell")
    #expect(alice["homeDirectory"] as? String == "/home/Alice")
    #expect(alice["shell"] as? String == "/bin/bash")
    #expect(alice["disposition"] as? String == "regular")
    #expect(alice["locked"] as? Bool == false)
    #expect(
      Set(alice.keys)
        == [
          "userName", "realName", "uid", "gid", "homeDirectory", "shell", "disposition", "locked",
        ])
    #expect(folders.files["21002.user"]?.linkTarget == "Alice.user")
    #expect(folders.files["21002.group"]?.linkTarget == "Alice.group")
    #expect(folders.object("Alice.group")?["gid"] as? Int == 21002)
    for file in folders.files.values {
      let text = String(decoding: file.content ?? [], as: UTF8.self)
      #expect(!text.contains("pbkdf2") && !text.contains("alice@example.org"))
    }
  }

  /// Enabling, a sync that changed the folder, and disabling are logged with the folder and
  /// what was written or removed; a sync that found nothing to do is not.
  @Test func changesAreLogged() throws {
    // Given records kept in /run/userdb
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21005"))
    // When a sync finds nothing to do, then one finds a record missing, then records go off
    _ = try UserdbFlow.sync(env())
    // (a file removed by hand: the live folder then no longer knows what it applied)
    folders.files["Alice.user"] = nil
    folders.generation = nil
    _ = try UserdbFlow.sync(env())
    _ = try UserdbFlow.disable(env())
    // Then three events, about no user
    let logged = try world.store.auditEvents().filter { $0.kind.rawValue.hasPrefix("userdb_") }
    #expect(
      logged.map { "\($0.kind.rawValue) \($0.username ?? "-") \($0.detail ?? "-")" } == [
        "userdb_enabled - /run/userdb: 4 written, 0 removed",
        "userdb_synced - /run/userdb: 1 written, 0 removed",
        "userdb_disabled - /run/userdb: 4 removed",
      ])
  }

  /// A full name with ':' gives no realName (systemd refuses such a record); home and shell
  /// are the account's; a removed account's records go and its uid is never given again; a
  /// name the system knows gets no record; the range used up is told.
  @Test func changesAndNeverReused() throws {
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21002"))
    try add("bob", fullName: "Bob: B", home: "/srv/bob", shell: "/bin/sh")
    _ = try UserdbFlow.sync(env())
    let bob = try #require(folders.object("bob.user"))
    #expect(bob["uid"] as? Int == 21001)
    #expect(bob["realName"] == nil)
    #expect(bob["homeDirectory"] as? String == "/srv/bob")
    #expect(bob["shell"] as? String == "/bin/sh")
    try UserRemoveFlow.run(env(), username: "bob", confirmed: true)
    _ = try UserdbFlow.sync(env())
    #expect(folders.files["bob.user"] == nil && folders.files["21001.user"] == nil)
    try add("carol", fullName: "Carol")
    #expect(try UserdbFlow.sync(env()).skipped.isEmpty)
    #expect(folders.object("carol.user")?["uid"] as? Int == 21002)
    try add("dave", fullName: "Dave")
    let full = try UserdbFlow.sync(env())
    #expect(
      full.skipped == [
        Messages.posixIDsUsedUp(range: "21000-21002", left: 1), Messages.noRecordNoUID("dave"),
      ])
    // A name the system learns is no change of the store: a whole comparison sees it.
    names.users["carol"] = 1234
    let known = try UserdbFlow.sync(env(), full: true)
    #expect(known.skipped.contains(Messages.noRecordNameKnown("carol")))
    #expect(folders.files["carol.user"] == nil)
  }

  /// Where this host keeps records, a name the system knows is refused at add.
  @Test func knownNameRefusedAtAdd() throws {
    names.users["daemon"] = 1
    try add("daemon", fullName: "Before")
    _ = try UserdbFlow.enable(env(), folder: "/run/userdb", range: nil)
    names.users["sys"] = 3
    #expect(throws: AccountsError.linuxNameTaken("sys", systemName: "sys")) {
      try add("sys", fullName: "Sys")
    }
    // A case variant of a system name is refused as the name itself
    #expect(throws: AccountsError.linuxNameTaken("Sys", systemName: "sys")) {
      try add("Sys", fullName: "Sys")
    }
  }

  /// A home folder is given once: a renamed account keeps its home, a new account of its old
  /// name (or of a removed account's name) gets another; `--home` of a folder another account
  /// was given is refused at add and at edit.
  @Test func homeNeverGivenTwice() throws {
    // Given records with bob at /home/bob
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21009"))
    try add("bob", fullName: "Bob")
    _ = try UserdbFlow.sync(env())
    let bobUID = try #require(folders.object("bob.user")?["uid"] as? Int)
    #expect(folders.object("bob.user")?["homeDirectory"] as? String == "/home/bob")
    // When bob is renamed bob-old and a new bob is added
    try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(username: "bob-old"))
    let console = ScriptedConsole([password])
    try UserAddFlow.run(
      env(console),
      options: ActivationOptions(
        username: "bob", fullName: "Bob Two", email: "bob@example.org",
        passwordFromStandardInput: true))
    _ = try UserdbFlow.sync(env())
    // Then the renamed account keeps /home/bob, and the new bob gets another folder
    #expect(folders.object("bob-old.user")?["homeDirectory"] as? String == "/home/bob")
    let newUID = try #require(folders.object("bob.user")?["uid"] as? Int)
    #expect(newUID != bobUID)
    #expect(folders.object("bob.user")?["homeDirectory"] as? String == "/home/bob-\(newUID)")
    // And the command that numbered it said so
    #expect(
      console.messages.contains(
        Messages.homeMoved("bob", wanted: "/home/bob", given: "/home/bob-\(newUID)")))
    // And after a removal, the name's folder is not given again either
    try UserRemoveFlow.run(env(), username: "bob-old", confirmed: true)
    try UserRemoveFlow.run(env(), username: "bob", confirmed: true)
    try add("bob", fullName: "Bob Three")
    _ = try UserdbFlow.sync(env())
    let third = try #require(folders.object("bob.user")?["uid"] as? Int)
    #expect(folders.object("bob.user")?["homeDirectory"] as? String == "/home/bob-\(third)")
    // And --home naming a folder given before is refused, at add and at edit
    #expect(throws: AccountsError.homeTaken("/home/bob")) {
      try add("carol", fullName: "Carol", home: "/home/bob")
    }
    #expect(throws: AccountsError.homeTaken("/home/bob")) {
      try UserEditFlow.run(env(), username: "Alice", edit: AccountEdit(home: "/home/bob"))
    }
    // But an account's own home, or a new folder, is accepted
    try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(home: "/srv/bob"))
    _ = try UserdbFlow.sync(env())
    #expect(folders.object("bob.user")?["homeDirectory"] as? String == "/srv/bob")
  }

  /// Where this host keeps records, a rename to a name the system knows is refused, and so is
  /// an imported one; a rename that changes only the case of the account's own name is not.
  @Test func knownNameRefusedAtRenameAndImport() throws {
    _ = try UserdbFlow.enable(env(), folder: "/run/userdb", range: nil)
    names.users["daemon"] = 1
    names.groups["daemon"] = 1
    try add("bob", fullName: "Bob")
    #expect(throws: AccountsError.linuxNameTaken("daemon", systemName: "daemon")) {
      try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(username: "daemon"))
    }
    // Given bob's own record known to NSS, a rename to Bob is no clash
    _ = try UserdbFlow.sync(env())
    let uid = try #require(folders.object("bob.user")?["uid"] as? Int)
    names.users["bob"] = Int64(uid)
    names.groups["bob"] = Int64(uid)
    try UserEditFlow.run(env(), username: "bob", edit: AccountEdit(username: "Bob"))
    // An import of a system name reports it, and imports nothing
    let hash = "pbkdf2_sha256$1000$salt$" + String(repeating: "A", count: 43) + "="
    let console = ScriptedConsole([])
    var importEnv = env(console)
    importEnv.console = console
    #expect(throws: AccountsError.importRefused(problems: 1)) {
      try ImportFlow.run(
        importEnv,
        input: BytesInput(
          "username,full_name,email,password_hash\ndaemon,D,d@example.org,\(hash)\n"),
        options: ImportOptions(format: .csv, emailDomain: nil, dryRun: false, name: "f"))
    }
    #expect(
      console.messages.contains(
        "line 2 (daemon): " + Messages.linuxNameTaken("daemon", systemName: "daemon")))
  }

  /// Groups get gids from the same range and records (without their members), members get
  /// membership records and memberOf; disabled accounts are locked, expiring ones carry notAfterUSec, keys
  /// go into sshAuthorizedKeys.
  @Test func groupsLockExpiryKeys() throws {
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21009"))
    try GroupFlow.add(env(), name: "crew")
    try UserEditFlow.run(
      env(), username: "Alice",
      edit: AccountEdit(
        expiry: .at(Date(timeIntervalSince1970: 1_900_000_000)), addGroups: ["crew"]))
    try SSHKeyFlow.add(env(), username: "Alice", text: ed25519Line)
    _ = try UserdbFlow.sync(env())
    let alice = try #require(folders.object("Alice.user"))
    #expect(alice["memberOf"] as? [String] == ["crew"])
    #expect(alice["notAfterUSec"] as? Int == 1_900_000_000_000_000)
    #expect(alice["sshAuthorizedKeys"] as? [String] == [ed25519Line])
    let crew = try #require(folders.object("crew.group"))
    #expect(crew["gid"] as? Int == 21001)
    #expect(crew["members"] == nil)
    #expect(folders.object("Alice:crew.membership")?["groupName"] as? String == "crew")
    #expect(
      UserRecordJSON.authorizedKeys(
        folders.files["Alice.user"]?.content ?? [], userName: "Alice", systemUID: 21000,
        now: Date(timeIntervalSince1970: 1_899_999_999)) == [ed25519Line])
    #expect(
      UserRecordJSON.authorizedKeys(
        folders.files["Alice.user"]?.content ?? [], userName: "Alice", systemUID: 21000,
        now: Date(timeIntervalSince1970: 1_900_000_000)) == [])
  }

  /// A record's keys are printed only when the name service gives the name the record's uid,
  /// and sshd's uid, when passed, is that uid too.
  @Test func authorizedKeysOnlyForTheRecordsUID() throws {
    _ = try UserdbFlow.enable(
      env(), folder: "/run/userdb", range: PosixIDRange(parsing: "21000-21009"))
    try SSHKeyFlow.add(env(), username: "Alice", text: ed25519Line)
    _ = try UserdbFlow.sync(env())
    let record = folders.files["Alice.user"]?.content ?? []
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    #expect(
      UserRecordJSON.authorizedKeys(record, userName: "Alice", systemUID: 21000, now: now)
        == [ed25519Line])
    #expect(
      UserRecordJSON.authorizedKeys(
        record, userName: "Alice", systemUID: 21000, sshdUID: 21000, now: now) == [ed25519Line])
    for (system, sshd) in [(nil, nil), (1001, nil), (nil, 21000), (1001, 1001), (21000, 1001)]
      as [(Int64?, Int64?)]
    {
      #expect(
        UserRecordJSON.authorizedKeys(
          record, userName: "Alice", systemUID: system, sshdUID: sshd, now: now) == [])
    }
  }
}
