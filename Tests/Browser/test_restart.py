"""A session whose server restarted (protocol/SPEC.md §12, "After a restart"): `vmhost-web` stopped
with SIGTERM and started again with the same `--session-dir` (and the app's `--state-dir`, where
the reference app keeps a login), on the same port. The page that resumes with its token gets its
screens back: the same view-models under the same handles, what was typed, the login, a list
with the pages it had loaded; a token is still good once only, and the folder never holds a
token or a secret typed."""
import json
import os
import stat

import pytest

from conftest import WebServer
from test_resume import Page, resume, login_page, resumed


class Restartable:
    """vmhost-web with a session folder and a state directory, restarted on its own port."""

    def __init__(self, tmp_path, *options):
        self.sessions = tmp_path / "sessions"
        self.state = tmp_path / "state"
        self.options = ("--clock", "manual", "--test-controls", "--session-dir", str(self.sessions),
                        "--state-dir", str(self.state), "--log-level", "debug", *options)
        self.web = WebServer(*self.options)

    def restart(self):
        """SIGTERM, wait for the exit, then the same command line on the same port."""
        port = self.web.port
        self.web.stop()
        assert self.web.process.returncode == 0, "".join(self.web.lines[-20:])
        self.web = WebServer(*self.options, listen=f"127.0.0.1:{port}")

    def files(self):
        return sorted(self.sessions.iterdir())

    def stop(self):
        self.web.stop()


@pytest.fixture
def restartable(tmp_path):
    server = Restartable(tmp_path)
    yield server
    server.stop()


