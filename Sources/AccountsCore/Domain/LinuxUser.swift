import FoundationEssentials

/// The numbers uids and gids are handed out from: a range inside the regular users' range of
/// Debian's policy (1000 to 59999), by default 20000 to 29999, which Debian's tools never reach
/// on a device (adduser and useradd give the lowest free number from 1000 up) and systemd never
/// uses (homed takes 60001 to 60513, DynamicUser 61184 to 65519).
public struct PosixIDRange: Equatable, Sendable, CustomStringConvertible {
  /// The first number given.
  public var first: Int64
  /// The last number given.
  public var last: Int64

  /// The range a store starts with.
  public static let standard = PosixIDRange(uncheckedFirst: 20000, last: 29999)
  /// Where every range must lie.
  public static let allowed: ClosedRange<Int64> = 1000...59999

  /// A range known to lie within `allowed` (`first` not above `last`).
  public init(uncheckedFirst first: Int64, last: Int64) {
    self.first = first
    self.last = last
  }

  /// The range `FIRST-LAST` names (decimal numbers within `allowed`, FIRST not above LAST);
  /// nil otherwise.
  public init?(parsing text: String) {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2,
      parts.allSatisfy({
        !$0.isEmpty && $0.count <= 5 && $0.allSatisfy { $0.isASCII && $0.isNumber }
      }),
      let first = Int64(parts[0]), let last = Int64(parts[1]),
      Self.allowed.contains(first), Self.allowed.contains(last), first <= last
    else { return nil }
    self.init(uncheckedFirst: first, last: last)
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
  /// The host's name (`gethostname`).
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
