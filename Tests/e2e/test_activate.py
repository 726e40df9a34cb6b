"""`accounts activate` from a pipe: the form, its rules in order, and nothing stored on failure."""

import pytest

from conftest import EMAIL, FULL_NAME, INPUT_ENDED, PASSWORD, USERNAME, form

# The front end: the same code on either store, so these run once, in the sqlite run.
pytestmark = pytest.mark.front_end

FILL = "Please fill all fields!"
MATCH = "Passwords must match!"
USERNAME_RULE = "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
EMAIL_RULE = "E-mail address must look like name@example.org, with no spaces!"
FULL_NAME_RULE = "Full name must be at most 256 characters!"
SHORT = "Password must be at least 15 characters!"
LONG = "Password must be at most 1024 characters!"
PERSONAL = "Password must not be your user name, full name or e-mail address!"
GUESSABLE = "Password is too easy to guess: "
REPEATED = GUESSABLE + "it is a repeat of a shorter pattern!"
SEQUENCE = GUESSABLE + "it is a run like 12345 or abcde!"
COMMON = GUESSABLE + "it is a common password or common words!"
KEYBOARD = GUESSABLE + "it is a row of keys on the keyboard!"
DATE = GUESSABLE + "it is a date or years!"
FROM_NAME = GUESSABLE + "it is mostly words from your name or e-mail!"
BLOCKED = "Password is on the administrator's list of forbidden passwords!"


def test_all_fields_from_stdin(device):
    """Five lines on a pipe activate the device: result on stdout, no prompts on stderr."""
    result = device.run("activate", input=form())
    assert (result.code, result.stdout, result.stderr) == (0, "Device activated for alice.\n", "")
    assert device.status()["state"] == "Activated"
    assert device.login().stdout == "Welcome back Alice Liddell!\n"


def test_fields_are_trimmed(device):
    """Surrounding white space is dropped from user name, full name and e-mail."""
    result = device.run("activate", input=form("  alice ", "  Alice Liddell  ", " alice@example.org "))
    assert result.stdout == "Device activated for alice.\n"
    assert device.login().stdout == "Welcome back Alice Liddell!\n"


def test_crlf_line_endings(device):
    """Lines ending in \\r\\n are read like lines ending in \\n."""
    result = device.run("activate", input=form().replace("\n", "\r\n"))
    assert result.code == 0
    assert device.login("alice", PASSWORD).code == 0


def test_flags_skip_lines(device):
    """--username/--full-name/--email skip their lines; the rest come from stdin in order."""
    result = device.run(
        "activate", "--full-name", FULL_NAME, input=f"{USERNAME}\n{EMAIL}\n{PASSWORD}\n{PASSWORD}\n")
    assert (result.code, result.stdout) == (0, "Device activated for alice.\n")
    assert device.login().stdout == "Welcome back Alice Liddell!\n"


def test_password_stdin_with_all_flags(device):
    """--password-stdin reads one line used for both password fields."""
    result = device.run(
        "activate", "--username", USERNAME, "--full-name", FULL_NAME, "--email", EMAIL,
        "--password-stdin", input=PASSWORD + "\n")
    assert (result.code, result.stdout, result.stderr) == (0, "Device activated for alice.\n", "")
    assert device.login().code == 0


def test_password_stdin_without_trailing_newline(device):
    """--password-stdin accepts a last line without a newline."""
    result = device.run(
        "activate", "--username", USERNAME, "--full-name", FULL_NAME, "--email", EMAIL,
        "--password-stdin", input=PASSWORD)
    assert result.code == 0
    assert device.login().code == 0


def test_password_stdin_with_fields_from_stdin(device):
    """With --password-stdin and no other flags, four lines suffice (name, full name, e-mail, password)."""
    result = device.run(
        "activate", "--password-stdin", input=f"{USERNAME}\n{FULL_NAME}\n{EMAIL}\n{PASSWORD}\n")
    assert (result.code, result.stdout) == (0, "Device activated for alice.\n")
    assert device.login().code == 0


