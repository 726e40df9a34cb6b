import Foundation

/// Reads the entries of an import file, one at a time (a JSON document is the exception: it
/// is read whole).
struct Parser {
  let format: ImportFormat
  let input: any ImportInput
  let emailDomain: String?

  /// Calls `body` with every item of the file, in order.
  func each(_ body: (ImportItem) throws(AccountsError) -> Void) throws(AccountsError) {
    switch format {
    case .django: try django(body)
    case .csv: try csv(body)
    case .shadow, .htpasswd: try colonSeparated(body)
    }
  }

  // MARK: - /etc/shadow and htpasswd

  /// `name:hash[:…]` lines: 9 fields in shadow, 2 in htpasswd.
  ///
  /// Blank lines and `#` comments are skipped; shadow entries without a password too (counted).
  private func colonSeparated(_ body: (ImportItem) throws(AccountsError) -> Void)
    throws(AccountsError)
  {
    let fields = format == .shadow ? 9 : 2
    var number = 0
    while let bytes = try input.nextLine() {
      number += 1
      let position = "line \(number)"
      guard let line = Self.text(bytes) else {
        try body(.problem("\(position): \(Messages.importNotUTF8)"))
        continue
      }
      if line.allSatisfy(\.isWhitespace) || line.hasPrefix("#") { continue }
      let parts = line.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == fields else {
        try body(.problem("\(position): \(Messages.importFieldCount(fields, format.rawValue))"))
        continue
      }
      let name = String(parts[0])
      let hash = String(parts[1])
      if format == .shadow, hash.isEmpty || hash.hasPrefix("!") || hash.hasPrefix("*") {
        try body(.skipped(name))
        continue
      }
      try body(
        .entry(
          ImportEntry(
            word: "line", number: Int32(clamping: number), username: name, fullName: name,
            email: "\(name)@\(emailDomain ?? "")", passwordHash: hash)))
    }
  }

  // MARK: - CSV

  /// RFC 4180 lines under a header naming at least `username`, `full_name`, `email` and
  /// `password_hash`; `disabled` and `must_change_password` are read when present.
  private func csv(_ body: (ImportItem) throws(AccountsError) -> Void) throws(AccountsError) {
    guard let headerBytes = try input.nextLine(),
      let header = String(validating: headerBytes, as: UTF8.self).flatMap(Self.csvFields)
    else {
      try body(.problem("line 1: \(Messages.importCSVHeader)"))
      return
    }
    let names = header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    let required = ["username", "full_name", "email", "password_hash"]
    let columns = required.compactMap { names.firstIndex(of: $0) }
    guard columns.count == required.count else {
      try body(.problem("line 1: \(Messages.importCSVHeader)"))
      return
    }
    let disabledColumn = names.firstIndex(of: "disabled")
    let mustChangeColumn = names.firstIndex(of: "must_change_password")
    var number = 1
    while let bytes = try input.nextLine() {
      number += 1
      let position = "line \(number)"
      guard var line = Self.text(bytes) else {
        try body(.problem("\(position): \(Messages.importNotUTF8)"))
        continue
      }
      if line.isEmpty { continue }
      var parsed = Self.csvFields(line)
      // A quoted field may hold line breaks (RFC 4180): the record goes on to the next lines.
      var continued = 0
      while parsed == nil, continued < Self.recordLines, let more = try input.nextLine() {
        number += 1
        continued += 1
        line += "\n" + (Self.text(more) ?? "\u{FFFD}")
        parsed = Self.csvFields(line)
      }
      guard let fields = parsed?.map(SpreadsheetCell.imported) else {
        try body(.problem("\(position): \(Messages.importCSVQuote)"))
        continue
      }
      guard fields.count == names.count else {
        try body(.problem("\(position): \(Messages.importCSVColumns(names.count, fields.count))"))
        continue
      }
      var entry = ImportEntry(
        word: "line", number: Int32(clamping: number), username: fields[columns[0]],
        fullName: fields[columns[1]],
        email: fields[columns[2]], passwordHash: fields[columns[3]])
      let flags = [("disabled", disabledColumn), ("must_change_password", mustChangeColumn)]
      let values = flags.map { name, column in column.map { (name, fields[$0]) } }
      if let (name, text) = values.compactMap({ $0 }).first(where: { Self.flag($0.1) == nil }) {
        try body(
          .problem("\(position) (\(entry.username)): \(Messages.importCSVFlag(name, text))"))
        continue
      }
      entry.disabled = values[0].flatMap { Self.flag($0.1) } ?? false
      entry.mustChange = values[1].flatMap { Self.flag($0.1) } ?? false
      try body(.entry(entry))
    }
  }

