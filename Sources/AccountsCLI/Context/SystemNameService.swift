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
