import AccountsCore
import ArgumentParser
import FoundationEssentials
import Testing

@testable import AccountsCLI

@Suite("Command line")
struct CommandLineTests {
  /// Each subcommand parses its flags; passwords have no flag at all.
  @Test func parsesSubcommands() throws {
    let activate = try #require(
      try AccountsCommand.parseAsRoot([
        "activate", "--username", "alice", "--full-name", "Alice Liddell", "--email",
        "alice@example.org", "--password-stdin", "--database", "/tmp/x.sqlite3",
      ]) as? AccountsCommand.Activate)
    #expect(activate.form.username == "alice")
    #expect(activate.form.fullName == "Alice Liddell")
    #expect(activate.form.email == "alice@example.org")
    #expect(activate.form.passwordStdin)
    #expect(activate.global.database == "/tmp/x.sqlite3")

    let log = try #require(
      try AccountsCommand.parseAsRoot(["log", "--limit", "3", "--json"]) as? AccountsCommand.Log)
    #expect(log.limit == 3 && log.json)
    let unlock = try #require(
      try AccountsCommand.parseAsRoot(["unlock", "Alice"]) as? AccountsCommand.Unlock)
    #expect(unlock.username == "Alice")
    let reset = try #require(
      try AccountsCommand.parseAsRoot(["reset", "-y"]) as? AccountsCommand.Reset)
    #expect(reset.yes)
  }

  /// A password flag does not exist: secrets never go on the command line.
  @Test func noPasswordFlag() {
    #expect(throws: (any Error).self) {
      try AccountsCommand.parseAsRoot(["login", "--password", "hunter2hunter2hunter2"])
    }
    #expect(throws: (any Error).self) { try AccountsCommand.parseAsRoot(["log", "--limit", "0"]) }
  }

  /// The fast path takes exactly the plain status forms and leaves the rest to the parser.
  @Test func statusFastPath() {
    #expect(AccountsCommand.Status.fastPath(["status"])! == (false, nil))
    #expect(AccountsCommand.Status.fastPath(["status", "--json"])! == (true, nil))
    #expect(
      AccountsCommand.Status.fastPath(["status", "--database", "/d", "--json"])! == (true, "/d"))
    #expect(AccountsCommand.Status.fastPath(["status", "--database=/d"])! == (false, "/d"))
    #expect(AccountsCommand.Status.fastPath(["--database", "/d", "status"])! == (false, "/d"))
    #expect(
      AccountsCommand.Status.fastPath(["--database=/d", "status", "--json"])! == (true, "/d"))
    for other in [
      ["status", "--help"], ["status", "--json", "--json"], ["status", "--database"],
      ["status", "--database", "--json"], ["status", "--database="], ["login"], [],
      ["status", "extra"], ["--database", "/d"], ["--database", "/d", "login"],
      ["--database", "/a", "status", "--database", "/b"], ["--database", "-d", "status"],
      ["--database=", "status"], ["--json", "status"], ["--database", "/d", "--json", "status"],
    ] {
      #expect(AccountsCommand.Status.fastPath(other) == nil, "\(other)")
    }
  }

  /// Every form the status fast path takes, ArgumentParser reads the same way.
  @Test(arguments: [
    ["status"], ["status", "--json"], ["status", "--database", "/d"], ["status", "--database=/d"],
    ["status", "--json", "--database", "/d"], ["status", "--database", "/d", "--json"],
    ["--database", "/d", "status"], ["--database=/d", "status"],
    ["--database", "/d", "status", "--json"], ["--database", "status", "status"],
    ["--database", "postgresql:///accounts", "status"], ["status", "--database", "rel/d b"],
  ])
  func statusFastPathReadsWhatArgumentParserReads(_ arguments: [String]) throws {
    let fast = try #require(AccountsCommand.Status.fastPath(arguments))
    let parsed = try #require(
      try AccountsCommand.parseAsRoot(arguments) as? AccountsCommand.Status)
    #expect(fast == (parsed.json, parsed.global.database))
  }

  /// The database is --database, else $ACCOUNTS_DATABASE, else XDG, else ~/.local/share, for
  /// a user other than root.
  @Test func databaseLocation() throws {
    let env = [
      "ACCOUNTS_DATABASE": "/env/a.sqlite3", "XDG_DATA_HOME": "/xdg", "HOME": "/home/alice",
    ]
    func path(_ flag: String?, _ env: [String: String]) throws -> String {
      try DatabaseLocation.choose(
        flag: flag, variable: { env[$0] }, asRoot: false, exists: { _ in true }
      ).path
    }
    #expect(try path("/flag.sqlite3", env) == "/flag.sqlite3")
    #expect(try path(nil, env) == "/env/a.sqlite3")
    var noVariable = env
    noVariable["ACCOUNTS_DATABASE"] = nil
    #expect(try path(nil, noVariable) == "/xdg/accounts/accounts.sqlite3")
    noVariable["XDG_DATA_HOME"] = "relative/ignored"
    #expect(try path(nil, noVariable) == "/home/alice/.local/share/accounts/accounts.sqlite3")
    let relative = try path("rel.sqlite3", env)
    #expect(relative.hasPrefix("/") && relative.hasSuffix("/rel.sqlite3"))
  }

  /// Root's store, with nothing naming one, is /var/lib/accounts/accounts.sqlite3; one at its
  /// former default (the XDG path) is kept while the system one does not exist, with a note.
  @Test func rootDatabaseLocation() throws {
    let system = "/var/lib/accounts/accounts.sqlite3"
    let former = "/root/.local/share/accounts/accounts.sqlite3"
    let env = ["HOME": "/root"]
    func choice(_ existing: Set<String>, _ env: [String: String] = env) throws
      -> DatabaseLocation.Choice
    {
      try DatabaseLocation.choose(
        flag: nil, variable: { env[$0] }, asRoot: true, exists: { existing.contains($0) })
    }
    #expect(try choice([]) == .init(path: system))
    #expect(try choice([system]) == .init(path: system))
    #expect(
      try choice([former])
        == .init(path: former, note: Messages.formerRootStoreInUse(former, system: system)))
    #expect(
      try choice([former, system])
        == .init(path: system, note: Messages.formerRootStoreLeft(former, system: system)))
    #expect(
      try choice(["/x/accounts/accounts.sqlite3"], ["HOME": "/root", "XDG_DATA_HOME": "/x"]).path
        == "/x/accounts/accounts.sqlite3")
    #expect(
      try DatabaseLocation.choose(
        flag: nil, variable: { ["ACCOUNTS_DATABASE": "/env/a.sqlite3"][$0] }, asRoot: true,
        exists: { _ in true }) == .init(path: "/env/a.sqlite3"))
  }
}

