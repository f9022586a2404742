"""A session recorded from the web demo (`vmhost-web --record DIR`) becomes a test: login, the list,
load more, a failed refresh and a menu rename, clicked in Chromium, replay green with
`python3 -m vmhost.replay` against the embedded backend and, from the recorded backend exchanges,
with no backend; the password and the token are nowhere in the recording; and a changed behaviour
(a smaller catalogue) fails the replay at the line where the page saw the second page."""
import json
import os
import subprocess
import sys
from pathlib import Path

from selenium.webdriver.common.by import By

from conftest import ROOT, WebServer
from page import DemoPage

PASSWORD = "123456"  # the demo account's (protocol/backend.md), typed into the page


def vmhost_binary() -> str:
    return os.environ.get("VMHOST_BIN", str(ROOT / ".build" / "debug" / "vmhost"))


def replay(*args: str) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(ROOT / "clients" / "python"), VMHOST_SECRET_PASSWORD=PASSWORD)
    # A generous deadline: it only turns a hang into a failure on a loaded machine.
    return subprocess.run([sys.executable, "-m", "vmhost.replay", "--bin", vmhost_binary(), "--read-limit", "30", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_session_recorded_from_the_web_demo_replays_with_and_without_a_backend(browser, tmp_path):
    folder = tmp_path / "recordings"
    web = WebServer("--clock", "manual", "--test-controls", "--record", str(folder))
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
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["args"] == ["--clock", "manual", "--test-controls"]
    assert any("backend" in line for line in lines)

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
