extension CryptHash {
  /// What checking a crypt(3) hash costs, as its setting says.
  public enum Cost: Equatable, Sendable {
    /// bcrypt: 2^`log2Rounds` rounds of its key schedule (`$2b$12$…` is 12).
    case bcrypt(log2Rounds: Int)
    /// SHA-512 or SHA-256 crypt: `rounds` (`rounds=N$`; 5,000 when the hash names none).
    case shaCrypt(Scheme, rounds: Int)
    /// yescrypt: its parameters.
    case yescrypt(YescryptParameters)

    /// The scheme the cost is of.
    public var scheme: Scheme {
      switch self {
      case .bcrypt: return .bcrypt
      case .shaCrypt(let scheme, _): return scheme
      case .yescrypt: return .yescrypt
      }
    }

    /// True when the cost is at most its scheme's ceiling (`Ceiling`).
    public var isWithinCeiling: Bool {
      switch self {
      case .bcrypt(let log2Rounds): return log2Rounds <= Ceiling.bcryptLog2Rounds
      case .shaCrypt(_, let rounds): return rounds <= Ceiling.shaCryptRounds
      case .yescrypt(let parameters):
        return parameters.memory <= Ceiling.yescryptMemory && parameters.p == 1
          && parameters.t == 0 && parameters.g == 0 && parameters.romLog2 == nil
      }
    }
  }

  /// yescrypt's parameters, as the hash encodes them (`$y$j9T$…`: flavor `j`, N = 2^12,
  /// r = 32), each integer in libxcrypt's own variable-length base-64.
  public struct YescryptParameters: Equatable, Sendable {
    /// log2 of N, the number of blocks.
    public var log2N: Int
    /// r: the size of a block, in units of 128 bytes.
    public var r: UInt32
    /// p: parallel lanes (1 unless the hash names another).
    public var p: UInt32
    /// t: extra passes over memory (0 unless the hash names some).
    public var t: UInt32
    /// g: hash upgrades (0 unless the hash names some).
    public var g: UInt32
    /// log2 of the size of a ROM the hash needs (nil: none).
    public var romLog2: Int?

    /// Parameters as a hash names them (those it leaves out have their defaults).
    public init(
      log2N: Int, r: UInt32, p: UInt32 = 1, t: UInt32 = 0, g: UInt32 = 0, romLog2: Int? = nil
    ) {
      self.log2N = log2N
      self.r = r
      self.p = p
      self.t = t
      self.g = g
      self.romLog2 = romLog2
    }

    /// The memory one check takes, 128 × N × r bytes (UInt64.max when that does not fit).
    public var memory: UInt64 {
      let blocks = UInt64(1) << UInt64(log2N)
      let (size, overflow) = blocks.multipliedReportingOverflow(by: 128 * UInt64(r))
      return overflow ? .max : size
    }
  }

  /// The most a hash of each scheme may cost to check: about the strongest setting that the
  /// tools which write such files offer, so that every login against one ends in seconds
  /// (docs/import-export.md says why each).
  public enum Ceiling {
    /// bcrypt cost 17: the most `htpasswd -B -C` takes (apr-util 1.6 and later refuse more).
    public static let bcryptLog2Rounds = 17
    /// 9,999,999 rounds of SHA-512 or SHA-256 crypt: the most musl's crypt(3) takes (it
    /// lowered the specification's 999,999,999 against this very denial of service).
    public static let shaCryptRounds = 9_999_999
    /// 1 GiB: yescrypt's cost 11 (N = 2^18, r = 32), the highest that `mkpasswd -R`,
    /// login.defs' YESCRYPT_COST_FACTOR and libxcrypt's crypt_gensalt make, which always
    /// write p = 1, t = 0, g = 0 and no ROM.
    public static let yescryptMemory: UInt64 = 1 << 30
  }

  /// The cost of `hash`, read from its setting; nil when it is not a well-formed hash of a
  /// supported scheme (the lengths and alphabets of crypt(5), every byte printable ASCII).
  public static func cost(of hash: String) -> Cost? {
    guard case .supported(let scheme) = kind(of: hash) else { return nil }
    let bytes = Array(hash.utf8)
    guard bytes.allSatisfy(isHashByte) else { return nil }
    switch scheme {
    case .bcrypt: return bcryptCost(bytes)
    case .sha512crypt: return shaCryptCost(bytes, scheme: scheme, digestLength: 86)
    case .sha256crypt: return shaCryptCost(bytes, scheme: scheme, digestLength: 43)
    case .yescrypt: return yescryptCost(bytes)
    }
  }

  /// crypt(5): hashes are printable ASCII without white space, `:`, `;`, `*`, `!` or `\`.
  static func isHashByte(_ byte: UInt8) -> Bool {
    byte > 0x20 && byte < 0x7F && !":;*!\\".utf8.contains(byte)
  }