/// `login` and `activate` are parsed by their own parser; anything unusual goes to the
/// root parser, so help, usage and error messages are the root's.
@Suite("Quick parsing")
struct QuickParsingTests {
  @Test func parsesTheCommonForms() throws {
    let login = try #require(
      AccountsCommand.parseQuickly(["login", "--username", "alice", "--password-stdin"])
        as? AccountsCommand.Login)
    #expect(login.username == "alice" && login.passwordStdin)
    let activate = try #require(
      AccountsCommand.parseQuickly(["activate", "--database", "/x/db"])
        as? AccountsCommand.Activate)
    #expect(activate.global.database == "/x/db")
  }

  @Test(arguments: [
    ["login", "--bogus"], ["login", "--username"], ["login", "-h"], ["login", "--help"],
    ["activate", "extra"], ["status"], ["reset", "--yes"], [], ["--version"],
    ["login", "--generate-completion-script", "bash"],
  ])
  func leavesTheRestToTheRoot(_ arguments: [String]) {
    #expect(AccountsCommand.parseQuickly(arguments) == nil)
  }
}

/// `pam-helper`'s own parser reads what ArgumentParser reads, for every line it takes, and
/// leaves the rest to ArgumentParser.
struct PamHelperParsingTests {
  typealias Invocation = AccountsCommand.PamHelper.Invocation

