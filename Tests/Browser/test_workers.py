"""vmhost-web on several worker processes (`--workers`, SPEC §12 "Workers"): sessions are handed
to the least busy worker (the answer to the handshake names it, `VMHost-Worker`), an SMS countdown
started through one worker holds through another, sessions recorded through either worker get
files of their own (`--record`), a killed worker is replaced while the other
workers' sessions go on, and the signals end the whole server.

No test waits on time: every wait is a blocking read, a process wait or a wait for a log line,
each with a deadline (`HANG`) that only turns a hang into a failure with a message. Which worker
takes a connection is decided by the supervisor (fewest open connections, the lowest number on a
tie), so the tests know it in advance.
"""
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess

import pytest
import websocket

from conftest import Session, WebServer, web_binary

HANG = 20.0  # seconds before a missing answer counts as a hang
PHONE = "13912345678"


def start(*options, workers=2):
    return WebServer("--workers", str(workers), "--log-level", "info", *options)


def worker_pids(web) -> dict[int, int]:
    """Each worker's pid, from the lines the supervisor logged before its URL."""
    pids = {}
    for line in web.lines:
        found = re.search(r"worker (\d+) \(pid (\d+)\) serving", line)
        if found:
            pids[int(found.group(1))] = int(found.group(2))
    return pids


class Page(Session):
    """One WebSocket session, and the worker that serves it."""

    def __init__(self, web):
        super().__init__(web, timeout=HANG)
        self.worker = int(self.ws.getheaders()["vmhost-worker"])

    def close_code(self):
        """Reads until the server's close frame; its code."""
        while True:
            frame = self.ws.recv_frame()
            if frame.opcode == websocket.ABNF.OPCODE_CLOSE:
                return struct.unpack("!H", frame.data[:2])[0]

    def login_on_phone(self, vm="login"):
        self.result("vm.create", {"kind": "Login", "id": vm})
        self.result("vm.send", {"vm": vm, "input": "mode", "value": "code"})
        self.result("vm.send", {"vm": vm, "input": "phone", "value": PHONE})
        return vm


def running(pid: int) -> bool:
    """Whether `pid` is a process that still runs (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def ends(pid: int) -> bool:
    """Waits (at most `HANG`) for `pid`, which need not be a child, to end."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([handle], [], [], HANG)[0]) or not running(pid)
    finally:
        os.close(handle)


def stopped(web) -> int:
    try:
        return web.process.wait(HANG)
    except subprocess.TimeoutExpired:
        web.process.kill()
        pytest.fail("vmhost-web outlived its signal")


def test_sessions_are_handed_to_the_least_busy_worker():
    web = start()
    try:
        assert sorted(worker_pids(web)) == [1, 2]
        pages = [Page(web) for _ in range(4)]
        assert [page.worker for page in pages] == [1, 2, 1, 2]
        # Each serves, and each is its own session whatever its worker.
        for index, page in enumerate(pages):
            assert page.result("vm.create", {"kind": "Login", "id": "screen"})["vm"] == "screen"
            assert page.result("vm.list") == [{"vm": "screen", "kind": "Login"}], index
        for page in pages:
            page.ws.close()
    finally:
        web.stop()


def test_a_countdown_started_through_one_worker_holds_through_another():
    """Without --state-dir: the countdowns are in memory the workers share."""
    web = start()
    try:
        first, second = Page(web), Page(web)
        assert (first.worker, second.worker) == (1, 2)
        first.login_on_phone()
        assert first.result("vm.send", {"vm": "login", "input": "sendCode"}) == {}
        countdown = first.result("vm.get", {"vm": "login", "outputs": ["countdown"]})["values"]["countdown"]
        assert 55 <= countdown <= 60

        # Another worker's Login on the same phone shows the countdown and refuses another code.
        second.login_on_phone()
        values = second.result("vm.get", {"vm": "login", "outputs": ["countdown", "canSendCode"]})["values"]
        assert 55 <= values["countdown"] <= 60 and values["canSendCode"] is False, values
        refused = second.call("vm.send", {"vm": "login", "input": "sendCode"})
        assert refused["error"]["code"] == -32003, refused
        assert "wait" in refused["error"]["data"]["reason"], refused
        # Another phone is not held back.
        second.result("vm.create", {"kind": "Login", "id": "other"})
        second.result("vm.send", {"vm": "other", "input": "mode", "value": "code"})
        second.result("vm.send", {"vm": "other", "input": "phone", "value": "13912345679"})
        assert second.result("vm.get", {"vm": "other", "outputs": ["canSendCode"]})["values"]["canSendCode"] is True
    finally:
        web.stop()