  /// The value of one character of crypt's base-64 (`./0-9A-Za-z`); nil for any other byte.
  static func base64Value(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "."), UInt8(ascii: "/"): return UInt32(byte - UInt8(ascii: "."))
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0")) + 2
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(byte - UInt8(ascii: "A")) + 12
    case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(byte - UInt8(ascii: "a")) + 38
    default: return nil
    }
  }

  /// `$2b$NN$` and 53 base-64 characters (22 of salt, 31 of hash); NN from 04 to 31, the
  /// range libxcrypt computes.
  private static func bcryptCost(_ bytes: [UInt8]) -> Cost? {
    guard bytes.count == 60, bytes[6] == UInt8(ascii: "$"),
      bytes[7...].allSatisfy({ base64Value($0) != nil }),
      let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)),
      bytes[4..<6].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
      (4...31).contains(cost)
    else { return nil }
    return .bcrypt(log2Rounds: cost)
  }

  /// `$6$[rounds=N$]SALT$DIGEST`: N from 1,000 to 999,999,999 without leading zeros (what
  /// libxcrypt computes), a salt of at most 16 characters, the digest in base-64.
  private static func shaCryptCost(_ bytes: [UInt8], scheme: Scheme, digestLength: Int)
    -> Cost?
  {
    var rest = bytes[3...]
    var rounds = 5000
    let prefix = Array("rounds=".utf8)
    if rest.starts(with: prefix) {
      let digits = rest.dropFirst(prefix.count).prefix { $0 != UInt8(ascii: "$") }
      guard (1...9).contains(digits.count), digits.first != UInt8(ascii: "0"),
        digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
        let value = Int(String(decoding: digits, as: UTF8.self)), value >= 1000
      else { return nil }
      rounds = value
      rest = rest.dropFirst(prefix.count + digits.count + 1)
    }
    let parts = rest.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].count <= 16, parts[1].count == digestLength,
      parts[1].allSatisfy({ base64Value($0) != nil })
    else { return nil }
    return .shaCrypt(scheme, rounds: rounds)
  }

  /// `$y$PARAMS$SALT$DIGEST`: the parameters as libxcrypt decodes them (flavor, log2 N, r, then
  /// optionally a bit set naming p, t, g and a ROM's size), a salt of at most 86 base-64
  /// characters, a digest of 43.
  private static func yescryptCost(_ bytes: [UInt8]) -> Cost? {
    var index = 3
    func integer(atLeast least: UInt32) -> UInt32? {
      decodeInteger(bytes, at: &index, least: least)
    }
    // 257: yescrypt's RW flavors (flags up to 0x3fc, stored as 2 + flags / 4).
    guard let flavor = integer(atLeast: 0), flavor <= 257, let log2N = integer(atLeast: 1),
      log2N <= 63, let r = integer(atLeast: 1)
    else { return nil }
    var parameters = YescryptParameters(log2N: Int(log2N), r: r)
    if index < bytes.count, bytes[index] != UInt8(ascii: "$") {
      guard let have = integer(atLeast: 1), have <= 15 else { return nil }
      if have & 1 != 0 {
        guard let p = integer(atLeast: 2) else { return nil }
        parameters.p = p
      }
      if have & 2 != 0 {
        guard let t = integer(atLeast: 1) else { return nil }
        parameters.t = t
      }
      if have & 4 != 0 {
        guard let g = integer(atLeast: 1) else { return nil }
        parameters.g = g
      }
      if have & 8 != 0 {
        guard let rom = integer(atLeast: 1), rom <= 63 else { return nil }
        parameters.romLog2 = Int(rom)
      }
    }
    guard index < bytes.count, bytes[index] == UInt8(ascii: "$") else { return nil }
    let parts = bytes[(index + 1)...].split(
      separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].count <= 86, parts[1].count == 43,
      parts.allSatisfy({ $0.allSatisfy { base64Value($0) != nil } })
    else { return nil }
    return .yescrypt(parameters)
  }

  /// One of yescrypt's variable-length integers at `index` (moved past it), plus `least`.
  ///
  /// Read as libxcrypt's `decode64_uint32` reads it: the first character's place in a series
  /// of ranges says how many characters follow, each adding 6 bits. Nil for a byte outside
  /// the alphabet or a value beyond 32 bits.
  static func decodeInteger(_ bytes: [UInt8], at index: inout Int, least: UInt32) -> UInt32? {
    guard index < bytes.count, let first = base64Value(bytes[index]) else { return nil }
    index += 1
    var start: UInt32 = 0
    var end: UInt32 = 47
    var characters = 1
    var bits: UInt64 = 0
    var value = UInt64(least)
    while first > end {
      value += UInt64(end + 1 - start) << bits
      start = end + 1
      end = start + (62 - end) / 2
      characters += 1
      bits += 6
    }
    value += UInt64(first - start) << bits
    while characters > 1 {
      guard index < bytes.count, let next = base64Value(bytes[index]) else { return nil }
      index += 1
      characters -= 1
      bits -= 6
      value += UInt64(next) << bits
    }
    return value <= UInt64(UInt32.max) ? UInt32(value) : nil
  }
}