  /// What ArgumentParser makes of `arguments` (the words after `pam-helper`).
  static func parsed(_ arguments: [String]) throws -> Invocation {
    let command = try #require(
      try AccountsCommand.parseAsRoot(["pam-helper"] + arguments) as? AccountsCommand.PamHelper)
    return Invocation(
      stage: command.stage, database: command.global.database, keyFile: command.keyFile,
      loginCache: command.loginCache, timeLimit: command.timeLimit,
      allowGroups: command.allowGroups,
      expiredOnly: command.expiredOnly, authenticated: command.authenticated,
      sessionLogin: command.sessionLogin)
  }

  @Test(arguments: [
    // The module's lines (helper.c), with and without its optional options.
    ["auth", "--database", "/var/lib/accounts/db", "--time-limit", "5"],
    [
      "account", "--database", "postgresql:///accounts", "--key-file", "/etc/k", "--time-limit",
      "30", "--allow-groups", "staff,wheel",
    ],
    ["password", "--database", "/db", "--time-limit", "300", "--expired-only"],
    ["password", "--database", "/db", "--time-limit", "300", "--expired-only", "--authenticated"],
    ["open-session", "--database", "/db", "--time-limit", "5"],
    ["open-session", "--database", "/db", "--time-limit", "5", "--session-login", "ssh-key"],
    // Forms ArgumentParser reads the same way.
    ["close-session", "--database=/db", "--time-limit=7"],
    ["--database", "/db", "auth"],
    ["auth"],
    ["auth", "--database", ""],
    ["auth", "--database", "/db", "--time-limit", "+9"],
    ["auth", "--database", "/db", "--time-limit", "0"],
    ["nonsense", "--database", "relative/db", "--allow-groups", ",bad name,"],
    ["auth", "--key-file", "/k=v", "--database", "/db"],
  ])
  func readsWhatArgumentParserReads(_ arguments: [String]) throws {
    let quick = try #require(
      AccountsCommand.PamHelper.quickInvocation(["pam-helper"] + arguments))
    #expect(quick == (try Self.parsed(arguments)))
  }

  @Test(arguments: [
    [], ["--help"], ["auth", "-h"], ["auth", "--database"], ["auth", "--database", "-x"],
    ["auth", "--database", "/a", "--database", "/b"], ["auth", "extra"],
    ["auth", "--expired-only", "--expired-only"], ["auth", "--authenticated", "--authenticated"],
    ["auth", "--time-limit", "soon"],
    ["auth", "--time-limit", "-1"], ["auth", "--time-limit", "4294967296"], ["auth", "--bogus"],
    ["auth", "--expired-only=yes"], ["auth", "--", "/db"], ["-auth"], ["--version"],
    ["auth", "--key-file="],
    ["open-session", "--session-login", "ssh-key", "--session-login", "pam-session"],
    ["auth", "--generate-completion-script", "bash"],
  ])
  func leavesTheRestToArgumentParser(_ arguments: [String]) {
    #expect(AccountsCommand.PamHelper.quickInvocation(["pam-helper"] + arguments) == nil)
  }

  @Test func readsOnlyItsOwnCommand() {
    #expect(AccountsCommand.PamHelper.quickInvocation(["pam-auth", "--database", "/db"]) == nil)
    #expect(AccountsCommand.PamHelper.quickInvocation([]) == nil)
  }

  /// Every input of the argument fuzz target's corpus (Tests/fuzz/corpus/arguments: the
  /// arguments split at NUL bytes) that the quick parser takes, ArgumentParser reads the same.
  @Test func readsTheFuzzCorpusAsArgumentParserDoes() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../fuzz/corpus/arguments").standardized
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    #expect(!names.isEmpty)
    var taken = 0
    for name in names {
      let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
      let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
      }
      guard let quick = AccountsCommand.PamHelper.quickInvocation(["pam-helper"] + arguments)
      else { continue }
      taken += 1
      #expect(quick == (try Self.parsed(arguments)), "\(name)")
    }
    #expect(taken > 0)
  }
}
