import AccountsCore
import ArgumentParser

/// `--home` and `--shell`: an account as a Linux user (its user record).
struct LinuxUserOptions: ParsableArguments {
  @Option(
    name: .customLong("home"),
    help: ArgumentHelp("Its home folder as a Linux user (default /home/NAME).", valueName: "path"))
  var home: String?

  @Option(
    name: .customLong("shell"),
    help: ArgumentHelp("Its login shell as a Linux user (default /bin/bash).", valueName: "path"))
  var shell: String?

  func validate() throws {
    for (option, path) in [("--home", home), ("--shell", shell)] {
      if let path, !(LinuxPathRules.isValid(path) && LinuxPathRules.isNormalized(path)) {
        throw ValidationError(Messages.invalidLinuxPath(option, path))
      }
    }
  }
}
