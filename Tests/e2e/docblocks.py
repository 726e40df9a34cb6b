"""Reading a page's fenced blocks the way the tests that run them do (test_readme.py for README's
login page, fleetpage.py for docs/fleet.md): the blocks in order, and a block cut into the
commands a shell reads one at a time.

- `fenced(lines) -> list[(language, line before, body lines)]`: each ```-fenced block.
- `commands(lines) -> list[str]`: a line with the lines that continue it (a trailing backslash)
  or its here-document (up to the word that ends it); a comment line left out."""

from __future__ import annotations

import re


def fenced(lines: list) -> list:
    """(fence language, the line before the fence, body lines) of each fenced block, in order."""
    found, index = [], 0
    while index < len(lines):
        if lines[index].startswith("```"):
            close = lines.index("```", index + 1)
            before = lines[index - 1] if index > 0 else ""
            found.append((lines[index][3:], before, lines[index + 1:close]))
            index = close
        index += 1
    return found


def commands(lines: list) -> list:
    """A block cut into the commands a shell reads one at a time."""
    found, index = [], 0
    while index < len(lines):
        command = [lines[index]]
        heredoc = re.search(r"<<'(\w+)'", lines[index])
        while heredoc and command[-1] != heredoc.group(1):
            index += 1
            command.append(lines[index])
        while command[-1].endswith("\\"):
            index += 1
            command.append(lines[index])
        if not command[0].startswith("#"):
            found.append("\n".join(command))
        index += 1
    return found
