"""View-model traffic through the real binary, for the kinds the host serves today. BRIEF §3,
Ordering: every `vm.changed` a request causes is written before that request's response, so a
client that got the reply can trust its mirror. Skipped while the host does not list the kind.
"""
from __future__ import annotations

import pytest

from harness import HostProcess, problems


def kinds(host: HostProcess) -> list[str]:
    listed = host.request("host.describe").result["kinds"]
    return [k["kind"] if isinstance(k, dict) else k for k in listed]


@pytest.fixture
def product_list_host():
    with HostProcess() as host:
        host.request("initialize", {"locale": "en"})
        if "ProductList" not in kinds(host):
            pytest.skip("the host does not serve ProductList yet")
        yield host
        assert host.close() == 0


def test_changes_caused_by_a_request_come_before_its_reply(product_list_host):
    host = product_list_host
    created = host.request("vm.create", {"kind": "ProductList", "args": {"pageSize": 5}})
    assert created.error is None, created.error
    vm = created.result["vm"]
    subscribed = host.request("vm.subscribe", {"vm": vm})
    subscription = subscribed.result["subscription"]
    mirror = dict(subscribed.result["values"])

    refreshed = host.request("vm.send", {"vm": vm, "input": "refresh"})
    for message in refreshed.messages:
        assert problems(message) == [], message
    assert refreshed.error is None, refreshed.error
    assert refreshed.messages[-1] is refreshed.response  # nothing of this request after its reply
    changes = [c for c in refreshed.changes if c["subscription"] == subscription]
    assert changes, "a refresh changed nothing on the wire"
    for change in changes:
        assert change["vm"] == vm
        mirror.update(change["values"])

    # the mirror built from the notifications is the host's state once the reply is in
    after = host.request("vm.get", {"vm": vm})
    assert after.messages == [after.response], "a change arrived after the reply that caused it"
    assert after.result["values"] == {k: v for k, v in mirror.items() if k in after.result["values"]}
    assert len(mirror["items"]) == 5
    assert mirror["page"] == 1
    assert mirror["isRefreshing"] is False


def test_a_disposed_view_model_is_unknown(product_list_host):
    host = product_list_host
    vm = host.request("vm.create", {"kind": "ProductList"}).result["vm"]
    assert {"vm": vm, "kind": "ProductList"} in host.request("vm.list").result
    assert host.request("vm.dispose", {"vm": vm}).result == {}
    assert host.request("vm.get", {"vm": vm}).code == -32001
    assert host.request("vm.list").result == []