def test_password_stdin_policy_failure_exits_1(device):
    """--password-stdin with a weak password exits 1 and stores nothing."""
    result = device.run(
        "activate", "--username", USERNAME, "--full-name", FULL_NAME, "--email", EMAIL,
        "--password-stdin", input="short\n")
    assert (result.code, result.stdout, result.stderr) == (1, "", SHORT + "\n")
    device.assert_nothing_stored()


BAD_FORMS = [
    # Fill first, then match, then fields, then the password policy.
    # `Please fill all fields!` is followed by a line naming the empty fields.
    ("empty-full-name", form(full_name=""), FILL + "\nEmpty: Full name."),
    ("blank-user-name", form(username="   "), FILL + "\nEmpty: User name."),
    ("tab-email", form(email="\t"), FILL + "\nEmpty: E-mail address."),
    ("empty-password", form(password="", again=""), FILL + "\nEmpty: Password, Password again."),
    ("empty-beats-mismatch", form(full_name="", again="something else entirely"),
     FILL + "\nEmpty: Full name."),
    ("mismatch", form(again=PASSWORD + "!"), MATCH),
    ("mismatch-beats-bad-name", form(username="al ice", again="x" + PASSWORD), MATCH),
    ("name-with-space", form(username="al ice"), USERNAME_RULE),
    ("name-with-at", form(username="alice@home"), USERNAME_RULE),
    ("name-65-chars", form(username="a" * 65), USERNAME_RULE),
    ("bad-name-beats-short-password", form(username="al/ice", password="short"), USERNAME_RULE),
    ("email-no-at", form(email="alice.example.org"), EMAIL_RULE),
    ("email-no-dot", form(email="alice@example"), EMAIL_RULE),
    ("email-space", form(email="alice smith@example.org"), EMAIL_RULE),
    ("bad-email-beats-short-password", form(email="alice@", password="short"), EMAIL_RULE),
    ("bad-name-beats-bad-email", form(username="a b", email="nope"), USERNAME_RULE),
    ("full-name-257", form(full_name="A" * 257), FULL_NAME_RULE),
    ("password-14", form(password="Tq7#mZ2!pL9@xR4"[:14]), SHORT),
    ("password-1025", form(password=("q9Zr" * 257)[:1025]), LONG),
    ("password-is-username-repeated", form(password="alicealicealice"), PERSONAL),
    ("password-is-username-case-space", form(password="ALICE alice Alice"), PERSONAL),
    ("password-is-full-name", form(password="alice liddell ALICELIDDELL"), PERSONAL),
    ("password-is-email", form(password="ALICE@Example.org"), PERSONAL),
    ("password-one-char", form(password="zzzzzzzzzzzzzzzzzz"), REPEATED),
    ("password-digits-run", form(password="12345678901234567890"), REPEATED),
    ("password-letters-run", form(password="abcdefghijklmnopq"), SEQUENCE),
    ("password-descending-run", form(password="ZYXWVUTSRQPONMLKJ"), SEQUENCE),
    # zxcvbn: long passwords the Python zxcvbn finds guessable, and one of each kind of pattern.
    ("password-repeated-word", form(password="passwordpassword"), REPEATED),
    ("password-repeated-phrase", form(password="iloveyouiloveyou"), REPEATED),
    ("password-common-words", form(password="qwertyuiopasdfgh"), COMMON),
    ("password-leet-common", form(password="p@ssw0rdtrustno"), COMMON),
    ("password-keyboard-row", form(password=";lkjhgfdsa;lkjhg"), KEYBOARD),
    ("password-date", form(password="12/25/2000!!!!!!"), DATE),
    ("password-from-name", form(password="aliceliddell2024!"), FROM_NAME),
]


@pytest.mark.parametrize("stdin, message", [c[1:] for c in BAD_FORMS], ids=[c[0] for c in BAD_FORMS])
def test_invalid_form_from_pipe(device, stdin, message):
    """A failing form from a pipe prints its one exact message, exits 1 and stores nothing."""
    result = device.run("activate", input=stdin)
    assert (result.code, result.stdout, result.stderr) == (1, "", message + "\n")
    device.assert_nothing_stored()


