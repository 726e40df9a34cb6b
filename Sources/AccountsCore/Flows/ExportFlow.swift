import AccountsCrypto
import FoundationEssentials

/// The forms `user export` writes.
public enum ExportFormat: String, CaseIterable, Sendable {
  /// Django's `dumpdata` JSON (what `user import --format django` and Django's `loaddata` read).
  case json
  /// The CSV `user import --format csv` reads.
  case csv
}

/// `accounts user export` (administrator): every account with its password hash, streamed in
/// user-name order, in a form `user import` takes back.
public enum ExportFlow {
  /// The CSV header.
  public static let csvHeader =
    "username,full_name,email,password_hash,disabled,must_change_password,created_at,last_login"

  /// Calls `write` with the export's bytes, a line at a time, then `finish` (which throws when
  /// they did not all arrive); logs the export only then; returns how many accounts it held.
  @discardableResult
  public static func run(
    _ env: AccountsEnvironment, format: ExportFormat,
    finish: () throws(AccountsError) -> Void = {}, write: ([UInt8]) -> Void
  ) throws(AccountsError) -> Int {
    let store = try env.existingStore()
    var count = 0
    var line: [UInt8] = []
    line.reserveCapacity(512)
    // The opening is written with the first account (or at the end, when there is none), so
    // that an export refused at its first account has written nothing.
    var opened = false
    func open() {
      guard !opened else { return }
      opened = true
      switch format {
      case .json: write(Array("[".utf8))
      case .csv: write(Array((csvHeader + "\n").utf8))
      }
    }
    try store.read { reader throws(AccountsError) in
      try reader.forEachAccount { listing throws(AccountsError) in
        // A fleet host role reads hashes sealed: an export of those could never log anyone in.
        if SealedPasswordHash(parsing: listing.account.passwordHash) != nil {
          throw .storage(
            .permissionDenied(location: store.location, reason: Messages.sealedHashesDenied))
        }
        open()
        line.removeAll(keepingCapacity: true)
        switch format {
        case .json:
          line.append(contentsOf: (count == 0 ? "\n" : ",\n").utf8)
          djangoObject(listing.account, into: &line)
        case .csv:
          csvLine(listing.account, into: &line)
        }
        count += 1
        write(line)
      }
    }
    open()
    if format == .json { write(Array((count == 0 ? "]\n" : "\n]\n").utf8)) }
    try finish()
    try store.write { writer throws(AccountsError) in
      try writer.append(
        AuditRecord(
          .accountsExported, at: env.now(),
          detail: Messages.detailExported(count, format: format.rawValue)))
    }
    return count
  }

  /// One `auth.user` object, as `dumpdata` writes it (the full name as `first_name`).
  static func djangoObject(_ account: Account, into bytes: inout [UInt8]) {
    bytes.append(contentsOf: #"{"model":"auth.user","pk":"#.utf8)
    bytes.append(contentsOf: String(account.id).utf8)
    bytes.append(contentsOf: #","fields":"#.utf8)
    JSON.key("password", first: true, to: &bytes)
    JSON.append(account.passwordHash, to: &bytes)
    JSON.key("last_login", to: &bytes)
    JSON.append(account.lastLoginAt, to: &bytes)
    JSON.key("is_superuser", to: &bytes)
    JSON.append(account.isOwner, to: &bytes)
    JSON.key("username", to: &bytes)
    JSON.append(account.username, to: &bytes)
    JSON.key("first_name", to: &bytes)
    JSON.append(account.fullName, to: &bytes)
    JSON.key("last_name", to: &bytes)
    JSON.append("", to: &bytes)
    JSON.key("email", to: &bytes)
    JSON.append(account.email, to: &bytes)
    JSON.key("is_staff", to: &bytes)
    bytes.append(contentsOf: "false".utf8)
    JSON.key("is_active", to: &bytes)
    JSON.append(!account.isDisabled, to: &bytes)
    JSON.key("date_joined", to: &bytes)
    JSON.append(account.createdAt, to: &bytes)
    JSON.key("groups", to: &bytes)
    bytes.append(contentsOf: "[]".utf8)
    JSON.key("user_permissions", to: &bytes)
    bytes.append(contentsOf: "[]}}".utf8)
  }

  /// One CSV line (RFC 4180 quoting where a field needs it), ending in a newline.
  static func csvLine(_ account: Account, into bytes: inout [UInt8]) {
    let fields = [
      account.username, account.fullName, account.email, account.passwordHash,
      account.isDisabled ? "true" : "false", account.mustChangePassword ? "true" : "false",
      Timestamp.string(from: account.createdAt),
      account.lastLoginAt.map(Timestamp.string(from:)) ?? "",
    ]
    for (index, field) in fields.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      // Escaped as every printed text is (nothing stored passes the rules with a control
      // character, so a real export is unchanged by it).
      var text = Escaping.visible(field)
      // A cell a spreadsheet would take for a formula is made text (OWASP's CSV injection
      // advice): a `'` before it, and quoted.
      let formula = SpreadsheetCell.readsAsFormula(text)
      if formula { text = "'" + text }
      if formula || text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
          bytes.append(byte)
          if byte == UInt8(ascii: "\"") { bytes.append(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
      } else {
        bytes.append(contentsOf: text.utf8)
      }
    }
    bytes.append(UInt8(ascii: "\n"))
  }
}

/// What a spreadsheet makes of a CSV cell.
///
/// One that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is run as a formula
/// (`=HYPERLINK(…)` in a full name). `user export` writes such a cell with a `'` before it,
/// which spreadsheets read as "this is text" and do not show; `user import` takes that `'` off
/// again, so an export imports back exactly.
public enum SpreadsheetCell {
  /// The characters that start a formula.
  static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

  /// True when `text`, after any `'`s it starts with, starts a formula: the cells an export
  /// writes with one more `'` (a text that starts with `'=` gets `''=`, so that importing it
  /// back gives `'=` again).
  public static func readsAsFormula(_ text: String) -> Bool {
    text.unicodeScalars.drop { $0 == "'" }.first.map(formulaStarts.contains) ?? false
  }

  /// A cell as imported: one `'` taken off a cell that starts with `'`s and then a formula's
  /// first character (what an export writes); any other cell as it is.
  public static func imported(_ text: String) -> String {
    text.first == "'" && readsAsFormula(text) ? String(text.dropFirst()) : text
  }
}
