"""The plain `swift build -c release` is the fast-starting program (the Swift
runtime, FoundationEssentials and libstdc++ linked in statically; the settings live in
Package.swift), and it is still a position-independent executable (address-space randomisation).
Scripts/test builds it and names it in ACCOUNTS_RELEASE_BIN."""

import os
import subprocess

import pytest

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

RELEASE = os.environ.get("ACCOUNTS_RELEASE_BIN", "")


def test_release_binary_is_named():
    assert RELEASE and os.access(RELEASE, os.X_OK), \
        "ACCOUNTS_RELEASE_BIN must name the binary `swift build -c release` made"


def test_swift_runtime_is_linked_in():
    libraries = subprocess.run(["ldd", RELEASE], capture_output=True, text=True,
                               check=True).stdout
    assert "libswiftCore" not in libraries and "libFoundation" not in libraries, libraries
    # The runtime's C++ library too (Linker/libstdc++.so): nothing to open and bind at start.
    assert "libstdc++" not in libraries, libraries
    # The system's libraries stay shared: libsqlite3 linked, libcrypto opened at first use
    # (test_startup.py).
    assert "libsqlite3" in libraries, libraries


def test_still_position_independent():
    header = subprocess.run(["readelf", "-h", RELEASE], capture_output=True, text=True,
                            check=True).stdout
    assert "DYN (Position-Independent Executable file)" in header or "DYN (Shared" in header


def test_it_runs(tmp_path):
    result = subprocess.run([RELEASE, "status", "--database", str(tmp_path / "db")],
                            capture_output=True, text=True)
    assert (result.returncode, result.stdout.splitlines()[0]) == (0, "State: Public")


def test_exports_no_symbols_of_its_own():
    """--no-export-dynamic: the dynamic symbol table holds what the program imports, not its own
    Swift symbols (thousands, which the runtime's start-up dladdr would scan one by one)."""
    table = subprocess.run(["readelf", "--dyn-syms", "-W", RELEASE], capture_output=True,
                           text=True, check=True).stdout
    defined = [fields[7] for fields in (line.split() for line in table.splitlines())
               if len(fields) >= 8 and fields[0].endswith(":") and fields[6] != "UND"]
    assert not [name for name in defined if name.startswith("$s")], defined[:20]


def test_relative_relocations_are_packed():
    """The binary's relative relocations are stored packed (DT_RELR), not as 2 MB of
    RELA records read at every start."""
    dynamic = subprocess.run(["readelf", "-d", RELEASE], capture_output=True, text=True,
                             check=True).stdout
    assert "(RELR)" in dynamic, dynamic
