/// The release of accounts this build is: what `--version` prints, what a PostgreSQL store
/// records beside each contract step this build brings, and what decides which of its
/// migrations `accounts store upgrade` leaves for `--contract`.
public enum AccountsRelease {
  /// This build's release, `MAJOR.MINOR.PATCH`.
  public static let version = "1.2.0"

  /// True when the release `a` comes before the release `b`, compared part by part as whole
  /// numbers (`1.10.0` after `1.9.0`); a part that is no number counts as 0.
  public static func precedes(_ a: String, _ b: String) -> Bool {
    let (left, right) = (parts(a), parts(b))
    for index in 0..<max(left.count, right.count) {
      let (x, y) = (
        index < left.count ? left[index] : 0, index < right.count ? right[index] : 0
      )
      if x != y { return x < y }
    }
    return false
  }

  private static func parts(_ release: String) -> [Int] {
    release.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
  }
}
