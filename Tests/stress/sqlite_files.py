"""SQLite files an upgrade test starts from and compares with: a private copy of a fixture, and
a table's rows against the same table of a reference file attached to the connection."""

from __future__ import annotations

import os
import pathlib
import shutil
import sqlite3


def private_copy(source: pathlib.Path, folder: pathlib.Path) -> str:
    """A copy of `source`, mode 0600 in a new folder of mode 0700."""
    folder.mkdir(mode=0o700)
    target = folder / "accounts.sqlite3"
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)
    return str(target)


def same_rows(con: sqlite3.Connection, table: str, columns: str, where: str = "",
              args: tuple = ()) -> bool:
    """The rows of `table` (`where` them) equal those of the reference copy (attached as
    `reference`), compared in SQLite: same count, none missing."""
    mine = f"SELECT {columns} FROM main.{table} {where}"
    theirs = f"SELECT {columns} FROM reference.{table} {where}"
    counts = [con.execute(f"SELECT count(*) FROM ({sql})", args).fetchone()[0]
              for sql in (mine, theirs)]
    missing = con.execute(f"SELECT count(*) FROM ({theirs} EXCEPT {mine})",
                          args + args).fetchone()[0]
    return counts[0] == counts[1] and missing == 0
