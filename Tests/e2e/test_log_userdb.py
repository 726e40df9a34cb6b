"""`userdb enable`, `disable` and a `sync` that changed the folder in the log an administrator
reads, on every store: `userdb_enabled`, `userdb_disabled` and `userdb_synced`, each naming the
folder and what was written or removed; a sync that found nothing to do logs nothing."""

from userdbhelp import add, enable, ok, userdb

UIDS = "23800-23809"


def userdb_events(device) -> list:
    return [(e["event"], e["user"], e["detail"]) for e in device.events()
            if e["event"].startswith("userdb_")]


def test_enable_sync_and_disable_are_logged(activated, tmp_path):
    folder = tmp_path / "rec"
    enable(activated, folder, UIDS)
    # The owner's user and group records and their uid and gid links.
    assert userdb_events(activated) == [("userdb_enabled", None, f"{folder}: 4 written, 0 removed")]
    ok(userdb(activated, "sync"))
    add(activated, "bob")
    assert len(userdb_events(activated)) == 1
    (folder / "bob.user").unlink()
    ok(userdb(activated, "sync"))
    ok(userdb(activated, "disable"))
    assert userdb_events(activated)[1:] == [
        ("userdb_synced", None, f"{folder}: 1 written, 0 removed"),
        # Eight records and links, and the manifest.
        ("userdb_disabled", None, f"{folder}: 8 removed, folder removed"),
    ]
    shown = ok(activated.run("log", "--event", "userdb_synced"))
    assert len(shown.out_lines) == 1 and "  userdb_synced  " in shown.stdout, shown
