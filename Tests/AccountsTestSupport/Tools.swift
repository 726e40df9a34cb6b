import Foundation

/// Runs a system tool that serves as a test oracle (`oathtool`, `zbarimg`, `mkpasswd`,
/// `htpasswd`); returns its exit status and its standard output, trimmed.
public func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String)
{
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  try process.run()
  let output = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (
    process.terminationStatus,
    String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  )
}
