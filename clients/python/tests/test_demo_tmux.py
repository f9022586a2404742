"""Drives the curses demo in tmux on the embedded backend: login → products → load more → groups."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Iterator, List

import pytest

from vmhost.replay import Transcript, read_steps

CLIENT = Path(__file__).resolve().parents[1]


class Tmux:
    def __init__(self) -> None:
        self.socket = f"vmhost-demo-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-u", "-L", self.socket, *args], check=True,
                              capture_output=True, text=True, timeout=10).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", "demo", *(["-l"] if literal else []), *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "demo")

    def wait_for(self, *texts: str, absent: tuple = (), timeout: float = 60.0) -> str:
        """The screen once every text of `texts` and none of `absent` is on it: a screen captured
        while curses is still redrawing holds parts of the last frame. The timeout is a guard
        against a hang, not a measure of speed: on a loaded machine a start-up can take seconds."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts) and not any(text in screen for text in absent):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{texts!r} not on screen after {timeout}s:\n{screen}")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = Tmux()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    command: List[str] = [sys.executable, "-m", "vmhost.demo", "--locale", "en",
                          "--backend", "embedded"]
    subprocess.run(["tmux", "-u", "-L", session.socket, "new-session", "-d", "-s", "demo",
                    "-x", "120", "-y", "40", *command], check=True, env=env, timeout=10)
    try:
        yield session
    finally:
        subprocess.run(["tmux", "-L", session.socket, "kill-server"], capture_output=True,
                       timeout=10)


def test_login_products_load_more_groups(tmux: Tmux) -> None:
    screen = tmux.wait_for("Login", "Mobile", "11-digit mobile number", "Account + password")
    assert "invalid" not in screen  # nobody has typed in a field yet

    # A refused submit says why on the status line, until the next input.
    tmux.keys("Down")
    tmux.keys("Down")
    tmux.keys("Enter")
    tmux.wait_for("Log in is not available: the username is not a valid mainland mobile number")
    tmux.keys("Up")
    tmux.keys("Up")
    tmux.keys("1380", literal=True)
    screen = tmux.wait_for("1380", "invalid")
    assert screen.count("invalid") == 1  # the field typed in, not the password below it
    assert "is not available" not in screen
    tmux.keys("0138000", literal=True)
    tmux.wait_for("13800138000", "valid", absent=("invalid",))
    tmux.keys("Enter")
    tmux.keys("123456", literal=True)
    tmux.wait_for("******")
    assert "123456" not in tmux.screen()  # the password is masked

    tmux.keys("Enter")
    tmux.wait_for("Products", "page 1 · 20 items", "%", "logged in")
    # The first load ends without a word: the status line still says "logged in", after a key
    # that is drawn only once the loop has handled what came before it (the refresh's reply).
    tmux.keys("Down")
    screen = tmux.wait_for("> Peace of Mind 2", "ICBC", "logged in")
    assert "refreshed" not in screen

    tmux.keys("m")
    tmux.wait_for("page 2 · 40 items", "loaded more")

    tmux.keys("g")
    screen = tmux.wait_for("Menu groups", "Signature Hot Dishes", "12 dishes")
    assert "loaded more" not in screen  # the status line speaks of the screen on view
    assert "(m1)" not in screen and "(g1)" not in screen  # no internal handles

    tmux.keys("n")
    tmux.wait_for("New group", "cannot save")
    tmux.keys("Enter")
    tmux.wait_for("Save is not available: the name is empty")
    tmux.keys("Soup", literal=True)
    screen = tmux.wait_for("can save")
    assert "is not available" not in screen
    tmux.keys("Enter")
    tmux.wait_for("Menu groups", "Soup", "saved Soup")

    tmux.keys("b")
    tmux.wait_for("Products", "page 2")
    tmux.keys("q")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if "demo" not in subprocess.run(["tmux", "-L", tmux.socket, "list-sessions"],
                                        capture_output=True, text=True).stdout:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the demo did not quit on q")


def run_demo(*args: str) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "vmhost.demo", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=env, timeout=30)


def test_a_bad_host_option_shows_the_hosts_message_and_status() -> None:
    done = run_demo("--backend", "localhost:8080")
    assert done.returncode == 64
    assert "(status 64): Error: --backend" in done.stderr and "localhost:8080" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_a_terminal_the_demo_says_so() -> None:
    done = run_demo("--locale", "en")
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "tour.sh" in done.stderr
    assert "Traceback" not in done.stderr