def test_a_killed_worker_is_replaced_and_the_other_sessions_go_on():
    web = start()
    try:
        pids = worker_pids(web)
        first, second = Page(web), Page(web)
        assert (first.worker, second.worker) == (1, 2)
        first.result("vm.create", {"kind": "Login", "id": "kept"})
        second.login_on_phone()
        assert second.result("vm.send", {"vm": "login", "input": "sendCode"}) == {}

        os.kill(pids[2], signal.SIGKILL)
        # Worker 2's session is lost: its connection ends without a close frame.
        with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionResetError)):
            second.ws.recv()
        warned = web.wait_for_log(r"worker 2 \(pid (\d+)\) was killed by signal 9: its sessions are lost; starting another")
        assert int(warned.group(1)) == pids[2]
        replaced = web.wait_for_log(r"worker 2 \(pid (\d+)\) serving")
        assert int(replaced.group(1)) != pids[2]

        # Worker 1's session goes on, its view-model intact.
        assert first.result("vm.list") == [{"vm": "kept", "kind": "Login"}]
        # The new worker takes the next session (it holds none), and the countdown survived it.
        third = Page(web)
        assert third.worker == 2
        third.login_on_phone()
        assert third.result("vm.get", {"vm": "login", "outputs": ["canSendCode"]})["values"]["canSendCode"] is False
    finally:
        web.stop()


def test_sigterm_closes_every_workers_sessions_and_ends_the_server():
    web = start()
    pids = worker_pids(web)
    pages = [Page(web), Page(web)]
    assert sorted(page.worker for page in pages) == [1, 2]
    web.process.send_signal(signal.SIGTERM)
    assert stopped(web) == 0
    assert [page.close_code() for page in pages] == [1001, 1001]
    assert not any(running(pid) for pid in pids.values())


def test_a_second_signal_ends_the_server_and_its_workers_at_once():
    web = start("--http-timeout-ms", "600000")
    pids = worker_pids(web)
    # Silent peers on both workers: only the second signal ends the server before its grace.
    silent = [socket.create_connection(("127.0.0.1", web.port), timeout=HANG) for _ in range(2)]
    web.process.send_signal(signal.SIGTERM)
    web.process.send_signal(signal.SIGINT)
    assert stopped(web) == 0
    assert not any(running(pid) for pid in pids.values())
    for sock in silent:
        sock.close()


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return found


def test_with_no_worker_the_process_started_serves_every_session_itself():
    """`--workers 0`: one process (what valgrind and perf profile): it starts no worker, serves
    its sessions as worker 1, and at SIGTERM closes them with 1001 and exits 0."""
    web = start(workers=0)
    assert children(web.process.pid) == []
    pages = [Page(web), Page(web)]
    assert [page.worker for page in pages] == [1, 1]
    assert [page.result("ping") for page in pages] == [{}, {}]
    pages[0].result("vm.create", {"kind": "Login", "id": "login"})
    assert pages[1].call("vm.get", {"vm": "login", "outputs": ["canSendCode"]})["error"]["code"] == -32001
    assert children(web.process.pid) == []
    web.process.send_signal(signal.SIGTERM)
    assert stopped(web) == 0
    assert [page.close_code() for page in pages] == [1001, 1001]


def test_with_no_worker_a_manual_clock_and_the_test_controls_are_allowed():
    web = start("--clock", "manual", "--test-controls", workers=0)
    try:
        page = Page(web)
        assert page.result("control.clock.advance", {"ms": 1000}) is not None
    finally:
        web.stop()


def test_workers_whose_supervisor_is_killed_close_their_sessions_and_end():
    web = start()
    pids = worker_pids(web)
    pages = [Page(web), Page(web)]
    web.process.kill()
    web.process.wait(HANG)
    assert [page.close_code() for page in pages] == [1001, 1001]
    assert all(ends(pid) for pid in pids.values()), "a worker outlived its supervisor"
    for page in pages:
        page.ws.close()


