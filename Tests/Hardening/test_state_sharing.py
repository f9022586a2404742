"""Several hosts, and other processes, on one `--state-dir` (protocol/cli.md, viewmodels/Session.md):
hosts started together all serve, no write of one undoes another's, a write that finds the database
locked waits and is made, one still locked at its deadline says so, and a logout is done only when
the token is gone.

Another process holds the database's write lock with Python's sqlite3 (`BEGIN IMMEDIATE`). No
sleeps: a host's first try is known from its notice on stderr (`… waits: another process holds the
state database's lock`), and its retries run on the manual clock (`control.clock.advance`).
"""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "EndToEnd"))

from harness import HANG_LIMIT, HostProcess  # noqa: E402

ACCOUNT, PASSWORD = "13800138000", "123456"
PHONES = ["13912345678", "13812345678", "13712345678", "13612345678"]
MANUAL = ("--clock", "manual", "--test-controls", "--log-level", "notice")


class Host(HostProcess):
    """A host whose stderr is read as it comes, so that a test can wait for a line."""

    def __init__(self, *args: str) -> None:
        super().__init__(*args, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self.arrived = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process and self.process.stderr
        for raw in self.process.stderr:
            with self.arrived:
                self.lines.append(raw.decode(errors="replace"))
                self.arrived.notify_all()

    def wait_for_log(self, pattern: str) -> str:
        """The first line of stderr matching `pattern`; fails after HANG_LIMIT without one."""
        with self.arrived:
            found = self.arrived.wait_for(
                lambda: next((line for line in self.lines if re.search(pattern, line)), None), HANG_LIMIT)
        assert found, "no log line matching %r in %r" % (pattern, self.lines[-10:])
        return found

    def stderr_text(self) -> str:
        """Everything the host wrote to stderr, once it exited (status 0)."""
        assert self.close() == 0
        self.reader.join(HANG_LIMIT)
        assert not self.reader.is_alive(), "stderr stayed open after the host exited"
        return "".join(self.lines)

    def log_in(self, vm: str = "login") -> dict:
        self.request("vm.create", {"kind": "Login", "id": vm})
        self.notify("vm.send", {"vm": vm, "input": "username", "value": ACCOUNT})
        self.notify("vm.send", {"vm": vm, "input": "password", "value": PASSWORD})
        return self.request("vm.send", {"vm": vm, "input": "submit"})


class Lock:
    """Another process's write lock on the database (a transaction it holds open)."""

    def __init__(self, state: Path) -> None:
        self.db = sqlite3.connect(state / "state.sqlite3", isolation_level=None, timeout=HANG_LIMIT)
        self.db.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.db.execute("ROLLBACK")
        self.db.close()


def stored(state: Path) -> dict[str, str]:
    with sqlite3.connect(state / "state.sqlite3") as db:
        return dict(db.execute("SELECT key, value FROM state"))


def reply(exchange, id):
    found = [m for m in exchange.messages if m.get("id") == id and "method" not in m]
    assert found, "no reply to %r among %r" % (id, exchange.messages)
    return found[0]


# -- hosts started together ----------------------------------------------------------------------

def test_four_hosts_started_at_once_on_a_new_directory_all_serve_and_keep_every_write(tmp_path: Path) -> None:
    state = tmp_path / "state"
    hosts = [HostProcess("--state-dir", str(state)) for _ in PHONES]
    try:
        for host, phone in zip(hosts, PHONES):
            assert host.request("ping").result == {}
            host.request("vm.create", {"kind": "Login", "args": {"mode": "code"}, "id": "l"})
            host.request("vm.send", {"vm": "l", "input": "phone", "value": phone})
        for host in hosts:
            assert host.request("vm.send", {"vm": "l", "input": "sendCode"}).result == {}
    finally:
        statuses = [host.close() for host in hosts]
    assert statuses == [0] * len(hosts)
    # Each host's countdown is kept: none overwrote the others'.
    assert sorted(json.loads(stored(state)["login.smsCooldowns"])) == sorted(PHONES)


# -- a write that finds the lock held ------------------------------------------------------------

def test_a_login_waits_for_the_lock_and_is_stored(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Host("--state-dir", str(state), *MANUAL) as host:
        assert host.request("ping").result == {}
        lock = Lock(state)
        host.request("vm.create", {"kind": "Login", "id": "login"})
        host.notify("vm.send", {"vm": "login", "input": "username", "value": ACCOUNT})
        host.notify("vm.send", {"vm": "login", "input": "password", "value": PASSWORD})
        host.send({"jsonrpc": "2.0", "id": "in", "method": "vm.send", "params": {"vm": "login", "input": "submit"}})
        host.wait_for_log("storing the session waits: another process holds the state database's lock")
        lock.release()
        assert reply(host.request("control.clock.advance", {"ms": 1000}), "in")["result"] == {}
    assert stored(state)["session.username"] == ACCOUNT
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "Session", "id": "s"})
        assert host.request("vm.get", {"vm": "s"}).result["values"]["isLoggedIn"] is True


