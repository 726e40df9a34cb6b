import AccountsCore
import AccountsCrypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Small private files beside the database: read only when they are ours and private (as
/// OpenSSH reads a key), written whole or not at all (a temporary file, synced, then renamed or
/// linked into place).
enum PrivateFile {
  /// The most a file of ours holds.
  static let largest = 8192

  /// The bytes of `path`; nil when it does not exist.
  ///
  /// Refused when it is a link or not a regular file, another user's, or readable or writable
  /// by group or others.
  static func read(_ path: String, kind: ClientFileProblem.Kind) throws(AccountsError)
    -> [UInt8]?
  {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else {
      let error = errno
      if error == ENOENT { return nil }
      if error == ELOOP { throw .clientFile(.notAFile(kind, path: path)) }
      throw .clientFile(.unusable(kind, path: path, reason: String(cString: strerror(error))))
    }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw .clientFile(.unusable(kind, path: path, reason: String(cString: strerror(errno))))
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw .clientFile(.notAFile(kind, path: path))
    }
    guard status.st_uid == geteuid() else {
      throw .clientFile(.wrongOwner(kind, path: path, owner: status.st_uid))
    }
    guard status.st_mode & 0o077 == 0 else {
      throw .clientFile(
        .notPrivate(kind, path: path, mode: String(status.st_mode & 0o7777, radix: 8)))
    }
    guard status.st_size <= largest else { throw .clientFile(.damaged(kind, path: path)) }
    var bytes = [UInt8](repeating: 0, count: largest + 1)
    var count = 0
    while count < bytes.count {
      let got = bytes.withUnsafeMutableBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return Glibc.read(fd, base + count, buffer.count - count)
      }
      if got < 0 && errno == EINTR { continue }
      guard got >= 0 else {
        throw .clientFile(.unusable(kind, path: path, reason: String(cString: strerror(errno))))
      }
      if got == 0 { break }
      count += got
    }
    guard count <= largest else { throw .clientFile(.damaged(kind, path: path)) }
    return Array(bytes[0..<count])
  }

  /// How `write` puts the file in place.
  enum Placing {
    /// Replacing whatever is there (`rename`).
    case replacing
    /// Only if nothing is there (`link`); false is returned when something was.
    case ifAbsent
  }

  /// Writes `bytes` to `path`, mode 0600, whole or not at all.
  ///
  /// To a temporary file in the same folder, synced, then put in place and the folder synced.
  /// Returns false when `ifAbsent` found a file there.
  @discardableResult
  static func write(
    _ bytes: [UInt8], to path: String, kind: ClientFileProblem.Kind, placing: Placing
  ) throws(AccountsError) -> Bool {
    let folder = FileSystem.folder(of: path)
    func failure(_ error: Int32) -> AccountsError {
      .clientFile(.unusable(kind, path: path, reason: String(cString: strerror(error))))
    }
    let suffix = (try? SecureRandom.bytes(6))?.map { String($0, radix: 16) }.joined() ?? "0"
    let temporary = folder + "/." + FileSystem.name(of: path) + ".\(getpid()).\(suffix).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw failure(errno) }
    var written = 0
    while written < bytes.count {
      let done = bytes.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return Glibc.write(fd, base + written, buffer.count - written)
      }
      if done < 0 && errno == EINTR { continue }
      guard done > 0 else {
        let error = errno
        close(fd)
        unlink(temporary)
        throw failure(error)
      }
      written += done
    }
    guard fsync(fd) == 0 else {
      let error = errno
      close(fd)
      unlink(temporary)
      throw failure(error)
    }
    close(fd)
    var placed = true
    switch placing {
    case .replacing:
      guard rename(temporary, path) == 0 else {
        let error = errno
        unlink(temporary)
        throw failure(error)
      }
    case .ifAbsent:
      if link(temporary, path) != 0 {
        let error = errno
        unlink(temporary)
        guard error == EEXIST else { throw failure(error) }
        placed = false
      }
      unlink(temporary)
    }
    let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if folderFD >= 0 {
      fsync(folderFD)
      close(folderFD)
    }
    return placed
  }
}

