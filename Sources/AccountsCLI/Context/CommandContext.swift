import AccountsCore
import AccountsCrypto
import AccountsPostgres
import AccountsStore
import ArgumentParser
import Foundation

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
  @Option(
    name: .customLong("database"),
    help: ArgumentHelp(
      "The SQLite file, or a postgresql:// URI, to use (default: $ACCOUNTS_DATABASE, else "
        + "$XDG_DATA_HOME/accounts/accounts.sqlite3, else ~/.local/share/accounts/accounts.sqlite3)."
        + " Keep a PostgreSQL password in ~/.pgpass, not in the URI. A path must be valid"
        + " UTF-8.",
      valueName: "path-or-uri"))
  var database: String?

  /// The live context: the terminal, the database path, the policies from the environment.
  func makeContext() throws(AccountsError) -> CommandContext {
    try CommandContext.live(database: database)
  }
}

/// What a command's `run(_:)` works with, built from an injectable environment (its variables)
/// and console, so that commands run in-process in tests (swiftly's `run(_ ctx:)`).
struct CommandContext {
  /// The core's view of the world.
  var environment: AccountsEnvironment
  /// Where results are written (the terminal, or a test's script).
  var console: any Console
  /// Many lines of results (`user list`, `log`), written in blocks.
  var bulk: any BulkOutput

  /// The live context for a `--database` value (nil when not given).
  static func live(database: String?) throws(AccountsError) -> CommandContext {
    // Read one variable at a time: even a small dictionary of them costs more at start-up (its
    // generic type is instantiated at run time) than the rest of `accounts status`.
    let console = TerminalConsole()
    if database?.isEmpty ?? true, let raw = RawInput.undecodableVariable("ACCOUNTS_DATABASE") {
      throw .invalidSetting(
        name: "ACCOUNTS_DATABASE", value: Escaping.visible(bytes: raw), expected: "valid UTF-8")
    }
    if let database, StoreLocation.holdsPassword(database) {
      console.message(Messages.passwordInURI)
    }
    return try make(
      database: database, variable: { getenv($0).map { String(cString: $0) } },
      console: console, bulk: StandardOutputBuffer())
  }

  /// A context over `console`, with settings read through `variable`.
  static func make(
    database: String?, variable: (String) -> String?, console: any Console,
    bulk: any BulkOutput,
    openStore: ((String, StoreAccess) throws(StoreError) -> (any AccountRepository)?)? = nil,
    now: @escaping () -> Date = Date.init, busyTimeout: Double = 5, keyFile: String? = nil
  ) throws(AccountsError) -> CommandContext {
    let path = try DatabaseLocation.resolve(flag: database, variable: variable)
    let hasher = try PasswordHasher(iterationsSetting: variable(PasswordHasher.iterationsVariable))
    let blocklist = variable("ACCOUNTS_PASSWORD_BLOCKLIST").flatMap {
      $0.isEmpty ? nil : PasswordBlocklist(path: $0)
    }
    let sessionPolicy = try SessionPolicy(
      lifetimeSetting: variable(SessionPolicy.lifetimeVariable),
      idleSetting: variable(SessionPolicy.idleVariable))
    let sessions = SessionFile(
      path: SessionFile.defaultPath(
        stateHome: variable("XDG_STATE_HOME"), home: variable("HOME")))
    let keys = try DatabaseLocation.keyFile(
      database: path, given: keyFile ?? variable("ACCOUNTS_KEY_FILE"), variable: variable)
    // Separate calls rather than one with optional typed-throws closures: Swift 6.3's compiler
    // crashes (signal 11) on `openStore ?? …` and on an optional `readStatus` built here.
    let environment: AccountsEnvironment
    if openStore == nil && StoreLocation.isPostgres(path) {
      // One connection for the whole command: the state read first, then the reads and writes.
      let store = PostgresStore(uri: path, busyTimeout: busyTimeout)
      environment = AccountsEnvironment(
        console: console, databasePath: store.location,
        openStore: { access throws(StoreError) in try store.opened(for: access) },
        readStatus: { () throws(StoreError) in try store.status() }, now: now,
        hasher: hasher, blocklist: blocklist, sessions: sessions, keys: keys,
        sessionPolicy: sessionPolicy, hostName: hostName())
    } else if let openStore {
      environment = AccountsEnvironment(
        console: console, databasePath: path,
        openStore: { access throws(StoreError) in try openStore(path, access) }, now: now,
        hasher: hasher, blocklist: blocklist, sessions: sessions, keys: keys,
        sessionPolicy: sessionPolicy, hostName: hostName())
    } else {
      environment = AccountsEnvironment(
        console: console, databasePath: path,
        openStore: { access throws(StoreError) in
          try AccountStore.open(path: path, access: access, busyTimeout: busyTimeout)
        },
        readStatus: { () throws(StoreError) in
          try StatusReader.read(path: path, busyTimeout: busyTimeout)
        }, now: now,
        hasher: hasher, blocklist: blocklist, sessions: sessions, keys: keys,
        sessionPolicy: sessionPolicy, hostName: hostName())
    }
    return CommandContext(environment: environment, console: console, bulk: bulk)
  }

  /// Prints Home on standard output.
  func showHome(_ home: HomeScreen) {
    for line in home.lines(timeZone: environment.timeZone) { console.output(line) }
  }
}

