import FoundationEssentials

/// Reads the entries of an import file, one at a time, in memory bounded by the longest entry
/// (a Django JSON list too: `JSONListReader`).
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
      guard !bytes.contains(0) else {
        try body(.problem("\(position): \(Messages.importNULByte)"))
        continue
      }
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
    let names = header.map { $0.trimmingSpaces().lowercased() }
    let required = ["username", "full_name", "email", "password_hash"]
    let columns = required.compactMap { names.firstIndex(of: $0) }
    guard columns.count == required.count else {
      try body(.problem("line 1: \(Messages.importCSVHeader)"))
      return
    }
    let disabledColumn = names.firstIndex(of: "disabled")
    let mustChangeColumn = names.firstIndex(of: "must_change_password")
    var number = 1
    while let first = try input.nextLine() {
      number += 1
      let start = number
      let position = "line \(start)"
      if first.isEmpty { continue }
      // A quoted field may hold line breaks (RFC 4180): the record goes on to the next lines,
      // each byte read once.
      var record = CSVRecord()
      var complete = record.add(first)
      while !complete, let more = try input.nextLine() {
        number += 1
        complete = record.add(more)
      }
      let problem: String? =
        if !complete {
          Messages.importCSVQuote
        } else if record.hasNUL {
          Messages.importNULByte
        } else if record.isTooLong {
          Messages.importCSVRecordTooLong(CSVRecord.limit >> 20)
        } else {
          nil
        }
      if let problem {
        try body(.problem("\(position): \(problem)"))
        continue
      }
      guard let fields = record.texts()?.map(SpreadsheetCell.imported) else {
        try body(.problem("\(position): \(Messages.importNotUTF8)"))
        continue
      }
      guard fields.count == names.count else {
        try body(.problem("\(position): \(Messages.importCSVColumns(names.count, fields.count))"))
        continue
      }
      var entry = ImportEntry(
        word: "line", number: Int32(clamping: start), username: fields[columns[0]],
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

  /// `true` or `false` (also `1`, `0`, empty for false); nil for anything else.
  private static func flag(_ text: String) -> Bool? {
    switch text.trimmingSpaces().lowercased() {
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
  static func csvFields(_ line: String) -> [String]? {
    var record = CSVRecord()
    guard record.add(Array(line.utf8)) else { return nil }
    return record.texts()
  }

  // MARK: - Django

  /// `dumpdata auth.user`: a list of `{"model": "auth.user", "pk": …, "fields": {…}}`, read
  /// one element at a time.
  private func django(_ body: (ImportItem) throws(AccountsError) -> Void) throws(AccountsError) {
    var reader = JSONListReader(input: input)
    var count = 0
    while let next = try reader.next() {
      let element: JSONListReader.Element
      switch next {
      case .success(let read): element = read
      case .failure(.notAList):
        try body(.problem(Messages.importDjangoNotAList))
        return
      case .failure(.broken(let line)):
        try body(.problem("line \(line): \(Messages.importDjangoBroken(after: count))"))
        return
      case .failure(.trailing(let line)):
        try body(.problem("line \(line): \(Messages.importDjangoTrailing)"))
        return
      }
      count += 1
      let position = "entry \(count)"
      guard !element.isTooLong else {
        let limit = JSONListReader.elementLimit >> 20
        try body(
          .problem("\(position): \(Messages.importDjangoTooLong(line: element.line, limit))"))
        continue
      }
      guard let value = JSONValue(parsing: element.bytes) else {
        try body(.problem("\(position): \(Messages.importDjangoNotJSON(line: element.line))"))
        continue
      }
      try body(item(value, number: count))
    }
  }

  /// One decoded element of a Django dump as an item.
  private func item(_ object: JSONValue, number: Int) -> ImportItem {
    let position = "entry \(number)"
    guard let fields = object["fields"], case .object = fields
    else { return .problem("\(position): \(Messages.importDjangoEntry)") }
    let username = fields["username"]?.string ?? ""
    guard object["model"]?.string == "auth.user" else {
      return .problem("\(position): \(Messages.importDjangoModel(object["model"]?.string))")
    }
    let password = fields["password"]?.string ?? ""
    // Django's unusable passwords start with "!": nothing to log in with.
    if password.isEmpty || password.hasPrefix("!") { return .skipped(username) }
    // A JSON boolean, or a number equal to 1 or 0 (what Django's BooleanField takes as such);
    // a string such as "false" is not taken for either.
    var active = true
    if let value = fields["is_active"] {
      let number = value.bool.map { $0 ? 1 : 0 } ?? value.number
      guard let number, number == 0 || number == 1 else {
        let label = username.isEmpty ? position : "\(position) (\(username))"
        return .problem(
          "\(label): \(Messages.importDjangoFlag("is_active", Self.jsonText(value)))")
      }
      active = number == 1
    }
    let first = fields["first_name"]?.string ?? ""
    let last = fields["last_name"]?.string ?? ""
    let full = "\(first) \(last)".trimmingSpaces()
    return .entry(
      ImportEntry(
        word: "entry", number: Int32(clamping: number), username: username,
        fullName: full.isEmpty ? username : full,
        email: fields["email"]?.string ?? "", passwordHash: password, disabled: !active))
  }

  /// A JSON value as the file spells it (near enough), cut at 40 characters.
  static func jsonText(_ value: JSONValue) -> String {
    let text = value.text
    return text.count > 40 ? String(text.prefix(40)) + "…" : text
  }
}

/// One CSV record (RFC 4180), fed a line at a time: a quoted field may span lines, and each
/// byte is read once however many lines the record spans.
struct CSVRecord {
  /// The longest record kept, in bytes.
  static let limit = 1 << 20

  private var fields: [[UInt8]] = []
  private var field: [UInt8] = []
  private var quoted = false
  private var atStart = true
  private var size = 0
  /// True when a line of the record holds a NUL byte.
  private(set) var hasNUL = false
  /// True when the record is longer than `limit` (its fields are then cut).
  private(set) var isTooLong = false

  /// Reads one more line (without its line end); true when it ends the record, false when a
  /// quoted field goes on to the next line.
  mutating func add(_ line: [UInt8]) -> Bool {
    let quote = UInt8(ascii: "\"")
    let comma = UInt8(ascii: ",")
    if line.contains(0) { hasNUL = true }
    var index = 0
    while index < line.count {
      let byte = line[index]
      index += 1
      if quoted {
        if byte == quote {
          // A doubled quote is one quote; a single one ends the quoted part.
          if index < line.count && line[index] == quote {
            append(quote)
            index += 1
          } else {
            quoted = false
          }
        } else {
          append(byte)
        }
      } else if byte == comma {
        fields.append(field)
        field.removeAll(keepingCapacity: true)
        atStart = true
        continue
      } else if byte == quote && atStart {
        quoted = true
      } else {
        append(byte)
      }
      atStart = false
    }
    if quoted {
      append(UInt8(ascii: "\n"))
      return false
    }
    fields.append(field)
    field = []
    return true
  }

  private mutating func append(_ byte: UInt8) {
    size += 1
    if size > Self.limit {
      isTooLong = true
    } else {
      field.append(byte)
    }
  }

  /// The fields as text; nil when one is not UTF-8.
  func texts() -> [String]? {
    var texts: [String] = []
    texts.reserveCapacity(fields.count)
    for field in fields {
      guard let text = Parser.text(field) else { return nil }
      texts.append(text)
    }
    return texts
  }
}
