"""ProductList through the real binary: mirror, splices, cancellation, failures."""

from __future__ import annotations

import subprocess
from typing import Any, Dict, List

import pytest

import vmhost
from conftest import OPTIONS, advance


def run_session(diff: bool) -> Dict[str, Any]:
    with vmhost.Host.spawn(*OPTIONS, stderr=subprocess.DEVNULL) as host:
        vm = host.create("ProductList", {"pageSize": 20})
        initial = vm.subscribe(diff=diff)
        assert initial == {"items": [], "page": 0, "hasMore": True, "isRefreshing": False,
                           "isLoadingMore": False, "isEmpty": False, "isStale": False, "loadState": "idle",
                           "lastError": None}
        changes: List[Dict[str, Any]] = []
        vm.on_change(changes.append)
        assert vm.refresh() is None
        assert [cell["id"] for cell in vm["items"]][:2] == ["p001", "p002"]
        vm.loadMore()
        vm.send("loadMore")
        assert len(vm["items"]) == 57 and vm["page"] == 3 and vm["hasMore"] is False
        with pytest.raises(vmhost.InputDisabled) as refused:
            vm.loadMore()
        assert refused.value.reason == "no more pages" and refused.value.input == "loadMore"
        vm.refresh()  # replaces the 57 items with page 1
        assert len(vm["items"]) == 20 and vm["page"] == 1
        assert changes and all(isinstance(change, dict) for change in changes)
        mirror = vm.values
        assert mirror == vm.get(), "the mirror equals the host's state"
        return mirror


def test_full_and_diff_mirrors_are_identical() -> None:
    full = run_session(diff=False)
    diffed = run_session(diff=True)
    assert full == diffed
    assert full["items"][0] == {"id": "p001", "name": "稳健增利1号", "bank": "招商银行",
                                "profit": "4.35%", "saleStatus": "在售", "saleStatusCode": "onSale", "term": "90天",
                                "amount": "¥50,000"}


def test_cancel_a_pending_command(host: vmhost.Host) -> None:
    vm = host.create("ProductList")
    vm.subscribe()
    errors: List[Any] = []
    vm.on("error", errors.append)
    host.request("control.backend.latency", {"ms": 1000})
    pending = vm.send_async("refresh")
    assert not pending.done()
    pending.cancel()
    with pytest.raises(vmhost.RequestCancelled) as caught:
        pending.result(5)
    assert caught.value.code == -32800
    assert vm["isRefreshing"] is False
    advance(host, 1000)  # the cancelled fetch's reply would be due now: nothing is applied
    assert vm["items"] == [] and vm["page"] == 0 and errors == []
    pending.cancel()  # cancelling a finished request does nothing


def test_request_waiting_on_the_clock(host: vmhost.Host) -> None:
    vm = host.create("ProductList")
    vm.subscribe()
    host.request("control.backend.latency", {"ms": 100})
    pending = vm.send_async("refresh")
    assert host.request("control.clock.advance", {"ms": 100}) == {"now": 100}
    assert pending.done(), "the command's reply comes before the clock's"
    assert pending.result() is None
    assert len(vm["items"]) == 20


def test_failed_command_raises_and_emits_error(host: vmhost.Host) -> None:
    vm = host.create("ProductList")
    vm.subscribe()
    vm.refresh()
    events: List[Any] = []
    vm.on("error", events.append)
    host.request("control.backend.script", {"endpoint": "products", "outcomes": ["http:500"]})
    with pytest.raises(vmhost.CommandFailed) as caught:
        vm.loadMore()
    expected = {"kind": "server", "code": 500, "message": "服务器错误（500），请稍后重试",
                "detail": "the server answered HTTP 500", "input": "loadMore"}
    assert caught.value.code == -32004
    assert caught.value.error == expected and caught.value.kind == "server"
    assert caught.value.user_message == "服务器错误（500），请稍后重试"
    assert caught.value.detail == "the server answered HTTP 500"
    assert caught.value.input == "loadMore"
    assert vm["loadState"] == "failed" and vm["lastError"] == expected
    assert events == [expected], "the error event arrives before the reply"
    assert vm["page"] == 1 and len(vm["items"]) == 20 and vm["isLoadingMore"] is False

    host.request("control.backend.script",
                 {"endpoint": "products", "outcomes": ["business:E1:维护中: 稍后"]})
    with pytest.raises(vmhost.CommandFailed) as business:
        vm.refresh()
    assert business.value.error == {"kind": "business", "code": "E1", "message": "维护中: 稍后",
                                    "detail": 'the server reported failure code "E1"', "input": "refresh"}
    assert len(events) == 2


def test_dispose_cancels_and_unknown_afterwards(host: vmhost.Host) -> None:
    vm = host.create("ProductList")
    host.request("control.backend.latency", {"ms": 1000})
    pending = vm.send_async("refresh")
    vm.dispose()
    with pytest.raises(vmhost.RequestCancelled):
        pending.result(5)
    with pytest.raises(vmhost.UnknownViewModel):
        vm.refresh()


def test_a_request_from_a_callback_is_refused(host: vmhost.Host) -> None:
    vm = host.create("ProductList")
    vm.subscribe(["isRefreshing"])
    outcomes: List[BaseException] = []

    def blocking(change: Dict[str, Any]) -> None:
        try:
            host.ping()
        except RuntimeError as error:
            outcomes.append(error)

    vm.on_change(blocking)
    vm.refresh()
    assert outcomes and all("callback" in str(error) for error in outcomes)
    assert vm.values == {"isRefreshing": False}
