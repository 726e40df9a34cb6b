import AccountsCrypto
import FoundationEssentials

/// The kinds of file `user import` reads.
public enum ImportFormat: String, CaseIterable, Sendable {
  /// `manage.py dumpdata auth.user` JSON.
  case django
  /// `/etc/shadow` lines.
  case shadow
  /// `htpasswd` files (`name:hash`).
  case htpasswd
  /// `username,full_name,email,password_hash[,disabled,must_change_password,…]`, what
  /// `user export --format csv` writes.
  case csv
}

/// Where `user import` reads from: a file or standard input, line by line (the CLI's reader).
public protocol ImportInput: AnyObject {
  /// The first bytes, without consuming them (to guess the format).
  func peek(_ count: Int) throws(AccountsError) -> [UInt8]
  /// The next line without its end (`\n`, or `\r\n`); nil at the end.
  func nextLine() throws(AccountsError) -> [UInt8]?
  /// The next bytes not read yet, a block of them (a JSON document is read so); nil at the end.
  func nextBlock() throws(AccountsError) -> [UInt8]?
  /// How far through the input the reading is, from 0 to 1, when its size is known.
  var fraction: Double? { get }
}

/// What `user import` was asked.
public struct ImportOptions: Equatable, Sendable {
  /// The format; nil to guess it from the content.
  public var format: ImportFormat?
  /// For shadow and htpasswd files: the domain e-mail addresses are made with.
  public var emailDomain: String?
  /// Check everything, write nothing.
  public var dryRun: Bool
  /// The file as the person named it (`-` for standard input), for messages.
  public var name: String

  /// Creates options.
  public init(format: ImportFormat?, emailDomain: String?, dryRun: Bool, name: String) {
    self.format = format
    self.emailDomain = emailDomain
    self.dryRun = dryRun
    self.name = name
  }
}

/// What an import did (or, dry, would do).
public struct ImportSummary: Equatable, Sendable {
  /// Accounts imported.
  public var imported = 0
  /// Entries skipped because they hold no password (shadow `*`, `!`; Django's unusable ones).
  public var skipped: [String] = []
  /// How many were skipped (the names are kept for the first 20 only).
  public var skippedCount = 0
}

/// `accounts user import` (administrator): accounts from another system, their password hashes
/// kept, all in one transaction or none.
public enum ImportFlow {
  /// The problems printed before the rest are only counted.
  public static let shownProblems = 20
  /// Entries between two progress lines.
  static let progressEvery = 10_000
  /// The entries read before their accounts are stored, in one batch (one statement for a
  /// PostgreSQL store, not one round trip an account).
  public static let batchSize = 1_000

  /// Reads, checks and (unless dry) stores every account of `input`.
  ///
  /// Problems are said one per line on standard error as they are found (the first 20); any
  /// problem throws at the end, with nothing written: `.importInvalid` when the file has a
  /// problem of its own, `.importRefused` when its only problems are names already taken.
  @discardableResult
  public static func run(
    _ env: AccountsEnvironment, input: any ImportInput, options: ImportOptions
  ) throws(AccountsError) -> ImportSummary {
    let format: ImportFormat
    if let given = options.format {
      format = given
    } else {
      format = try guess(input, name: options.name)
    }
    var domain: String?
    if format == .shadow || format == .htpasswd {
      guard let given = options.emailDomain, !given.isEmpty else {
        throw .importNeedsEmailDomain(format.rawValue)
      }
      guard EmailRules.isValid("a@" + given) else {
        throw .invalidSetting(
          name: "--email-domain", value: given, expected: "a domain such as example.org")
      }
      domain = given
    }
    let store = try env.activatedStore()
    var state = ImportState(env: env)
    let now = env.now()
    // Every account is inserted as it is read, a batch at a time, even after a problem and in
    // a dry run: the table's UNIQUE key finds names taken before and names twice in the file,
    // in bounded memory (a million names are never held). Problems, or a dry run, roll it all
    // back.
    do {
      try store.write { writer throws(AccountsError) in
        state.makesLinuxUsers = try writer.givesPosixIDs()
        state.numbers = try PosixIDGiver(env, writer: writer, at: now)
        do throws(AccountsError) {
          try Parser(format: format, input: input, emailDomain: domain).each {
            item throws(AccountsError) in
            state.take(item, fraction: input.fraction)
            if state.pending.count >= batchSize { try state.store(writer, at: now) }
          }
        } catch {
          // What was read before a failure to read on is said first, as it was found.
          try state.store(writer, at: now)
          throw error
        }
        try state.store(writer, at: now)
        try state.finish()
        if options.dryRun { throw AccountsError.importRefused(problems: 0) }
        try writer.append(
          AuditRecord(
            .accountsImported, at: now,
            detail: Messages.detailImported(state.summary.imported, format: format.rawValue)))
      }
    } catch {
      // A dry run without problems ends here, everything undone.
      guard options.dryRun, error == .importRefused(problems: 0) else { throw error }
      env.console.output(Messages.importDryRun(state.summary.imported, name: options.name))
      return state.summary
    }
    env.console.output(Messages.imported(state.summary.imported, name: options.name))
    state.numbers?.said.forEach(env.console.message)
    if state.summary.skippedCount > 0 {
      env.console.output(
        Messages.importSkipped(state.summary.skippedCount, names: state.summary.skipped))
    }
    return state.summary
  }

