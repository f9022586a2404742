"""Drives the curses demo in tmux on the embedded backend: login → products → load more → groups."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Iterator, List

import pytest

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
    tmux.wait_for("Login", "Mobile", "11-digit mobile number", "Account + password")

    # A refused submit says why on the status line, until the next input.
    tmux.keys("Down")
    tmux.keys("Down")
    tmux.keys("Enter")
    tmux.wait_for("submit is disabled")
    tmux.keys("Up")
    tmux.keys("Up")
    tmux.keys("13800138000", literal=True)
    screen = tmux.wait_for("13800138000")
    assert "is disabled" not in screen
    tmux.keys("Enter")
    tmux.keys("123456", literal=True)
    tmux.wait_for("******")
    assert "123456" not in tmux.screen()  # the password is masked

    tmux.keys("Enter")
    tmux.wait_for("Products", "page 1 · 20 items", "%")

    tmux.keys("m")
    tmux.wait_for("page 2 · 40 items", "loaded more")

    tmux.keys("g")
    screen = tmux.wait_for("Menu groups", "招牌热菜", "12 dishes")
    assert "loaded more" not in screen  # the status line speaks of the screen on view

    tmux.keys("n")
    tmux.wait_for("New group", "cannot save")
    tmux.keys("Enter")
    tmux.wait_for("save is disabled")
    tmux.keys("Soup", literal=True)
    screen = tmux.wait_for("can save")
    assert "is disabled" not in screen
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


def start_demo(*args: str) -> Tmux:
    session = Tmux()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    command: List[str] = [sys.executable, "-m", "vmhost.demo", "--locale", "en", *args]
    subprocess.run(["tmux", "-u", "-L", session.socket, "new-session", "-d", "-s", "demo",
                    "-x", "120", "-y", "40", *command], check=True, env=env, timeout=10)
    return session


def log_in(session: Tmux) -> None:
    """Logs in with the demo account and password on the demo's login screen."""
    session.wait_for("Login", "Mobile")
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
        # Opened on the products, never on the login. (Its status line says "logged in as …" only
        # until the list's first load says "refreshed": too brief to wait for.)
        second.wait_for("Products", "page 1 · 20 items", absent=("Mobile", "Login"))
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


def test_a_session_recorded_from_the_demo_replays(tmp_path: Path) -> None:
    """`--record FILE` passes to the host: a bug seen in the demo is a transcript in one step, and
    it replays green (on the system clock, with the embedded backend, nothing time-bound in it)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    recording = tmp_path / "demo.jsonl"
    session = Tmux()
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(CLIENT), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "vmhost.demo", "--locale", "en", "--record", str(recording)]
    subprocess.run(["tmux", "-u", "-L", session.socket, "new-session", "-d", "-s", "demo",
                    "-x", "120", "-y", "40", *command], check=True, env=env, timeout=10)
    try:
        session.wait_for("Login", "Mobile", "Account + password")
        session.keys("13800138000", literal=True)
        session.wait_for("13800138000")
        session.keys("Enter")
        session.keys("123456", literal=True)
        session.wait_for("******")
        session.keys("Enter")
        session.wait_for("Products", "page 1 · 20 items")
        session.keys("m")
        session.wait_for("page 2 · 40 items", "loaded more")
        session.keys("q")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if "demo" not in subprocess.run(["tmux", "-L", session.socket, "list-sessions"],
                                            capture_output=True, text=True).stdout:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the demo did not quit on q")
    finally:
        subprocess.run(["tmux", "-L", session.socket, "kill-server"], capture_output=True, timeout=10)
    text = recording.read_text(encoding="utf-8")
    assert "123456" not in text and "demo-token" not in text
    assert '{"exit":0}' in text  # the demo ends with shutdown and exit
    done = subprocess.run([sys.executable, "-m", "vmhost.replay", "--read-limit", "30", str(recording)],
                          capture_output=True, text=True, timeout=120,
                          env=dict(env, VMHOST_SECRET_PASSWORD="123456"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PASS {recording}" in done.stdout
