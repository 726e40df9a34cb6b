import FoundationEssentials

/// systemd's JSON user and group records (https://systemd.io/USER_RECORD/,
/// https://systemd.io/GROUP_RECORD/) of accounts and groups, as files of a drop-in folder
/// (https://systemd.io/USER_GROUP_API/): never a hash or any other secret.
public enum UserRecordJSON {
  /// The user record of `account` (which has a uid), member of `groups`, with `keys`.
  public static func user(_ account: Account, uid: Int64, groups: [String], keys: [String])
    -> [UInt8]
  {
    var bytes: [UInt8] = []
    JSON.key("userName", first: true, to: &bytes)
    JSON.append(account.username, to: &bytes)
    // A GECOS field holds no ':' (systemd refuses such a record whole): the name is left out.
    if !account.fullName.contains(":") {
      JSON.key("realName", to: &bytes)
      JSON.append(account.fullName, to: &bytes)
    }
    JSON.key("uid", to: &bytes)
    bytes += Array(String(uid).utf8)
    JSON.key("gid", to: &bytes)
    bytes += Array(String(uid).utf8)
    if !groups.isEmpty {
      JSON.key("memberOf", to: &bytes)
      JSON.append(groups, to: &bytes)
    }
    JSON.key("homeDirectory", to: &bytes)
    JSON.append(account.homeDirectory, to: &bytes)
    JSON.key("shell", to: &bytes)
    JSON.append(account.loginShell, to: &bytes)
    JSON.key("disposition", to: &bytes)
    JSON.append("regular", to: &bytes)
    JSON.key("locked", to: &bytes)
    JSON.append(account.isDisabled, to: &bytes)
    if let expiresAt = account.expiresAt {
      JSON.key("notAfterUSec", to: &bytes)
      let micro = max(0, (expiresAt.timeIntervalSince1970 * 1000).rounded()) * 1000
      bytes += Array(String(Int64(micro)).utf8)
    }
    if !keys.isEmpty {
      JSON.key("sshAuthorizedKeys", to: &bytes)
      JSON.append(keys, to: &bytes)
    }
    bytes += Array("}\n".utf8)
    return bytes
  }

  /// The group record of `name` with gid `gid`.
  ///
  /// Its members are not in it: each membership is a file of its own (`membership`).
  public static func group(_ name: String, gid: Int64) -> [UInt8] {
    var bytes: [UInt8] = []
    JSON.key("groupName", first: true, to: &bytes)
    JSON.append(name, to: &bytes)
    JSON.key("gid", to: &bytes)
    bytes += Array(String(gid).utf8)
    JSON.key("disposition", to: &bytes)
    JSON.append("regular", to: &bytes)
    bytes += Array("}\n".utf8)
    return bytes
  }

  /// The membership record of `user` in `group` (what `id` and `getent initgroups` read).
  public static func membership(user: String, group: String) -> [UInt8] {
    var bytes: [UInt8] = []
    JSON.key("userName", first: true, to: &bytes)
    JSON.append(user, to: &bytes)
    JSON.key("groupName", to: &bytes)
    JSON.append(group, to: &bytes)
    bytes += Array("}\n".utf8)
    return bytes
  }
}

extension UserRecordJSON {
  /// The `sshAuthorizedKeys` of a user record for `userName`: none when the record is not that
  /// user's, is locked, or is past its `notAfterUSec` at `now`, or cannot be read; none either
  /// unless its uid is `systemUID`, the one this system's name service gives `userName`, and
  /// (when sshd passed one) `sshdUID`: sshd logs in whoever NSS says the name is, and a user of
  /// /etc/passwd or another directory that took an account's name must not get its keys.
  public static func authorizedKeys(
    _ record: [UInt8], userName: String, systemUID: Int64?, sshdUID: Int64? = nil, now: Date
  ) -> [String] {
    guard
      let object = JSONValue(parsing: record), case .object = object,
      object["userName"]?.string == userName, object["locked"]?.bool != true,
      let uid = object["uid"]?.integer, uid == systemUID,
      sshdUID == nil || sshdUID == uid
    else { return [] }
    if let notAfter = object["notAfterUSec"]?.number,
      notAfter.rounded(.down) / 1_000_000 <= now.timeIntervalSince1970
    {
      return []
    }
    return (object["sshAuthorizedKeys"]?.array ?? []).compactMap(\.string)
      .filter { line in !line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
  }
}