class FlakyServer:
    """A backend answering like seed 004 (`{code, msg}`, no `success`) whose first `/products` call
    fails with HTTP 502: the demo must show the friendly error and how to retry."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        state = {"products": 0}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def handle_call(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                path = self.path.split("?")[0]
                status, body = 200, {"code": "0", "msg": "成功", "data": None}
                if path == "/auth/login":
                    body["data"] = {"token": "t"}
                elif path == "/products":
                    state["products"] += 1
                    if state["products"] == 1:
                        status, body = 502, {"code": "502", "msg": "<html>Bad Gateway</html>"}
                    else:
                        body = {"code": 0, "msg": "成功", "page": {"index": 1, "size": 20, "total": 1}, "data": [
                            {"id": "p1", "name": "Sold out fund", "bank": "Bank", "annualRate": 4.35,
                             "saleStatus": "soldOut", "termDays": 90, "minAmount": 50000}]}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = handle_call

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_failed_load_shows_the_friendly_error_and_a_retry_recovers() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    server = FlakyServer()
    session = Tmux()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "vmhost.demo", "--locale", "en", "--backend", server.url]
    subprocess.run(["tmux", "-u", "-L", session.socket, "new-session", "-d", "-s", "demo",
                    "-x", "120", "-y", "40", *command], check=True, env=env, timeout=10)
    try:
        session.wait_for("Login", "Mobile", "Account + password")
        session.keys("+86 138 0013 8000", literal=True)
        session.keys("Enter")
        session.keys("123456", literal=True)
        session.wait_for("******")
        session.keys("Enter")
        screen = session.wait_for("Products", "Server error (502). Please try again later.", "press r to retry")
        assert "Bad Gateway" not in screen
        session.keys("r")
        screen = session.wait_for("page 1 · 1 items", "Sold out fund")
        assert "press r to retry" not in screen
    finally:
        subprocess.run(["tmux", "-L", session.socket, "kill-server"], capture_output=True, timeout=10)
        server.close()


def start_demo(*args: str, size: "tuple[int, int]" = (120, 40)) -> Tmux:
    session = Tmux()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    command: List[str] = [sys.executable, "-m", "vmhost.demo", "--locale", "en", *args]
    subprocess.run(["tmux", "-u", "-L", session.socket, "new-session", "-d", "-s", "demo",
                    "-x", str(size[0]), "-y", str(size[1]), *command], check=True, env=env, timeout=10)
    return session


def send_code(session: Tmux) -> None:
    """On the demo's login screen (English): switches to the code form, types a valid phone and
    presses Get code."""
    session.keys("Tab")
    session.wait_for("[ Phone + SMS code ]", "[ Get code ]")
    session.keys("13912345678", literal=True)
    session.wait_for("13912345678", "valid")
    session.keys("Down")
    session.keys("Down")
    session.keys("Enter")


def log_in(session: Tmux, *login_screen: str) -> None:
    """Logs in with the demo account and password on the demo's login screen (known by the texts
    `login_screen`, by default the English ones)."""
    session.wait_for(*(login_screen or ("Login", "Mobile")))
    session.keys("13800138000", literal=True)
    session.wait_for("13800138000")
    session.keys("Enter")
    session.keys("123456", literal=True)
    session.wait_for("******")
    session.keys("Enter")


def test_a_second_run_with_a_state_dir_opens_logged_in(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    state = str(tmp_path / "state")
    first = start_demo("--state-dir", state)
    try:
        log_in(first)
        first.wait_for("Products", "page 1 · 20 items")
    finally:
        subprocess.run(["tmux", "-L", first.socket, "kill-server"], capture_output=True, timeout=10)
    second = start_demo("--state-dir", state)
    try:
        # Opened on the products, never on the login, and it says who is logged in.
        second.wait_for("Products", "page 1 · 20 items", "logged in as 13800138000",
                        absent=("Mobile", "Login"))
    finally:
        subprocess.run(["tmux", "-L", second.socket, "kill-server"], capture_output=True, timeout=10)


def test_a_second_run_shows_the_saved_list_marked_as_such(tmp_path: Path) -> None:
    """The first run loads the products (after one failure); the second run's first load fails, so
    the saved list stays on screen, marked as saved, with the retry prompt."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    state = str(tmp_path / "state")
    for run in range(2):
        server = FlakyServer()
        session = start_demo("--state-dir", state, "--backend", server.url)
        try:
            if run == 0:
                log_in(session)
                session.wait_for("Products", "press r to retry")
                session.keys("r")
                screen = session.wait_for("page 1 · 1 items", "Sold out fund")
                assert "(saved list" not in screen
            else:
                screen = session.wait_for("Products", "Sold out fund", "(saved list)", "press r to retry")
                session.keys("r")
                screen = session.wait_for("refreshed", "page 1 · 1 items", "Sold out fund")
                assert "(saved list" not in screen
        finally:
            subprocess.run(["tmux", "-L", session.socket, "kill-server"], capture_output=True, timeout=10)
            server.close()


