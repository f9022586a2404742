"""The request layer through the real binary (issue 16): both envelope conventions against a real
HTTP server, friendly error messages beside developer details, load states a late subscriber can
render, sale status codes, saved groups kept, and login input as people type it.

The HTTP server here answers like seed 004's: `{"code": "0", "msg": "成功", "data": …}` and
`{"code": "1", "msg": "失败"}`, with no `success` member.
"""
from __future__ import annotations

import json

import pytest

from harness import HostProcess, LoopbackServer, QuietHandler

PRODUCT = {"id": "p1", "name": "稳健增利1号", "bank": "招商银行", "annualRate": 4.35, "saleStatus": "soldOut",
           "termDays": 90, "minAmount": 50000}


class SeedServer(LoopbackServer):
    """A backend writing `{code, msg}` envelopes; `fail_next` makes the next call to a path fail."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict, dict]] = []
        self.fail_next: dict[str, int] = {}
        server = self

        class Handler(QuietHandler):
            def answer(self, status: int, body: dict) -> None:
                data = json.dumps(body, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_call(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else {}
                path = self.path.split("?")[0]
                server.requests.append((self.command, path, body, dict(self.headers)))
                if server.fail_next.get(path):
                    status = server.fail_next.pop(path)
                    self.answer(status, {"code": str(status), "msg": "<html>Bad Gateway</html>"})
                elif path == "/auth/login":
                    if body.get("password") == "123456":
                        self.answer(200, {"code": "0", "msg": "成功", "data": {"token": "seed-token"}})
                    else:
                        self.answer(200, {"code": "1", "msg": "失败"})
                elif path == "/auth/sms-code":
                    self.answer(200, {"code": 0, "msg": "成功", "data": None})
                elif path == "/products":
                    self.answer(200, {"code": 0, "msg": "成功", "data": [PRODUCT],
                                      "page": {"index": 1, "size": 20, "total": 1}})
                elif path == "/menus/m1/groups" and self.command == "GET":
                    self.answer(200, {"code": "0", "msg": "成功",
                                      "data": [{"id": "g1", "name": "招牌热菜", "dishCount": 12}]})
                else:
                    self.answer(200, {"code": "404", "msg": ""})

            do_GET = do_POST = do_PUT = do_DELETE = handle_call

        self.serve(Handler)


@pytest.fixture
def seed():
    server = SeedServer()
    yield server
    server.close()


def values(host: HostProcess, vm: str, outputs: list[str]) -> dict:
    return host.request("vm.get", {"vm": vm, "outputs": outputs}).result["values"]


# -- 16.1 the {code, msg} envelope ---------------------------------------------------------------

def test_login_succeeds_and_fails_against_a_code_and_msg_server(seed):
    with HostProcess("--backend", seed.url) as host:
        host.request("vm.create", {"kind": "Login", "id": "l"})
        host.request("vm.subscribe", {"vm": "l", "outputs": ["failureMessage", "navigate", "error"]})
        host.request("vm.send", {"vm": "l", "input": "username", "value": "138 0013 8000"})
        host.request("vm.send", {"vm": "l", "input": "password", "value": "000000"})
        failed = host.request("vm.send", {"vm": "l", "input": "submit"})
        assert failed.code == -32004
        assert failed.error["data"] == {"kind": "business", "code": "1", "message": "失败",
                                        "detail": 'the server reported failure code "1"', "input": "submit"}
        assert values(host, "l", ["failureMessage"]) == {"failureMessage": "失败"}

        host.request("vm.send", {"vm": "l", "input": "password", "value": "123456"})
        ok = host.request("vm.send", {"vm": "l", "input": "submit"})
        assert ok.result == {}
        assert [e["value"] for e in ok.events] == [{"route": "ProductList"}]
        # The normalized account is what the server got.
        logins = [body for method, path, body, _ in seed.requests if path == "/auth/login"]
        assert [body["username"] for body in logins] == ["13800138000", "13800138000"]


def test_products_and_groups_read_the_code_and_msg_envelope(seed):
    with HostProcess("--backend", seed.url) as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
        got = values(host, "pl", ["items", "loadState", "hasMore"])
        assert got["loadState"] == "loaded" and got["hasMore"] is False
        [cell] = got["items"]
        assert cell["saleStatus"] == "已售罄" and cell["saleStatusCode"] == "soldOut"

        host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g"})
        assert host.request("vm.send", {"vm": "g", "input": "load"}).result == {}
        assert values(host, "g", ["groups", "loadState"]) == {
            "groups": [{"id": "g1", "name": "招牌热菜", "dishCount": 12}], "loadState": "loaded"}


# -- 16.2 / 16.3 friendly errors and load states ------------------------------------------------

def test_a_server_error_is_friendly_never_quotes_the_body_and_a_retry_recovers(seed):
    with HostProcess("--backend", seed.url) as host:
        host.request("initialize", {"locale": "en"})
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        seed.fail_next["/products"] = 502
        failed = host.request("vm.send", {"vm": "pl", "input": "refresh"})
        error = failed.error["data"]
        assert error == {"kind": "server", "code": 502, "message": "Server error (502). Please try again later.",
                         "detail": "the server answered HTTP 502", "input": "refresh"}
        assert "Bad Gateway" not in json.dumps(failed.response)
        # A client that subscribes only now can draw "load failed, tap to retry".
        late = host.request("vm.subscribe", {"vm": "pl", "outputs": ["loadState", "lastError"]})
        assert late.result["values"] == {"loadState": "failed", "lastError": error}
        retry = host.request("vm.send", {"vm": "pl", "input": "refresh"})
        assert retry.result == {}
        assert values(host, "pl", ["loadState", "lastError"]) == {"loadState": "loaded", "lastError": None}


@pytest.mark.parametrize("locale, message", [
    ("zh-Hans", "网络连接失败，请检查网络后重试"),
    ("en", "No connection. Check your network and try again."),
])
def test_no_connection_reads_as_such_in_the_locale(locale, message):
    with HostProcess("--backend", "http://127.0.0.1:9", "--timeout-ms", "5000") as host:
        host.request("initialize", {"locale": locale})
        host.request("vm.create", {"kind": "Login", "id": "l"})
        host.request("vm.send", {"vm": "l", "input": "username", "value": "13800138000"})
        host.request("vm.send", {"vm": "l", "input": "password", "value": "123456"})
        failed = host.request("vm.send", {"vm": "l", "input": "submit"})
        assert failed.error["data"]["kind"] == "network"
        assert failed.error["data"]["message"] == message
        assert failed.error["data"]["detail"]  # for developers, in English
        assert values(host, "l", ["failureMessage"]) == {"failureMessage": message}


@pytest.fixture
def host():
    with HostProcess("--clock", "manual", "--test-controls") as process:
        yield process


def test_menu_sub_group_load_state_cancel_and_a_saved_group_kept(host):
    host.request("vm.create", {"kind": "MenuSubGroup", "args": {"menuUid": "m1"}, "id": "g"})
    assert values(host, "g", ["loadState", "lastError"]) == {"loadState": "idle", "lastError": None}
    host.request("vm.send", {"vm": "g", "input": "load"})
    host.request("vm.create", {"kind": "MenuEditGroup", "args": {"menuUid": "m1", "parent": "g"}, "id": "e"})
    host.request("vm.send", {"vm": "e", "input": "name", "value": "夜宵"})
    host.request("control.backend.script", {"endpoint": "groups.list", "outcomes": ["http:503"]})
    assert host.request("vm.send", {"vm": "e", "input": "save"}).result["value"]["id"] == "g5"
    got = values(host, "g", ["groups", "loadState", "lastError"])
    assert [row["id"] for row in got["groups"]] == ["g1", "g2", "g3", "g4", "g5"]
    assert got["loadState"] == "failed" and got["lastError"]["code"] == 503
    assert got["lastError"]["message"] == "服务器错误（503），请稍后重试"

    host.request("control.backend.latency", {"ms": 1000})
    host.send({"jsonrpc": "2.0", "id": "load", "method": "vm.send", "params": {"vm": "g", "input": "load"}})
    cancel = host.request("vm.send", {"vm": "g", "input": "cancel"})
    assert any(m.get("id") == "load" and m["error"]["code"] == -32800 for m in cancel.messages)
    assert values(host, "g", ["loadState", "lastError"])["loadState"] == "failed"


# -- 16.8 login input as people type it ---------------------------------------------------------

def test_a_typed_phone_is_normalized_and_its_countdown_outlives_the_screen(host):
    host.request("vm.create", {"kind": "Login", "args": {"mode": "code"}, "id": "a"})
    host.request("vm.send", {"vm": "a", "input": "phone", "value": "+86 139-1234-5678"})
    assert values(host, "a", ["phoneValid"]) == {"phoneValid": True}
    assert host.request("vm.send", {"vm": "a", "input": "sendCode"}).result == {}
    host.request("control.clock.advance", {"ms": 10_000})
    host.request("vm.dispose", {"vm": "a"})

    host.request("vm.create", {"kind": "Login", "args": {"mode": "code"}, "id": "b"})
    host.request("vm.send", {"vm": "b", "input": "phone", "value": "１３９１２３４５６７８"})
    assert values(host, "b", ["phoneValid", "countdown", "canSendCode"]) == {
        "phoneValid": True, "countdown": 50, "canSendCode": False}
    refused = host.request("vm.send", {"vm": "b", "input": "sendCode"})
    assert refused.code == -32003
    # Another phone may get a code at once.
    host.request("vm.send", {"vm": "b", "input": "phone", "value": "13800138000"})
    host.request("control.clock.advance", {"ms": 50_000})
    host.request("vm.send", {"vm": "b", "input": "phone", "value": "138-0013-8000"})
    assert values(host, "b", ["countdown", "canSendCode"]) == {"countdown": 0, "canSendCode": True}


def test_a_new_attempt_clears_the_last_failure(host):
    host.request("vm.create", {"kind": "Login", "id": "l"})
    host.request("vm.send", {"vm": "l", "input": "username", "value": "13800138000"})
    host.request("vm.send", {"vm": "l", "input": "password", "value": "000000"})
    host.request("vm.send", {"vm": "l", "input": "submit"})
    assert values(host, "l", ["failureMessage"]) == {"failureMessage": "用户名或密码错误"}
    host.request("vm.subscribe", {"vm": "l", "outputs": ["failureMessage"]})
    host.request("control.backend.latency", {"ms": 100})
    host.send({"jsonrpc": "2.0", "id": "s", "method": "vm.send", "params": {"vm": "l", "input": "submit"}})
    advanced = host.request("control.clock.advance", {"ms": 100})
    changes = [m["params"]["values"] for m in advanced.messages if m.get("method") == "vm.changed"]
    # Cleared as the attempt started, then set by its failure.
    assert changes == [{"failureMessage": None}, {"failureMessage": "用户名或密码错误"}]