def test_the_connection_cap_is_the_servers_not_each_workers():
    web = start("--max-connections", "3")
    try:
        pages = [Page(web) for _ in range(3)]
        assert [page.worker for page in pages] == [1, 2, 1]
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            Page(web)
        assert refused.value.status_code == 503
        for page in pages:
            assert page.result("ping") == {}
    finally:
        web.stop()


@pytest.mark.parametrize("options, message", [
    (["--workers", "1025"], "--workers must be from 0 to 1024, got 1025"),
    (["--workers", "2", "--clock", "manual"], "--clock manual acts on one process's clock and backend; it takes --workers 1"),
    (["--workers", "2", "--test-controls"], "--test-controls acts on one process's clock and backend; it takes --workers 1"),
])
def test_workers_out_of_range_or_with_one_process_controls_are_usage_errors(options, message):
    done = subprocess.run([web_binary(), "--listen", "127.0.0.1:0", *options], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 64
    assert message in done.stderr, done.stderr


def test_on_a_state_directory_a_logins_lists_are_its_own_and_go_with_its_logout(tmp_path):
    """The saved lists are in the database every worker opens: a login's are read by it alone,
    whatever worker serves another page, and its logout deletes them for every worker."""
    import test_state_dir as state_dir

    state = tmp_path / "state"
    web = start("--state-dir", str(state))
    try:
        first, second = state_dir.Page(web), state_dir.Page(web)
        first.log_in()
        first.lists()
        first.load()
        assert len(state_dir.saved_lists(state)) == 2
        second.log_in()
        assert second.lists() == state_dir.NOTHING
        first.log_out()
        assert state_dir.saved_lists(state) == []
        # A countdown started on one worker holds on the other, and is kept for a restart.
        Page.login_on_phone(first_page := Page(web))
        assert first_page.result("vm.send", {"vm": "login", "input": "sendCode"}) == {}
        other = Page(web)
        assert other.worker != first_page.worker
        other.login_on_phone()
        assert other.result("vm.get", {"vm": "login", "outputs": ["canSendCode"]})["values"]["canSendCode"] is False
    finally:
        web.stop()
    web = start("--state-dir", str(state))
    try:
        page = Page(web)
        page.login_on_phone()
        assert page.result("vm.get", {"vm": "login", "outputs": ["canSendCode"]})["values"]["canSendCode"] is False
    finally:
        web.stop()


def test_every_worker_appends_whole_lines_to_one_trace(tmp_path):
    trace = tmp_path / "trace.ndjson"
    web = start("--trace", str(trace))
    try:
        pages = [Page(web) for _ in range(4)]
        assert sorted(page.worker for page in pages) == [1, 1, 2, 2]
        for round in range(25):
            for page in pages:
                assert page.result("ping") == {}
    finally:
        web.stop()
    lines = trace.read_text().splitlines()
    messages = [json.loads(line)["msg"] for line in lines]
    assert sum(1 for message in messages if message.get("method") == "ping") == 100
    assert sum(1 for message in messages if message.get("result") == {}) == 100


def test_sessions_recorded_through_both_workers_each_get_a_file_of_their_own(tmp_path):
    from test_record import steps_of
    folder = tmp_path / "recordings"
    web = start("--record", str(folder))
    try:
        pages = [Page(web) for _ in range(2)]
        assert [page.worker for page in pages] == [1, 2]
        for index, page in enumerate(pages):
            page.result("vm.create", {"kind": "Login", "id": f"screen-{index}"})
        written = set()
        for page in pages:
            page.ws.close()
            written.add(web.wait_for_log(r"recorded a session to (\S+)").group(1))
    finally:
        web.stop()
    # Each worker took the next free number: two files, neither written over.
    assert written == {str(folder / "session-1.jsonl"), str(folder / "session-2.jsonl")}
    screens = set()
    for path in written:
        created = [line["send"]["params"]["id"] for line in steps_of(path)
                   if line.get("send", {}).get("method") == "vm.create"]
        assert len(created) == 1, (path, created)
        screens.add(created[0])
    assert screens == {"screen-0", "screen-1"}
