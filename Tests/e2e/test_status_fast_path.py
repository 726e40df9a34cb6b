"""`accounts status` answers its plain forms (`--database` before or after `status`) without
the argument parser (a start-up optimization); these tests pin that both paths say exactly the
same."""

import pytest


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_fast_and_parsed_paths_agree(activated, json_flag):
    """`status [--json] --database P` and `--database P status [--json]` (fast) equal
    `--database OTHER status [--json] --database P` (parsed: a repeated option is the parser's,
    and its last value wins)."""
    db = str(activated.db)
    env = activated.env(database=False)
    fast = activated.run("status", *json_flag, "--database", db, env=env)
    fast_equals = activated.run("status", *json_flag, f"--database={db}", env=env)
    fast_first = activated.run("--database", db, "status", *json_flag, env=env)
    parsed = activated.run("--database", db + ".other", "status", *json_flag, "--database", db,
                           env=env)
    results = [fast, fast_equals, fast_first, parsed]
    assert [r.code for r in results] == [0] * 4
    assert [r.stdout for r in results] == [fast.stdout] * 4
    assert [r.stderr for r in results] == [""] * 4
    if json_flag:
        assert '"state":"Activated"' in fast.stdout
    else:
        assert fast.stdout.splitlines() == ["State: Activated", f"Database: {db}"]


@pytest.mark.parametrize("args,code", [
    (["status", "--bogus"], 2),
    (["status", "--database"], 2),
    (["status", "--help"], 0),
], ids=["unknown-flag", "missing-value", "help"])
@pytest.mark.empty_database
def test_anything_else_goes_through_the_parser(device, args, code):
    """Unusual forms fall back to the argument parser: its usage errors and help."""
    result = device.run(*args)
    assert result.code == code
    if code == 0:
        assert "USAGE: accounts status" in result.stdout
    else:
        assert result.stderr.startswith("Error:")
        assert "Usage: accounts" in result.stderr


@pytest.mark.empty_database
def test_repeated_flag_is_parsed_like_the_parser_does(device):
    """A repeated --json is left to the parser, which accepts it: same answer as one --json."""
    once = device.run("status", "--json")
    twice = device.run("status", "--json", "--json")
    assert (once.code, once.stdout) == (twice.code, twice.stdout) == (0, once.stdout)


@pytest.mark.empty_database
def test_version_fast_path_answers_as_the_parser(device):
    """`accounts --version` skips the argument parser; with another option it goes through the
    parser: the same output and exit code either way."""
    fast = device.run("--version")
    parsed = device.run("--database", str(device.db), "--version")
    assert (fast.code, fast.stdout, fast.stderr) == (parsed.code, parsed.stdout, parsed.stderr)
    assert fast.stdout == "1.2.0\n"
