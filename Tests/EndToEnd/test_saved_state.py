"""What `--state-dir` keeps beside the session, through the real binary: the device id sent to an
HTTP backend, the last good lists (`isStale`), and the SMS countdown across a restart
(protocol/backend.md, viewmodels/ProductList.md, MenuGroups.md, Login.md)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness import HostProcess, LoopbackServer, QuietHandler

ACCOUNT, PASSWORD, PHONE = "13800138000", "123456", "13912345678"
PRODUCT = {"id": "p1", "name": "稳健增利1号", "bank": "招商银行", "annualRate": 4.5, "saleStatus": "onSale",
           "termDays": 90, "minAmount": 1000}
PAGE = json.dumps({"success": True, "code": "0", "message": "ok", "data": [PRODUCT],
                   "page": {"index": 1, "size": 20, "total": 1}}).encode()


class Server(LoopbackServer):
    """An HTTP server answering every GET with one page of products, recording the headers."""

    def __init__(self) -> None:
        self.headers: list[dict] = []
        outer = self

        class Handler(QuietHandler):
            def do_GET(self):
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

        self.serve(Handler)


@pytest.fixture
def server():
    made = Server()
    yield made
    made.close()


def values(host: HostProcess, vm: str, outputs: list[str]) -> dict:
    return host.request("vm.get", {"vm": vm, "outputs": outputs}).result["values"]


def refresh_products(host: HostProcess) -> None:
    host.request("vm.create", {"kind": "ProductList", "id": "pl"})
    assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}


# -- the device id -------------------------------------------------------------------------------

def test_two_runs_on_one_state_dir_send_the_same_device_id(server, tmp_path: Path) -> None:
    state = tmp_path / "state"
    for _ in range(2):
        with HostProcess("--backend", server.url, "--state-dir", str(state)) as host:
            refresh_products(host)
            assert host.close() == 0
    first, second = server.headers
    assert first["uuid"] == first["x-device-id"] == second["uuid"] == second["x-device-id"]
    assert len(first["uuid"]) == 36
    with sqlite3.connect(state / "state.sqlite3") as db:
        assert db.execute("SELECT value FROM state WHERE key = 'device.id'").fetchone() == (first["uuid"],)


def test_without_a_state_dir_each_run_is_another_device(server) -> None:
    for _ in range(2):
        with HostProcess("--backend", server.url) as host:
            refresh_products(host)
    first, second = server.headers
    assert first["uuid"] == first["x-device-id"]
    assert first["uuid"] != second["uuid"]


# -- the last good lists, each its login's ------------------------------------------------------

def log_in(host: HostProcess, vm: str = "login") -> None:
    host.request("vm.create", {"kind": "Login", "id": vm})
    host.notify("vm.send", {"vm": vm, "input": "username", "value": ACCOUNT})
    host.notify("vm.send", {"vm": vm, "input": "password", "value": PASSWORD})
    assert host.request("vm.send", {"vm": vm, "input": "submit"}).result == {}


def log_out(host: HostProcess) -> None:
    host.request("vm.create", {"kind": "Session", "id": "session"})
    assert host.request("vm.send", {"vm": "session", "input": "logout"}).result == {}
    host.request("vm.dispose", {"vm": "session"})


def stored(state: Path) -> dict[str, str]:
    """Every key and value of the state database."""
    with sqlite3.connect(state / "state.sqlite3") as db:
        return dict(db.execute("SELECT key, value FROM state"))


def list_keys(state: Path) -> list[str]:
    """The keys of the saved lists (not the index)."""
    return sorted(key for key in stored(state) if key.startswith("lists.") and key != "lists.index")


def test_the_next_run_shows_the_saved_products_stale_until_its_first_load(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
        refresh_products(host)
        assert host.request("vm.send", {"vm": "pl", "input": "loadMore"}).result == {}
        assert values(host, "pl", ["page", "isStale"]) == {"page": 2, "isStale": False}
    with HostProcess("--state-dir", str(state), "--test-controls") as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        shown = host.request("vm.subscribe", {"vm": "pl"}).result["values"]
        assert len(shown["items"]) == 40 and shown["items"][0]["id"] == "p001"
        assert {k: shown[k] for k in ("page", "hasMore", "isEmpty", "isStale", "loadState", "lastError")} == {
            "page": 2, "hasMore": True, "isEmpty": False, "isStale": True, "loadState": "loaded", "lastError": None}
        # A failed refresh keeps the saved list, still stale.
        host.request("control.backend.script", {"endpoint": "products", "outcomes": ["http:503"]})
        assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).code == -32004
        assert values(host, "pl", ["page", "isStale", "loadState"]) == {"page": 2, "isStale": True, "loadState": "failed"}
        refreshed = host.request("vm.send", {"vm": "pl", "input": "refresh"})
        assert refreshed.result == {}
        changed = {}
        for change in refreshed.changes:
            changed.update(change["values"])
        assert changed["isStale"] is False and changed["page"] == 1 and len(changed["items"]) == 20


def test_the_next_run_shows_the_saved_groups_of_that_menu(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g"})
        assert host.request("vm.send", {"vm": "g", "input": "load"}).result == {}
        assert host.request("vm.send", {"vm": "g", "input": "delete", "value": {"groupId": "g4"}}).result == {}
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g"})
        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m2"}, "id": "other"})
        shown = values(host, "g", ["groups", "isStale", "loadState"])
        assert [g["id"] for g in shown["groups"]] == ["g1", "g2", "g3"]
        assert shown["isStale"] is True and shown["loadState"] == "loaded"
        assert values(host, "other", ["groups", "isStale", "loadState"]) == {
            "groups": [], "isStale": False, "loadState": "idle"}
        assert host.request("vm.send", {"vm": "g", "input": "load"}).result == {}
        assert values(host, "g", ["isStale"]) == {"isStale": False}


def test_without_a_state_dir_nothing_is_stale(tmp_path: Path) -> None:
    for _ in range(2):
        with HostProcess() as host:
            host.request("vm.create", {"kind": "ProductList", "id": "pl"})
            assert values(host, "pl", ["items", "isStale", "loadState"]) == {
                "items": [], "isStale": False, "loadState": "idle"}
            assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
            assert values(host, "pl", ["isStale"]) == {"isStale": False}


def test_logged_out_nothing_is_saved_and_nothing_saved_is_shown(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
        refresh_products(host)
        assert len(list_keys(state)) == 1
    # The stored login is the directory's own: a run without it is another session.
    with sqlite3.connect(state / "state.sqlite3") as db:
        db.execute("DELETE FROM state WHERE key LIKE 'session.%'")
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g"})
        assert values(host, "pl", ["items", "isStale", "loadState"]) == {"items": [], "isStale": False, "loadState": "idle"}
        assert values(host, "g", ["groups", "isStale"]) == {"groups": [], "isStale": False}
        assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
        assert host.request("vm.send", {"vm": "g", "input": "load"}).result == {}
        assert host.close() == 0
    assert [key for key in list_keys(state) if "groups" in key] == []


def test_another_login_never_sees_the_lists_of_the_one_before(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
        refresh_products(host)
        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g"})
        assert host.request("vm.send", {"vm": "g", "input": "load"}).result == {}
        first = stored(state)["session.login"]
        assert all(key.startswith("lists.%s." % first) for key in list_keys(state))
        # The same account logging in again is another login: it replaces the first, whose lists go.
        log_in(host, "again")
        assert stored(state)["session.login"] != first
        assert list_keys(state) == []
        host.request("vm.create", {"kind": "ProductList", "id": "pl2"})
        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g2"})
        assert values(host, "pl2", ["items", "isStale"]) == {"items": [], "isStale": False}
        assert values(host, "g2", ["groups", "isStale"]) == {"groups": [], "isStale": False}


def test_logout_deletes_the_saved_lists_but_keeps_the_device(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
        refresh_products(host)
    with sqlite3.connect(state / "state.sqlite3") as db:
        db.execute("INSERT INTO state VALUES ('device.id', '0C1D2E3F-4A5B-4C6D-8E7F-8091A2B3C4D5')")
    with HostProcess("--state-dir", str(state)) as host:
        log_out(host)
    assert list(stored(state)) == ["device.id"]
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        assert values(host, "pl", ["items", "isStale"]) == {"items": [], "isStale": False}


def test_lists_saved_before_they_had_an_owner_are_deleted(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
    with sqlite3.connect(state / "state.sqlite3") as db:
        db.execute("INSERT INTO state VALUES ('lists.products.pageSize=20', ?)",
                   (json.dumps({"page": 1, "hasMore": True, "products": []}),))
        db.execute("INSERT INTO state VALUES ('lists.index', '[\"lists.products.pageSize=20\"]')")
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        assert values(host, "pl", ["isStale"]) == {"isStale": False}
    assert list_keys(state) == [] and "lists.index" not in stored(state)


def test_a_refresh_answered_after_the_logout_saves_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state), "--clock", "manual", "--test-controls") as host:
        log_in(host)
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        host.request("control.backend.script", {"endpoint": "products", "outcomes": ["delay:1000"]})
        host.send({"jsonrpc": "2.0", "id": "late", "method": "vm.send", "params": {"vm": "pl", "input": "refresh"}})
        log_out(host)
        advanced = host.request("control.clock.advance", {"ms": 1000})
        late = [m for m in advanced.messages if m.get("id") == "late"]
        # The answer belonged to the ended session: dropped, as a cancellation.
        assert late and late[0]["error"]["code"] == -32800
        assert values(host, "pl", ["items", "isStale"]) == {"items": [], "isStale": False}
        assert host.close() == 0
    assert list_keys(state) == []
    with HostProcess("--state-dir", str(state)) as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        assert values(host, "pl", ["items", "isStale"]) == {"items": [], "isStale": False}


def test_a_refresh_asked_before_a_logout_and_a_new_login_is_not_the_new_logins(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state), "--clock", "manual", "--test-controls") as host:
        log_in(host)
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        host.request("control.backend.script", {"endpoint": "products", "outcomes": ["delay:1000"]})
        host.send({"jsonrpc": "2.0", "id": "late", "method": "vm.send", "params": {"vm": "pl", "input": "refresh"}})
        log_out(host)
        log_in(host, "next")
        advanced = host.request("control.clock.advance", {"ms": 1000})
        late = [m for m in advanced.messages if m.get("id") == "late"]
        assert late and late[0]["error"]["code"] == -32800
        assert values(host, "pl", ["items"]) == {"items": []}
        assert list_keys(state) == []
        host.request("vm.create", {"kind": "ProductList", "id": "pl2"})
        assert values(host, "pl2", ["items", "isStale"]) == {"items": [], "isStale": False}


def test_a_damaged_saved_list_is_ignored_and_logged_by_key_only(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with HostProcess("--state-dir", str(state)) as host:
        log_in(host)
        refresh_products(host)
    [key] = list_keys(state)
    with sqlite3.connect(state / "state.sqlite3") as db:
        db.execute("UPDATE state SET value = '{\"page\":1,\"hasMore\":true,\"products\":[{\"id\":\"SECRET-ID\"}]}'"
                   " WHERE key = ?", (key,))
    logs = tmp_path / "stderr.log"
    with open(logs, "wb") as stderr:
        with HostProcess("--state-dir", str(state), stderr=stderr) as host:
            host.request("vm.create", {"kind": "ProductList", "id": "pl"})
            assert values(host, "pl", ["items", "isStale", "loadState"]) == {
                "items": [], "isStale": False, "loadState": "idle"}
            assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
            assert host.close() == 0
    text = logs.read_text()
    assert key in text and "SECRET-ID" not in text


# -- the SMS countdown across a restart ---------------------------------------------------------

def test_the_sms_countdown_survives_a_restart_on_the_manual_clock(tmp_path: Path) -> None:
    state = tmp_path / "state"
    options = ("--state-dir", str(state), "--clock", "manual", "--test-controls")
    with HostProcess(*options) as host:
        host.request("vm.create", {"kind": "Login", "args": {"mode": "code"}, "id": "a"})
        host.request("vm.send", {"vm": "a", "input": "phone", "value": PHONE})
        assert host.request("vm.send", {"vm": "a", "input": "sendCode"}).result == {}
        assert host.close() == 0
    with HostProcess(*options) as host:
        # The manual clock's wall time starts at the same origin each run: 25 s pass in this one.
        host.request("control.clock.advance", {"ms": 25_000})
        host.request("vm.create", {"kind": "Login", "args": {"mode": "code"}, "id": "b"})
        host.request("vm.send", {"vm": "b", "input": "phone", "value": "139 1234 5678"})
        assert values(host, "b", ["countdown", "canSendCode", "sendCodeTitle"]) == {
            "countdown": 35, "canSendCode": False, "sendCodeTitle": "重新发送(35s)"}
        refused = host.request("vm.send", {"vm": "b", "input": "sendCode"})
        assert refused.code == -32003
        host.request("control.clock.advance", {"ms": 35_000})
        assert values(host, "b", ["countdown", "canSendCode"]) == {"countdown": 0, "canSendCode": True}
        assert host.request("vm.send", {"vm": "b", "input": "sendCode"}).result == {}
    # Without the state dir the next run may send at once.
    with HostProcess("--clock", "manual", "--test-controls") as host:
        host.request("vm.create", {"kind": "Login", "args": {"mode": "code"}, "id": "c"})
        host.request("vm.send", {"vm": "c", "input": "phone", "value": PHONE})
        assert values(host, "c", ["countdown", "canSendCode"]) == {"countdown": 0, "canSendCode": True}
