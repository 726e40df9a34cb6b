/// One line read from the person or the script.
public enum ConsoleLine: Equatable, Sendable {
  /// A line, without its end-of-line, as raw bytes (it may not be UTF-8).
  case bytes([UInt8])
  /// A line longer than the reader's bound; it was discarded, not kept.
  case tooLong
  /// End of input: nothing more will come.
  case endOfInput
}

/// Where the core's flows talk to a person; the CLI provides the terminal, tests a script.
///
/// The core never touches a terminal or a file descriptor itself.
public protocol Console: AnyObject {
  /// True when input comes from a terminal a person types at (prompts are shown, forms re-ask).
  var isInteractive: Bool { get }
  /// True when standard output is a terminal a person looks at (a QR code can be scanned).
  var outputIsTerminal: Bool { get }
  /// Writes a result line on standard output.
  func output(_ line: String)
  /// Writes a line the program drew itself on standard output as it is, escape sequences
  /// included (the QR code's colours); never a line with text from input or the database.
  func outputDrawing(_ line: String)
  /// Writes a message line (progress, refusals, errors) on standard error.
  func message(_ line: String)
  /// Shows how far a long task is, on one line that the next replaces (at a terminal only);
  /// nil clears it.
  func progress(_ line: String?)
  /// Shows `prompt` (when interactive) and reads one line.
  func readLine(prompt: String) -> ConsoleLine
  /// Shows `prompt` (when interactive) and reads one line without echoing it.
  func readSecret(prompt: String) -> ConsoleLine
}

extension Console {
  /// Consoles that draw nothing special write the line as any other.
  public func outputDrawing(_ line: String) { output(line) }

  /// Consoles that are no terminal say so.
  public var outputIsTerminal: Bool { false }

  /// Consoles that are no terminal show no progress.
  public func progress(_ line: String?) {}
}
