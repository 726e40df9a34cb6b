/// A stored password hash as a reader that may not hold it sees it (a fleet host role on a
/// PostgreSQL store, migration "v7"): `sealed$<hex SHA-256 of the whole hash>$<the hash, its
/// digest masked>`.
///
/// The masked hash keeps the scheme, the cost and the salt, and the digest's length and shape
/// (PBKDF2's Base64 letters become `A`, crypt(3)'s become `.`), so it reads as the whole hash
/// does for everything but the digest. Checking a password recomputes the whole hash from the
/// masked one and compares SHA-256s: as good as the digest for telling a right password, but
/// the whole hash, which the store's steps take as proof that a password was checked, is only
/// known to whoever typed the password. No program writes a sealed hash: the store's check
/// constraint refuses one.
public struct SealedPasswordHash: Equatable, Sendable {
  /// What starts a sealed hash (no stored scheme starts so).
  public static let prefix = "sealed$"

  /// The SHA-256 of the whole hash.
  public let wholeDigest: [UInt8]
  /// The hash with its digest masked.
  public let masked: String

  /// Parses the sealed form; nil for anything else (a whole hash among them).
  public init?(parsing text: String) {
    guard text.hasPrefix(Self.prefix) else { return nil }
    let rest = text.dropFirst(Self.prefix.count)
    guard let end = rest.firstIndex(of: "$"),
      let digest = Hex.decode(rest[..<end]), digest.count == SHA256.byteCount
    else { return nil }
    wholeDigest = digest
    masked = String(rest[rest.index(after: end)...])
  }

  /// The hash as far as it can be read: the masked one for a sealed hash, `stored` otherwise.
  public static func readable(_ stored: String) -> String {
    SealedPasswordHash(parsing: stored)?.masked ?? stored
  }

  /// Whether `candidate`, a hash recomputed from a typed password, is the whole hash (the
  /// digests compared in constant time).
  public func isWhole(_ candidate: String) throws(CryptoError) -> Bool {
    try ConstantTime.equals(SHA256.hash(Array(candidate.utf8)), wholeDigest)
  }
}
