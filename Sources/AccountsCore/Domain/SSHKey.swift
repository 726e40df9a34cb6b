import FoundationEssentials

/// An SSH public key as stored for an account: one authorized_keys line without options.
public struct SSHKey: Equatable, Sendable {
  /// The key type (`ssh-ed25519`).
  public var type: String
  /// The key blob in base64, as authorized_keys holds it.
  public var data: String
  /// The comment (may be empty).
  public var comment: String
  /// The blob's SHA-256, as `ssh-keygen -l -E sha256` prints it: `SHA256:` and unpadded base64.
  public var fingerprint: String
  /// The key's size in bits, as `ssh-keygen -l` prints it.
  public var bits: Int

  /// Creates a key value.
  public init(type: String, data: String, comment: String, fingerprint: String, bits: Int) {
    self.type = type
    self.data = data
    self.comment = comment
    self.fingerprint = fingerprint
    self.bits = bits
  }

  /// The authorized_keys line: type, blob and the comment if any.
  public var line: String { comment.isEmpty ? "\(type) \(data)" : "\(type) \(data) \(comment)" }
}

/// A key stored for an account, with when it was added.
public struct StoredSSHKey: Equatable, Sendable {
  /// The key.
  public var key: SSHKey
  /// When it was added.
  public var addedAt: Date

  /// Creates a stored key.
  public init(key: SSHKey, addedAt: Date) {
    self.key = key
    self.addedAt = addedAt
  }
}

/// Why an authorized_keys line was refused.
public enum SSHKeyProblem: Error, Equatable, Sendable {
  /// Not `TYPE BASE64 [COMMENT]`, or a blob that is not what its type says.
  case malformed
  /// A type never accepted: DSA, certificates, or one this build does not know.
  case refusedType(String)
  /// An RSA key under 2048 bits.
  case rsaTooShort(bits: Int)
  /// The line starts with options (`command=`, `from=`, `no-pty`…): never stored.
  case options
  /// The comment holds control characters or is longer than 1024 bytes.
  case badComment
}

/// Reads authorized_keys lines (RFC 4253's wire format inside the base64 blob).
public enum SSHKeyParser {
  /// The types accepted, each with its wire fields after the type name.
  static let accepted: Set<String> = [
    "ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
  ]
  /// Types known and refused.
  static let refused: Set<String> = ["ssh-dss"]
  /// The fewest bits of an RSA modulus accepted.
  public static let shortestRSA = 2048
  /// The longest comment, in bytes.
  public static let longestComment = 1024

