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
      try Self.show(json: json, database: global.database)
    }

    /// Prints the status; shared by `run()` and the start-up fast path.
    static func show(json: Bool, database: String?) throws {
      let context = try CommandContext.live(database: database)
      let status = try StatusQuery.run(context.environment)
      let path = context.environment.storeLocation
      if json {
        context.console.output(StatusPresentation.json(status, path: path))
      } else {
        StatusPresentation.lines(status, path: path).forEach(context.console.output)
      }
    }

    /// The plain forms scripts poll with (`status`, `--json`, `--database PATH` in any order),
    /// recognized without building the whole command tree, which costs more than the query.
    ///
    /// Anything else, help and mistakes included, goes through the argument parser.
    static func fastPath(_ arguments: [String]) -> (json: Bool, database: String?)? {
      guard arguments.first == "status" else { return nil }
      var json = false
      var database: String?
      var rest = arguments.dropFirst()
      while let argument = rest.popFirst() {
        if argument == "--json" && !json {
          json = true
        } else if argument == "--database" && database == nil, let value = rest.popFirst(),
          !value.isEmpty, !value.hasPrefix("-")
        {
          database = value
        } else if argument.hasPrefix("--database=") && database == nil {
          database = String(argument.dropFirst("--database=".count))
          if database?.isEmpty ?? true { return nil }
        } else {
          return nil
        }
      }
      return (json, database)
    }
  }
}
