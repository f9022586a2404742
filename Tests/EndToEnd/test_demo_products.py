"""`--demo-products N`: the embedded backend's catalogue size (protocol/backend.md).

57 products by default; a larger catalogue continues the documented rule past `p057`. A 5,000-item
list at pageSize 100 is 50 pages: `loadMore` (which loads page 1 on a fresh list) succeeds 50 times
and is then refused with `no more pages`. The embedded backend answers at once (latency 0), so no
test waits on time.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from harness import HostProcess, binary
from test_product_list import cell, cells

DISABLED_NO_MORE_PAGES = {"code": -32003, "message": 'Input "loadMore" is disabled: no more pages',
                          "data": {"input": "loadMore", "reason": "no more pages"}}


def apply_change(mirror: dict, change: dict) -> None:
    """Applies one vm.changed to a local mirror, as a client does (SPEC §4, list diffs)."""
    mirror.update(change.get("values", {}))
    for name, splices in change.get("splices", {}).items():
        for splice in splices:
            index = splice["index"]
            mirror[name][index:index + splice["remove"]] = splice["insert"]


def test_five_thousand_products_are_fifty_load_mores_of_one_hundred():
    # subscribed with list diffs, so each load-more carries its page only (full mode would resend
    # the growing list: 17 MB over the 50 load-mores, for the same paging)
    with HostProcess("--demo-products", "5000") as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl", "args": {"pageSize": 100}})
        subscribed = host.request("vm.subscribe", {"vm": "pl", "diff": True})
        mirror = dict(subscribed.result["values"])
        assert mirror["items"] == [] and mirror["hasMore"] is True
        for page in range(1, 51):
            sent = host.request("vm.send", {"vm": "pl", "input": "loadMore"})
            assert sent.result == {}, (page, sent.response)
            for change in sent.changes:
                apply_change(mirror, change)
            assert mirror["page"] == page
            assert len(mirror["items"]) == 100 * page
            assert mirror["hasMore"] is (page < 50)
            if page > 1:
                # a load-more costs the new page: one splice at the end, never the whole list
                spliced = [c for c in sent.changes if "items" in c.get("splices", {})]
                assert [c["splices"]["items"] for c in spliced] == [[{
                    "index": 100 * (page - 1), "remove": 0, "insert": cells(100 * page - 99, 100 * page)}]]
                assert all("items" not in c.get("values", {}) for c in sent.changes)
        refused = host.request("vm.send", {"vm": "pl", "input": "loadMore"})
        assert refused.messages == [{"jsonrpc": "2.0", "id": refused.id, "error": DISABLED_NO_MORE_PAGES}]
        assert mirror["items"] == cells(1, 5000)
        assert mirror["items"][-1] == cell(5000) and mirror["items"][-1]["id"] == "p5000"
        got = host.request("vm.get", {"vm": "pl"}).result["values"]
        assert got == mirror


def test_the_default_is_the_documented_fifty_seven():
    with HostProcess() as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl", "args": {"pageSize": 100}})
        assert host.request("vm.send", {"vm": "pl", "input": "loadMore"}).result == {}
        values = host.request("vm.get", {"vm": "pl"}).result["values"]
        assert values["items"] == cells(1, 57)
        assert values["hasMore"] is False


def test_an_empty_catalogue_gives_an_empty_list():
    with HostProcess("--demo-products", "0") as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
        values = host.request("vm.get", {"vm": "pl"}).result["values"]
        assert values["items"] == [] and values["isEmpty"] is True and values["hasMore"] is False


def test_reset_keeps_the_catalogue_size():
    with HostProcess("--demo-products", "150", "--test-controls") as host:
        host.request("vm.create", {"kind": "ProductList", "id": "pl", "args": {"pageSize": 100}})
        assert host.request("control.backend.reset").result == {}
        for _ in range(2):
            assert host.request("vm.send", {"vm": "pl", "input": "loadMore"}).result == {}
        values = host.request("vm.get", {"vm": "pl"}).result["values"]
        assert values["items"] == cells(1, 150) and values["hasMore"] is False


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), *args], input=b"", capture_output=True, timeout=20)


@pytest.mark.parametrize("args, problem", [
    (("--demo-products=-1",), "from 0 to 1000000, got -1"),
    (("--demo-products", "1000001"), "from 0 to 1000000, got 1000001"),
    (("--demo-products", "many"), "many"),
    (("--demo-products", "100", "--backend", "http://127.0.0.1:9"), "embedded backend only"),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else None)
def test_a_bad_catalogue_size_is_refused_with_a_clear_message(args, problem):
    done = cli(*args)
    assert done.returncode != 0
    assert done.stdout == b""
    stderr = done.stderr.decode()
    assert "--demo-products" in stderr or "demo-products" in stderr
    assert problem in stderr, stderr


def test_help_explains_demo_products():
    done = cli("--help")
    assert done.returncode == 0
    text = done.stdout.decode()
    entry = re.search(r"--demo-products <N>\s+(.*?)\n\s*\n", text, re.S)
    assert entry, text
    assert "embedded backend" in entry.group(1) and "57" in entry.group(1)