  /// The keys of `text`, one per line; blank lines and `#` comments are skipped.
  ///
  /// Throws with the first refused line's number (from 1) and why.
  public static func keys(in text: String, fingerprint: ([UInt8]) throws(AccountsError) -> String)
    throws(AccountsError) -> [SSHKey]
  {
    var keys: [SSHKey] = []
    var number = 0
    for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
      number += 1
      var line = Substring(rawLine)
      if line.hasSuffix("\r") { line = line.dropLast() }
      let trimmed = line.drop { $0 == " " || $0 == "\t" }
      if trimmed.allSatisfy({ $0 == " " || $0 == "\t" }) || trimmed.hasPrefix("#") { continue }
      switch parse(String(trimmed)) {
      case .success(let parsed):
        keys.append(
          SSHKey(
            type: parsed.type, data: parsed.data, comment: parsed.comment,
            fingerprint: try fingerprint(parsed.blob), bits: parsed.bits))
      case .failure(let problem):
        throw .sshKeyRefused(line: number, problem: problem)
      }
    }
    return keys
  }

  /// One line's key: its type, base64 blob, decoded blob, size and comment.
  public struct Parsed: Equatable, Sendable {
    public var type: String
    public var data: String
    public var blob: [UInt8]
    public var bits: Int
    public var comment: String
  }

  /// Reads one line (no leading blanks, no line break).
  public static func parse(_ line: String) -> Result<Parsed, SSHKeyProblem> {
    let fields = line.split(maxSplits: 2, whereSeparator: { $0 == " " || $0 == "\t" })
    guard let typeField = fields.first else { return .failure(.malformed) }
    let type = String(typeField)
    guard accepted.contains(type) || refused.contains(type) else {
      // A first field that is no key type: options when a key type follows, else nonsense.
      if fields.count > 1,
        accepted.contains(String(fields[1])) || refused.contains(String(fields[1]))
          || typeField.contains("=") || optionWords.contains(type.lowercased())
      {
        return .failure(.options)
      }
      if type.hasSuffix("-cert-v01@openssh.com") { return .failure(.refusedType(type)) }
      return .failure(
        fields.count > 1 && looksLikeKeyBlob(fields[1]) ? .refusedType(type) : .malformed)
    }
    if refused.contains(type) { return .failure(.refusedType(type)) }
    guard fields.count >= 2, let decoded = Data(base64Encoded: String(fields[1])) else {
      return .failure(.malformed)
    }
    let comment = fields.count > 2 ? String(fields[2]).trimmingTrailingBlanks() : ""
    guard comment.utf8.count <= longestComment,
      comment.unicodeScalars.allSatisfy({
        !($0.value < 0x20 && $0 != "\t") && !(0x7F...0x9F).contains($0.value)
      })
    else { return .failure(.badComment) }
    let blob = [UInt8](decoded)
    var reader = WireReader(bytes: blob)
    guard let name = reader.string(), String(decoding: name, as: UTF8.self) == type else {
      return .failure(.malformed)
    }
    let bits: Int
    switch type {
    case "ssh-ed25519":
      guard reader.string()?.count == 32 else { return .failure(.malformed) }
      bits = 256
    case "sk-ssh-ed25519@openssh.com":
      guard reader.string()?.count == 32, reader.string() != nil else {
        return .failure(.malformed)
      }
      bits = 256
    case "ssh-rsa":
      guard let exponent = reader.string(), !exponent.isEmpty, let modulus = reader.string()
      else { return .failure(.malformed) }
      let significant = modulus.drop { $0 == 0 }
      guard let top = significant.first, modulus.first.map({ $0 & 0x80 == 0 }) ?? false else {
        return .failure(.malformed)
      }
      bits = (significant.count - 1) * 8 + (8 - top.leadingZeroBitCount)
      guard bits >= shortestRSA else { return .failure(.rsaTooShort(bits: bits)) }
      guard bits <= 16384 else { return .failure(.malformed) }
    default:
      // ecdsa-sha2-nistpNNN and sk-ecdsa-sha2-nistp256@openssh.com: the curve, then the point
      // (uncompressed: 0x04, X, Y), then for a security key its application.
      let curve = type.hasPrefix("sk-") ? "nistp256" : String(type.dropFirst("ecdsa-sha2-".count))
      let sizes = ["nistp256": (65, 256), "nistp384": (97, 384), "nistp521": (133, 521)]
      guard let given = reader.string(), String(decoding: given, as: UTF8.self) == curve,
        let (length, size) = sizes[curve], let point = reader.string(), point.count == length,
        point.first == 0x04
      else { return .failure(.malformed) }
      if type.hasPrefix("sk-") {
        guard reader.string() != nil else { return .failure(.malformed) }
      }
      bits = size
    }
    guard reader.isAtEnd else { return .failure(.malformed) }
    return .success(
      Parsed(type: type, data: String(fields[1]), blob: blob, bits: bits, comment: comment))
  }

  /// Option names of authorized_keys that take no value (sshd(8), AUTHORIZED_KEYS FILE FORMAT).
  static let optionWords: Set<String> = [
    "agent-forwarding", "cert-authority", "no-agent-forwarding", "no-port-forwarding", "no-pty",
    "no-user-rc", "no-x11-forwarding", "port-forwarding", "pty", "no-touch-required", "restrict",
    "user-rc", "verify-required", "x11-forwarding",
  ]

  /// True when `field` is base64 of a blob beginning with a string (a key of another type).
  private static func looksLikeKeyBlob(_ field: Substring) -> Bool {
    guard let data = Data(base64Encoded: String(field)) else { return false }
    var reader = WireReader(bytes: [UInt8](data))
    return reader.string() != nil
  }

  /// The fingerprint `ssh-keygen -l -E sha256` prints for a blob whose SHA-256 is `digest`.
  public static func fingerprint(digest: [UInt8]) -> String {
    var text = Data(digest).base64EncodedString()
    while text.hasSuffix("=") { text.removeLast() }
    return "SHA256:" + text
  }
}

/// RFC 4253's `string` fields, read from a key blob.
struct WireReader {
  let bytes: [UInt8]
  var offset = 0

  /// The next `string` (a 32-bit big-endian length, then that many bytes); nil when the blob
  /// ends first.
  mutating func string() -> ArraySlice<UInt8>? {
    guard bytes.count - offset >= 4 else { return nil }
    let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    offset += 4
    guard bytes.count - offset >= length else { return nil }
    defer { offset += length }
    return bytes[offset..<offset + length]
  }

  /// True when every byte was read.
  var isAtEnd: Bool { offset == bytes.count }
}

extension String {
  /// The text without trailing spaces and tabs.
  func trimmingTrailingBlanks() -> String {
    var text = Substring(self)
    while text.last == " " || text.last == "\t" { text = text.dropLast() }
    return String(text)
  }
}
