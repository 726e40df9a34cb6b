import FoundationEssentials

/// How `userdb status` prints what it found.
public enum UserdbPresentation {
  /// Text lines: one field each; `sshd` is why sshd would refuse this program as its
  /// `AuthorizedKeysCommand` (its path, sshd's reason), nil when it would run it.
  public static func lines(
    _ outcome: UserdbFlow.Outcome?, host: String, range: PosixIDRange,
    sshd: (path: String, reason: String)? = nil
  ) -> [String] {
    guard let outcome else {
      return ["Host: \(host)", "User records: off", "UIDs: \(range)"]
    }
    let behind = outcome.behind
    return [
      "Host: \(host)", "User records: on", "Folder: \(outcome.host.folder)", "UIDs: \(range)",
      "Users: \(outcome.users)", "Groups: \(outcome.groups)",
      "Behind: "
        + (behind == 0
          ? "no"
          : "\(behind) \(behind == 1 ? "file" : "files") to write or remove (run accounts userdb sync)"),
      "Foreign files: "
        + (outcome.changes.foreign.isEmpty ? "-" : outcome.changes.foreign.joined(separator: ", ")),
      "SSH keys command: "
        + (sshd.map { Messages.sshdWouldRefuse($0.path, reason: $0.reason) } ?? "ok"),
    ] + outcome.skipped
  }

  /// One JSON object, every key always present.
  public static func json(
    _ outcome: UserdbFlow.Outcome?, host: String, range: PosixIDRange,
    sshd: (path: String, reason: String)? = nil
  ) -> String {
    var bytes: [UInt8] = []
    JSON.key("host", first: true, to: &bytes)
    JSON.append(host, to: &bytes)
    JSON.key("enabled", to: &bytes)
    JSON.append(outcome != nil, to: &bytes)
    JSON.key("folder", to: &bytes)
    JSON.append(outcome?.host.folder, to: &bytes)
    JSON.key("uids", to: &bytes)
    JSON.append(range.description, to: &bytes)
    JSON.key("users", to: &bytes)
    bytes += Array(String(outcome?.users ?? 0).utf8)
    JSON.key("groups", to: &bytes)
    bytes += Array(String(outcome?.groups ?? 0).utf8)
    JSON.key("behind", to: &bytes)
    bytes += Array(String(outcome?.behind ?? 0).utf8)
    JSON.key("foreign", to: &bytes)
    JSON.append(outcome?.changes.foreign ?? [], to: &bytes)
    JSON.key("skipped", to: &bytes)
    JSON.append(outcome?.skipped ?? [], to: &bytes)
    JSON.key("sshdRefusal", to: &bytes)
    JSON.append(sshd.map { Messages.sshdWouldRefuse($0.path, reason: $0.reason) }, to: &bytes)
    bytes.append(UInt8(ascii: "}"))
    return String(decoding: bytes, as: UTF8.self)
  }
}
