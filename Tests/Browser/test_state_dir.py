"""vmhost-web on a `--state-dir` (SPEC §12, protocol/cli.md, viewmodels/Session.md): what one page's
login fetched is that login's alone. Another page, logged out or logged in (as the same user), never
sees it; a logout, another login of the page and closing the page delete it; a restart shows nothing.

Pages are WebSocket sessions without a browser (websocket-client, as test_transport.py).
"""
import json
import sqlite3

import pytest

from conftest import Session, WebServer

ACCOUNT, PASSWORD = "13800138000", "123456"


@pytest.fixture
def state(tmp_path):
    return tmp_path / "state"


def start(state, *options):
    return WebServer("--state-dir", str(state), "--test-controls", *options)


class Page(Session):
    """One WebSocket session: requests answered in order, notifications dropped."""

    def log_in(self, vm="login"):
        self.result("vm.create", {"kind": "Login", "id": vm})
        self.result("vm.send", {"vm": vm, "input": "username", "value": ACCOUNT})
        self.result("vm.send", {"vm": vm, "input": "password", "value": PASSWORD})
        assert self.result("vm.send", {"vm": vm, "input": "submit"}) == {}

    def lists(self, suffix=""):
        """Opens a product list and the groups of menu m1; their values as created."""
        self.result("vm.create", {"kind": "ProductList", "id": "pl" + suffix})
        self.result("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g" + suffix})
        return (self.result("vm.get", {"vm": "pl" + suffix, "outputs": ["items", "isStale"]})["values"],
                self.result("vm.get", {"vm": "g" + suffix, "outputs": ["groups", "isStale"]})["values"])

    def load(self, suffix=""):
        assert self.result("vm.send", {"vm": "pl" + suffix, "input": "refresh"}) == {}
        assert self.result("vm.send", {"vm": "g" + suffix, "input": "load"}) == {}

    def log_out(self):
        self.result("vm.create", {"kind": "Session", "id": "session"})
        assert self.result("vm.send", {"vm": "session", "input": "logout"}) == {}
        self.result("vm.dispose", {"vm": "session"})

    def close(self):
        self.ws.close()


NOTHING = ({"items": [], "isStale": False}, {"groups": [], "isStale": False})


def saved_lists(state):
    with sqlite3.connect(state / "state.sqlite3") as db:
        return sorted(key for (key,) in db.execute("SELECT key FROM state WHERE key LIKE 'lists.%' AND key != 'lists.index'"))


def test_one_pages_login_is_never_shown_to_another_page_and_goes_with_its_logout(state):
    web = start(state)
    try:
        first = Page(web)
        first.log_in()
        assert first.lists() == NOTHING
        first.load()
        assert len(saved_lists(state)) == 2
        # The same page sees its own saved lists, stale until loaded.
        products, groups = first.lists("again")
        assert products["isStale"] and len(products["items"]) == 20 and groups["isStale"]

        # A new page, logged out: nothing of it, and nothing saved by its loads.
        second = Page(web)
        assert second.lists() == NOTHING
        second.load()
        assert len(saved_lists(state)) == 2
        # Logged in as the same user, it is another login: still nothing of the first's.
        second.log_in()
        assert second.lists("after-login") == NOTHING

        first.log_out()
        assert saved_lists(state) == []
        assert first.lists("after-logout") == NOTHING
        first.close()
        second.close()
    finally:
        web.stop()
    # No login survives a restart, nor does anything a login saved.
    web = start(state)
    try:
        page = Page(web)
        assert page.lists() == NOTHING
        page.log_in()
        assert page.lists("logged-in") == NOTHING
        page.close()
    finally:
        web.stop()


def test_another_login_of_the_page_and_closing_the_page_delete_what_its_login_saved(state):
    web = start(state, "--log-level", "debug")
    try:
        page = Page(web)
        page.log_in()
        page.lists()
        page.load()
        assert len(saved_lists(state)) == 2
        page.log_in("second")
        assert saved_lists(state) == []
        assert page.lists("second") == NOTHING
        page.load("second")
        assert len(saved_lists(state)) == 2
        page.close()
        web.wait_for_log(r"the lists of a closed connection's login were deleted")
        assert saved_lists(state) == []
    finally:
        web.stop()
