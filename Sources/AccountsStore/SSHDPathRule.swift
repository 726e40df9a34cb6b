import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// sshd's rule for the program an `AuthorizedKeysCommand` line names, so that `userdb status`
/// can say before sshd does that it would refuse this one.
///
/// OpenSSH's `safe_path` (misc.c), which `subprocess` applies with uid 0: the path resolved
/// (`realpath`) must be a regular file that root owns and neither group nor others may write,
/// and so must every folder above it up to `/`. The reasons are sshd's own words, as its log
/// gives them after `Unsafe AuthorizedKeysCommand "PATH": `.
public enum SSHDPathRule {
  /// Why sshd would refuse `path` as its `AuthorizedKeysCommand`; nil when it would run it.
  public static func refusal(of path: String) -> String? {
    guard let resolved = realpath(path, nil) else {
      return "realpath \(path) failed: \(String(cString: strerror(errno)))"
    }
    var current = String(cString: resolved)
    free(resolved)
    var info = stat()
    guard stat(current, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      return "\(current) is not a regular file"
    }
    if info.st_uid != 0 || info.st_mode & 0o022 != 0 {
      return "bad ownership or modes for file \(current)"
    }
    while current != "/" {
      let parent = current.split(separator: "/", omittingEmptySubsequences: true).dropLast()
      current = "/" + parent.joined(separator: "/")
      if stat(current, &info) != 0 || info.st_uid != 0 || info.st_mode & 0o022 != 0 {
        return "bad ownership or modes for directory \(current)"
      }
    }
    return nil
  }

  /// `refusal(of:)` for this very program (`/proc/self/exe`).
  public static func refusalOfThisProgram() -> (path: String, reason: String)? {
    guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
    let path = String(cString: resolved)
    free(resolved)
    return refusal(of: path).map { (path, $0) }
  }
}
