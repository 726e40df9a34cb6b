import FoundationEssentials

/// The numbers uids and gids are handed out from: by default 20000 to 29999, inside the regular
/// users' range of Debian's policy, which Debian's tools never reach on a device (adduser and
/// useradd give the lowest free number from 1000 up); or any range from 1000 to 2147483647 that
/// stays out of the ranges systemd and Debian reserve (`reserved`), such as 200000-399999 for
/// a directory of many people.
public struct PosixIDRange: Equatable, Sendable, CustomStringConvertible {
  /// The first number given.
  public var first: Int64
  /// The last number given.
  public var last: Int64

  /// The range a store starts with.
  public static let standard = PosixIDRange(uncheckedFirst: 20000, last: 29999)
  /// Where every range must lie: above the system's users, below the numbers some tools read
  /// as negative.
  public static let allowed: ClosedRange<Int64> = 1000...2_147_483_647

  /// The ranges no store range may overlap, and whose they are.
  ///
  /// From systemd's UIDS-GIDS document and Debian's policy (9.2.2); a range is refused naming
  /// the first one it overlaps.
  public static let reserved: [(numbers: ClosedRange<Int64>, whose: String)] = [
    (0...999, "the system's own users and groups"),
    (60001...60513, "systemd-homed's users"),
    (60514...60577, "the host users systemd-nspawn maps into containers"),
    (61184...65519, "systemd's dynamic users (DynamicUser=)"),
    (65534...65534, "nobody"),
    (65535...65535, "the 16-bit -1, which some programs take for no user"),
    (60000...65535, "the numbers Debian allocates itself or reserves"),
    (524288...1_879_048_191, "systemd's container ranges"),
    (2_147_352_576...2_147_418_111, "systemd's foreign ranges (mapped users of other systems)"),
    (2_147_483_648...4_294_967_294, "the numbers many tools read as negative (signed 32-bit)"),
    (4_294_967_295...4_294_967_295, "-1, which means no user to the kernel"),
  ]

  /// A range known to lie within `allowed` and overlap nothing `reserved` (`first` not above
  /// `last`).
  public init(uncheckedFirst first: Int64, last: Int64) {
    self.first = first
    self.last = last
  }

  /// The range `FIRST-LAST` names (decimal numbers, FIRST not above LAST, within `allowed`
  /// and overlapping nothing `reserved`); nil otherwise.
  public init?(parsing text: String) {
    guard case .success(let range) = Self.parse(text) else { return nil }
    self = range
  }

  /// Why `text` names no usable range (one sentence), nil when it names one.
  public static func refusal(_ text: String) -> String? {
    guard case .failure(let refusal) = parse(text) else { return nil }
    return refusal.sentence
  }

  /// Why a `--uids` text is refused.
  struct Refusal: Error {
    let sentence: String
  }

  static func parse(_ text: String) -> Result<PosixIDRange, Refusal> {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2,
      parts.allSatisfy({
        !$0.isEmpty && $0.count <= 10 && $0.allSatisfy { $0.isASCII && $0.isNumber }
      }),
      let first = Int64(parts[0]), let last = Int64(parts[1]), first <= last,
      last <= 4_294_967_295
    else { return .failure(Refusal(sentence: Messages.invalidPosixIDRange(text))) }
    if let overlapped = reserved.first(where: { $0.numbers.overlaps(first...last) }) {
      return .failure(
        Refusal(
          sentence: Messages.reservedPosixIDRange(
            text, reserved: "\(overlapped.numbers.lowerBound)-\(overlapped.numbers.upperBound)",
            whose: overlapped.whose)))
    }
    return .success(PosixIDRange(uncheckedFirst: first, last: last))
  }

  /// True when `number` lies in the range.
  public func contains(_ number: Int64) -> Bool { first <= number && number <= last }

  /// `FIRST-LAST`.
  public var description: String { "\(first)-\(last)" }
}

