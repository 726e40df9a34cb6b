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

    /// The plain forms scripts poll with (`status`, `--json`, `--database PATH` in any order
    /// after `status`, or one `--database PATH` before it, as the usage line writes it),
    /// recognized without building the whole command tree, which costs more than the query.
    ///
    /// Anything else, help, mistakes and a repeated option included, goes through the argument
    /// parser.
    static func fastPath(_ arguments: [String]) -> (json: Bool, database: String?)? {
      var rest = arguments[...]
      var json = false
      var database: String?
      /// Takes `--database VALUE` or `--database=VALUE` at the front of `rest`, once; false
      /// when `rest` does not start with one the parser would read the same way.
      func takeDatabase() -> Bool {
        guard database == nil, let argument = rest.first else { return false }
        if argument == "--database" {
          guard rest.count >= 2, case let value = rest[rest.startIndex + 1], !value.isEmpty,
            !value.hasPrefix("-")
          else { return false }
          database = value
          rest = rest.dropFirst(2)
          return true
        }
        guard argument.hasPrefix("--database=") else { return false }
        let value = String(argument.dropFirst("--database=".count))
        guard !value.isEmpty else { return false }
        database = value
        rest = rest.dropFirst()
        return true
      }
      if rest.first != "status" && !takeDatabase() { return nil }
      guard rest.popFirst() == "status" else { return nil }
      while let argument = rest.first {
        if argument == "--json" && !json {
          json = true
          rest = rest.dropFirst()
        } else if !takeDatabase() {
          return nil
        }
      }
      return (json, database)
    }
  }
}