  /// The most lines one CSV record may span.
  static let recordLines = 100

  /// `true` or `false` (also `1`, `0`, empty for false); nil for anything else.
  private static func flag(_ text: String) -> Bool? {
    switch text.trimmingCharacters(in: .whitespaces).lowercased() {
    case "true", "1", "yes": return true
    case "false", "0", "no", "": return false
    default: return nil
    }
  }

  /// `bytes` as text; nil when they are not UTF-8 (ASCII, the common case, is not checked
  /// further).
  static func text(_ bytes: [UInt8]) -> String? {
    if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes, as: UTF8.self)
  }

  /// The fields of one CSV line (quotes doubled inside quoted fields); nil for an unclosed quote.
  ///
  /// Read byte by byte: the separators are ASCII, and UTF-8 never uses their bytes inside
  /// another character.
  static func csvFields(_ line: String) -> [String]? {
    let quote = UInt8(ascii: "\"")
    let comma = UInt8(ascii: ",")
    let bytes = Array(line.utf8)
    var fields: [String] = []
    var field: [UInt8] = []
    var quoted = false
    var atStart = true
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      if quoted {
        if byte == quote {
          // A doubled quote is one quote; a single one ends the quoted part.
          if index < bytes.count && bytes[index] == quote {
            field.append(quote)
            index += 1
          } else {
            quoted = false
          }
        } else {
          field.append(byte)
        }
      } else if byte == comma {
        fields.append(String(decoding: field, as: UTF8.self))
        field.removeAll(keepingCapacity: true)
        atStart = true
        continue
      } else if byte == quote && atStart {
        quoted = true
      } else {
        field.append(byte)
      }
      atStart = false
    }
    if quoted { return nil }
    fields.append(String(decoding: field, as: UTF8.self))
    return fields
  }

  // MARK: - Django

  /// `dumpdata auth.user`: a list of `{"model": "auth.user", "pk": …, "fields": {…}}`.
  private func django(_ body: (ImportItem) throws(AccountsError) -> Void) throws(AccountsError) {
    let data = Data(try input.remaining())
    guard let list = (try? JSONSerialization.jsonObject(with: data)) as? [Any] else {
      try body(.problem(Messages.importDjangoNotAList))
      return
    }
    for (index, element) in list.enumerated() {
      let position = "entry \(index + 1)"
      guard let object = element as? [String: Any], let fields = object["fields"] as? [String: Any]
      else {
        try body(.problem("\(position): \(Messages.importDjangoEntry)"))
        continue
      }
      let username = fields["username"] as? String ?? ""
      guard (object["model"] as? String) == "auth.user" else {
        try body(.problem("\(position): \(Messages.importDjangoModel(object["model"] as? String))"))
        continue
      }
      let password = fields["password"] as? String ?? ""
      // Django's unusable passwords start with "!": nothing to log in with.
      if password.isEmpty || password.hasPrefix("!") {
        try body(.skipped(username))
        continue
      }
      let first = fields["first_name"] as? String ?? ""
      let last = fields["last_name"] as? String ?? ""
      let full = "\(first) \(last)".trimmingCharacters(in: .whitespaces)
      try body(
        .entry(
          ImportEntry(
            word: "entry", number: Int32(clamping: index + 1), username: username,
            fullName: full.isEmpty ? username : full,
            email: fields["email"] as? String ?? "", passwordHash: password,
            disabled: (fields["is_active"] as? Bool) == false)))
    }
  }
}
