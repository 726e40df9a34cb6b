import AccountsCore
import ArgumentParser

extension ImportFormat: ExpressibleByArgument {}

extension AccountsCommand {
  /// `accounts user import FILE`.
  struct UserImport: UserRecordChangingCommand {
    static let configuration = CommandConfiguration(
      commandName: "import",
      abstract: "Import accounts from Django, /etc/shadow, htpasswd or CSV, their hashes kept.",
      discussion: """
        All or nothing, in one transaction: every name, full name, e-mail and hash is checked \
        first, and any problem (each said with its line or Django entry) imports nothing: \
        exit 2 when the file has a problem of its own, exit 1 when its only problems are names \
        the store already has. Hashes kept: pbkdf2_sha256 (Django), yescrypt, SHA-512/256-crypt and bcrypt \
        (replaced by PBKDF2 at the first login), each in its scheme's form and within a cost \
        ceiling that keeps every login to seconds: bcrypt cost 17 (htpasswd -B's highest), \
        9,999,999 SHA-crypt rounds, yescrypt 1 GiB with p=1 and t=0 (mkpasswd -R 11); a hash \
        over it is refused. MD5-crypt, apr1, {SHA}, DES crypt and plain text are refused by \
        name. A NUL byte in a line is refused; Django's is_active must be a JSON boolean or 1 \
        or 0. The file is read as it comes, in memory bounded by one csv record or Django entry \
        (at most 1 MiB each). shadow and htpasswd files need --email-domain. FILE - reads \
        standard input. In csv, a cell that starts with ' followed by ' characters and then =, \
        +, -, @, a tab or a carriage return loses its first ' (how user export writes a cell a \
        spreadsheet would run as a formula); any other ' is kept.
        """)

    @Argument(help: "The file to import (- for standard input).")
    var file: String

    @Option(
      name: .customLong("format"), help: "django, shadow, htpasswd or csv (default: guessed).")
    var format: ImportFormat?

    @Option(
      name: .customLong("email-domain"),
      help: "For shadow and htpasswd: e-mail addresses are NAME@DOMAIN.")
    var emailDomain: String?

    @Flag(name: .customLong("dry-run"), help: "Check everything; write nothing.")
    var dryRun = false

    @OptionGroup var global: GlobalOptions

    func run(_ context: CommandContext) throws {
      let input = try FileImportInput(path: file)
      try ImportFlow.run(
        context.environment, input: input,
        options: ImportOptions(
          format: format, emailDomain: emailDomain, dryRun: dryRun, name: file))
    }
  }
}
