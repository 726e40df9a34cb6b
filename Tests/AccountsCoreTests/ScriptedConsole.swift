import AccountsCore
import Testing

/// A console that plays a script of input lines and records everything said.
///
/// Reading past the end of the script is a test failure: the flow asked for input the test did
/// not expect.
final class ScriptedConsole: Console {
  let isInteractive: Bool
  private var script: [ConsoleLine]
  /// Prompts shown, in order; secret ones are marked with a leading "(secret) ".
  private(set) var prompts: [String] = []
  /// Lines written to standard output.
  private(set) var outputs: [String] = []
  /// Lines written to standard error.
  private(set) var messages: [String] = []

  init(interactive: Bool = false, _ lines: [String], endsWith ending: [ConsoleLine] = []) {
    isInteractive = interactive
    script = lines.map { .bytes(Array($0.utf8)) } + ending
  }

  init(interactive: Bool = false, raw: [ConsoleLine]) {
    isInteractive = interactive
    script = raw
  }

  /// True when every scripted line was read.
  var isExhausted: Bool { script.isEmpty }

  func output(_ line: String) { outputs.append(line) }
  func message(_ line: String) { messages.append(line) }

  func readLine(prompt: String) -> ConsoleLine {
    prompts.append(prompt)
    return next(prompt)
  }

  func readSecret(prompt: String) -> ConsoleLine {
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
