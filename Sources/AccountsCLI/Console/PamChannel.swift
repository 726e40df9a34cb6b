import AccountsCore
import FoundationEssentials
import Glibc

/// `pam_accounts.so`'s line protocol, the helper's side: requests on standard output, replies
/// on standard input (both ends of the module's socket), one line each, at most
/// `PamChannel.lineLimit` bytes.
///
/// Requests: `AUTHTOK`, `OLDAUTHTOK`, `SECRET` and `TEXT` followed by a prompt, answered
/// `OK <answer>`, `STACKED <answer>` (a token an earlier module had) or `FAIL`; `INFO`,
/// `ERROR` and `LOG` followed by a line, not answered; `RESULT <verdict>` last. docs/pam.md's
/// "The line protocol" is the reference.
///
/// The time limit counts the helper's own work: the alarm is stopped while the person answers
/// and started again with what was left.
final class PamChannel: PamConversation {
  /// The longest line either side writes, in bytes (end of line included).
  static let lineLimit = 4096

  private let input: Int32
  private let output: Int32
  /// Bytes read past the last reply's end (none in a well-behaved exchange).
  private var pending: [UInt8] = []

  init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
    self.input = input
    self.output = output
  }

  deinit { wipe(&pending) }

  func password(prompt: String) -> PamAnswer { ask("AUTHTOK", prompt) }
  func oldPassword(prompt: String) -> PamAnswer { ask("OLDAUTHTOK", prompt) }
  func secret(prompt: String) -> PamAnswer { ask("SECRET", prompt) }
  func info(_ text: String) { send("INFO", text) }
  func error(_ text: String) { send("ERROR", text) }
  func log(_ text: String) { send("LOG", text) }

  /// The last line: the verdict.
  func finish(_ verdict: PamVerdict) { send("RESULT", verdict.rawValue) }

  /// Writes one request; its text escaped as every printed line is (no line end, no escape
  /// sequence), and cut to fit the line limit.
  private func send(_ kind: String, _ text: String) {
    var line = Array("\(kind) \(Escaping.visible(text))".utf8)
    if line.count > Self.lineLimit - 1 { line = Array(line.prefix(Self.lineLimit - 1)) }
    line.append(UInt8(ascii: "\n"))
    line.withUnsafeBytes { StandardStreams.write(bytes: $0, to: output) }
  }

  /// Asks one question and reads its reply; the alarm waits meanwhile.
  private func ask(_ kind: String, _ prompt: String) -> PamAnswer {
    let left = alarm(0)
    defer { if left > 0 { alarm(left) } }
    send(kind, prompt)
    guard var reply = readLine() else { return .none }
    defer { wipe(&reply) }
    if reply == Array("FAIL".utf8) { return .none }
    for (word, make) in [("OK ", PamAnswer.typed), ("STACKED ", PamAnswer.stacked)] {
      let prefix = Array(word.utf8)
      if reply.starts(with: prefix) { return make(Array(reply.dropFirst(prefix.count))) }
    }
    return .none
  }

  /// One line from the module, without its end; nil at the end of input, on an error or for a
  /// line over the limit.
  private func readLine() -> [UInt8]? {
    var chunk = [UInt8](repeating: 0, count: Self.lineLimit)
    defer { wipe(&chunk) }
    while true {
      if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Array(pending[..<end])
        let rest = Array(pending[(end + 1)...])
        wipe(&pending)
        pending = rest
        return line
      }
      if pending.count >= Self.lineLimit { return nil }
      let got = chunk.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
      if got < 0 && errno == EINTR { continue }
      if got <= 0 { return nil }
      pending.append(contentsOf: chunk[..<got])
    }
  }

  /// Zeroes what held a secret before it is released.
  private func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
  }
}
