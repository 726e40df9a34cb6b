"""`accounts user ssh-key add|list|remove` with ssh-keygen as the oracle (types, fingerprints,
sizes), the keys and lines refused, and `userdb ssh-authorized-keys` run as nobody, as sshd's
AuthorizedKeysCommandUser runs it: keys only for the uid NSS gives the name."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import NOBODY, nobody_binary
from hostusers import USERDB, local_user, passwd_entry, unique_name, user_records
from userdbhelp import userdb, enable, add, ok, public_folder


def keygen(folder: pathlib.Path, kind: str, bits: str | None, name: str) -> tuple[str, str]:
    """A key made by ssh-keygen: its public line and what `ssh-keygen -l -E sha256` says."""
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *(["-b", bits] if bits else []), "-N", "",
                    "-C", name, "-f", str(path)], check=True)
    listed = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", f"{path}.pub"],
                            capture_output=True, text=True, check=True).stdout
    return pathlib.Path(f"{path}.pub").read_text().strip(), listed


def test_ssh_keys_as_ssh_keygen_sees_them(activated, tmp_path):
    """Keys of every accepted type made by ssh-keygen: list gives its fingerprints, sizes and
    comments; audit events; remove by fingerprint; an unknown one exits 5."""
    made = [keygen(tmp_path, "ed25519", None, "k-ed"), keygen(tmp_path, "ecdsa", "256", "k-e256"),
            keygen(tmp_path, "ecdsa", "384", "k-e384"), keygen(tmp_path, "ecdsa", "521", "k-e521"),
            keygen(tmp_path, "rsa", "2048", "k-rsa")]
    text = "# keys\n\n" + "\n".join(line for line, _ in made) + "\n"
    result = ok(activated.run("user", "ssh-key", "add", "alice", "-", input=text))
    expected = [listed.split() for _, listed in made]
    assert result.out_lines == [f"SSH key added to alice: {e[1]}." for e in expected]
    listed = [json.loads(line) for line in
              ok(activated.run("user", "ssh-key", "list", "alice", "--json")).out_lines]
    assert [(k["bits"], k["fingerprint"], k["comment"]) for k in listed] == [
        (int(e[0]), e[1], e[2]) for e in expected]
    assert [k["type"] for k in listed] == [line.split()[0] for line, _ in made]
    again = ok(activated.run("user", "ssh-key", "add", "alice", str(tmp_path / "k-ed.pub")))
    assert again.stdout == f"alice already has SSH key {expected[0][1]}; nothing changed.\n"
    text_list = ok(activated.run("user", "ssh-key", "list", "alice")).out_lines
    assert text_list[0].startswith("TYPE") and expected[4][1] in text_list[5]
    ok(activated.run("user", "ssh-key", "remove", "alice", expected[0][1]))
    events = [(e["event"], e["detail"]) for e in activated.events() if "ssh_key" in e["event"]]
    assert events == [("ssh_key_added", f"{line.split()[0]} {e[1]}")
                      for (line, _), e in zip(made, expected)] + [
        ("ssh_key_removed", expected[0][1])]
    result = activated.run("user", "ssh-key", "remove", "alice", expected[0][1])
    assert (result.code, result.stderr) == (
        5, f"alice has no SSH key {expected[0][1]} (see accounts user ssh-key list alice).\n")
    result = activated.run("user", "ssh-key", "list", "nobody-here")
    assert result.code == 5


@pytest.mark.parametrize("kind,bits,why", [
    ("rsa", "1024", "its RSA key has 1024 bits, fewer than 2048"),
    ("dsa", None, "keys of type ssh-dss are not accepted (use ssh-ed25519, "
     "ecdsa-sha2-nistp256/384/521, their sk- forms, or ssh-rsa of at least 2048 bits)"),
])
def test_ssh_keys_refused_types(activated, tmp_path, kind, bits, why):
    good, _ = keygen(tmp_path, "ed25519", None, "good")
    bad, _ = keygen(tmp_path, kind, bits, "bad")
    result = activated.run("user", "ssh-key", "add", "alice", "-", input=f"{good}\n{bad}\n")
    assert (result.code, result.stdout, result.stderr) == (
        1, "", f"Key on line 2 refused: {why}; no key was added.\n")
    assert ok(activated.run("user", "ssh-key", "list", "alice", "--json")).stdout == ""


@pytest.mark.parametrize("prefix", ['command="/bin/sh" ', 'from="10.0.0.1" ', "no-pty ",
                                    "restrict,pty "])
def test_ssh_keys_with_options_refused(activated, tmp_path, prefix):
    good, _ = keygen(tmp_path, "ed25519", None, "good")
    result = activated.run("user", "ssh-key", "add", "alice", "-", input=prefix + good + "\n")
    assert (result.code, result.stderr) == (
        1, "Key on line 1 refused: it starts with options (command=, from=, …), which accounts "
        "never stores; no key was added.\n")


@pytest.mark.parametrize("text,code,message", [
    ("", 1, "No SSH key found in the input; no key was added.\n"),
    ("ssh-ed25519 AAAA\n", 1,
     "Key on line 1 refused: it is not an SSH public key (TYPE BASE64 [COMMENT], as ssh-keygen "
     "writes it); no key was added.\n"),
])
def test_ssh_keys_malformed(activated, text, code, message):
    result = activated.run("user", "ssh-key", "add", "alice", "-", input=text)
    assert (result.code, result.stderr) == (code, message)


def authorized_keys(folder, *args):
    """`userdb ssh-authorized-keys --folder FOLDER ARGS…` as nobody, as sshd runs it: exit
    code, stdout, stderr."""
    proc = subprocess.run(
        [*NOBODY, nobody_binary(), "userdb", "ssh-authorized-keys", "--folder", str(folder),
         *map(str, args)], capture_output=True, text=True, env={"PATH": "/usr/bin"}, cwd="/")
    return proc.returncode, proc.stdout, proc.stderr


KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOFZkC33EfqKewwOisSItt2FJo/PInlAGgMR0vFXd8aG b"


def test_authorized_keys_as_nobody(device):
    """As nobody (sshd's AuthorizedKeysCommandUser), from the record alone, in a folder NSS
    reads: the keys of an account, with or without sshd's uid (%U) when it is the account's;
    nothing (exit 0) for another uid, an unknown name, a disabled or an expired account, or a
    name with a /."""
    device.activate(username=unique_name("owner"))
    name = unique_name("k")
    with user_records(device):
        add(device, name)
        ok(device.run("user", "ssh-key", "add", name, "-", input=KEY + "\n"))
        uid = int(passwd_entry(name)[2])
        assert authorized_keys(USERDB, name) == (0, KEY + "\n", "")
        assert authorized_keys(USERDB, name, uid) == (0, KEY + "\n", "")
        for args in ((name, uid + 1), (name, 0), (unique_name("u"),), (f"../{name}",)):
            assert authorized_keys(USERDB, *args) == (0, "", "")
        ok(device.run("user", "disable", name))
        assert authorized_keys(USERDB, name) == (0, "", "")
        ok(device.run("user", "enable", name))
        ok(device.run("user", "edit", name, "--expires", "2020-01-01"))
        assert authorized_keys(USERDB, name) == (0, "", "")
        ok(device.run("user", "edit", name, "--expires", "never"))
        assert authorized_keys(USERDB, name, uid) == (0, KEY + "\n", "")


def test_no_keys_for_a_name_nss_gives_another_uid(activated):
    """An account's record in a folder NSS does not read, and a user of /etc/passwd of the
    same name (useradd, its own uid): sshd would log that user in, so no key is printed, with
    or without sshd's uid; nor once that user is gone, when NSS knows no such name."""
    folder = public_folder() / "rec"
    name = unique_name("k")
    try:
        enable(activated, folder, "24910-24919")
        add(activated, name)
        ok(activated.run("user", "ssh-key", "add", name, "-", input=KEY + "\n"))
        record_uid = json.loads((folder / f"{name}.user").read_text())["uid"]
        with local_user(name, "not the account's"):
            uid = int(passwd_entry(name)[2])
            assert uid != record_uid
            for args in ((name,), (name, uid), (name, record_uid)):
                assert authorized_keys(folder, *args) == (0, "", "")
        assert authorized_keys(folder, name) == (0, "", "")
    finally:
        userdb(activated, "disable")
        shutil.rmtree(folder.parent, ignore_errors=True)


def test_authorized_keys_refuses_an_unsafe_record_or_folder(activated):
    """A record or folder group-writable, or not root's, is refused (exit 3)."""
    folder = public_folder() / "rec"
    try:
        enable(activated, folder, "24900-24909")
        add(activated, "bob")
        ok(activated.run("user", "ssh-key", "add", "bob", "-", input=KEY + "\n"))
        (folder / "bob.user").chmod(0o664)
        assert authorized_keys(folder, "bob") == (
            3, "", f"The user records folder {folder}/bob.user cannot be used: group or others "
            "may write the record (mode 664).\n")
        (folder / "bob.user").chmod(0o644)
        os.chown(folder, 65534, 65534)
        assert authorized_keys(folder, "bob") == (
            3, "", f"The user records folder {folder} cannot be used: the folder is owned by "
            "uid 65534, not root.\n")
        os.chown(folder, 0, 0)
    finally:
        userdb(activated, "disable")
        shutil.rmtree(folder.parent, ignore_errors=True)
