import AccountsCore
import Testing

/// A console that plays a script of input lines and records everything said.
///
/// Reading past the end of the script is a test failure: the flow asked for input the test did
/// not expect.
public final class ScriptedConsole: Console {
  public let isInteractive: Bool
  private var script: [ConsoleLine]
  /// Prompts shown, in order; secret ones are marked with a leading "(secret) ".
  public private(set) var prompts: [String] = []
  /// Lines written to standard output.
  public private(set) var outputs: [String] = []
  /// Lines written to standard error.
  public private(set) var messages: [String] = []

  public init(interactive: Bool = false, _ lines: [String], endsWith ending: [ConsoleLine] = []) {
    isInteractive = interactive
    script = lines.map { .bytes(Array($0.utf8)) } + ending
  }

  public init(interactive: Bool = false, raw: [ConsoleLine]) {
    isInteractive = interactive
    script = raw
  }

  /// True when every scripted line was read.
  public var isExhausted: Bool { script.isEmpty }

  public func output(_ line: String) { outputs.append(line) }
  public func message(_ line: String) { messages.append(line) }

  public func readLine(prompt: String) -> ConsoleLine {
    prompts.append(prompt)
    return next(prompt)
  }

  public func readSecret(prompt: String) -> ConsoleLine {
    prompts.append("(secret) " + prompt)
    return next(prompt)
  }

  private func next(_ prompt: String) -> ConsoleLine {
    guard !script.isEmpty else {
      Issue.record("unexpected read at prompt \(prompt)")
      return .endOfInput
    }
    return script.removeFirst()
  }
}
