"""`--state-dir` survives SIGKILL at any moment (protocol/viewmodels/Session.md, Persistence).

Each round starts the host on the same state directory, writes a whole script in one go (open a
session when none is stored, end it when one is), and kills the host with SIGKILL after reading a
different number of its replies, so that the kill lands before, during and after the write. The
next run must find either the old or the new session, never half of one, and SQLite must find the
database intact. No sleeps: the kill point is counted in replies read.
"""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "EndToEnd"))

from harness import HANG_LIMIT, HostProcess, binary  # noqa: E402

ROUNDS = 48


def script(logged_in: bool) -> tuple[bytes, int]:
    """The script of one round, and how many replies it gets."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "vm.create", "params": {"kind": "Session", "id": "s"}}]
    if logged_in:
        lines.append({"jsonrpc": "2.0", "id": 2, "method": "vm.send", "params": {"vm": "s", "input": "logout"}})
    else:
        lines += [
            {"jsonrpc": "2.0", "id": 2, "method": "vm.create", "params": {"kind": "Login", "id": "l"}},
            {"jsonrpc": "2.0", "method": "vm.send", "params": {"vm": "l", "input": "username", "value": "13800138000"}},
            {"jsonrpc": "2.0", "method": "vm.send", "params": {"vm": "l", "input": "password", "value": "123456"}},
            {"jsonrpc": "2.0", "id": 3, "method": "vm.send", "params": {"vm": "l", "input": "submit"}},
        ]
    lines += [{"jsonrpc": "2.0", "id": 10 + n, "method": "ping"} for n in range(4)]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    return data, sum(1 for line in lines if "id" in line)


def stored_session(state: Path) -> bool:
    """Whether the next run opens logged in; also checks the database and the pair of keys."""
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "Session", "id": "s"})
        values = host.request("vm.get", {"vm": "s"}).result["values"]
        assert host.close() == 0
    with sqlite3.connect(state / "state.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        keys = dict(db.execute("SELECT key, value FROM state").fetchall())
    # Token and username are written and deleted together.
    assert ("session.token" in keys) == ("session.username" in keys) == values["isLoggedIn"], keys
    return values["isLoggedIn"]


def test_a_kill_at_any_point_leaves_the_old_or_the_new_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    logged_in = False
    outcomes = set()
    for round in range(ROUNDS):
        process = subprocess.Popen([binary(), "--state-dir", str(state)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert process.stdin and process.stdout
        data, replies = script(logged_in)
        process.stdin.write(data)
        process.stdin.flush()
        # Never more replies than the script has: stdin stays open, so the host waits for more.
        for _ in range(round % replies):
            if not process.stdout.readline():
                break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=HANG_LIMIT)
        process.stdin.close()
        process.stdout.close()
        now = stored_session(state)
        outcomes.add((logged_in, now))
        logged_in = now
    # Both directions were written and some kills landed before the write took effect.
    assert (False, True) in outcomes and (True, False) in outcomes
