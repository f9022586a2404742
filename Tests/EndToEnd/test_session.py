"""The `Session` kind and `--state-dir` through the real binary (protocol/viewmodels/Session.md):
the session survives a restart, logout and a 401 end it and delete it from disk, the files are the
user's alone, the token appears in no log or trace, and without `--state-dir` nothing is written.
"""
from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
from pathlib import Path

from harness import HostProcess

ACCOUNT, PASSWORD = "13800138000", "123456"


def log_in(host: HostProcess) -> None:
    assert host.request("vm.create", {"kind": "Login", "id": "login"}).error is None
    host.notify("vm.send", {"vm": "login", "input": "username", "value": ACCOUNT})
    host.notify("vm.send", {"vm": "login", "input": "password", "value": PASSWORD})
    assert host.request("vm.send", {"vm": "login", "input": "submit"}).result == {}


def session_values(host: HostProcess) -> dict:
    assert host.request("vm.create", {"kind": "Session", "id": "session"}).error is None
    return host.request("vm.subscribe", {"vm": "session"}).result["values"]


def everything_on_disk(directory: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file())


def test_a_second_run_opens_logged_in(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        assert session_values(host) == {"isLoggedIn": False, "username": None}
        log_in(host)
        assert host.close() == 0
    with HostProcess("--state-dir", str(state)) as host:
        assert session_values(host) == {"isLoggedIn": True, "username": ACCOUNT}
        assert host.close() == 0


def test_logout_ends_the_session_and_deletes_the_token_from_disk(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
    assert b"demo-token-1" in everything_on_disk(state)
    with HostProcess("--state-dir", str(state)) as host:
        session_values(host)
        logout = host.request("vm.send", {"vm": "session", "input": "logout"})
        assert logout.result == {}
        assert logout.changes == [{"subscription": logout.changes[0]["subscription"], "vm": "session",
                                   "values": {"isLoggedIn": False, "username": None}}]
        assert [(e["name"], e["value"]) for e in logout.events] == [("navigate", {"route": "Login"})]
        assert host.close() == 0
    assert b"demo-token" not in everything_on_disk(state)
    with HostProcess("--state-dir", str(state)) as host:
        assert session_values(host) == {"isLoggedIn": False, "username": None}


def test_a_401_to_a_call_with_the_token_ends_the_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state), "--test-controls") as host:
        log_in(host)
        session_values(host)
        host.request("control.backend.script", {"endpoint": "products", "outcomes": ["http:401"]})
        host.request("vm.create", {"kind": "ProductList", "id": "products"})
        host.request("vm.subscribe", {"vm": "products", "outputs": ["page", "error"]})
        refresh = host.request("vm.send", {"vm": "products", "input": "refresh"})
        assert refresh.code == -32004
        assert refresh.error["data"]["kind"] == "unauthorized"
        assert refresh.error["data"]["code"] == 401
        names = [(e["vm"], e["name"]) for e in refresh.events]
        assert ("session", "navigate") in names and ("products", "error") in names
        assert host.request("vm.get", {"vm": "session"}).result["values"] == {"isLoggedIn": False, "username": None}
    assert b"demo-token" not in everything_on_disk(state)


def test_a_401_to_a_second_login_fails_that_login_and_ends_no_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state), "--test-controls") as host:
        log_in(host)
        session_values(host)
        host.request("control.backend.script", {"endpoint": "auth.login", "outcomes": ["http:401"]})
        host.request("vm.create", {"kind": "Login", "id": "again"})
        host.request("vm.subscribe", {"vm": "again", "outputs": ["failureMessage"]})
        host.notify("vm.send", {"vm": "again", "input": "username", "value": ACCOUNT})
        host.notify("vm.send", {"vm": "again", "input": "password", "value": "wrong-password"})
        submit = host.request("vm.send", {"vm": "again", "input": "submit"})
        assert submit.code == -32004
        assert (submit.error["data"]["kind"], submit.error["data"]["code"]) == ("server", 401)
        # A failed login, not an expired session: the first user stays, nobody is sent to Login.
        assert [e for e in submit.events if e["vm"] == "session"] == []
        assert [c for c in submit.changes if c["vm"] == "session"] == []
        shown = host.request("vm.get", {"vm": "again", "outputs": ["failureMessage"]}).result["values"]
        assert shown["failureMessage"] != "登录已失效，请重新登录"
        assert host.request("vm.get", {"vm": "session"}).result["values"] == {"isLoggedIn": True, "username": ACCOUNT}
        # The session's token still serves.
        host.request("vm.create", {"kind": "ProductList", "id": "products"})
        assert host.request("vm.send", {"vm": "products", "input": "refresh"}).result == {}
    assert b"demo-token-1" in everything_on_disk(state)


def test_the_files_are_the_users_alone(tmp_path: Path) -> None:
    state = tmp_path / "deeper" / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    files = list(state.iterdir())
    assert files, "the state directory holds the database"
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_the_token_is_in_no_log_and_no_trace(tmp_path: Path) -> None:
    state, trace = tmp_path / "state", tmp_path / "trace.ndjson"
    logs = tmp_path / "stderr.log"
    with open(logs, "wb") as stderr:
        for _ in range(2):
            with HostProcess("--state-dir", str(state), "--trace", str(trace), "--log-level", "trace",
                             stderr=stderr) as host:
                values = session_values(host)
                if not values["isLoggedIn"]:
                    log_in(host)
                else:
                    host.request("vm.send", {"vm": "session", "input": "logout"})
    for name, data in (("trace", trace.read_bytes()), ("stderr", logs.read_bytes())):
        assert data, name
        assert b"demo-token" not in data, name
        assert PASSWORD.encode() not in data.replace(ACCOUNT.encode(), b""), name


def test_without_a_state_dir_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.chdir(home)
    with HostProcess() as host:
        log_in(host)
        session_values(host)
        assert host.request("vm.send", {"vm": "session", "input": "logout"}).result == {}
        assert host.close() == 0
    assert list(home.iterdir()) == []


def test_a_state_dir_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = subprocess.run(
        [os.environ.get("VMHOST_BIN") or str(Path(__file__).resolve().parents[2] / ".build/debug/vmhost"),
         "--state-dir", str(blocker / "state")], input=b"", capture_output=True, timeout=20)
    assert done.returncode == 64
    assert str(blocker).encode() in done.stderr


def test_the_database_is_sqlite_with_a_consistent_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
    with sqlite3.connect(state / "state.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        keys = dict(db.execute("SELECT key, value FROM state").fetchall())
    assert keys["session.username"] == ACCOUNT and keys["session.token"].startswith("demo-token")