def test_a_list_save_still_locked_at_its_deadline_says_it_was_not_stored(tmp_path: Path) -> None:
    state = tmp_path / "state"
    host = Host("--state-dir", str(state), *MANUAL)
    assert host.log_in().result == {}
    host.request("vm.create", {"kind": "ProductList", "id": "pl"})
    lock = Lock(state)
    # The refresh itself succeeds: the list is shown, only its saving waits.
    assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
    host.wait_for_log(r"saving the list 'lists\.[0-9a-f]{32}\.products\.pageSize=20' waits")
    host.request("control.clock.advance", {"ms": 10_000})
    host.wait_for_log(r"warning: saving the list '.*' failed: .*another process held the database's lock")
    lock.release()
    text = host.stderr_text()
    assert "demo-token" not in text
    assert [key for key in stored(state) if key.startswith("lists.") and key != "lists.index"] == []


# -- a logout is done only when the token is gone -------------------------------------------------

def test_a_logout_waits_for_the_lock_then_deletes_the_token(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Host("--state-dir", str(state), *MANUAL) as host:
        assert host.log_in().result == {}
        host.request("vm.create", {"kind": "Session", "id": "session"})
        host.request("vm.subscribe", {"vm": "session"})
        lock = Lock(state)
        host.send({"jsonrpc": "2.0", "id": "out", "method": "vm.send", "params": {"vm": "session", "input": "logout"}})
        host.wait_for_log("deleting the stored login waits")
        # Locked: the session still says logged in.
        assert host.request("vm.get", {"vm": "session"}).result["values"]["isLoggedIn"] is True
        lock.release()
        advanced = host.request("control.clock.advance", {"ms": 1000})
        assert reply(advanced, "out")["result"] == {}
        names = [m["params"]["name"] for m in advanced.messages if m.get("method") == "vm.event"]
        assert names == ["navigate"]
    assert "session.token" not in stored(state)
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "Session", "id": "s"})
        assert host.request("vm.get", {"vm": "s"}).result["values"] == {"isLoggedIn": False, "username": None}


def test_a_logout_still_locked_at_its_deadline_fails_and_the_session_does_not_pretend(tmp_path: Path) -> None:
    state = tmp_path / "state"
    host = Host("--state-dir", str(state), *MANUAL)
    assert host.log_in().result == {}
    host.request("vm.create", {"kind": "Session", "id": "session"})
    host.request("vm.subscribe", {"vm": "session"})
    lock = Lock(state)
    host.send({"jsonrpc": "2.0", "id": "out", "method": "vm.send", "params": {"vm": "session", "input": "logout"}})
    host.wait_for_log("deleting the stored login waits")
    advanced = host.request("control.clock.advance", {"ms": 10_000})
    failed = reply(advanced, "out")
    assert failed["error"]["code"] == -32004
    error = failed["error"]["data"]
    assert (error["kind"], error["input"]) == ("timeout", "logout")
    assert "the logout could not delete the stored login" in error["detail"]
    # No pretending: still logged in, no navigation to Login, only the error event.
    assert [m["params"]["name"] for m in advanced.messages if m.get("method") == "vm.event"] == ["error"]
    assert host.request("vm.get", {"vm": "session"}).result["values"] == {"isLoggedIn": True, "username": ACCOUNT}
    lock.release()
    text = host.stderr_text()
    assert "deleting the stored login failed" in text and "demo-token" not in text
    # The next start is as logged in as this one said.
    with HostProcess("--state-dir", str(state)) as again:
        again.request("vm.create", {"kind": "Session", "id": "s"})
        assert again.request("vm.get", {"vm": "s"}).result["values"]["isLoggedIn"] is True
