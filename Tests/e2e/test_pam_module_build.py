"""Scripts/build-pam and what it makes: a module that exports the six pam_sm_* functions and
nothing else, needs libpam and libc only, runs the helper path it was given (absolute, never
searched for); and the module's man page renders without a warning."""

import os
import pathlib
import subprocess

import pytest

from pammodule import ROOT, build_module

# The module is C: no store is involved, so these run once.
# On one worker under Scripts/test's `--dist loadgroup`:
# each build of the module is made once, not once in each worker.
pytestmark = [pytest.mark.front_end, pytest.mark.xdist_group("pam_module_build")]

BUILD = str(ROOT / "Scripts" / "build-pam")
ENTRY_POINTS = {"pam_sm_authenticate", "pam_sm_setcred", "pam_sm_acct_mgmt",
                "pam_sm_chauthtok", "pam_sm_open_session", "pam_sm_close_session"}


@pytest.fixture(scope="module", params=[False, True], ids=["release", "debug"])
def module(request) -> pathlib.Path:
    return build_module("/usr/local/bin/accounts", debug=request.param)


def test_exports_only_the_entry_points(module):
    """nm -D --defined-only lists the six pam_sm_* functions and no other symbol."""
    result = subprocess.run(["nm", "-D", "--defined-only", str(module)], capture_output=True,
                            text=True, check=True)
    assert {line.split()[-1] for line in result.stdout.splitlines()} == ENTRY_POINTS


def test_needs_libpam_and_libc_only(module):
    """readelf: the only NEEDED libraries are libpam.so.0 and libc.so.6 (no Swift runtime)."""
    result = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True,
                            check=True)
    needed = [line.split("[")[1].rstrip("]") for line in result.stdout.splitlines()
              if "(NEEDED)" in line]
    assert sorted(needed) == ["libc.so.6", "libpam.so.0"]


def test_helper_path_is_fixed(module):
    """The helper's absolute path is in the module, as one string."""
    assert b"\0/usr/local/bin/accounts\0" in module.read_bytes()


@pytest.mark.parametrize("arguments, message", [
    ([], "--helper is required"),
    (["--helper", "accounts"], "--helper must be an absolute path"),
    (["--helper", "bin/accounts"], "--helper must be an absolute path"),
    (["--helper", '/usr/local/bin/acc"ounts'], "must not contain quotes"),
    (["--helper", "/usr/local/bin/accounts", "--optimise"], "unknown argument --optimise"),
])
def test_refusals(tmp_path, arguments, message):
    """build-pam refuses a missing, relative or quoted helper path and unknown arguments with
    exit 2 and one line, building nothing."""
    output = tmp_path / "pam_accounts.so"
    result = subprocess.run([BUILD, *arguments, "--output", str(output)], capture_output=True,
                            text=True)
    assert result.returncode == 2 and message in result.stderr, result
    assert len(result.stderr.splitlines()) == 1 and not output.exists()


def test_man_page_renders_without_warnings():
    """`man --warnings -l pam_accounts.8` prints no warning, and the page names the options,
    the four groups and its companions."""
    page = ROOT / "Sources" / "pam_accounts" / "pam_accounts.8"
    env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat")
    result = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True,
                            text=True, env=env)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    for word in ["database=", "key_file=", "use_first_pass", "try_first_pass", "allow_groups=",
                 "timeout=", "auth", "account", "password", "session", "PAM_SERVICE_ERR",
                 "pam(7)", "pam.conf(5)", "accounts(1)"]:
        assert word in result.stdout, word
