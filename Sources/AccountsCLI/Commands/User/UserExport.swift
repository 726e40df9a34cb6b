import AccountsCore
import ArgumentParser

extension ExportFormat: ExpressibleByArgument {}

extension AccountsCommand {
  /// `accounts user export`.
  struct UserExport: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "export",
      abstract: "Export every account with its password hash, for user import (or Django).",
      discussion: """
        json is Django's dumpdata form (manage.py loaddata reads it); csv has the columns \
        username, full_name, email, password_hash, disabled, must_change_password, created_at, \
        last_login. The hashes are secrets: --output writes a new file of mode 0600 (an \
        existing one is never overwritten). A csv cell that a spreadsheet would run as a \
        formula (it starts with =, +, -, @, a tab or a carriage return, after any ' characters, \
        such as a full name =HYPERLINK(...)) is written quoted with a ' before it, as OWASP \
        advises: spreadsheets show it as text. user import takes that ' off again, so an \
        export imports back exactly.
        """)

    @Option(name: .customLong("format"), help: "json (default) or csv.")
    var format: ExportFormat = .json

    @Option(
      name: .customLong("output"),
      help: ArgumentHelp("A new file to write (default: standard output).", valueName: "file"))
    var output: String?

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let sink = try ExportSink(path: output)
      do {
        try ExportFlow.run(
          context.environment, format: format,
          finish: { () throws(AccountsError) in try sink.finish() },
          write: { sink.write($0) })
      } catch {
        sink.discard()
        throw error
      }
    }
  }
}
