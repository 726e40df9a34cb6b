import FoundationEssentials

extension Messages {
  /// Standard output refused a result (a full disk, a closed descriptor); `reason` is the
  /// system's (`strerror`).
  public static func standardOutputFailed(_ reason: String) -> String {
    "Could not write to standard output: \(reason)."
  }
}
