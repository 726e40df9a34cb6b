import AccountsCrypto
import FoundationEssentials

/// The sentences of `user import` and `user export`.
extension Messages {
  /// Accounts, counted: `1 account`, `3 accounts`.
  static func accounts(_ count: Int) -> String {
    count == 1 ? "1 account" : "\(count) accounts"
  }

  /// `user import` done.
  public static func imported(_ count: Int, name: String) -> String {
    "Imported \(accounts(count)) from \(name)."
  }
  /// `user import --dry-run` done.
  public static func importDryRun(_ count: Int, name: String) -> String {
    "Dry run: \(accounts(count)) would be imported from \(name); nothing was written."
  }
  /// Entries without a password.
  public static func importSkipped(_ count: Int, names: [String]) -> String {
    let shown = names.joined(separator: ", ") + (count > names.count ? ", …" : "")
    return "Skipped \(count) \(count == 1 ? "entry" : "entries") without a password: \(shown)."
  }
  /// After the problems.
  public static func nothingImported(_ problems: Int) -> String {
    "Nothing was imported: \(problems) \(problems == 1 ? "problem" : "problems")."
  }
  /// After the first 20 problems.
  public static func moreProblems(_ count: Int) -> String {
    "… and \(count) more \(count == 1 ? "problem" : "problems")."
  }
  /// Progress at a terminal: a bar when the file's size is known.
  public static func importProgress(_ entries: Int, fraction: Double?) -> String {
    let count = "\(entries.grouped) entries read"
    guard let given = fraction else { return "Importing: \(count)…" }
    let fraction = max(0, min(1, given))
    let done = Int((fraction * 20).rounded(.down))
    let bar = String(repeating: "#", count: done) + String(repeating: ".", count: 20 - done)
    return "Importing [\(bar)] \(Int((fraction * 100).rounded(.down)))%, \(count)…"
  }
  /// Audit detail.
  public static func detailImported(_ count: Int, format: String) -> String {
    "\(accounts(count)) (\(format))"
  }
  /// The format cannot be guessed.
  public static func importFormatUnknown(_ name: String) -> String {
    "Cannot tell the format of \(name): give --format django, shadow, htpasswd or csv."
  }
  /// An import file that cannot be opened or read; `reason` is the system's (`strerror`).
  public static func importFileUnreadable(_ path: String, reason: String) -> String {
    "Cannot read the import file \(path): \(reason). Name a readable file, or - for standard "
      + "input."
  }
  /// shadow or htpasswd without a domain.
  public static func importNeedsEmailDomain(_ format: String) -> String {
    "\(format) files hold no e-mail addresses: give --email-domain DOMAIN (alice becomes "
      + "alice@DOMAIN)."
  }
  /// A name twice in the file.
  public static func importDuplicate(_ position: String, name: String, first: String) -> String {
    "\(position) (\(name)): user name \(name) is also on \(first)."
  }
  /// A name already stored.
  public static func importTaken(_ position: String, name: String) -> String {
    "\(position) (\(name)): user name \(name) is already taken."
  }
  /// A field that breaks the form's rules, worded for a list.
  static func importFieldProblem(_ error: AccountsError) -> String {
    if case .incompleteForm(let empty) = error {
      return "\(empty.joined(separator: ", ")) is empty."
    }
    return error.description
  }
  /// A pbkdf2 or crypt(3) hash that does not parse (a bad length, a byte outside its
  /// alphabet).
  public static let importDamagedHash = "the password hash is damaged."
  /// A crypt(3) hash whose setting costs more than its scheme's ceiling.
  public static func importCostlyHash(_ cost: CryptHash.Cost) -> String {
    let (text, ceiling) = costTexts(cost)
    return "the \(text) is above the ceiling of \(ceiling), so each login against it would "
      + "take too long."
  }
  /// Audit detail: a login refused because the stored crypt(3) hash costs more than the
  /// ceiling (not checked).
  public static func detailCostlyHash(_ cost: CryptHash.Cost) -> String {
    let (text, ceiling) = costTexts(cost)
    return "the stored password hash is over the cost ceiling (a \(text); the ceiling is "
      + "\(ceiling)), so it was not checked"
  }
  /// What a crypt(3) hash costs and its scheme's ceiling (`CryptHash.Ceiling`), in the same
  /// words: `bcrypt hash with cost 31` and `cost 17`; for yescrypt the parameters over it.
  static func costTexts(_ cost: CryptHash.Cost) -> (String, String) {
    switch cost {
    case .bcrypt(let log2Rounds):
      return ("bcrypt hash with cost \(log2Rounds)", "cost \(CryptHash.Ceiling.bcryptLog2Rounds)")
    case .shaCrypt(let scheme, let rounds):
      return (
        "\(scheme.rawValue) hash with \(grouped(UInt64(rounds))) rounds",
        "\(grouped(UInt64(CryptHash.Ceiling.shaCryptRounds))) rounds"
      )
    case .yescrypt(let parameters):
      let memory = CryptHash.Ceiling.yescryptMemory
      var over: [(String, String)] = []
      if parameters.p != 1 { over.append(("p=\(parameters.p)", "p=1")) }
      if parameters.t != 0 { over.append(("t=\(parameters.t)", "t=0")) }
      if parameters.g != 0 { over.append(("g=\(parameters.g)", "g=0")) }
      if let rom = parameters.romLog2 { over.append(("a ROM of 2^\(rom) blocks", "no ROM")) }
      if parameters.memory > memory || over.isEmpty {
        let texts = (
          "\(grouped(mebibytes(parameters.memory))) MiB of memory",
          "\(grouped(mebibytes(memory))) MiB of memory"
        )
        over.insert(texts, at: 0)
      }
      return (
        "yescrypt hash with " + listed(over.map(\.0)), listed(over.map(\.1))
      )
    }
  }
  /// `a`, `a and b`, `a, b and c`.
  static func listed(_ items: [String]) -> String {
    guard let last = items.last, items.count > 1 else { return items.first ?? "" }
    return items.dropLast().joined(separator: ", ") + " and " + last
  }
  /// `bytes` in MiB, rounded up.
  static func mebibytes(_ bytes: UInt64) -> UInt64 {
    bytes / (1 << 20) + (bytes % (1 << 20) == 0 ? 0 : 1)
  }
  /// `1234567` as `1,234,567`, whatever the locale.
  static func grouped(_ value: UInt64) -> String {
    let digits = Array(String(value))
    var text = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
      text.append(digit)
    }
    return text
  }
  /// A weak crypt(3) scheme.
  public static func importWeakHash(_ scheme: String) -> String {
    "\(scheme) hashes are too weak to keep."
  }
  /// Another Django hasher.
  public static func importDjangoHasher(_ name: String) -> String {
    "Django's \(name) hashes are not kept (only pbkdf2_sha256)."
  }
  /// Plain text or anything else.
  public static let importNotAHash =
    "the password is not a hash that can be kept (plain text is refused)."
  /// A line that is not UTF-8.
  public static let importNotUTF8 = "the line is not UTF-8."
  /// A line with a NUL byte (no text file has one).
  public static let importNULByte = "the line holds a NUL byte, which no text file has."
  /// A shadow or htpasswd line with the wrong number of fields.
  public static func importFieldCount(_ fields: Int, _ format: String) -> String {
    "a \(format) line has \(fields) fields separated by ':'."
  }
  /// A CSV file without the header.
  public static let importCSVHeader =
    "the first line must name the columns: username,full_name,email,password_hash."
  /// A CSV quote left open.
  public static let importCSVQuote = "a quoted field is not closed."
  /// A CSV record longer than the limit (in MiB).
  public static func importCSVRecordTooLong(_ mebibytes: Int) -> String {
    "the record is longer than \(mebibytes) MiB."
  }
  /// A CSV line with another number of columns.
  public static func importCSVColumns(_ expected: Int, _ found: Int) -> String {
    "\(found) columns, but the header names \(expected)."
  }
  /// A CSV flag that is not true or false.
  public static func importCSVFlag(_ column: String, _ value: String) -> String {
    "\(column) must be true or false, not \"\(value)\"."
  }
  /// Django JSON that is not a list.
  public static let importDjangoNotAList =
    "entry 1: the file is not a JSON list of Django objects (manage.py dumpdata auth.user)."
  /// Django JSON whose list breaks off (after `count` entries): a missing `,` or `]`, or the
  /// file ends early.
  public static func importDjangoBroken(after count: Int) -> String {
    "the JSON list breaks off here\(count > 0 ? ", after entry \(count)" : "") (a ',' or ']' "
      + "is missing, or the file ends early)."
  }
  /// Django JSON with more than white space after the list's `]`.
  public static let importDjangoTrailing = "something follows the end of the JSON list (']')."
  /// A list element that is not valid JSON.
  public static func importDjangoNotJSON(line: Int) -> String {
    "the entry starting on line \(line) is not valid JSON."
  }
  /// A list element longer than the limit (in MiB).
  public static func importDjangoTooLong(line: Int, _ mebibytes: Int) -> String {
    "the entry starting on line \(line) is longer than \(mebibytes) MiB."
  }
  /// A Django boolean field that is neither a JSON boolean nor the number 1 or 0.
  public static func importDjangoFlag(_ field: String, _ value: String) -> String {
    "\(field) must be true or false (or 1 or 0), not \(value)."
  }
  /// A list element that is not an object with fields.
  public static let importDjangoEntry = "not a Django object with \"fields\"."
  /// Another Django model.
  public static func importDjangoModel(_ model: String?) -> String {
    "the model is \(model ?? "missing"), not auth.user."
  }

  /// `user export --output` onto an existing file.
  public static func exportFileExists(_ path: String) -> String {
    "\(path) exists; export never overwrites a file."
  }
  /// Audit detail of an export.
  public static func detailExported(_ count: Int, format: String) -> String {
    "\(accounts(count)) (\(format))"
  }
}
