"""todo-web serves the todo app's kinds to a browser through the public WebSocket entry
(`WebSocketServer`): headless Chromium opens the example's page (public/index.html, with vmhost's
browser client copied beside it as an app would ship it), which creates a `TodoList`, draws its
todos, adds one and toggles one. Every wait is on a DOM condition, with a deadline.

    TODO_WEB_BIN=.build/debug/todo-web python3 -m pytest tests
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1]
ROOT = EXAMPLE.parents[1]
DEADLINE = 20  # seconds: a hang, not a wait on time


@pytest.fixture
def public(tmp_path):
    """The page's folder as the app ships it: its page, and the browser client beside it."""
    folder = tmp_path / "public"
    shutil.copytree(EXAMPLE / "public", folder)
    (folder / "vmhost" / "web").mkdir(parents=True)
    (folder / "vmhost" / "js").mkdir(parents=True)
    shutil.copy(ROOT / "clients" / "web" / "vmhost.js", folder / "vmhost" / "web" / "vmhost.js")
    shutil.copy(ROOT / "clients" / "js" / "protocol.js", folder / "vmhost" / "js" / "protocol.js")
    return folder


@pytest.fixture
def todo_web(public):
    """todo-web on a free loopback port, with one worker process; yields its page's URL."""
    binary = os.environ.get("TODO_WEB_BIN", str(EXAMPLE / ".build" / "debug" / "todo-web"))
    process = subprocess.Popen(
        [binary, "--listen", "127.0.0.1:0", "--workers", "1", "--static", str(public), "--latency-ms", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in process.stderr:
        lines.append(line)
        found = re.search(r"^todo-web: serving (http://[^/\s]+)/", line)
        if found:
            break
    else:
        raise RuntimeError("todo-web did not start: " + "".join(lines))
    yield found.group(1) + "/"
    process.terminate()
    try:
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary:
        options.binary_location = binary
    driver_path = shutil.which("chromedriver")
    driver = webdriver.Chrome(service=Service(executable_path=driver_path) if driver_path else Service(), options=options)
    yield driver
    for entry in driver.get_log("browser"):
        print("browser:", entry.get("level"), entry.get("message"))
    driver.quit()


def items(browser) -> list[tuple[str, bool]]:
    from selenium.webdriver.common.by import By

    return [(item.text, "done" in item.get_attribute("class")) for item in browser.find_elements(By.CSS_SELECTOR, "#items li")]


def wait_for(browser, what: str, condition):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page draws the list again on each change: an item read while it is replaced is stale,
    # and the condition is asked again.
    try:
        return WebDriverWait(browser, DEADLINE, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda _: condition())
    except Exception as error:
        status = browser.find_element("id", "status").text
        failure = browser.find_element("id", "error").text
        raise AssertionError(f"{what}: not within {DEADLINE} s (status {status!r}, error {failure!r}, items {items(browser)})") from error


def test_the_page_draws_the_todo_list_and_adds_and_toggles_todos(todo_web, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(todo_web)
    # The in-memory backend's sample todos, loaded by the page's `load`.
    wait_for(browser, "the todos loaded", lambda: browser.find_element(By.ID, "status").text == "2 left")
    assert items(browser) == [("Buy milk", False), ("Call the bank", True), ("Water the plants", False)]

    browser.find_element(By.ID, "title").send_keys("Write the report", Keys.ENTER)
    wait_for(browser, "the todo added", lambda: ("Write the report", False) in items(browser))
    assert browser.find_element(By.ID, "status").text == "3 left"

    browser.find_element(By.XPATH, "//ul[@id='items']/li[text()='Buy milk']").click()
    wait_for(browser, "the todo toggled", lambda: ("Buy milk", True) in items(browser))
    assert browser.find_element(By.ID, "status").text == "2 left"


def test_the_app_depends_on_a_version_of_vmhost_with_the_trait_websocket():
    """The app resolved vmhost at a version, as an app outside this repository does (here the tag
    of HEAD that scripts/use-tagged-vmhost.sh made), and the trait brought the transport's
    dependencies."""
    import json

    pins = {pin["identity"]: pin["state"] for pin in json.loads((EXAMPLE / "Package.resolved").read_text())["pins"]}
    assert pins["vmhost"].get("version") == (ROOT / "VERSION").read_text().strip(), pins["vmhost"]
    assert {"swift-log", "hummingbird", "hummingbird-websocket", "swift-nio"} <= set(pins), sorted(pins)
