// libFuzzer target for `pam-helper`'s own reader of its command line (PamHelperArguments,
// compiled alone with this file): the input, split at NUL bytes, is the arguments after
// `pam-helper`. Besides never trapping, what it accepts it reads back the same from the module's
// form of it (`--name value`) and from the attached form (`--name=value`), and nothing it accepts
// is an option where the stage should be or an option given twice.

/// The arguments the module would write for `read`, with values after the option's name
/// (`--name value`) or attached to it (`--name=value`, always for a value that begins with "-";
/// never for an empty one).
func rendered(_ read: PamHelperArguments, attached: Bool) -> [String] {
  var arguments = [read.stage]
  let values: [(String, String?)] = [
    (PamHelperArguments.databaseOption, read.database),
    (PamHelperArguments.keyFileOption, read.keyFile),
    (PamHelperArguments.loginCacheOption, read.loginCache),
    (PamHelperArguments.timeLimitOption, read.timeLimit.map { String($0) }),
    (PamHelperArguments.allowGroupsOption, read.allowGroups),
    (PamHelperArguments.sessionLoginOption, read.sessionLogin),
  ]
  for case (let name, let value?) in values {
    // An empty value is no value after "=", and one that begins with a combining mark would
    // join the "=" into one Character.
    if (attached || value.hasPrefix("-")) && !value.isEmpty && ("=" + value).first == "=" {
      arguments.append("--\(name)=\(value)")
    } else {
      arguments += ["--\(name)", value]
    }
  }
  if read.expiredOnly {
    arguments.append("--\(PamHelperArguments.expiredOnlyOption)")
  }
  if read.authenticated {
    arguments.append("--\(PamHelperArguments.authenticatedOption)")
  }
  return arguments
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
    String(decoding: $0, as: UTF8.self)
  }
  guard let read = PamHelperArguments(arguments) else { return 0 }
  precondition(!read.stage.hasPrefix("-"), "an option read as the stage: \(arguments)")
  let names = arguments.filter { $0.hasPrefix("--") }.map { $0.prefix { $0 != "=" } }
  precondition(Set(names).count == names.count, "an option read twice: \(arguments)")
  for attached in [false, true] {
    let again = PamHelperArguments(rendered(read, attached: attached))
    precondition(
      again == read, "\(arguments) read as \(read), its rendering as \(String(describing: again))")
  }
  return 0
}