def start_demo_in(*args: str) -> Tmux:
    """The demo with the given options only (no --locale: the host's default, Chinese)."""
    session = Tmux()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    command: List[str] = [sys.executable, "-m", "vmhost.demo", *args]
    subprocess.run(["tmux", "-u", "-L", session.socket, "new-session", "-d", "-s", "demo",
                    "-x", "120", "-y", "40", *command], check=True, env=env, timeout=10)
    return session


def stop(session: Tmux) -> None:
    subprocess.run(["tmux", "-L", session.socket, "kill-server"], capture_output=True, timeout=10)


ENGLISH_LABELS = ("Mobile", "Password", "Account + password", "Log in", "page ", "items",
                  "Products", "Menu groups", "dishes", "refresh", "quit")


def test_the_screens_speak_the_hosts_language_and_f2_switches_it() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = start_demo_in()
    try:
        # Chinese by default, the demo's own words as well as the view-models'.
        screen = session.wait_for("vmhost 演示 — 登录", "账号密码登录", "手机号", "11 位手机号", "F2 English")
        assert not [label for label in ENGLISH_LABELS if label in screen], screen
        session.keys("13800138000", literal=True)
        session.wait_for("13800138000", "✓")
        session.keys("Enter")
        session.keys("654321", literal=True)
        session.wait_for("******")
        session.keys("Enter")
        screen = session.wait_for("登录失败：用户名或密码错误")
        assert "Login failed" not in screen

        # F2: English, on a new view-model that keeps what was typed.
        session.keys("F2")
        screen = session.wait_for("vmhost demo — Login", "Account + password", "13800138000", "******",
                                  "switched to English")
        assert "账号密码登录" not in screen
        session.keys("F2")
        session.wait_for("vmhost 演示 — 登录", "已切换为中文")
    finally:
        stop(session)


def test_f2_on_the_products_and_the_groups_reloads_them_in_the_other_language() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = start_demo_in()
    try:
        log_in(session, "登录", "手机号")
        screen = session.wait_for("理财产品", "第 1 页 · 共 20 条", "90天", "已登录")
        assert not [label for label in ENGLISH_LABELS if label in screen], screen
        session.keys("F2")
        screen = session.wait_for("Products", "page 1 · 20 items", "90 days", "switched to English")
        assert "90天" not in screen and "在售" not in screen
        # The products and banks too (the demo data's names in English), never a Chinese name.
        assert "Steady Growth 1" in screen and "CMB" in screen and "稳健增利" not in screen, screen
        session.keys("g")
        session.wait_for("Menu groups", "Signature Hot Dishes", "12 dishes")
        session.keys("F2")
        # Both screens of the stack are made again: back goes to the products, in Chinese.
        session.wait_for("菜单分组", "招牌热菜", "12 道菜", "已切换为中文")
        session.keys("b")
        session.wait_for("理财产品", "第 1 页 · 共 20 条", "90天")
    finally:
        stop(session)


def test_log_out_goes_back_to_the_login_screen(tmux: Tmux) -> None:
    log_in(tmux)
    tmux.wait_for("Products", "page 1 · 20 items", "o log out")
    tmux.keys("g")
    tmux.wait_for("Menu groups", "12 dishes")
    tmux.keys("o")
    screen = tmux.wait_for("Login", "Account + password", "logged out")
    assert "******" not in screen and "13800138000" not in screen  # a new login, empty
    log_in(tmux)
    tmux.wait_for("Products", "page 1 · 20 items", "logged in")