@pytest.mark.parametrize(
    "username, password",
    [("a" * 64, PASSWORD), (USERNAME, "Tq7#mZ2!pL9@xR4"), (USERNAME, ("q9Zr" * 256)[:1024]),
     ("Ali_ce.L-2", PASSWORD)],
    ids=["name-64", "password-15", "password-1024", "name-punctuation"])
def test_boundaries_accepted(device, username, password):
    """The longest user name and the shortest and longest passwords are accepted."""
    result = device.run("activate", input=form(username=username, password=password))
    assert (result.code, result.stdout) == (0, f"Device activated for {username}.\n")
    assert device.login(username, password).code == 0


def test_blocklist(device):
    """A password on the ACCOUNTS_PASSWORD_BLOCKLIST file is refused, ignoring case and \\r."""
    blocklist = device.root / "forbidden.txt"
    blocklist.write_bytes(b"first forbidden password\r\nCorrect Horse Battery Staple\r\nlast one\n")
    env = device.env(ACCOUNTS_PASSWORD_BLOCKLIST=str(blocklist))
    result = device.run("activate", input=form(password="CORRECT horse BATTERY staple"), env=env)
    assert (result.code, result.stdout, result.stderr) == (1, "", BLOCKED + "\n")
    device.assert_nothing_stored()
    result = device.run("activate", input=form(password="a permitted passphrase"), env=env)
    assert (result.code, result.stdout) == (0, "Device activated for alice.\n")


def test_blocklist_last_line_without_newline(device):
    """The blocklist's last line counts even without a trailing newline."""
    blocklist = device.root / "forbidden.txt"
    blocklist.write_text("something else\nlast forbidden password")
    env = device.env(ACCOUNTS_PASSWORD_BLOCKLIST=str(blocklist))
    result = device.run("activate", input=form(password="Last Forbidden Password"), env=env)
    assert (result.code, result.stderr) == (1, BLOCKED + "\n")


@pytest.mark.parametrize("lines", [0, 1, 2, 3, 4], ids=lambda n: f"{n}-lines")
def test_input_ends_early(device, lines):
    """Input ending before all five fields prints the input-ended message, exits 1, stores nothing."""
    stdin = "".join(form().splitlines(keepends=True)[:lines])
    result = device.run("activate", input=stdin)
    assert (result.code, result.stdout, result.stderr) == (1, "", INPUT_ENDED + "\n")
    device.assert_nothing_stored()


def test_stdin_devnull(device):
    """activate with stdin at /dev/null ends early: exit 1, nothing stored."""
    result = device.run("activate")
    assert (result.code, result.stderr) == (1, INPUT_ENDED + "\n")
    device.assert_nothing_stored()


def test_already_activated(activated):
    """activate on an activated device refuses with 'already activated', exit 1, user kept."""
    result = activated.run("activate", input=form(username="bob", email="bob@example.org"))
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "This device is already activated. An administrator can run `accounts reset` to make it "
        "Public again.\n")
    assert "already activated" in result.stderr
    assert activated.login().stdout == "Welcome back Alice Liddell!\n"
    assert activated.login("bob").code == 1


def test_persistence_across_processes(device):
    """Activation in one process is seen by login in a second and status in a third."""
    device.activate()
    login = device.login()
    assert (login.code, login.stdout) == (0, "Welcome back Alice Liddell!\n")
    status = device.run("status")
    assert status.stdout == f"State: Activated\nDatabase: {device.db}\n"


def test_activation_with_default_iterations(device):
    """Activation and login work at the default 1,200,000 PBKDF2 iterations."""
    device.activate(fast=False)
    assert device.stored_hash().startswith("pbkdf2_sha256$1200000$")
    result = device.login(fast=False)
    assert (result.code, result.stdout) == (0, "Welcome back Alice Liddell!\n")