  /// The fields of one CSV line (RFC 4180); nil for a quote left open.
  public static func csvFields(_ line: String) -> [String]? { Parser.csvFields(line) }

  /// The format of `input`, from its first bytes.
  static func guess(_ input: any ImportInput, name: String) throws(AccountsError)
    -> ImportFormat
  {
    let head = String(decoding: try input.peek(4096), as: UTF8.self)
    let trimmed = head.drop { $0.isWhitespace }
    if trimmed.first == "[" { return .django }
    let firstLine = trimmed.prefix { $0 != "\n" && $0 != "\r" }
    if firstLine.hasPrefix("username,") { return .csv }
    let fields = firstLine.split(separator: ":", omittingEmptySubsequences: false).count
    if fields == 2 { return .htpasswd }
    if fields == 9 { return .shadow }
    throw .importFormatUnknown(name)
  }
}

/// One item of an import file, as parsed.
enum ImportItem {
  /// An account to check and store.
  case entry(ImportEntry)
  /// An entry with no password, skipped.
  case skipped(String)
  /// A problem that stops the import, already worded with its position.
  case problem(String)
}

/// An account as read from a file, not yet checked.
struct ImportEntry {
  /// `line` or `entry`.
  var word: String
  /// The line's or the entry's number.
  var number: Int32
  var username: String
  var fullName: String
  var email: String
  var passwordHash: String
  var disabled = false
  var mustChange = false
}

/// What an import has read and not yet said or stored, in the file's order.
enum ImportPending {
  /// The next account of the batch, from this line (or entry).
  case account(Int32)
  /// A problem of the file, worded.
  case problem(String)
  /// A progress line, after this many entries read, this far through the input.
  case progress(Int, Double?)
}

/// The checks across entries: rules, duplicates, taken names; problems said in the file's
/// order, as each batch is stored.
struct ImportState {
  let env: AccountsEnvironment
  /// The accounts read and not yet stored.
  var batch: [NewAccount] = []
  /// The batch's accounts and what was found between them, in the file's order.
  var pending: [ImportPending] = []
  var summary = ImportSummary()
  var problems = 0
  /// The problems that are names other accounts of the store already have (the file itself
  /// is fine); every other problem is in the file.
  var taken = 0
  /// True when the store's accounts are Linux users (it gives them numbers): a name the system
  /// knows is refused, as `user add` refuses it.
  var makesLinuxUsers = false
  /// Gives each account stored its uid, when the store gives numbers.
  var numbers: PosixIDGiver?
  var entries = 0
  /// The id the first account of this import got (ids grow by one per insert).
  var firstID: Int64?
  /// The line (or entry) of each account inserted, in id order: where a duplicate's first
  /// occurrence was (4 bytes an account, not its name).
  var positions: [Int32] = []
  /// Django entries are numbered `entry N`, the others `line N`.
  var positionWord = "line"
  /// The position of the account being stored.
  var current: Int32 = 0
  init(env: AccountsEnvironment) { self.env = env }

  /// Checks one item; an account joins the batch.
  mutating func take(_ item: ImportItem, fraction: Double?) {
    entries += 1
    if entries % ImportFlow.progressEvery == 0 { pending.append(.progress(entries, fraction)) }
    switch item {
    case .problem(let text):
      pending.append(.problem(text))
    case .skipped(let name):
      summary.skippedCount += 1
      if summary.skipped.count < ImportFlow.shownProblems { summary.skipped.append(name) }
    case .entry(let entry):
      guard let account = check(entry) else { return }
      batch.append(account)
      pending.append(.account(entry.number))
    }
  }

  /// Stores the batch, then says what was found, in the file's order: each account stored, or
  /// refused by the user name's UNIQUE key, and the problems between them.
  mutating func store(_ writer: any AccountWriter, at now: Date) throws(AccountsError) {
    // Emptied first: after a failure, nothing is stored or said twice.
    let accounts = batch
    let items = pending
    batch.removeAll(keepingCapacity: true)
    pending.removeAll(keepingCapacity: true)
    let ids = accounts.isEmpty ? [] : try writer.insert(accounts, at: now)
    var next = 0
    for item in items {
      switch item {
      case .problem(let text):
        report(text)
      case .progress(let count, let fraction):
        env.console.progress(Messages.importProgress(count, fraction: fraction))
      case .account(let number):
        current = number
        let account = accounts[next]
        if let id = ids[next] {
          inserted(id)
          try numbers?.number(
            accountID: id, username: account.username, home: account.home, writer: writer)
        } else {
          refused(account, heldBy: try writer.account(key: account.usernameKey)?.id)
        }
        next += 1
      }
    }
  }

