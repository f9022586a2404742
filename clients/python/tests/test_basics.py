"""Methods, error codes as exceptions, typos, lifecycle."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import vmhost
from conftest import OPTIONS


def test_ping_describe_list(host: vmhost.Host) -> None:
    host.ping()
    kinds = {k["kind"]: k for k in host.describe()["kinds"]}
    assert {"ProductList", "Login", "MenuSubGroup", "MenuEditGroup"} <= set(kinds)
    inputs = {i["name"]: i for i in kinds["ProductList"]["inputs"]}
    assert inputs["refresh"]["kind"] == "command" and inputs["refresh"]["policy"] == "latest"
    only = host.describe("Login")["kinds"]
    assert [k["kind"] for k in only] == ["Login"]
    assert host.list() == []
    vm = host.create("ProductList", id="pl")
    assert (vm.handle, vm.kind) == ("pl", "ProductList")
    assert host.list() == [{"vm": "pl", "kind": "ProductList"}]
    assert vm.get("page", "hasMore") == {"page": 0, "hasMore": True}
    vm.dispose()
    assert host.list() == []


def test_initialize(host: vmhost.Host) -> None:
    result = host.initialize(locale="en")
    assert result["protocolVersion"] == "1" and result["locale"] == "en"


@pytest.mark.parametrize("method, params, error, code", [
    ("no.such.method", None, vmhost.MethodNotFound, -32601),
    ("vm.create", {"kind": 1}, vmhost.InvalidParams, -32602),
    ("vm.create", {"kind": "Nope"}, vmhost.InvalidParams, -32602),
    ("vm.get", {"vm": "ghost"}, vmhost.UnknownViewModel, -32001),
])
def test_errors_become_exceptions(host: vmhost.Host, method: str, params: object,
                                  error: type, code: int) -> None:
    with pytest.raises(error) as caught:
        host.request(method, params)
    assert isinstance(caught.value, vmhost.RPCError)
    assert caught.value.code == code
    assert caught.value.message


def test_invalid_args_name_the_member(host: vmhost.Host) -> None:
    with pytest.raises(vmhost.InvalidParams) as caught:
        host.create("ProductList", {"pageSize": 0})
    assert "params.args.pageSize: must be between 1 and 100, got 0" in caught.value.message


def test_unknown_member_from_the_host(host: vmhost.Host) -> None:
    vm = host.create("ProductList", id="pl")
    with pytest.raises(vmhost.UnknownMember) as caught:
        host.request("vm.send", {"vm": "pl", "input": "refrsh"})
    assert caught.value.code == -32002
    assert caught.value.data == {"vm": "pl", "input": "refrsh"}
    with pytest.raises(vmhost.UnknownViewModel) as unknown:
        host.request("vm.send", {"vm": "ghost", "input": "refresh"})
    assert unknown.value.data == {"vm": "ghost"}
    vm.dispose()


def test_typos_fail_at_once_with_the_valid_names(host: vmhost.Host) -> None:
    vm = host.create("ProductList")
    with pytest.raises(vmhost.UnknownMember) as attribute:
        vm.refrsh()
    assert isinstance(attribute.value, AttributeError)
    assert "refresh, loadMore, cancel" in str(attribute.value)
    with pytest.raises(vmhost.UnknownMember):
        vm.send("loadmore")
    with pytest.raises(vmhost.UnknownMember) as key:
        vm["itmes"]
    assert isinstance(key.value, KeyError)
    assert "items, page, hasMore" in str(key.value)
    with pytest.raises(vmhost.UnknownMember, match="is an event, not a property"):
        vm["error"]
    with pytest.raises(vmhost.UnknownMember):
        vm.on("eror", print)
    with pytest.raises(vmhost.UnknownMember):
        vm.subscribe(["itmes"])
    assert not hasattr(vm, "refrsh")
    with pytest.raises(LookupError, match="subscribe"):
        vm["items"]  # valid, but not mirrored yet


def test_binary_lookup_order(monkeypatch: pytest.MonkeyPatch) -> None:
    assert vmhost.find_binary("/x/vmhost") == "/x/vmhost"
    monkeypatch.setenv("VMHOST_BIN", "/y/vmhost")
    assert vmhost.find_binary() == "/y/vmhost"
    monkeypatch.delenv("VMHOST_BIN")
    try:
        found = vmhost.find_binary()  # the repository's build, else PATH
    except FileNotFoundError as error:
        assert "VMHOST_BIN" in str(error)
    else:
        assert os.path.basename(found) == "vmhost"


def test_a_checkouts_newer_build_wins_release_or_debug(tmp_path: Path) -> None:
    from vmhost._binary import build_in

    assert build_in(tmp_path) is None
    paths = {}
    for config in ("release", "debug"):
        path = tmp_path / ".build" / config / "vmhost"
        path.parent.mkdir(parents=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        paths[config] = path
    os.utime(paths["release"], (1_000_000, 1_000_000))
    os.utime(paths["debug"], (2_000_000, 2_000_000))
    assert build_in(tmp_path) == paths["debug"]  # a stale release build does not win
    os.utime(paths["release"], (3_000_000, 3_000_000))
    assert build_in(tmp_path) == paths["release"]
    paths["release"].unlink()
    assert build_in(tmp_path) == paths["debug"]


def test_shutdown_on_exit_and_later_requests() -> None:
    with vmhost.Host.spawn(*OPTIONS, stderr=subprocess.DEVNULL) as host:
        vm = host.create("ProductList")
        vm.subscribe()
        host.request("control.backend.latency", {"ms": 1000})
        pending = vm.send_async("refresh")
    with pytest.raises((vmhost.RequestCancelled, vmhost.HostShuttingDown, vmhost.HostExited)):
        pending.result(5)
    assert host.returncode == 0
    with pytest.raises(vmhost.HostExited):
        host.ping()


@pytest.mark.parametrize("stderr", [None, vmhost.KEEP_STDERR])
def test_host_exited_says_why_the_host_ended(stderr, capfd) -> None:
    host = vmhost.Host.spawn("--backend", "localhost:8080", stderr=stderr)
    with pytest.raises(vmhost.HostExited) as caught:
        host.ping()
    message = str(caught.value)
    assert "(status 64)" in message and "--backend" in message and "localhost:8080" in message
    assert "--backend" in host.stderr_tail
    assert ("--backend" in capfd.readouterr().err) == (stderr is None)  # shown unless kept only
    assert host.close() == 64


def test_async_host_exited_says_why_the_host_ended() -> None:
    import asyncio

    async def run() -> str:
        host = await vmhost.AsyncHost.spawn("--backend", "localhost:8080", stderr=vmhost.KEEP_STDERR)
        try:
            await host.ping()
        except vmhost.HostExited as error:
            return str(error)
        finally:
            await host.close()
        return ""

    message = asyncio.run(run())
    assert "(status 64)" in message and "--backend" in message
