"""A session recorded from the web demo (`vmhost-web --record DIR`) becomes a test: login, the list,
load more, a failed refresh and a menu rename, clicked in Chromium, replay green with
`python3 -m vmhost.replay` against the embedded backend and, from the recorded backend exchanges,
with no backend; the password and the token are nowhere in the recording; and a changed behaviour
(a smaller catalogue) fails the replay at the line where the page saw the second page."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import websocket
from selenium.webdriver.common.by import By

from conftest import ROOT, WebServer, web_binary
from page import DemoPage
from test_transport import call, connect, send

sys.path.insert(0, str(ROOT / "clients" / "python"))
from vmhost.replay import read_steps, step_text  # noqa: E402

PASSWORD = "123456"  # the demo account's (protocol/backend.md), typed into the page


def vmhost_binary() -> str:
    return os.environ.get("VMHOST_BIN", str(ROOT / ".build" / "debug" / "vmhost"))


def replay(*args: str) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(ROOT / "clients" / "python"), VMHOST_SECRET_PASSWORD=PASSWORD)
    # A generous deadline: it only turns a hang into a failure on a loaded machine.
    return subprocess.run([sys.executable, "-m", "vmhost.replay", "--bin", vmhost_binary(), "--read-limit", "30", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("clock", [["--clock", "manual"], []], ids=["manual-clock", "system-clock"])
def test_a_session_recorded_from_the_web_demo_replays_with_and_without_a_backend(browser, tmp_path, clock):
    """Recorded on the manual clock as the suite runs, and on the system clock as
    `scripts/web-demo.sh --record DIR` does (nothing in this session depends on time)."""
    folder = tmp_path / "recordings"
    web = WebServer(*clock, "--test-controls", "--record", str(folder))
    try:
        page = DemoPage(browser, web)
        page.log_in()  # types the account and the password, submits, shows the first page
        page.click("load-more")
        page.count_is("product-list", 40)
        assert page.control("control.backend.script", {"endpoint": "products", "outcomes": ["http:500"]}) == {}
        browser.execute_script("window.scrollTo(0, 0)")  # the header covers a button scrolled under it
        page.click("refresh")
        page.visible("products-error")
        page.count_is("product-list", 40)

        page.click("nav-groups")
        page.ready("groups")
        page.count_is("group-list", 4)
        browser.find_element(By.CSS_SELECTOR, "#group-list li[data-id='g2'] .rename").click()
        page.visible("editor")
        page.text_is("editor-title", "重命名分组")
        page.type("editor-name", "凉菜")
        page.click("editor-save")
        page.hidden("editor")
        page.until(lambda d: "凉菜" in [e.text for e in d.find_elements(By.CSS_SELECTOR, "#group-list .name")],
                   "the renamed group never showed")
        # The page closes its session (as leaving it does), and the recording ends with it.
        browser.execute_script("window.vmhost.close()")
        written = web.wait_for_log(r"recorded a session to (\S+)").group(1)
    finally:
        web.stop()

    recording = Path(written)
    assert recording == folder / "session-1.jsonl"
    text = recording.read_text(encoding="utf-8")
    assert PASSWORD not in text and "demo-token" not in text
    lines = read_steps(recording)
    # Each step as the replayers' --update writes it: a long expectation a member or element a line.
    assert text == "".join(step_text(line) + "\n" for line in lines)
    assert len(text.splitlines()) > len(lines)
    assert lines[0]["args"] == [*clock, "--test-controls"]
    assert any("backend" in line for line in lines)
    assert any("system clock" in line.get("comment", "") for line in lines) == (clock == [])
    # The page subscribes its lists with `diff`: the load more is recorded as the splice of the 20
    # products it added, and no list of more than one page is ever sent whole.
    changes = [line["expect"]["params"] for line in lines
               if isinstance(line.get("expect"), dict) and line["expect"].get("method") == "vm.changed"]
    assert any(splice["index"] == 20 and len(splice["insert"]) == 20
               for change in changes for splice in change.get("splices", {}).get("items", []))
    assert not any(len(change["values"].get("items") or []) > 20 for change in changes)

    done = replay(str(recording))
    assert done.returncode == 0 and f"PASS {recording}" in done.stdout, done.stdout
    done = replay("--offline", str(recording))
    assert done.returncode == 0 and f"PASS {recording}" in done.stdout, done.stdout

    # A catalogue of 39 products: the second page holds 19, and the replay fails where it came.
    lines[0]["args"] += ["--demo-products", "39"]
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines),
                       encoding="utf-8")
    where = next(number for number, line in enumerate(lines, start=1) if "expect" in line and '"p040"' in
                 json.dumps(line["expect"], ensure_ascii=False))
    done = replay(str(changed))
    assert done.returncode == 1
    assert f"FAIL {changed}:{where}: $.params." in done.stdout, done.stdout
    assert PASSWORD not in done.stdout


# -- The recording of a session over WebSocket, without a browser ---------------------------------

def recorded(web, count=1):
    """The paths of the next `count` recordings the server finished, from its log."""
    return [Path(web.wait_for_log(r"recorded a session to (\S+)").group(1)) for _ in range(count)]


def steps_of(path):
    return read_steps(path)


def test_each_session_is_a_file_of_its_own_with_the_options_vmhost_takes(tmp_path):
    folder = tmp_path / "recordings"
    web = WebServer("--clock", "manual", "--test-controls", "--record", str(folder), "--token", "t0k-web",
                    "--max-view-models", "5", "--http-timeout-ms", "20000")
    try:
        first = connect(web, header=["Authorization: Bearer t0k-web"])
        second = connect(web, header=["Authorization: Bearer t0k-web"])
        assert call(first, "vm.create", {"kind": "ProductList", "id": "one"})["result"]["vm"] == "one"
        assert call(second, "vm.create", {"kind": "Login", "id": "two"})["result"]["vm"] == "two"
        first.close()
        second.close()
        paths = sorted(recorded(web, 2))
    finally:
        web.stop()
    assert paths == [folder / "session-1.jsonl", folder / "session-2.jsonl"]
    # Which session took which number is the order their hosts were made in, which the two
    # handshakes do not decide: each file is one of the two sessions, and both are there.
    kinds = []
    for path in paths:
        lines = steps_of(path)
        created = [line["send"]["params"]["kind"] for line in lines
                   if line.get("send", {}).get("method") == "vm.create"]
        assert len(created) == 1, (path, created)
        kinds.append(created[0])
    assert sorted(kinds) == ["Login", "ProductList"]
    for path, kind in zip(paths, kinds):
        lines = steps_of(path)
        # The web server's own options are not vmhost's; the token is nowhere.
        assert lines[0]["args"] == ["--clock", "manual", "--test-controls"]
        assert "t0k-web" not in path.read_text(encoding="utf-8")
        assert any("--max-view-models" in line.get("comment", "") for line in lines)
        # Sessions of one worker share the embedded demo data: each recording says so.
        assert any("demo data every session of a worker shares" in line.get("comment", "") for line in lines)
        assert lines[-1] == {"close": True} or {"close": True} in lines
        assert any(line.get("send", {}).get("params", {}).get("kind") == kind for line in lines)
        done = replay(str(path))
        assert done.returncode == 0, done.stdout


def test_a_page_closed_with_a_request_in_flight_replays_by_cancelling_it(tmp_path):
    """On the system clock the end of a stdio host's input lets a command run (SPEC §7), where a
    closed page cancelled it: the recording cancels it with $/cancelRequest before its `close`."""
    folder = tmp_path / "recordings"
    web = WebServer("--test-controls", "--record", str(folder))
    try:
        ws = connect(web)
        assert call(ws, "control.backend.latency", {"ms": 60_000})["result"] == {}
        assert call(ws, "vm.create", {"kind": "ProductList", "id": "p"}, id=2)["result"]["vm"] == "p"
        assert call(ws, "vm.subscribe", {"vm": "p", "outputs": ["isRefreshing"]}, id=3)["result"]
        send(ws, "vm.send", {"vm": "p", "input": "refresh"}, id="r")
        assert json.loads(ws.recv())["params"]["values"] == {"isRefreshing": True}
        ws.close()
        (path,) = recorded(web)
    finally:
        web.stop()
    lines = steps_of(path)
    steps = [line for line in lines if "comment" not in line and "backend" not in line]
    close = steps.index({"close": True})
    assert steps[close - 1] == {"send": {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "r"}}}
    assert steps[-1]["expect"]["id"] == "r" and steps[-1]["expect"]["error"]["code"] == -32800
    assert any("system clock" in line.get("comment", "") for line in lines)
    for offline in ([], ["--offline"]):
        done = replay(*offline, str(path))
        assert done.returncode == 0, done.stdout


def test_a_session_ended_by_exit_or_by_the_server_stopping_replays(tmp_path):
    folder = tmp_path / "recordings"
    web = WebServer("--clock", "manual", "--test-controls", "--record", str(folder))
    try:
        leaving = connect(web)
        assert call(leaving, "shutdown")["result"] is None
        send(leaving, "exit")
        staying = connect(web)
        assert call(staying, "ping", id=2)["result"] == {}
        exited = recorded(web)[0]
        web.process.send_signal(signal.SIGTERM)
        # The page reads until the server closes its session (1001) and answers the close.
        while staying.recv_data_frame(True)[0] != websocket.ABNF.OPCODE_CLOSE:
            pass
        stopped = recorded(web)[0]
        assert web.process.wait(20) == 0
    finally:
        web.stop()
    assert steps_of(exited)[-1] == {"exit": 0}
    lines = steps_of(stopped)
    assert lines[-1] == {"close": True}
    assert "server stopping" in lines[-2]["comment"]
    for path in (exited, stopped):
        done = replay(str(path))
        assert done.returncode == 0, done.stdout


def test_a_recording_folder_that_cannot_be_made_ends_the_server_at_start(tmp_path):
    taken = tmp_path / "file"
    taken.write_text("", encoding="utf-8")
    done = subprocess.run([web_binary(), "--listen", "127.0.0.1:0", "--record", str(taken)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    assert done.returncode == 2
    assert "not a directory" in done.stderr


def test_a_session_the_server_could_not_close_in_time_still_ends_its_recording(tmp_path):
    """A second signal ends the server at once (SPEC §12), before a page that never answers the
    close has let its session end: the recording says where it was cut, and still replays."""
    folder = tmp_path / "recordings"
    web = WebServer("--clock", "manual", "--test-controls", "--record", str(folder))
    try:
        silent = connect(web)
        assert call(silent, "ping")["result"] == {}
        web.process.send_signal(signal.SIGTERM)
        web.process.send_signal(signal.SIGINT)
        assert web.process.wait(20) == 0
    finally:
        web.stop()
    (path,) = folder.glob("session-*.jsonl")
    lines = steps_of(path)
    assert "exited here before the session ended" in lines[-1]["comment"]
    done = replay(str(path))
    assert done.returncode == 0, done.stdout