/// What a uid or gid was given to.
public enum PosixIDKind: String, Sendable, Equatable {
  /// An account (its uid, and its per-user group's gid: the same number).
  case user
  /// A group of accounts (its gid).
  case group
}

/// Some accounts and groups, by id: those changed after some value of the store's change
/// counter, or those without a number yet.
public struct UserdbEntities: Equatable, Sendable {
  /// Account ids.
  public var users: [Int64]
  /// Group ids.
  public var groups: [Int64]

  /// How many accounts and groups.
  public var total: Int { users.count + groups.count }

  /// Creates a set of changes.
  public init(users: [Int64] = [], groups: [Int64] = []) {
    self.users = users
    self.groups = groups
  }
}

/// A store's user record settings, the same for every host: its identity and its range.
public struct UserdbSettings: Equatable, Sendable {
  /// 32 hexadecimal digits, made with the store: names the manifest of its records in a folder.
  public var storeID: String
  /// Where uids and gids are given from.
  public var range: PosixIDRange

  /// Creates settings.
  public init(storeID: String, range: PosixIDRange) {
    self.storeID = storeID
    self.range = range
  }
}

/// One host keeping user records of a store: where, and since when.
public struct UserdbHost: Equatable, Sendable {
  /// The host's name (`AccountsEnvironment.hostName`; on a PostgreSQL store, the host of the
  /// caller's own role when it has one).
  public var host: String
  /// The folder of its records (absolute).
  public var folder: String
  /// When `userdb enable` ran there.
  public var enabledAt: Date

  /// Creates a host entry.
  public init(host: String, folder: String, enabledAt: Date) {
    self.host = host
    self.folder = folder
    self.enabledAt = enabledAt
  }
}

/// What an account is as a Linux user when nothing else is stored: its home folder and shell.
public enum LinuxUserDefaults {
  /// The login shell of an account that names none.
  public static let shell = "/bin/bash"
  /// The folder records default to (`userdb enable` without `--folder`).
  public static let folder = "/etc/userdb"

  /// The home folder of an account that names none: `/home/NAME`.
  public static func home(for username: String) -> String { "/home/" + username }
}

extension Account {
  /// The home folder its user record gives: the stored one, else `/home/NAME`.
  public var homeDirectory: String { home ?? LinuxUserDefaults.home(for: username) }
  /// The login shell its user record gives: the stored one, else `/bin/bash`.
  public var loginShell: String { shell ?? LinuxUserDefaults.shell }
}

/// The rules of the paths a user record holds (home folder, shell, records folder).
public enum LinuxPathRules {
  /// The longest path, in bytes.
  public static let maximumLength = 1024

  /// True for an absolute path of at most `maximumLength` bytes, without control characters
  /// or ':' (which would break /etc/passwd's lines, as `getent passwd` prints them).
  public static func isValid(_ path: String) -> Bool {
    let bytes = path.utf8
    guard bytes.first == UInt8(ascii: "/"), bytes.count <= maximumLength else { return false }
    return path.unicodeScalars.allSatisfy { scalar in
      scalar != ":" && !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value))
    }
  }
}

/// Which account names can be Linux user names (and which group names Linux group names).
public enum LinuxNameRules {
  /// The longest Linux name, in bytes (what `utmp` keeps).
  public static let maximumLength = 32

  /// True for 1 to 32 of A-Z, a-z, 0-9, `.`, `_` and `-`, starting with a letter or `_`: what
  /// every Linux program takes (an account name beyond it gets no user record).
  public static func isValid(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard let first = bytes.first, bytes.count <= maximumLength else { return false }
    func isLetter(_ byte: UInt8) -> Bool {
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }
    guard isLetter(first) || first == UInt8(ascii: "_") else { return false }
    return bytes.allSatisfy {
      isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
        || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
    }
  }
}

extension LinuxPathRules {
  /// True when `path` has no empty, `.` or `..` component and no trailing `/` (what systemd
  /// takes as a record's path).
  public static func isNormalized(_ path: String) -> Bool {
    guard path != "/" else { return true }
    let components = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
    return components.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
  }
}