/// This machine's name (`gethostname`), for the label authenticator apps show.
private func hostName() -> String {
  var buffer = [CChar](repeating: 0, count: 256)
  guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
  let name = String(
    decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  return name.isEmpty ? "localhost" : name
}

/// A command that runs against a `CommandContext`; `run()` builds the live one.
protocol ContextualCommand: ParsableCommand {
  /// `--database`.
  var global: GlobalOptions { get }
  /// The command's work, in a given context.
  func run(_ context: CommandContext) throws
}

extension ContextualCommand {
  func run() throws {
    let context = try global.makeContext()
    defer { context.bulk.flush() }
    try run(context)
  }
}

/// Where the database lives when `--database` does not say.
enum DatabaseLocation {
  /// `--database`, else `$ACCOUNTS_DATABASE`, else the XDG data folder.
  ///
  /// Always absolute, so SQLite never takes it for a `file:` URI. A `HOME` that is not absolute
  /// is not used: the home folder then comes from the user database.
  static func resolve(flag: String?, variable: (String) -> String?) throws(AccountsError)
    -> String
  {
    if let flag, !flag.isEmpty {
      // A path whose bytes are not UTF-8 arrives with U+FFFD in their place: it would name
      // another file than the one meant, so it is refused, shown as given.
      if let raw = RawInput.undecodableArgument(flag) {
        throw .invalidSetting(
          name: "A database path", value: Escaping.visible(bytes: raw), expected: "valid UTF-8")
      }
      return absolute(flag)
    }
    if let path = variable("ACCOUNTS_DATABASE"), !path.isEmpty { return absolute(path) }
    if let data = variable("XDG_DATA_HOME"), data.hasPrefix("/") {
      return (data as NSString).appendingPathComponent("accounts/accounts.sqlite3")
    }
    guard
      let home = variable("HOME").flatMap({ $0.hasPrefix("/") ? $0 : nil }) ?? homeFromPasswd()
    else {
      throw .storage(
        .cannotOpen(
          path: "~/.local/share/accounts/accounts.sqlite3",
          reason: "HOME is not set; pass --database"))
    }
    return (home as NSString).appendingPathComponent(".local/share/accounts/accounts.sqlite3")
  }

  /// The key file sealing TOTP secrets: `given` (ACCOUNTS_KEY_FILE, `--key-file`), else
  /// `<database>.key` beside an SQLite file, else, for a PostgreSQL store (whose hosts each keep
  /// a copy), `$XDG_CONFIG_HOME/accounts/postgresql.key` or `~/.config/accounts/postgresql.key`.
  static func keyFile(database: String, given: String?, variable: (String) -> String?)
    throws(AccountsError) -> KeyFile
  {
    if let given, !given.isEmpty { return KeyFile(path: absolute(given)) }
    guard StoreLocation.isPostgres(database) else { return KeyFile(databasePath: database) }
    if let config = variable("XDG_CONFIG_HOME"), config.hasPrefix("/") {
      return KeyFile(path: (config as NSString).appendingPathComponent("accounts/postgresql.key"))
    }
    guard
      let home = variable("HOME").flatMap({ $0.hasPrefix("/") ? $0 : nil }) ?? homeFromPasswd()
    else {
      throw .invalidSetting(
        name: "ACCOUNTS_KEY_FILE", value: "", expected: "set (HOME is not set)")
    }
    return KeyFile(
      path: (home as NSString).appendingPathComponent(".config/accounts/postgresql.key"))
  }

  /// `path` made absolute; a PostgreSQL URI as it is.
  static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") || StoreLocation.isPostgres(path) { return path }
    let expanded = path.hasPrefix("~") ? (path as NSString).expandingTildeInPath : path
    if expanded.hasPrefix("/") { return expanded }
    return (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
  }

  /// The running (effective) user's home folder from the user database, as libpq finds it for
  /// ~/.pgpass: under a set-user-ID caller such as `su` (whose `pam_exec` child keeps the real
  /// user of the person typing) it is root's, not that person's.
  static func homeFromPasswd() -> String? {
    guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
    return String(cString: directory)
  }
}

/// The command line and the environment as the system gave them: bytes, which Swift's strings
/// show with U+FFFD where they are not UTF-8.
enum RawInput {
  /// The bytes of the argument that reads as `value` (or as `--name=value`), when they are not
  /// UTF-8; nil when `value` came from UTF-8 (or from no argument).
  static func undecodableArgument(_ value: String) -> [UInt8]? {
    guard value.unicodeScalars.contains("\u{FFFD}") else { return nil }
    for index in 1..<Int(CommandLine.argc) {
      guard let pointer = CommandLine.unsafeArgv[index] else { continue }
      let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map {
        UInt8(bitPattern: $0)
      }
      guard String(validating: bytes, as: UTF8.self) == nil else { continue }
      let text = String(decoding: bytes, as: UTF8.self)
      if text == value { return bytes }
      if text.hasPrefix("--"), text.hasSuffix("=" + value),
        let equals = bytes.firstIndex(of: UInt8(ascii: "="))
      {
        return Array(bytes[(equals + 1)...])
      }
    }
    return nil
  }

  /// The bytes of the environment variable `name`, when they are not UTF-8.
  static func undecodableVariable(_ name: String) -> [UInt8]? {
    guard let pointer = getenv(name) else { return nil }
    let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map {
      UInt8(bitPattern: $0)
    }
    return String(validating: bytes, as: UTF8.self) == nil ? bytes : nil
  }
}
