#ifndef ACCOUNTS_CSQLITE_SHIM_H
#define ACCOUNTS_CSQLITE_SHIM_H

// libsqlite3's header (libsqlite3-dev, in /usr/include), linked: the SQLite store talks to it
// through AccountsStore's small layer (Sources/AccountsStore/SQLite). What the header says in a
// form Swift does not import (a variadic function, macros built from other macros) is given
// below as plain functions and constants.
#include <sqlite3.h>

/// Refuses double-quoted string literals in this connection's SQL: a misspelt column name is an
/// error, not a string (sqlite3_db_config is variadic, which Swift cannot call).
static inline void accounts_sqlite3_refuse_double_quoted_strings(sqlite3 *db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (void *)0);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (void *)0);
}

/// SQLITE_TRANSIENT: SQLite copies a bound value before the call returns.
static inline sqlite3_destructor_type accounts_sqlite3_transient(void) {
  return SQLITE_TRANSIENT;
}

/// The extended result codes the store tells apart.
static const int accounts_SQLITE_CONSTRAINT_UNIQUE = SQLITE_CONSTRAINT_UNIQUE;
static const int accounts_SQLITE_CONSTRAINT_FOREIGNKEY = SQLITE_CONSTRAINT_FOREIGNKEY;
static const int accounts_SQLITE_CANTOPEN_SYMLINK = SQLITE_CANTOPEN_SYMLINK;
static const int accounts_SQLITE_OK_SYMLINK = SQLITE_OK_SYMLINK;

#endif
