"""What `--state-dir` does with files it did not make (protocol/cli.md, `--state-dir`): a symbolic
link, dangling or not, and another application's file are refused and left exactly as they were (no
mode change, no table added, no WAL switch, nothing made through a link); a directory that others
may write, or another user's, is refused with a message saying why; a damaged database of its own is
set aside (renamed, with a warning) and the host starts clean.
"""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "EndToEnd"))

from harness import HANG_LIMIT, HostProcess, binary  # noqa: E402


def start(state: Path) -> subprocess.CompletedProcess:
    """One run that pings and ends: its status and stderr."""
    return subprocess.run([binary(), "--state-dir", str(state)], input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
                          capture_output=True, timeout=HANG_LIMIT)


def picture(path: Path) -> tuple:
    """Everything about a file a host could change: its bytes, mode, owner and times."""
    info = os.lstat(path)
    content = path.read_bytes() if path.is_file() and not path.is_symlink() else os.readlink(path)
    return content, info.st_mode, info.st_uid, info.st_mtime_ns, info.st_ctime_ns


def made_state(tmp_path: Path) -> Path:
    """A state directory a host made, with a login stored."""
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "Login", "id": "l"})
        host.notify("vm.send", {"vm": "l", "input": "username", "value": "13800138000"})
        host.notify("vm.send", {"vm": "l", "input": "password", "value": "123456"})
        assert host.request("vm.send", {"vm": "l", "input": "submit"}).result == {}
        assert host.close() == 0
    return state


def refused(state: Path, reason: str) -> str:
    run = start(state)
    stderr = run.stderr.decode()
    assert run.returncode == 64, stderr
    assert run.stdout == b""
    assert reason in stderr, stderr
    return stderr


# -- symbolic links ------------------------------------------------------------------------------

@pytest.mark.parametrize("dangling", [True, False])
def test_a_linked_database_is_refused_and_nothing_is_made_or_changed_through_it(tmp_path: Path, dangling: bool) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.txt"
    if not dangling:
        target.write_text("another program's notes\n")
        target.chmod(0o644)
        before = picture(target)
    (state / "state.sqlite3").symlink_to(target)
    refused(state, "state.sqlite3: is a symbolic link")
    if dangling:
        assert not target.exists(), "a database was made through the link"
    else:
        assert picture(target) == before
    assert sorted(p.name for p in state.iterdir()) == ["state.sqlite3"]


# -- another application's files -----------------------------------------------------------------

def test_another_applications_sqlite_file_is_refused_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    foreign = state / "state.sqlite3"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
    db.close()
    foreign.chmod(0o644)
    before = picture(foreign)
    refused(state, "is an SQLite database vmhost did not make")
    assert picture(foreign) == before
    with sqlite3.connect(foreign) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert [name for (name,) in db.execute("SELECT name FROM sqlite_master")] == ["notes"]
    db.close()
    assert sorted(p.name for p in state.iterdir()) == ["state.sqlite3"]


def test_another_applications_sqlite_file_in_wal_mode_is_refused_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    foreign = state / "state.sqlite3"
    db = sqlite3.connect(foreign)
    db.execute("PRAGMA application_id = 1234")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
    db.commit()
    db.close()
    before = picture(foreign)
    refused(state, "is the SQLite database of another application (application id 1234)")
    assert picture(foreign) == before


def test_a_file_that_is_no_database_is_refused_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    foreign = state / "state.sqlite3"
    foreign.write_text("not a database\n" * 20)
    foreign.chmod(0o644)
    before = picture(foreign)
    refused(state, "state.sqlite3: is no SQLite database; vmhost uses only a database it made")
    assert picture(foreign) == before


# -- unsafe directories --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775])
def test_a_directory_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(mode)
    refused(state, "its group or others may write it (mode %s)" % oct(mode).replace("0o", "0"))
    assert list(state.iterdir()) == [] and (os.stat(state).st_mode & 0o7777) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="only a superuser can give a directory to another user")
def test_another_users_directory_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    os.chown(state, 65534, 65534)
    refused(state, "belongs to another user (uid 65534)")
    assert list(state.iterdir()) == []


# -- a damaged database of its own ---------------------------------------------------------------

@pytest.mark.parametrize("damage", ["pages", "truncated", "all"])
def test_a_damaged_database_is_set_aside_and_the_host_starts_clean(tmp_path: Path, damage: str) -> None:
    state = made_state(tmp_path)
    database = state / "state.sqlite3"
    data = bytearray(database.read_bytes())
    if damage == "pages":
        data[100:] = b"\xa5" * (len(data) - 100)
    elif damage == "truncated":
        data = data[:1000]
    else:
        data = bytearray(b"\x00garbage" * 1000)
    database.write_bytes(bytes(data))
    for leftover in ("state.sqlite3-wal", "state.sqlite3-shm"):
        (state / leftover).unlink(missing_ok=True)
    run = start(state)
    stderr = run.stderr.decode()
    assert run.returncode == 0, stderr
    assert b'"result":{}' in run.stdout
    assert "set aside as %s.damaged-" % database in stderr and "warning" in stderr
    [aside] = [p for p in state.iterdir() if p.name.startswith("state.sqlite3.damaged-")]
    assert aside.read_bytes() == bytes(data)
    # The next start finds the new database, logged out, and says nothing more.
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "Session", "id": "s"})
        assert host.request("vm.get", {"vm": "s"}).result["values"]["isLoggedIn"] is False
    assert start(state).stderr == b""