def test_sending_an_sms_code_says_so(tmux: Tmux) -> None:
    tmux.wait_for("Login", "Account + password")
    send_code(tmux)
    screen = tmux.wait_for("code sent: check your messages", "Resend (")
    assert "invalid" not in screen  # the code field, untouched, says nothing


def wait_until_gone(session: Tmux, timeout: float = 20.0) -> None:
    """Until the demo has quit (its tmux session is gone); the timeout only turns a hang into a failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "demo" not in subprocess.run(["tmux", "-L", session.socket, "list-sessions"],
                                        capture_output=True, text=True).stdout:
            return
        time.sleep(0.05)
    raise AssertionError(f"the demo did not quit within {timeout}s:\n{session.screen()}")


def test_a_session_recorded_from_the_demo_replays(tmp_path: Path) -> None:
    """`--record FILE` passes to the host: a bug seen in the demo is a transcript in one step. It
    replays green with the embedded backend and with no backend at all (on the system clock,
    nothing time-bound in it), and holds neither the password nor the token."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    recording = tmp_path / "demo.jsonl"
    session = start_demo("--record", str(recording))
    try:
        session.wait_for("Login", "Mobile", "Account + password")
        session.keys("13800138000", literal=True)
        session.wait_for("13800138000")
        session.keys("Enter")
        session.keys("654321", literal=True)
        session.wait_for("******")
        session.keys("Enter")
        session.wait_for("Log in failed")
        session.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
        session.wait_for("Password", absent=("******",))
        session.keys("123456", literal=True)
        session.wait_for("******")
        session.keys("Enter")
        session.wait_for("Products", "page 1 · 20 items")
        session.keys("m")
        session.wait_for("page 2 · 40 items", "loaded more")
        session.keys("g")
        session.wait_for("Menu groups", "12 dishes")
        session.keys("n")
        session.wait_for("New group", "cannot save")
        session.keys("Soup", literal=True)
        session.wait_for("can save")
        session.keys("Enter")
        session.wait_for("Menu groups", "saved Soup")
        session.keys("q")
        wait_until_gone(session)
    finally:
        stop(session)
    text = recording.read_text(encoding="utf-8")
    for secret in ("123456", "654321", "demo-token"):
        assert secret not in text, f"{secret!r} is in the recording"
    assert '{"exit":0}' in text  # the demo ends with shutdown and exit
    # The lists subscribe with `diff`: after the first full value, a list changes by splices, so
    # the load more is the 20 products it added, not the 40 of the list.
    changes = [step["expect"]["params"] for _, step in Transcript.load(recording).steps
               if "expect" in step and isinstance(step["expect"], dict) and step["expect"].get("method") == "vm.changed"]
    for name in ("items", "groups"):
        full = [change for change in changes if isinstance(change["values"].get(name), list) and change["values"][name]]
        assert len(full) <= 1, f"{name} sent whole {len(full)} times"
        assert any(name in change.get("splices", {}) for change in changes), f"no splice of {name}"
    added = [splice for change in changes for splice in change.get("splices", {}).get("items", [])]
    assert {"index": 20, "remove": 0} in [{k: v for k, v in s.items() if k != "insert"} for s in added]
    env = dict(os.environ, VMHOST_SECRET_PASSWORD="654321", VMHOST_SECRET_PASSWORD_2="123456",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    node = shutil.which("node")
    for offline in ([], ["--offline"]):
        done = subprocess.run([sys.executable, "-m", "vmhost.replay", *offline, str(recording)],
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"PASS {recording}" in done.stdout
        if node is not None:  # the Node replayer reads the same file the same way
            done = subprocess.run([node, str(CLIENT.parent / "js" / "replay.js"), *offline, str(recording)],
                                  capture_output=True, text=True, timeout=120, env=env)
            assert done.returncode == 0 and f"PASS {recording}" in done.stdout, done.stdout + done.stderr


def test_the_demo_says_how_to_replay_its_recording(tmp_path: Path) -> None:
    """On quitting, the demo names the recording and the secrets its replay needs, never their values."""
    from vmhost.demo.app import replay_hint

    recording = tmp_path / "demo.jsonl"
    recording.write_text("\n".join(json.dumps(line) for line in [
        {"args": []},
        {"send": {"jsonrpc": "2.0", "id": 1, "method": "vm.send",
                  "params": {"vm": "vm1", "input": "password", "value": "$secret:password_2:6"}}},
        {"expect": {"jsonrpc": "2.0", "id": 1, "result": {}}},
    ]) + "\n", encoding="utf-8")
    hint = replay_hint(str(recording))
    assert f"VMHOST_SECRET_PASSWORD_2=… python3 -m vmhost.replay {recording}" in hint
    assert "--offline" in hint
    assert replay_hint(str(tmp_path / "missing.jsonl")).count("VMHOST_SECRET_") == 0


def help_keys(key: str, locale: str = "en") -> List[str]:
    """The keys of one of the demo's help lines, as the demo lists them (" · " between keys)."""
    from vmhost.demo.app import KEY_SEPARATOR, STRINGS

    return STRINGS[locale][key].split(KEY_SEPARATOR)


def assert_fits(screen: str, *texts: str) -> None:
    """Every text is on the screen captured (tmux captures the pane's 80×24 cells, nothing past them)."""
    missing = [text for text in texts if text not in screen]
    assert not missing, f"not on the 80×24 screen: {missing!r}\n{screen}"


def test_every_screen_fits_80_by_24_with_every_column_and_every_key() -> None:
    """On the smallest usual terminal, 80×24: the product table keeps its last column (the amount),
    and every key of the help, `q quit` included, is on screen, in both languages."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = start_demo(size=(80, 24))
    try:
        screen = session.wait_for("Login", "Mobile")
        assert_fits(screen, *help_keys("loginHelp"))
        assert "F5" not in screen and "F6" not in screen  # a tester's keys only with --test-controls
        log_in(session)
        screen = session.wait_for("Products", "page 1 · 20 items", "¥50,000", "q quit")
        # The column titles and a whole first row: p001's amount is the last column.
        assert_fits(screen, "Name", "Bank", "Profit", "Status", "Term", "Amount", "4.35%", "90 days",
                    "¥50,000", *help_keys("productsHelp"))
        assert screen.count("¥") >= 15, screen  # the rows fill the screen down to the status line
        session.keys("g")
        screen = session.wait_for("Menu groups", "12 dishes", "q quit")
        assert_fits(screen, "8 dishes", "6 dishes", "10 dishes", *help_keys("groupsHelp"))
        session.keys("F2")
        screen = session.wait_for("菜单分组", "12 道菜", "q 退出")
        assert_fits(screen, *help_keys("groupsHelp", "zh-Hans"))
        session.keys("b")
        screen = session.wait_for("理财产品", "第 1 页", "起购金额", "¥50,000", "q 退出")
        assert_fits(screen, "名称", "银行", "年化收益", "状态", "期限", "起购金额", "90天",
                    *help_keys("productsHelp", "zh-Hans"))
    finally:
        stop(session)


def test_d_asks_before_deleting_a_group_and_any_other_key_keeps_it() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = start_demo()
    try:
        log_in(session)
        session.wait_for("Products", "page 1 · 20 items")
        session.keys("g")
        session.wait_for("Menu groups", "4 groups", "12 dishes")
        session.keys("d")
        session.wait_for("Delete Signature Hot Dishes (12 dishes)? y deletes · other keys keep it")
        session.keys("n")  # not y: kept (and n does not start a new group)
        screen = session.wait_for("kept Signature Hot Dishes", "4 groups", "12 dishes", absent=("y deletes",))
        assert "New group" not in screen
        session.keys("d")
        session.wait_for("(12 dishes)? y deletes")
        session.keys("y")
        screen = session.wait_for("deleted Signature Hot Dishes", "3 groups", absent=("y deletes", "12 dishes"))
        assert "8 dishes" in screen
    finally:
        stop(session)


def test_a_refused_input_says_why_in_chinese_too() -> None:
    """-32003's reason follows the demo's own words in both languages (it was dropped in Chinese)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = start_demo_in()
    try:
        session.wait_for("登录", "手机号")
        session.keys("Down")
        session.keys("Down")
        session.keys("Enter")
        session.wait_for("登录暂不可用：the username is not a valid mainland mobile number")
    finally:
        stop(session)


# -- A tester's keys (--test-controls): a failure and a countdown recorded without devtools -------

def test_f5_fails_the_next_refresh_and_f6_f7_move_the_sms_countdown_into_a_recording(tmp_path: Path) -> None:
    """F5 queues a failure for the next call of an endpoint (`control.backend.script`), F6 and F7
    advance the manual clock (`control.clock.advance`); the refresh fails as chosen, the countdown
    moves, and the recording of it all replays green."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    recording = tmp_path / "controls.jsonl"
    session = start_demo("--clock", "manual", "--test-controls", "--record", str(recording))
    try:
        session.wait_for("Login", "Account + password", "F5 fail a call", "F6 clock +1 s", "F7 +60 s")
        send_code(session)
        session.wait_for("code sent: check your messages", "Resend (60s)")
        session.keys("F6")
        session.wait_for("Resend (59s)", "clock +1 s, now 1 s")
        session.keys("F7")
        screen = session.wait_for("[ Get code ]", "clock +60 s, now 61 s", absent=("Resend",))

        session.keys("Tab")
        log_in(session, "[ Account + password ]")
        session.wait_for("Products", "page 1 · 20 items")
        # F5 asks which outcome, for the screen's endpoint first; Tab picks another, Esc cancels.
        session.keys("F5")
        screen = session.wait_for("the next products call:", "3 http:500", "Esc cancel")
        assert "r refresh" not in screen  # the help line lists the outcomes while it asks
        session.keys("Tab")
        session.wait_for("the next auth.login call:")
        session.keys("Escape")
        session.wait_for("r refresh", absent=("the next auth.login call:",))
        session.keys("F5")
        session.wait_for("the next products call:")
        session.keys("3")
        session.wait_for("next products call: http:500", "r refresh")
        session.keys("r")
        session.wait_for("Server error (500)", "press r to retry")
        session.keys("r")  # the failure was for one call: the retry loads
        session.wait_for("page 1 · 20 items", "refreshed", absent=("press r to retry",))
        session.keys("q")
        wait_until_gone(session)
    finally:
        stop(session)
    steps = read_steps(recording)
    sent = [step["send"] for step in steps if "send" in step]
    assert {"endpoint": "products", "outcomes": ["http:500"]} in [
        message.get("params") for message in sent if message.get("method") == "control.backend.script"]
    assert [message["params"]["ms"] for message in sent
            if message.get("method") == "control.clock.advance"] == [1000, 60000]
    env = dict(os.environ, VMHOST_SECRET_PASSWORD="123456",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "vmhost.replay", str(recording)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and f"PASS {recording}" in done.stdout, done.stdout + done.stderr


def test_the_tester_keys_fit_80_by_24_in_both_languages() -> None:
    """With --test-controls the help line gains F5, F6 and F7 and F5's question lists the outcomes:
    on an 80×24 terminal every key of them shows, with the product table's last column."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = start_demo("--clock", "manual", "--test-controls", size=(80, 24))
    controls = ["F5 fail a call", "F6 clock +1 s", "F7 +60 s"]
    try:
        screen = session.wait_for("Login", "Mobile", "F7 +60 s")
        assert_fits(screen, *help_keys("loginHelp"), *controls)
        log_in(session)
        screen = session.wait_for("Products", "page 1 · 20 items", "¥50,000", "F7 +60 s")
        assert_fits(screen, "Amount", "¥50,000", *help_keys("productsHelp"), *controls)
        session.keys("F5")
        screen = session.wait_for("the next products call:", "Esc cancel")
        assert_fits(screen, "¥50,000", *help_keys("scriptHelp"))
        session.keys("Escape")
        session.wait_for("q quit", absent=("Esc cancel",))
        session.keys("F2")
        screen = session.wait_for("理财产品", "起购金额", "F7 +60 秒")
        assert_fits(screen, *help_keys("productsHelp", "zh-Hans"), "F5 让下次调用失败", "F6 时钟 +1 秒")
        session.keys("F5")
        screen = session.wait_for("让下次 products 调用：", "Esc 取消")
        assert_fits(screen, *help_keys("scriptHelp", "zh-Hans"))
    finally:
        stop(session)
