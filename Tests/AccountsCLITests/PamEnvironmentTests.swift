import CPam
import Foundation
import Testing

/// The environment `pam-auth` keeps (and the PAM module will give the program it runs).
@Suite("PAM environment")
struct PamEnvironmentTests {
  /// The entries `accounts_pam_environment_select` keeps from `entries`, in order.
  func selected(_ entries: [String], capacity: Int = Int(ACCOUNTS_PAM_KEPT_COUNT) + 1)
    -> [String]
  {
    var strings = entries.map { strdup($0) }
    defer { for string in strings { free(string) } }
    strings.append(nil)
    var kept = [UnsafePointer<CChar>?](repeating: nil, count: capacity)
    let count = strings.withUnsafeBufferPointer { source in
      accounts_pam_environment_select(source.baseAddress, &kept, capacity)
    }
    #expect(kept[count] == nil)
    return kept.prefix(count).compactMap { $0.map { String(cString: $0) } }
  }

  /// The four PAM items pam-auth reads are kept; everything else goes, including look-alike
  /// names and PAM items it does not read.
  @Test func keepsOnlyThePamItemsRead() {
    let environment = [
      "HOME=/home/mallory", "PAM_USER=alice", "OPENSSL_CONF=/tmp/x.cnf", "PAM_SERVICE=sshd",
      "PGSERVICEFILE=/tmp/s", "PAM_RHOST=203.0.113.9", "PAM_TTY=ssh", "PAM_TYPE=auth",
      "PAM_RUSER=mallory", "PAM_USERX=bob", "PAM_USER", "pam_user=bob", "LD_PRELOAD=/tmp/x.so",
    ]
    #expect(
      selected(environment) == [
        "PAM_USER=alice", "PAM_SERVICE=sshd", "PAM_RHOST=203.0.113.9", "PAM_TTY=ssh",
      ])
  }

  /// A name given twice keeps its first value, the one getenv finds.
  @Test func firstOfEachName() {
    #expect(
      selected(["PAM_USER=alice", "PAM_USER=root", "PAM_TTY=", "PAM_TTY=x"]) == [
        "PAM_USER=alice", "PAM_TTY=",
      ])
  }

  /// Never more than the room given (the last place is for the NULL), nor anything with none.
  @Test func staysWithinCapacity() {
    #expect(
      selected(["PAM_USER=a", "PAM_TTY=b", "PAM_RHOST=c"], capacity: 3) == [
        "PAM_USER=a", "PAM_TTY=b",
      ])
    #expect(selected(["PAM_USER=a"], capacity: 1) == [])
    var none: [UnsafePointer<CChar>?] = []
    #expect(accounts_pam_environment_select(nil, &none, 0) == 0)
  }
}
