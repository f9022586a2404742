"""A session recorded against the server (``--record``) replays with the server gone: the
recording keeps the screens and every exchange of the app's client, and
``python3 -m vmhost.replay --offline`` answers the client from it."""
import json
import os
import subprocess
import sys

import pytest
import vmhost
from vmhost.replay import read_steps

from conftest import BINARY, PACKAGE, ChatServer, advance, spawn


def record(path):
    """A session on both screens, with a push stream, a send, failures and a timeout."""
    server = ChatServer()
    try:
        with spawn(server.url, "--record", str(path)) as host:
            thread = host.create("Thread")
            # The first poll brought the thread and the next one is held: subscribing now shows it
            # whole, as the replay will (its first poll answers in no time on the host's clock).
            server.log(wait="waiting", path="/messages")
            assert [m["id"] for m in thread.subscribe()["messages"]] == [1, 2]
            thread.send("draft", "Recorded once")
            assert thread.send("send")["id"] == 3
            search = host.create("Search")
            search.subscribe()
            search.send("query", "swift")
            search.send("search")
            for query, kind in [("boom", "server"), ("garbled", "malformed")]:
                search.send("query", query)
                with pytest.raises(vmhost.CommandFailed) as failure:
                    search.send("search")
                assert failure.value.kind == kind
            search.send("query", "slow")
            pending = search.send_async("search")
            server.log(wait="waiting", path="/search")
            advance(host, 10_000)
            with pytest.raises(vmhost.CommandFailed):
                pending.result(timeout=10)
            thread.dispose()
            server.log(wait="aborted", path="/messages")
    finally:
        server.stop()


def replay(path):
    return subprocess.run(
        [sys.executable, "-m", "vmhost.replay", "--offline", "--trust-args", "--bin", BINARY, str(path)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(PACKAGE.parents[1] / "clients" / "python")})


def test_a_recorded_session_replays_with_the_server_gone(tmp_path):
    path = tmp_path / "chat.jsonl"
    record(path)
    lines = read_steps(path)
    exchanges = [(x["method"], x["path"], next(k for k in ("response", "error", "cancelled") if k in x))
                 for x in (line["http"] for line in lines if "http" in line)]
    assert exchanges == [
        ("GET", "/messages?after=0&reader=me", "response"),
        ("POST", "/messages", "response"),
        ("GET", "/search?q=swift", "response"),
        ("GET", "/search?q=boom", "response"),
        ("GET", "/search?q=garbled", "response"),
        ("GET", "/search?q=slow", "error"),
        ("GET", "/messages?after=2&reader=me", "cancelled"),
    ]
    offline = next(line["offlineArgs"] for line in lines if "offlineArgs" in line)
    assert "--http-replay" in offline, offline
    # No server now: every call is answered from the recording.
    result = replay(path)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stdout + result.stderr


def test_a_replay_that_differs_fails(tmp_path):
    path = tmp_path / "chat.jsonl"
    record(path)
    # The server's recorded answer to the search changed: the screen the replay shows differs.
    lines = read_steps(path)
    search = next(line["http"] for line in lines if line.get("http", {}).get("path") == "/search?q=swift")
    search["response"]["body"]["messages"][0]["text"] = "Swift on Linux breaks"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = replay(path)
    assert result.returncode == 1 and "Swift on Linux breaks" in result.stdout, result.stdout + result.stderr
