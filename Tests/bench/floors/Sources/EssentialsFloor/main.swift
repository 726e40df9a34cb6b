// The FoundationEssentials floor: the Glibc floor (Sources/GlibcFloor) with FoundationEssentials
// linked in and used once (the arguments read through `ProcessInfo`), as every module of
// `accounts` imports it: what `accounts status` is measured against. Usage: EssentialsFloor DB
import CSQLiteFloor
import FoundationEssentials
import Glibc

let arguments = ProcessInfo.processInfo.arguments

/// Says why on standard error and exits.
func fail(_ message: String, code: Int32) -> Never {
  let line = message + "\n"
  _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
  exit(code)
}

guard arguments.count == 2 else { fail("usage: EssentialsFloor DB", code: 2) }
var db: OpaquePointer?
var statement: OpaquePointer?
guard
  sqlite3_open_v2(arguments[1], &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK,
  sqlite3_prepare_v2(db, "SELECT state FROM activation", -1, &statement, nil) == SQLITE_OK,
  sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0)
else {
  fail("EssentialsFloor: \(String(cString: sqlite3_errmsg(db)))", code: 1)
}
print(String(cString: text))
sqlite3_finalize(statement)
sqlite3_close(db)
