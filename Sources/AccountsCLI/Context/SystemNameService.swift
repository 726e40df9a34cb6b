import AccountsCore
import FoundationEssentials
import Glibc

/// This system's name service (NSS: `getpwnam_r` and friends), as `passwd: files systemd` and
/// `group: files systemd` in /etc/nsswitch.conf make it.
struct SystemNameService: NameService {
  func uid(ofUser name: String) -> Int64? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else {
      return nil
    }
    return Int64(entry.pw_uid)
  }

  func gid(ofGroup name: String) -> Int64? {
    var entry = group()
    var found: UnsafeMutablePointer<group>?
    var buffer = [CChar](repeating: 0, count: 65536)
    guard getgrnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else {
      return nil
    }
    return Int64(entry.gr_gid)
  }

  func knowsUID(_ number: Int64) -> Bool {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    return getpwuid_r(uid_t(number), &entry, &buffer, buffer.count, &found) == 0 && found != nil
  }

  func knowsGID(_ number: Int64) -> Bool {
    var entry = group()
    var found: UnsafeMutablePointer<group>?
    var buffer = [CChar](repeating: 0, count: 65536)
    return getgrgid_r(gid_t(number), &entry, &buffer, buffer.count, &found) == 0 && found != nil
  }
}

extension SystemNameService {
  /// Reads `/etc/passwd` itself (not NSS, whose other sources may answer the same name).
  func isLocalUser(_ name: String) -> Bool {
    guard let file = fopen("/etc/passwd", "re") else { return false }
    defer { fclose(file) }
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    while fgetpwent_r(file, &entry, &buffer, buffer.count, &found) == 0, let record = found {
      if strcmp(record.pointee.pw_name, name) == 0 { return true }
    }
    return false
  }

  /// The folders systemd's user database reads drop-in records from, in its order.
  static let userRecordFolders = [
    "/etc/userdb", "/run/userdb", "/run/host/userdb", "/usr/local/lib/userdb", "/usr/lib/userdb",
  ]

  func hasUserRecord(named name: String, uid: Int64) -> Bool {
    let target = name + ".user"
    return Self.userRecordFolders.contains { folder in
      var buffer = [CChar](repeating: 0, count: 256)
      let count = readlink("\(folder)/\(uid).user", &buffer, buffer.count - 1)
      guard count > 0 else { return false }
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        == target
    }
  }
}
