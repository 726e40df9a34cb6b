import AccountsCore
import Glibc

/// The blocklist file that `ACCOUNTS_PASSWORD_BLOCKLIST` names, opened for the core to read.
struct BlocklistFile: BlocklistSource {
  /// The file's path.
  let path: String

  /// Opens the file and checks that it is a regular file, reading nothing.
  func open() throws(BlocklistSourceFailure) -> any BlocklistReader {
    // O_NONBLOCK: opening a FIFO with no writer must not wait for one (it is refused below).
    // O_NOCTTY: a terminal device must not become the controlling terminal.
    let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard descriptor >= 0 else { throw .cannotOpen }
    let file = OpenFile(descriptor: descriptor)
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw .cannotOpen }
    guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
    return file
  }

  /// The opened file, closed when released.
  private final class OpenFile: BlocklistReader {
    let descriptor: Int32

    init(descriptor: Int32) {
      self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
      while true {
        let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
        if count >= 0 { return count }
        if errno != EINTR { return nil }
      }
    }
  }
}

extension PasswordBlocklist {
  /// The blocklist in the file at `path`.
  init(file path: String) {
    self.init(source: BlocklistFile(path: path))
  }
}
