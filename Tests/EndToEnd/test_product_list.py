"""The ProductList view-model through the real binary (BRIEF §5, issue 5).

The embedded backend serves 57 products (pages of 20, 20, 17); time moves only with
`control.clock.advance`, and every fetch takes 100 ms of it (`control.backend.latency`), so a test
can look at the list while a fetch is in flight. A command's first notification is read before the
clock moves, so each later exchange holds exactly what the elapsed time caused.
"""
from __future__ import annotations

import pytest

from harness import HostProcess

STATUS_ZH = {"onSale": "在售", "soldOut": "已售罄", "upcoming": "即将发售"}
STATUS_EN = {"onSale": "On sale", "soldOut": "Sold out", "upcoming": "Upcoming"}
SERIES = ["稳健增利", "安心盈", "天天宝", "季季红", "月月享", "年年丰"]
BANKS = ["招商银行", "工商银行", "建设银行", "农业银行", "中国银行", "交通银行", "浦发银行", "兴业银行"]
# The same in English (protocol/backend.md, English names).
SERIES_EN = ["Steady Growth", "Peace of Mind", "Daily Treasure", "Quarterly Red", "Monthly Share", "Yearly Harvest"]
BANKS_EN = ["CMB", "ICBC", "CCB", "ABC", "BOC", "BoCom", "SPDB", "CIB"]


