import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts reset`: back to Public (administrator).
  struct Reset: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "reset",
      abstract: "Make this device Public again and delete its user.",
      discussion: """
        Asks you to type "reset" to confirm. Without a terminal it refuses unless --yes is given. \
        Failed-login counts are cleared; the audit log is kept.
        """)

    @Flag(name: [.customLong("yes"), .customShort("y")], help: "Do not ask for confirmation.")
    var yes = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
      try ResetFlow.run(global.makeContext().environment, confirmed: yes)
    }
  }
}
