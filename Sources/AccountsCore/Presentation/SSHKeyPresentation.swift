import FoundationEssentials

/// How `user ssh-key list` prints keys.
public enum SSHKeyPresentation {
  /// The text list's header.
  public static let header =
    "TYPE                                BITS  FINGERPRINT                                         ADDED                     COMMENT"

  /// One line: type, bits, fingerprint, when added, comment.
  public static func line(_ stored: StoredSSHKey) -> String {
    let key = stored.key
    return pad(key.type, 34) + "  " + pad(String(key.bits), 4) + "  " + pad(key.fingerprint, 50)
      + "  " + pad(Timestamp.string(from: stored.addedAt), 24) + "  "
      + (key.comment.isEmpty ? "-" : key.comment)
  }

  /// One JSON object, every key always present: type, bits, fingerprint, comment, addedAt.
  public static func json(_ stored: StoredSSHKey) -> String {
    var bytes: [UInt8] = []
    JSON.key("type", first: true, to: &bytes)
    JSON.append(stored.key.type, to: &bytes)
    JSON.key("bits", to: &bytes)
    bytes += Array(String(stored.key.bits).utf8)
    JSON.key("fingerprint", to: &bytes)
    JSON.append(stored.key.fingerprint, to: &bytes)
    JSON.key("comment", to: &bytes)
    JSON.append(stored.key.comment, to: &bytes)
    JSON.key("addedAt", to: &bytes)
    JSON.append(stored.addedAt, to: &bytes)
    bytes.append(UInt8(ascii: "}"))
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }
}