  /// The account just stored got `id`.
  mutating func inserted(_ id: Int64) {
    if firstID == nil { firstID = id }
    positions.append(current)
    summary.imported += 1
  }

  /// The account just stored was refused by the user name's UNIQUE key; `holder` is the id of
  /// the account that has the name: one of this import (a duplicate in the file) or not.
  mutating func refused(_ account: NewAccount, heldBy holder: Int64?) {
    let position = "\(positionWord) \(current)"
    if let holder, let firstID, holder >= firstID, Int(holder - firstID) < positions.count {
      let first = "\(positionWord) \(positions[Int(holder - firstID)])"
      report(Messages.importDuplicate(position, name: account.username, first: first))
    } else {
      report(Messages.importTaken(position, name: account.username))
      taken += 1
    }
  }

  /// The entry as an account, or nil after reporting why not.
  mutating func check(_ entry: ImportEntry) -> NewAccount? {
    positionWord = entry.word
    let position = "\(entry.word) \(entry.number)"
    let label = entry.username.isEmpty ? position : "\(position) (\(entry.username))"
    do throws(AccountsError) {
      let (name, key) = try DetailRules.username(.text(entry.username))
      let full = try DetailRules.fullName(.text(entry.fullName))
      let mail = try DetailRules.email(.text(entry.email))
      if makesLinuxUsers, let like = LinuxUser.systemNamesLike(name, env: env).first {
        pending.append(
          .problem("\(label): \(Messages.linuxNameTaken(name, systemName: like.name))"))
        taken += 1
        return nil
      }
      if let problem = ImportedHash.problem(entry.passwordHash) {
        pending.append(.problem("\(label): \(problem)"))
        return nil
      }
      return NewAccount(
        username: name, usernameKey: key, fullName: full, email: mail,
        passwordHash: entry.passwordHash, mustChangePassword: entry.mustChange,
        disabled: entry.disabled)
    } catch {
      pending.append(.problem("\(label): \(Messages.importFieldProblem(error))"))
      return nil
    }
  }

  mutating func report(_ text: String) {
    problems += 1
    if problems <= ImportFlow.shownProblems { env.console.message(text) }
  }

  /// Ends the import: the progress line cleared, and any problem thrown.
  func finish() throws(AccountsError) {
    if entries >= ImportFlow.progressEvery { env.console.progress(nil) }
    guard problems > 0 else { return }
    if problems > ImportFlow.shownProblems {
      env.console.message(Messages.moreProblems(problems - ImportFlow.shownProblems))
    }
    // A file with a problem of its own is bad input; a good file whose names are taken is
    // refused by the store's state, as `user add` is.
    if problems > taken { throw .importInvalid(problems: problems) }
    throw .importRefused(problems: problems)
  }
}

/// Which stored password hashes an import keeps.
enum ImportedHash {
  /// Django's hashers other than PBKDF2-SHA256, by the name that starts their hashes.
  static let otherDjangoHashers = [
    "argon2", "bcrypt_sha256", "bcrypt", "pbkdf2_sha1", "scrypt", "sha1", "md5", "unsalted_sha1",
    "unsalted_md5", "crypt",
  ]

  /// Why `hash` is not kept; nil when it is.
  static func problem(_ hash: String) -> String? {
    if hash.hasPrefix("pbkdf2_sha256$") {
      let plain = hash.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
      return plain && EncodedPasswordHash.isWellFormed(hash) ? nil : Messages.importDamagedHash
    }
    switch CryptHash.kind(of: hash) {
    case .supported:
      guard let cost = CryptHash.cost(of: hash) else { return Messages.importDamagedHash }
      return cost.isWithinCeiling ? nil : Messages.importCostlyHash(cost)
    case .weak(let scheme): return Messages.importWeakHash(scheme.rawValue)
    case .unknown: break
    }
    if let algorithm = hash.split(separator: "$", maxSplits: 1).first,
      hash.contains("$"), otherDjangoHashers.contains(String(algorithm))
    {
      return Messages.importDjangoHasher(String(algorithm))
    }
    return Messages.importNotAHash
  }

  /// A crypt(3) hash stored by an import that a login may check: well formed and within its
  /// scheme's ceiling; nil for anything else (libxcrypt is then never called).
  static func usableCrypt(_ hash: String) -> String? {
    CryptHash.cost(of: hash)?.isWithinCeiling == true ? hash : nil
  }

  /// The audit detail of a login refused because the stored hash cannot be used: its cost
  /// named when that is the reason.
  static func damageDetail(_ hash: String?) -> String {
    if let hash, let cost = CryptHash.cost(of: hash), !cost.isWithinCeiling {
      return Messages.detailCostlyHash(cost)
    }
    return Messages.detailDamagedHash
  }
}
