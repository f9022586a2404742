"""The client in process: ``Host.embedded`` drives the reference app's library through the C ABI
(include/vmhost.h) with ctypes, with the same API as ``Host.spawn``.

Every conformance transcript is replayed through it (the client's replayer, ``vmhost.replay``, its
host opened in the library), error texts compared word for word too, and with no backend those that
recorded theirs: the library speaks the protocol of the binary, byte for byte. The library is
``$VMHOST_LIBRARY`` or this checkout's build of ``libvmhost-embedded`` (``swift build --product
vmhost-embedded``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import vmhost

from vmhost import replay as replayer

from test_conformance import FILES, OFFLINE, secrets_of


def replay_in_process(path: Path, offline: bool = False) -> None:
    failure = replayer.replay(path, offline=offline, secrets=secrets_of(path), exact_texts=True, library="")
    if failure is not None:
        pytest.fail(failure.report(), pytrace=False)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_transcript_through_the_abi(path: Path) -> None:
    replay_in_process(path)


@pytest.mark.parametrize("path", OFFLINE, ids=lambda p: p.stem)
def test_transcript_with_no_backend_through_the_abi(path: Path) -> None:
    replay_in_process(path, offline=True)


def test_every_transcript_at_once_through_the_abi() -> None:
    """Every transcript replayed at the same time, each on a thread of its own with a host of its
    own, all hosts in this one process (they share vmhost's host thread): a host's turn is its own
    whatever the others do (a countdown's advance is one `vm.changed` while other hosts are
    written to), so each replays as it does alone."""
    import threading

    failures: dict = {}
    start = threading.Barrier(len(FILES))

    def run(path: Path) -> None:
        try:
            start.wait(timeout=60)
            failure = replayer.replay(path, secrets=secrets_of(path), exact_texts=True, library="")
            if failure is not None:
                failures[path.stem] = failure.report()
        except Exception as error:  # noqa: BLE001 - reported with the transcript's name
            failures[path.stem] = repr(error)

    threads = [threading.Thread(target=run, args=(path,), name=path.stem) for path in FILES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), f"{thread.name} did not end within 120 s"
    assert not failures, "\n\n".join(f"{name}: {report}" for name, report in sorted(failures.items()))


def test_login_and_products_in_process() -> None:
    with vmhost.Host.embedded() as host:
        host.initialize(locale="en")
        login = host.create("Login")
        login.subscribe()
        login.username("13800138000")
        login.password("123456")
        events = []
        login.on("navigate", events.append)
        login.submit()
        assert events == [{"route": "ProductList"}]
        products = host.create("ProductList", {"pageSize": 20})
        products.subscribe(diff=True)
        products.refresh()
        products.loadMore()
        assert [cell["id"] for cell in products["items"]][:3] == ["p001", "p002", "p003"]
        assert len(products["items"]) == 40
    assert host.returncode == 0


def test_options_refused_raise_at_once() -> None:
    with pytest.raises(vmhost.HostExited) as raised:
        vmhost.Host.embedded("--clock", "sundial", stderr=vmhost.KEEP_STDERR)
    assert "status 64" in str(raised.value)
    assert "--clock" in str(raised.value)


def test_exit_ends_the_host_with_its_status() -> None:
    host = vmhost.Host.embedded("--clock", "manual")
    host.notify("exit")
    assert host.wait(5) == 1
    with pytest.raises(vmhost.HostExited):
        host.ping()
    host.close()


def test_several_hosts_in_one_process_are_apart() -> None:
    with vmhost.Host.embedded("--clock", "manual", "--test-controls") as first, \
            vmhost.Host.embedded("--clock", "manual", "--test-controls") as second:
        a = first.create("ProductList", id="list")
        b = second.create("ProductList", id="list")
        a.subscribe()
        b.subscribe()
        a.refresh()
        assert len(a["items"]) == 20
        assert b["page"] == 0
        assert [entry["vm"] for entry in second.list()] == ["list"]


def test_logs_go_where_stderr_says(tmp_path: Path) -> None:
    log_file = tmp_path / "log.txt"
    with open(log_file, "w") as stderr:
        with vmhost.Host.embedded("--log-level", "debug", stderr=stderr) as host:
            host.ping()
    text = log_file.read_text()
    assert "serving in process" in text
