"""Fixtures of the browser suite: a vmhost-web server and a headless Chromium driven by selenium.

The server runs with `--clock manual --test-controls`: time moves only when a test advances it
(through the page's own session, `window.vmhost`), so every wait is on a DOM condition.
"""
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import websocket

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / ".build" / "browser-screenshots"


def web_binary() -> str:
    return os.environ.get("VMHOST_WEB_BIN", str(ROOT / "web" / ".build" / "debug" / "vmhost-web"))


class WebServer:
    """vmhost-web on a free loopback port; `url` is its page."""

    def __init__(self, *options: str, listen: str = "127.0.0.1:0", preexec_fn=None):
        self.process = subprocess.Popen(
            [web_binary(), "--listen", listen, *options],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=preexec_fn)
        self.lines = []
        for line in self.process.stderr:
            self.lines.append(line)
            found = re.search(r"serving (http://[^/\s]+)/", line)
            if found:
                self.origin = found.group(1)
                break
        else:
            raise RuntimeError("vmhost-web did not start: " + "".join(self.lines))
        self.port = int(self.origin.rsplit(":", 1)[1])
        self.address = self.origin.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")
        self.url = self.origin + "/"

    def wait_for_log(self, pattern: str, limit: float = 20.0) -> re.Match:
        """The first line of stderr from now on that matches `pattern`; fails after `limit`
        seconds without one (a hang, not a wait on time)."""
        found: list[re.Match] = []

        def read():
            for line in self.process.stderr:
                self.lines.append(line)
                match = re.search(pattern, line)
                if match:
                    found.append(match)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(limit)
        assert found, f"no log line matching {pattern!r}: " + "".join(self.lines[-20:])
        return found[0]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()



class Session:
    """One WebSocket session of `web`, spoken to one request at a time: each call returns its
    answer; the notifications read on the way are dropped. `timeout` bounds every read (a hang,
    not a wait on time)."""

    def __init__(self, web, timeout: float = 10.0, **options):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{web.port}/rpc", timeout=timeout, **options)
        self.next_id = 0

    def read(self):
        """The next message from the server, parsed."""
        return json.loads(self.ws.recv())

    def call(self, method, params=None):
        self.next_id += 1
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})}))
        while True:
            message = self.read()
            if message.get("id") == self.next_id:
                return message

    def result(self, method, params=None):
        answer = self.call(method, params)
        assert "error" not in answer, answer
        return answer["result"]

@pytest.fixture
def server():
    web = WebServer("--clock", "manual", "--test-controls")
    yield web
    web.stop()


@pytest.fixture(scope="session")
def chromium_options():
    from selenium.webdriver.chrome.options import Options

    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1100,900", "--force-device-scale-factor=1", "--lang=zh-CN"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary:
        options.binary_location = binary
    return options


@pytest.fixture
def browser(chromium_options, request):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver_path = shutil.which("chromedriver")
    service = Service(executable_path=driver_path) if driver_path else Service()
    driver = webdriver.Chrome(service=service, options=chromium_options)
    driver.shots = Screenshots(driver, request.node.name)
    yield driver
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        # What the page showed and logged when the test failed.
        driver.shots("failed")
        for entry in driver.get_log("browser"):
            print("browser:", entry.get("level"), entry.get("message"))
    driver.quit()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)


class Screenshots:
    """Saves a PNG of each screen a test visits: .build/browser-screenshots/<test>-<n>-<name>.png."""

    def __init__(self, driver, test: str):
        self.driver = driver
        self.test = re.sub(r"[^A-Za-z0-9_.-]", "_", test)
        self.count = 0
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def __call__(self, name: str) -> Path:
        self.count += 1
        path = SCREENSHOTS / f"{self.test}-{self.count:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        return path
