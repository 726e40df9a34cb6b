#ifndef ACCOUNTS_BENCH_CSQLITE_FLOOR_SHIM_H
#define ACCOUNTS_BENCH_CSQLITE_FLOOR_SHIM_H

// libsqlite3's header, linked, as Sources/CSQLite gives it to the program.
#include <sqlite3.h>

#endif
