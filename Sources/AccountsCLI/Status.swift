import AccountsCore
import ArgumentParser

extension AccountsCommand {
  /// `accounts status`: Public or Activated, and where the database is.
  struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Show whether this device is Public or Activated, and the database path.")

    @Flag(name: .customLong("json"), help: "Print one JSON object.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
      let context = try global.makeContext()
      let status = try StatusQuery.run(context.environment)
      let path = context.environment.databasePath
      if json {
        context.console.output(StatusQuery.json(status, path: path))
      } else {
        StatusQuery.lines(status, path: path).forEach(context.console.output)
      }
    }
  }
}