/// The key the TOTP secrets are sealed under: `<database>.key`, 32 random bytes as 64 hex
/// digits and a newline, mode 0600, made the first time a second factor is turned on.
///
/// Kept out of the database so that a copy of the database alone gives no second factor;
/// back it up apart from the database.
public final class KeyFile: SealingKeyStore {
  /// The file's path.
  public let location: String

  /// The key file of the SQLite database at `databasePath`.
  public init(databasePath: String) {
    location = databasePath + ".key"
  }

  /// The key file at `path` (ACCOUNTS_KEY_FILE; a PostgreSQL store's, on every host).
  public init(path: String) {
    location = path
  }

  public func existingKey() throws(AccountsError) -> SealingKey? {
    try checkFolders()
    guard let bytes = try PrivateFile.read(location, kind: .keyFile) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard text.hasSuffix("\n"),
      let key = Hex.decode(text.dropLast()), key.count == AESGCM.keyByteCount
    else { throw .clientFile(.damaged(.keyFile, path: location)) }
    return try sealingKey(key)
  }

  public func keyMakingIfNeeded() throws(AccountsError) -> SealingKey {
    // Checked before any missing folder is made for it.
    if let key = try existingKey() { return key }
    let bytes: [UInt8]
    do {
      bytes = try SecureRandom.bytes(AESGCM.keyByteCount)
    } catch {
      throw .crypto(error)
    }
    // A PostgreSQL store's key lives in a folder of its own (~/.config/accounts), made private.
    do {
      try FileSystem.createPrivateFolder(for: location)
    } catch {
      throw .clientFile(.unusable(.keyFile, path: location, reason: Messages.storage(error)))
    }
    // Linked into place only if absent: of two processes making it at once, both use the
    // first one's.
    if try PrivateFile.write(
      Array((Hex.encode(bytes) + "\n").utf8), to: location, kind: .keyFile,
      placing: .ifAbsent)
    {
      return try sealingKey(bytes)
    }
    guard let key = try existingKey() else {
      throw .clientFile(.unusable(.keyFile, path: location, reason: "it vanished"))
    }
    return key
  }
}

extension KeyFile {
  /// Refuses a key file that another user could replace, as the database is refused.
  ///
  /// As `FileSafety.checkFolders` says: its folder, or one above it, is another user's (root
  /// aside), or others may write it and it is not sticky. Links to folders are followed first;
  /// a folder not made yet is judged by the nearest one that exists.
  fileprivate func checkFolders() throws(AccountsError) {
    var folder = FileSystem.folder(of: location)
    while FileSystem.kind(of: folder) == nil && folder != "/" && folder != "." {
      folder = FileSystem.folder(of: folder)
    }
    guard let resolved = realpath(folder, nil) else { return }
    let real = String(cString: resolved)
    free(resolved)
    do {
      try FileSafety.checkFolders(of: real, database: location)
    } catch .unsafeFolder(_, let unsafe, let reason) {
      throw .clientFile(.unsafeFolder(.keyFile, path: location, folder: unsafe, reason: reason))
    } catch .cannotOpen(_, let reason) {
      throw .clientFile(.unusable(.keyFile, path: location, reason: reason))
    } catch {
      throw .clientFile(.unusable(.keyFile, path: location, reason: "\(error)"))
    }
  }
}

/// A key from its bytes, crypto errors wrapped.
private func sealingKey(_ bytes: [UInt8]) throws(AccountsError) -> SealingKey {
  do {
    return try SealingKey(bytes: bytes)
  } catch {
    throw .crypto(error)
  }
}

/// This client's session: `$XDG_STATE_HOME/accounts/session` (`~/.local/state/...`).
///
/// Mode 0600 in a folder of mode 0700. Three lines: `accounts-session 1`, `database <path>`,
/// `token <64 hex digits>`. The path is canonical (its folder's real path, links to folders
/// resolved, and the file's name), so that a session is found however the database is named;
/// a PostgreSQL store is named by its URI without the password, and a fourth line before the
/// token, `store <32 hex digits>`, names its identity (a reader that does not know the line
/// reads it as part of the URI, which then names no store: a login replaces the file).
public final class SessionFile: SessionKeeper {
  /// The file's path.
  public let location: String

