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

/// A fresh, empty PostgreSQL database on the test cluster: its URI, and what drops it afterwards.
///
/// The cluster is `Scripts/postgres`'s, which `Scripts/test` starts and names in
/// ACCOUNTS_TEST_POSTGRES and the PG* variables. Fails, never skips, when no cluster is named.
public func temporaryPostgresDatabase() throws -> (uri: String, drop: () -> Void) {
  struct NoCluster: Error, CustomStringConvertible {
    var description: String {
      "ACCOUNTS_TEST_POSTGRES is not set: run the tests through Scripts/test, which starts a "
        + "PostgreSQL cluster (or start one with Scripts/postgres and export its env)"
    }
  }
  struct Failed: Error { var output: String }
  guard let base = ProcessInfo.processInfo.environment["ACCOUNTS_TEST_POSTGRES"], !base.isEmpty
  else { throw NoCluster() }
  let name = "contract_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
  let psql = "/usr/bin/psql"
  let created = try runTool(psql, ["-qAt", "-d", base, "-c", "CREATE DATABASE \(name)"])
  guard created.status == 0 else { throw Failed(output: created.output) }
  return (
    "postgresql:///\(name)",
    {
      _ = try? runTool(psql, ["-qAt", "-d", base, "-c", "DROP DATABASE \(name) WITH (FORCE)"])
    }
  )
}