def test_a_page_resumes_its_session_after_a_restart_and_its_token_works_once(restartable):
    page, token, vm = login_page(restartable.web)
    page.send("vm.send", {"vm": vm, "input": "username", "value": "13800138000"}, id=10)
    page.send("vm.send", {"vm": vm, "input": "password", "value": "hunter22"}, id=11)
    while page.read().get("id") != 11:
        pass
    received = page.received
    restartable.restart()
    # The folder: one private file, named by no token, holding no token and no secret typed.
    files = restartable.files()
    assert len(files) == 1
    assert stat.S_IMODE(os.stat(restartable.sessions).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    text = files[0].read_text()
    assert token.split(".", 1)[1] not in text and token.split(".", 1)[1] not in files[0].name
    assert "hunter22" not in text and "13800138000" in text

    back = resume(restartable.web, token, received, origin=None)
    session = back.control()["params"]
    # A resync: the page's frames were all received; the next frame follows the page's count.
    assert session["resumed"] == {"received": 5, "next": received + 1, "resync": True, "pending": []}
    changed = back.read()
    assert changed["method"] == "vm.changed" and changed["params"]["resync"] is True
    assert changed["params"]["vm"] == vm and changed["params"]["values"]["usernameValid"] is True
    # The same handle, the username typed kept, the password not: the form is not complete.
    values = back.result("vm.get", {"vm": vm})["values"]
    assert values["canSubmit"] is False
    back.send("vm.send", {"vm": vm, "input": "password", "value": "123456"}, id=50)
    while True:
        message = back.read()
        if message.get("id") == 50:
            break
    assert back.result("vm.get", {"vm": vm})["values"]["canSubmit"] is True

    # The token was used: another page presenting it after the restart gets nothing.
    again = resume(restartable.web, token, received)
    assert again.close_code() == 4404
    # Nor does a second restart bring the old token back.
    restartable.restart()
    third = resume(restartable.web, token, received)
    assert third.close_code() == 4404


def test_a_session_ended_by_its_page_is_not_kept(restartable):
    page, token, vm = login_page(restartable.web)
    assert len(restartable.files()) == 1
    page.send("exit")
    assert page.close_code() == 1000
    restartable.web.wait_for_log(r"session \d+ closed")
    assert restartable.files() == []


def test_a_foreign_file_in_the_folder_never_stops_the_server(restartable):
    page, token, vm = login_page(restartable.web)
    received = page.received
    restartable.web.stop()
    (path,) = restartable.files()
    path.write_text("{not json")
    (restartable.sessions / "notes.txt").write_text("not a session")
    restartable.web = WebServer(*restartable.options, listen=f"127.0.0.1:{restartable.web.port}")
    back = resume(restartable.web, token, received)
    assert back.close_code() == 4404
    restartable.web.wait_for_log(r"was not restored: its file .*not a JSON object")
    # The server goes on serving.
    fresh, _, _ = login_page(restartable.web)
    assert fresh.result("ping") == {}


# MARK: In Chromium: the web demo's page comes back by itself


def test_a_restart_mid_form_brings_the_page_back_on_its_form(browser, restartable):
    from page import DemoPage
    page = DemoPage(browser, restartable.web)
    page.open_and_type_username(typed=4)
    restartable.restart()
    resumed(page)
    page.finish_login_with_kept_username()


def test_a_restart_brings_back_the_login_and_the_pages_of_a_list(browser, restartable):
    from page import DemoPage
    page = DemoPage(browser, restartable.web)
    page.log_in()
    page.click("load-more")
    page.count_is("product-list", 40)
    restartable.restart()
    resumed(page)
    page.ready("products", 1)
    # The list loaded its two pages again, by its own paging.
    page.count_is("product-list", 40)
    listed = page.control("vm.list", {})
    session = next(entry["vm"] for entry in listed if entry["kind"] == "Session")
    logged_in = page.control("vm.get", {"vm": session, "outputs": ["isLoggedIn", "username"]})
    assert logged_in["values"] == {"isLoggedIn": True, "username": "13800138000"}
    assert not page.element("products-error").is_displayed()


def test_a_killed_worker_hands_its_sessions_to_the_next_connection(tmp_path):
    """Without a stop: the worker holding the session is killed; the page that resumes gets its
    screens back from the folder, from whichever worker takes the connection."""
    import signal
    from test_workers import worker_pids, HANG

    folder = tmp_path / "sessions"
    web = WebServer("--workers", "2", "--log-level", "info", "--session-dir", str(folder))
    try:
        pids = worker_pids(web)
        page, token, vm = login_page(web)
        page.send("vm.send", {"vm": vm, "input": "username", "value": "13800138000"}, id=10)
        while page.read().get("id") != 10:
            pass
        worker = int(token.split(".", 1)[0])
        os.kill(pids[worker], signal.SIGKILL)
        web.wait_for_log(rf"worker {worker} \(pid \d+\) was killed by signal 9: its sessions are lost but the resumable ones")
        back = resume(web, token, page.received)
        session = back.control()["params"]
        assert session["resumed"]["resync"] is True and session["resumed"]["received"] == 4
        changed = back.read()
        assert changed["params"]["vm"] == vm and changed["params"]["values"]["usernameValid"] is True
        assert back.result("vm.list") == [{"vm": vm, "kind": "Login"}]
    finally:
        web.stop()


def test_screens_past_their_bound_are_not_kept_and_a_restart_ends_that_session(restartable):
    page, token, vm = login_page(restartable.web)
    page.send("vm.send", {"vm": vm, "input": "username", "value": "1" * 300_000}, id=10)
    while page.read().get("id") != 10:
        pass
    restartable.web.wait_for_log(r"its screens take \d+ bytes, more than 262144; they are not kept for a restart")
    assert restartable.files() == []
    # Back under the bound: kept again.
    page.send("vm.send", {"vm": vm, "input": "username", "value": "13800138000"}, id=11)
    while page.read().get("id") != 11:
        pass
    assert len(restartable.files()) == 1
    page.send("vm.send", {"vm": vm, "input": "username", "value": "2" * 300_000}, id=12)
    while page.read().get("id") != 12:
        pass
    received = page.received
    restartable.restart()
    assert restartable.files() == []
    assert resume(restartable.web, token, received).close_code() == 4404