def cell(n: int, en: bool = False) -> dict:
    """Demo product n (1-based) as a cell, from the rule written in protocol/backend.md."""
    i = n - 1
    rate = 300 + (135 + 37 * i) % 200
    status = ["onSale", "onSale", "onSale", "soldOut", "upcoming"][i % 5]
    days = [90, 180, 365, 30][i % 4]
    amount = [50000, 10000, 1000][i % 3]
    return {
        "id": "p%03d" % n,
        "name": "%s %d" % (SERIES_EN[i % 6], n) if en else "%s%d号" % (SERIES[i % 6], n),
        "bank": (BANKS_EN if en else BANKS)[i % 8],
        "profit": "%d.%02d%%" % (rate // 100, rate % 100),
        "saleStatus": (STATUS_EN if en else STATUS_ZH)[status],
        "saleStatusCode": status,
        "term": ("%d days" % days) if en else ("%d天" % days),
        "amount": "¥{:,}".format(amount),
    }


def cells(first: int, last: int, en: bool = False) -> list[dict]:
    return [cell(n, en) for n in range(first, last + 1)]


def changed(values: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "vm.changed", "params": {"subscription": "s1", "vm": "pl", "values": values}}


def event(name: str, value) -> dict:
    return {"jsonrpc": "2.0", "method": "vm.event", "params": {"subscription": "s1", "vm": "pl", "name": name, "value": value}}


def result(id, value) -> dict:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def cancelled(id) -> dict:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": -32800, "message": "Request cancelled"}}


INITIAL = {"items": [], "page": 0, "hasMore": True, "isRefreshing": False, "isLoadingMore": False, "isEmpty": False,
           "isStale": False, "loadState": "idle", "lastError": None}
LOADED = {"loadState": "loaded"}


class List:
    """A host with ProductList `pl` created and subscribed, and fetches that take 100 ms."""

    def __init__(self, host: HostProcess, args: dict | None = None, locale: str | None = None) -> None:
        self.host = host
        if locale:
            assert host.request("initialize", {"locale": locale}).result["locale"] == locale
        params = {"kind": "ProductList", "id": "pl"}
        if args is not None:
            params["args"] = args
        assert host.request("vm.create", params).result["vm"] == "pl"
        assert host.request("vm.subscribe", {"vm": "pl"}).result["values"] == INITIAL
        assert host.request("control.backend.latency", {"ms": 100}).result == {}

    def start(self, input: str, id: str) -> dict:
        """Sends a command and returns the first message it caused (its flag going up)."""
        self.host.send({"jsonrpc": "2.0", "id": id, "method": "vm.send", "params": {"vm": "pl", "input": input}})
        return self.host.read_message()

    def advance(self, ms: int) -> list[dict]:
        """Moves the clock; returns what that caused, without the control's own reply."""
        exchange = self.host.request("control.clock.advance", {"ms": ms})
        return [m for m in exchange.messages if m is not exchange.response]

    def script(self, *outcomes: str) -> None:
        assert self.host.request("control.backend.script", {"endpoint": "products", "outcomes": list(outcomes)}).result == {}

    def values(self) -> dict:
        return self.host.request("vm.get", {"vm": "pl"}).result["values"]


@pytest.fixture
def host():
    with HostProcess("--clock", "manual", "--test-controls") as process:
        yield process


def test_first_load_and_three_pages_to_the_end(host):
    pl = List(host)
    assert pl.start("refresh", "r1") == changed({"isRefreshing": True, "loadState": "loading"})
    assert pl.advance(100) == [
        changed({"items": cells(1, 20), "page": 1, "isRefreshing": False, **LOADED}), result("r1", {})]
    assert pl.start("loadMore", "m2") == changed({"isLoadingMore": True, "loadState": "loading"})
    assert pl.advance(100) == [
        changed({"items": cells(1, 40), "page": 2, "isLoadingMore": False, **LOADED}), result("m2", {})]
    assert pl.start("loadMore", "m3") == changed({"isLoadingMore": True, "loadState": "loading"})
    assert pl.advance(100) == [
        changed({"items": cells(1, 57), "page": 3, "hasMore": False, "isLoadingMore": False, **LOADED}), result("m3", {}),
    ]
    refused = host.request("vm.send", {"vm": "pl", "input": "loadMore"}, id="m4")
    assert refused.messages == [{
        "jsonrpc": "2.0", "id": "m4",
        "error": {"code": -32003, "message": 'Input "loadMore" is disabled: no more pages',
                  "data": {"input": "loadMore", "reason": "no more pages"}},
    }]


def test_load_more_is_refused_while_a_refresh_runs(host):
    pl = List(host)
    assert pl.start("refresh", "r1") == changed({"isRefreshing": True, "loadState": "loading"})
    refused = host.request("vm.send", {"vm": "pl", "input": "loadMore"})
    assert refused.code == -32003
    assert refused.error["data"] == {"input": "loadMore", "reason": "a fetch is in flight"}
    assert pl.advance(100)[-1] == result("r1", {})


def test_refresh_during_load_more(host):
    pl = List(host)
    pl.start("refresh", "r1")
    pl.advance(100)
    assert pl.start("loadMore", "m1") == changed({"isLoadingMore": True, "loadState": "loading"})
    host.send({"jsonrpc": "2.0", "id": "r2", "method": "vm.send", "params": {"vm": "pl", "input": "refresh"}})
    assert [host.read_message() for _ in range(3)] == [
        changed({"isLoadingMore": False}), cancelled("m1"), changed({"isRefreshing": True}),
    ]
    # Only the refresh's fetch remains; page 1 again, so the items do not change.
    assert pl.advance(100) == [changed({"isRefreshing": False, **LOADED}), result("r2", {})]
    assert pl.values() == {**INITIAL, "items": cells(1, 20), "page": 1, **LOADED}


def test_cancel_input(host):
    pl = List(host)
    assert pl.start("refresh", "r1") == changed({"isRefreshing": True, "loadState": "loading"})
    reply = host.request("vm.send", {"vm": "pl", "input": "cancel"}, id="c1")
    assert reply.messages == [changed({"isRefreshing": False, "loadState": "idle"}), cancelled("r1"), result("c1", {})]
    assert pl.advance(5000) == []
    assert pl.values() == INITIAL


def test_cancel_request(host):
    pl = List(host)
    pl.start("refresh", "r1")
    pl.advance(100)
    assert pl.start("loadMore", "m1") == changed({"isLoadingMore": True, "loadState": "loading"})
    host.notify("$/cancelRequest", {"id": "m1"})
    assert [host.read_message() for _ in range(2)] == [changed({"isLoadingMore": False, **LOADED}), cancelled("m1")]
    assert pl.advance(5000) == []
    assert pl.values() == {**INITIAL, "items": cells(1, 20), "page": 1, **LOADED}


def test_dispose(host):
    pl = List(host)
    assert pl.start("refresh", "r1") == changed({"isRefreshing": True, "loadState": "loading"})
    reply = host.request("vm.dispose", {"vm": "pl"}, id="d1")
    assert reply.messages == [changed({"isRefreshing": False, "loadState": "idle"}), cancelled("r1"), result("d1", {})]
    assert pl.advance(5000) == []
    assert host.request("vm.list").result == []


# outcome, wait, kind, code, the user's message (zh-Hans), the developer's detail (None: the parser's).
FAILURES = [
    ("network", 100, "network", None, "网络连接失败，请检查网络后重试", "could not connect to the server"),
    ("timeout", 15000, "timeout", None, "请求超时，请稍后重试", "the request timed out"),
    ("http:404", 100, "server", 404, "服务器错误（404），请稍后重试", "the server answered HTTP 404"),
    ("http:500", 100, "server", 500, "服务器错误（500），请稍后重试", "the server answered HTTP 500"),
    ("business:1009:系统繁忙", 100, "business", "1009", "系统繁忙", 'the server reported failure code "1009"'),
    ("malformed", 100, "decode", None, "服务器返回的数据无法识别，请稍后重试", None),
]


@pytest.mark.parametrize("outcome,wait,kind,code,message,detail", FAILURES)
def test_every_failure_kind_keeps_the_list(host, outcome, wait, kind, code, message, detail):
    pl = List(host)
    pl.start("refresh", "r1")
    pl.advance(100)
    for input, flag in (("loadMore", "isLoadingMore"), ("refresh", "isRefreshing")):
        pl.script(outcome)
        assert pl.start(input, input) == changed({flag: True, "loadState": "loading"})
        messages = pl.advance(wait)
        assert len(messages) == 3
        error = messages[1]["params"]["value"]
        assert error["kind"] == kind and error["code"] == code and error["input"] == input
        assert error["message"] == message
        assert error["detail"] == detail if detail else error["detail"]
        assert messages == [
            changed({"lastError": error, flag: False, "loadState": "failed"}),
            event("error", error),
            {"jsonrpc": "2.0", "id": input,
             "error": {"code": -32004, "message": "Command failed: %s: %s" % (kind, error["message"]), "data": error}},
        ]
    assert pl.values() == {**INITIAL, "items": cells(1, 20), "page": 1, "loadState": "failed", "lastError": error}


def test_english(host):
    pl = List(host, locale="en")
    assert pl.start("refresh", "r1") == changed({"isRefreshing": True, "loadState": "loading"})
    assert pl.advance(100) == [
        changed({"items": cells(1, 20, en=True), "page": 1, "isRefreshing": False, **LOADED}), result("r1", {})]
    assert cell(1, en=True) == {
        "id": "p001", "name": "Steady Growth 1", "bank": "CMB", "profit": "4.35%", "saleStatus": "On sale",
        "saleStatusCode": "onSale", "term": "90 days", "amount": "¥50,000",
    }


def test_page_size(host):
    pl = List(host, args={"pageSize": 50})
    pl.start("refresh", "r1")
    assert pl.advance(100) == [
        changed({"items": cells(1, 50), "page": 1, "isRefreshing": False, **LOADED}), result("r1", {})]


@pytest.mark.parametrize("value,problem", [
    (0, "must be between 1 and 100, got 0"),
    (101, "must be between 1 and 100, got 101"),
    ("20", "expected an integer, got a string"),
])
def test_bad_page_size_names_the_argument(host, value, problem):
    reply = host.request("vm.create", {"kind": "ProductList", "args": {"pageSize": value}})
    assert reply.code == -32602
    assert reply.error["message"].endswith("params.args.pageSize: " + problem)


def test_describe(host):
    kind = host.request("host.describe", {"kind": "ProductList"}).result["kinds"][0]
    assert kind["args"]["properties"]["pageSize"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    assert [(i["name"], i["kind"], i.get("policy")) for i in kind["inputs"]] == [
        ("refresh", "command", "latest"), ("loadMore", "command", "ignore"), ("cancel", "trigger", None),
    ]
    assert [o["name"] for o in kind["outputs"]] == [
        "items", "page", "hasMore", "isRefreshing", "isLoadingMore", "isEmpty", "isStale", "loadState", "lastError",
        "error"]
    assert kind["outputs"][0]["schema"]["items"]["required"] == [
        "id", "name", "bank", "profit", "saleStatus", "saleStatusCode", "term", "amount"]
