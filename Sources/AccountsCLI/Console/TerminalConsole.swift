import AccountsCore
import CTerminal
import FoundationEssentials
import Glibc

/// The live console: standard input, output and error, with echo off for secrets at a terminal.
final class TerminalConsole: Console {
  /// The longest line accepted, in bytes: more than any field allows (1,024 characters of
  /// up to 4 bytes each); longer lines are discarded as they are read, never kept whole.
  static let lineLimit = 8192

  let isInteractive = isatty(STDIN_FILENO) == 1

  let outputIsTerminal = isatty(STDOUT_FILENO) == 1
  private var reader = LineReader(fd: STDIN_FILENO, limit: TerminalConsole.lineLimit)

  func output(_ line: String) { StandardStreams.output(line) }

  func outputDrawing(_ line: String) { StandardStreams.write(line + "\n", to: STDOUT_FILENO) }

  private let progressShown = isatty(STDERR_FILENO) == 1

  func progress(_ line: String?) {
    guard progressShown else { return }
    // Back to the line's start and clear it: the next progress line replaces this one.
    StandardStreams.write("\r\u{1B}[K" + (line.map(Escaping.visible) ?? ""), to: STDERR_FILENO)
  }

  func message(_ line: String) { StandardStreams.error(line) }

  func readLine(prompt: String) -> ConsoleLine {
    guard isInteractive else { return reader.next() }
    StandardStreams.prompt(prompt)
    let line = reader.next()
    // Ctrl-D leaves the cursor after the prompt: what is said next starts a line of its own.
    if line == .endOfInput { StandardStreams.write("\n", to: STDERR_FILENO) }
    return line
  }

  func readSecret(prompt: String) -> ConsoleLine {
    guard isInteractive else { return reader.next() }
    let shown = Escaping.visible(prompt)
    let quiet = accounts_terminal_echo_off(STDIN_FILENO, shown) == 0
    StandardStreams.prompt(shown)
    let line = reader.next()
    if quiet { accounts_terminal_restore() }
    StandardStreams.write("\n", to: STDERR_FILENO)
    return line
  }
}