  private static let header = "accounts-session 1\ndatabase "

  /// The session file at `path`.
  public init(path: String) {
    location = path
  }

  /// Where the session file is: `$XDG_STATE_HOME/accounts/session` when that is absolute,
  /// else under the home folder (`home`, or the user database's).
  public static func defaultPath(stateHome: String?, home: String?) -> String {
    if let stateHome, stateHome.hasPrefix("/") {
      return stateHome.appendingPath("accounts/session")
    }
    var base = home.flatMap { $0.hasPrefix("/") ? $0 : nil }
    if base == nil, let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir {
      base = String(cString: dir)
    }
    return (base ?? "/").appendingPath(".local/state/accounts/session")
  }

  public func load() throws(AccountsError) -> SavedSession? {
    guard FileSystem.info(FileSystem.folder(of: location)) != nil else { return nil }
    try checkFolder()
    guard let bytes = try PrivateFile.read(location, kind: .sessionFile) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard text.hasPrefix(Self.header), text.hasSuffix("\n"),
      let tokenLine = text.dropLast().ranges(of: "\ntoken ").last
    else { throw .clientFile(.damaged(.sessionFile, path: location)) }
    var database = String(
      text[text.index(text.startIndex, offsetBy: Self.header.count)..<tokenLine.lowerBound])
    var storeID: String?
    // A path may hold a line break; only a URI's store line is read as one.
    if let storeLine = database.ranges(of: "\nstore ").last,
      Self.isStoreID(String(database[storeLine.upperBound...])),
      StoreLocation.isPostgres(String(database[..<storeLine.lowerBound]))
    {
      storeID = String(database[storeLine.upperBound...])
      database = String(database[..<storeLine.lowerBound])
    }
    let tokenText = text[tokenLine.upperBound..<text.index(before: text.endIndex)]
    guard let token = Hex.decode(tokenText), token.count == 32 else {
      throw .clientFile(.damaged(.sessionFile, path: location))
    }
    // Earlier versions wrote the path as given, made absolute (`/srv/./db`): read canonical, it
    // still names its database. A path that is not absolute names none (it can only have been
    // written by hand): the file is kept, no database matches it, and a login replaces it.
    return SavedSession(database: recorded(database), storeID: storeID, token: token)
  }

  /// Whether `text` is a store's identity as the store makes it: 32 lowercase hex digits.
  private static func isStoreID(_ text: String) -> Bool {
    text.utf8.count == 32
      && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
  }

  public func recorded(_ database: String) -> String {
    guard database.hasPrefix("/"), !StoreLocation.isPostgres(database) else { return database }
    return FileSystem.canonical(database) ?? database
  }

  public func save(_ session: SavedSession) throws(AccountsError) {
    do {
      try FileSystem.createPrivateFolder(for: location)
    } catch {
      throw .clientFile(.unusable(.sessionFile, path: location, reason: Messages.storage(error)))
    }
    try checkFolder()
    let store = session.storeID.flatMap { Self.isStoreID($0) ? "\nstore " + $0 : nil } ?? ""
    let text =
      Self.header + session.database + store + "\ntoken " + Hex.encode(session.token) + "\n"
    try PrivateFile.write(
      Array(text.utf8), to: location, kind: .sessionFile, placing: .replacing)
  }

  public func remove() throws(AccountsError) {
    guard unlink(location) == 0 || errno == ENOENT else {
      throw .clientFile(
        .unusable(.sessionFile, path: location, reason: String(cString: strerror(errno))))
    }
  }

  /// Refuses a folder another user could replace the file in.
  private func checkFolder() throws(AccountsError) {
    let folder = FileSystem.folder(of: location)
    guard let real = FileSystem.canonical(folder) else {
      throw .clientFile(.unusable(.sessionFile, path: location, reason: "its folder is missing"))
    }
    do {
      try FileSafety.checkFolders(of: real, database: location)
    } catch {
      throw .clientFile(.folderNotPrivate(.sessionFile, path: location))
    }
    if let info = FileSystem.info(real), info.owner != geteuid() || info.mode & 0o022 != 0 {
      throw .clientFile(.folderNotPrivate(.sessionFile, path: location))
    }
  }
}
