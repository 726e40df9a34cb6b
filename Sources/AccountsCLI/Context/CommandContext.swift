import AccountsCore
import AccountsCrypto
import AccountsPostgres
import AccountsStore
import ArgumentParser
import FoundationEssentials
import Glibc

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
    if let raw = RawInput.undecodableVariable(WritingHost.variable) {
      throw .invalidSetting(
        name: WritingHost.variable, value: Escaping.visible(bytes: raw),
        expected: WritingHost.expected)
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
    now: @escaping () -> Date = Date.init, busyTimeout: Double = 5, keyFile: String? = nil,
    loginCache: String? = nil
  ) throws(AccountsError) -> CommandContext {
    let choice = try DatabaseLocation.choose(flag: database, variable: variable)
    if let note = choice.note { console.message(note) }
    let path = choice.path
    let hasher = try PasswordHasher(iterationsSetting: variable(PasswordHasher.iterationsVariable))
    let blocklist = variable("ACCOUNTS_PASSWORD_BLOCKLIST").flatMap {
      $0.isEmpty ? nil : PasswordBlocklist(file: $0)
    }
    let sessionPolicy = try SessionPolicy(
      lifetimeSetting: variable(SessionPolicy.lifetimeVariable),
      idleSetting: variable(SessionPolicy.idleVariable))
    // One name for this host: the audit, the sessions, its user records' entry and the
    // authenticator label all take it (pam-helper's environment holds no setting: the node name).
    let writingHost = try WritingHost.named(
      setting: variable(WritingHost.variable), nodeName: nodeName())
    let hostName = writingHost ?? "localhost"
    let sessions = SessionFile(
      path: SessionFile.defaultPath(
        stateHome: variable("XDG_STATE_HOME"), home: variable("HOME")))
    let keys = try DatabaseLocation.keyFile(
      database: path, given: keyFile ?? variable("ACCOUNTS_KEY_FILE"), variable: variable)
    // Separate calls rather than one with optional typed-throws closures: Swift 6.3's compiler
    // crashes (signal 11) on `openStore ?? …` and on an optional `readStatus` built here.
    var environment: AccountsEnvironment
    if openStore == nil && StoreLocation.isPostgres(path) {
      // One connection for the whole command: the state read first, then the reads and writes.
      // A host that keeps a login cache waits less for an absent server: the cache answers.
      let cacheFiles = LoginCacheFile.Files(
        path: loginCache.map(DatabaseLocation.absolute)
          ?? DatabaseLocation.loginCachePath(variable: variable))
      let store = PostgresStore(
        uri: path, busyTimeout: busyTimeout,
        connectTimeout: cacheFiles.exists ? OfflineLogin.connectTimeout : 10)
      environment = AccountsEnvironment(
        console: console, storeLocation: store.location,
        openStore: { access throws(StoreError) in try store.opened(for: access) },
        readStatus: { () throws(StoreError) in try store.status() }, now: now,
        hasher: hasher, blocklist: blocklist, sessions: sessions, keys: keys,
        sessionPolicy: sessionPolicy, hostName: hostName)
      environment.storeContainer = .sharedDatabase
      environment.readLoginStart = { key throws(StoreError) in try store.loginStart(key: key) }
      environment.loginCacheFiles = cacheFiles
      // Beside the login cache, in root's state folder for this host: the records folder is
      // named by the store (unknown while the server is away) and the cache file exists only
      // where `store cache enable` made it, but the cache's folder is this host's whenever it
      // syncs with a server, and ACCOUNTS_LOGIN_CACHE moves both together.
      environment.unreachedSyncs = UnreachedSyncsFile(besideLoginCache: cacheFiles.path)
    } else if let openStore {
      environment = AccountsEnvironment(
        console: console, storeLocation: path,
        openStore: { access throws(StoreError) in try openStore(path, access) }, now: now,
        hasher: hasher, blocklist: blocklist, sessions: sessions, keys: keys,
        sessionPolicy: sessionPolicy, hostName: hostName)
    } else {
      // `status` reads with `StatusReader` alone; every other command opens one store
      // connection and reads the state through it.
      let opener = SQLiteStore.Opener(path: path, busyTimeout: busyTimeout)
      environment = AccountsEnvironment(
        console: console, storeLocation: path,
        openStore: { access throws(StoreError) in try opener.open(access) },
        readStatus: { () throws(StoreError) in
          try StatusReader.read(path: path, busyTimeout: busyTimeout)
        }, now: now,
        hasher: hasher, blocklist: blocklist, sessions: sessions, keys: keys,
        sessionPolicy: sessionPolicy, hostName: hostName)
    }
    environment.writingHost = writingHost
    if openStore == nil {
      environment.userRecords = SystemUserRecordFolders(
        afterBatch: variable(stopAfterRecordBatchVariable) == "1" ? { _ = raise(SIGSTOP) } : nil)
      environment.nameService = SystemNameService()
      if variable(stopAfterOfflineDeliveryVariable) == "1" {
        // A test's hook: an offline event is on the server, still in the cache.
        environment.afterOfflineDelivery = { _ = raise(SIGSTOP) }
      }
      if variable(stopBeforeUserRecordsVariable) == "1" {
        // A test's hook: the change is committed, its records not yet written.
        environment.beforeUserRecords = { _ = raise(SIGSTOP) }
      }
    }
    return CommandContext(environment: environment, console: console, bulk: bulk)
  }

  /// The variable that stops the program (SIGSTOP) after a change is committed and before its
  /// user records are written: what a test kills it at.
  static let stopBeforeUserRecordsVariable = "ACCOUNTS_TEST_STOP_BEFORE_USER_RECORDS"

  /// The variable that stops the program (SIGSTOP) after an offline event is written on the
  /// server and before the login cache forgets it: what a test kills it at.
  static let stopAfterOfflineDeliveryVariable = "ACCOUNTS_TEST_STOP_AFTER_OFFLINE_DELIVERY"

  /// The variable that stops the program (SIGSTOP) after each batch of user record files is
  /// renamed into place, when there are several: what a test kills a large write at.
  static let stopAfterRecordBatchVariable = "ACCOUNTS_TEST_STOP_AFTER_RECORD_BATCH"

  /// Prints Home on standard output.
  func showHome(_ home: HomeScreen) {
    for line in home.lines(timeZone: environment.timeZone) { console.output(line) }
  }
}

/// This machine's node name (`uname(2)`), which every event and session it writes records unless
/// `ACCOUNTS_HOST_NAME` names it; nil when it is not UTF-8.
private func nodeName() -> String? {
  var names = utsname()
  guard uname(&names) == 0 else { return nil }
  let bytes = withUnsafeBytes(of: &names.nodename) { Array($0.prefix { $0 != 0 }) }
  return String(validating: bytes, as: UTF8.self)
}

/// A command that runs against a `CommandContext`; `run()` builds the live one.
protocol ContextualCommand: ParsableCommand {
  /// `--database`.
  var global: GlobalOptions { get }
  /// The command's work, in a given context.
  func run(_ context: CommandContext) throws
}

/// A command that changes what user records say: once it is done, this host's records are
/// brought up to date (`UserdbFlow.reconcile`).
protocol UserRecordChangingCommand: ContextualCommand {}

extension ContextualCommand {
  func run() throws {
    let context = try global.makeContext()
    defer { context.bulk.flush() }
    try run(context)
    if self is any UserRecordChangingCommand {
      try UserdbFlow.reconcile(context.environment)
    }
  }
}
