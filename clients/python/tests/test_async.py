"""The asyncio flavour: the same surface with coroutines (run with asyncio.run, no plugin)."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any, Dict, List

import pytest

import vmhost
from conftest import OPTIONS


async def spawn_and_run(diff: bool) -> Dict[str, Any]:
    async with vmhost.AsyncHost.spawn(*OPTIONS, stderr=subprocess.DEVNULL) as host:
        await host.ping()
        assert "ProductList" in [k["kind"] for k in (await host.describe())["kinds"]]
        vm = await host.create("ProductList")
        await vm.subscribe(diff=diff)
        errors: List[Any] = []
        vm.on("error", errors.append)

        assert await vm.refresh() is None
        await vm.send("loadMore")
        assert len(vm["items"]) == 40 and vm["page"] == 2

        await host.request("control.backend.latency", {"ms": 1000})
        pending = vm.send_async("loadMore")
        pending.cancel()
        with pytest.raises(vmhost.RequestCancelled):
            await pending
        assert vm["isLoadingMore"] is False

        await host.request("control.backend.latency", {"ms": 0})
        await host.request("control.backend.script",
                           {"endpoint": "products", "outcomes": ["malformed"]})
        with pytest.raises(vmhost.CommandFailed) as failed:
            await vm.loadMore()
        assert failed.value.kind == "decode" and errors == [failed.value.error]

        await vm.loadMore()
        with pytest.raises(vmhost.InputDisabled):
            await vm.loadMore()
        with pytest.raises(vmhost.UnknownMember):
            await vm.lodMore()
        with pytest.raises(vmhost.UnknownMember):
            vm["itmes"]
        with pytest.raises(vmhost.MethodNotFound):
            await host.request("nope")
        mirror = vm.values
        assert mirror == await vm.get()
        await vm.dispose()
    assert host.returncode == 0
    return mirror


def test_async_product_list_full_and_diff() -> None:
    full = asyncio.run(spawn_and_run(diff=False))
    diffed = asyncio.run(spawn_and_run(diff=True))
    assert full == diffed and len(full["items"]) == 57


def test_async_login_navigate() -> None:
    async def main() -> None:
        host = await vmhost.AsyncHost.spawn(*OPTIONS, stderr=subprocess.DEVNULL)
        async with host:
            login = await host.create("Login")
            await login.subscribe()
            routes: List[Any] = []
            arrived = asyncio.Event()

            async def on_navigate(value: Any) -> None:
                routes.append(value)
                arrived.set()

            login.on("navigate", on_navigate)
            await login.username("13800138000")
            await login.password("123456")
            await login.submit()
            await asyncio.wait_for(arrived.wait(), 5)
            assert routes == [{"route": "ProductList"}]
        assert host.returncode == 0

    asyncio.run(main())
