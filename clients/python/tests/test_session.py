"""The protocol core both hosts share (vmhost._session.Session), driven without a process: what it
writes for each request, how it settles replies, routes notifications and says why a host ended."""

from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from typing import Any, Dict, List, Optional

import pytest

import vmhost
from vmhost._protocol import Call, create, describe, initialize
from vmhost._proxy import ViewModelBase
from vmhost._session import Session
from vmhost._stderr import StderrTail

DESCRIPTION = {
    "vm": "vm1", "kind": "ProductList",
    "inputs": [{"name": "refresh", "kind": "command"}],
    "outputs": [{"name": "items", "kind": "property"}, {"name": "page", "kind": "property"},
                {"name": "error", "kind": "event"}],
}


class Wire:
    """Stands for the host's pipes: what the session wrote, and an exit status to report."""

    def __init__(self) -> None:
        self.written: List[bytes] = []
        self.status: Optional[int] = None
        self.broken = False
        self.consumed: List[Any] = []

    def write(self, data: bytes) -> None:
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")
        self.written.append(data)

    def session(self, tail: Optional[StderrTail] = None, warn_unmatched: bool = True) -> Session:
        return Session(self.write, lambda: self.status, tail, self.consumed.append, warn_unmatched)

    def sent(self) -> List[Dict[str, Any]]:
        return [json.loads(data) for data in self.written]


def line(*messages: Any) -> bytes:
    body = messages[0] if len(messages) == 1 else list(messages)
    return json.dumps(body).encode() + b"\n"


def new_future() -> "Future[Any]":
    return Future()


def test_requests_are_numbered_framed_and_settled_by_their_replies() -> None:
    wire = Wire()
    session = wire.session()
    first, ping = session.start(Call("ping"), new_future)
    second, listed = session.start(Call("vm.list", {}), new_future)
    session.notify("$/cancelRequest", {"id": 7})
    assert (first, second) == (1, 2)
    assert wire.written[0] == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert wire.sent()[1:] == [{"jsonrpc": "2.0", "id": 2, "method": "vm.list", "params": {}},
                               {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 7}}]

    session.receive(line({"jsonrpc": "2.0", "id": 2, "result": []},
                         {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}))
    assert listed.result(0) == []
    with pytest.raises(vmhost.MethodNotFound) as error:
        ping.result(0)
    assert error.value.code == -32601


def test_the_usual_requests() -> None:
    assert initialize("en", {"x": 1}) == Call("initialize", {"x": 1, "locale": "en"})
    assert initialize(None, {}) == Call("initialize", {})
    assert describe(None) == Call("host.describe", {})
    assert describe("Login") == Call("host.describe", {"kind": "Login"})
    assert create("Login", None, None) == Call("vm.create", {"kind": "Login"})
    assert create("Login", {"a": 1}, "l") == Call("vm.create", {"kind": "Login", "args": {"a": 1}, "id": "l"})


def test_a_subscription_result_is_applied_before_the_notifications_after_it() -> None:
    wire = Wire()
    session = wire.session()
    vm = ViewModelBase(session, DESCRIPTION)
    changes: List[Dict[str, Any]] = []
    events: List[Any] = []
    vm.on_change(changes.append)
    vm.on("error", events.append)
    call = vm._subscribe_call(None, diff=True)
    request_id, future = session.start(call, new_future)
    assert wire.sent()[-1]["params"] == {"vm": "vm1", "diff": True}

    # The reply and the host's next changes in one read: the reader applies the reply first.
    session.receive(line(
        {"jsonrpc": "2.0", "id": request_id,
         "result": {"subscription": "s1", "values": {"items": [1, 2, 3], "page": 1}}},
        {"jsonrpc": "2.0", "method": "vm.changed",
         "params": {"subscription": "s1", "values": {"page": 2},
                    "splices": {"items": [{"index": 1, "remove": 1, "insert": [9, 8]}]}}},
        {"jsonrpc": "2.0", "method": "vm.event",
         "params": {"subscription": "s1", "name": "error", "value": {"kind": "network"}}},
        {"jsonrpc": "2.0", "method": "vm.changed", "params": {"subscription": "other", "values": {"page": 5}}},
    ))
    assert call.transform(future.result(0)) == {"items": [1, 9, 8, 3], "page": 2}
    assert vm.subscription == "s1"
    assert changes == [{"page": 2, "items": [1, 9, 8, 3]}]
    assert events == [{"kind": "network"}]
    assert wire.consumed == [None, None]  # what each callback returned

    unsubscribe = vm._unsubscribe_call()
    assert unsubscribe == Call("vm.unsubscribe", {"subscription": "s1"})
    assert vm._unsubscribe_call() is None and vm.subscription is None
    session.receive(line({"jsonrpc": "2.0", "method": "vm.changed",
                          "params": {"subscription": "s1", "values": {"page": 3}}}))
    assert vm["page"] == 2


def test_a_subscription_reply_that_does_not_fit_fails_the_request() -> None:
    session = Wire().session()
    vm = ViewModelBase(session, DESCRIPTION)
    request_id, future = session.start(vm._subscribe_call(["page"], diff=False), new_future)
    session.receive(line({"jsonrpc": "2.0", "id": request_id, "result": {}}))
    with pytest.raises(KeyError):
        future.result(0)
    assert vm.subscription is None


def test_notification_callbacks_and_lines_that_are_not_messages() -> None:
    wire = Wire()
    session = wire.session()
    seen: List[Any] = []
    kept: List[Any] = []
    remove = session.on_notification(lambda method, params: seen.append((method, params)) or "ret")
    session.on_notification(lambda method, params: 1 / 0)  # logged, the others still run
    for data in (b"\n", b"  \n", b"{not json\n", b"null\n", line([1, "x"]),
                 line({"jsonrpc": "2.0", "method": "note"})):
        session.receive(data, kept.append)
    assert kept == [None, [1, "x"], {"jsonrpc": "2.0", "method": "note"}]
    assert seen == [("note", {})] and wire.consumed == ["ret"]
    remove()
    session.receive(line({"jsonrpc": "2.0", "method": "note"}))
    assert seen == [("note", {})]


@pytest.mark.parametrize("warn", [True, False])
def test_an_error_for_no_request_is_logged_when_asked(warn: bool, caplog: pytest.LogCaptureFixture) -> None:
    session = Wire().session(warn_unmatched=warn)
    with caplog.at_level(logging.WARNING, logger="vmhost"):
        session.receive(line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}}))
        session.receive(line({"jsonrpc": "2.0", "id": 5, "result": 1}))
    assert [r.getMessage() for r in caplog.records] == (
        ["vmhost: error for request None: {'code': -32700, 'message': 'parse'}"] if warn else [])


def test_the_end_fails_what_is_pending_and_says_why() -> None:
    wire = Wire()
    tail = StderrTail()
    tail.feed(b"Error: --backend: no such file\n")
    session = wire.session(tail)
    _, future = session.start(Call("ping"), new_future)
    assert session.stderr_text() == "Error: --backend: no such file"

    wire.status = 64
    pending = session.end()
    assert session.exited and pending == [future] and not future.done()
    session.fail(pending)
    with pytest.raises(vmhost.HostExited) as exited:
        future.result(0)
    assert str(exited.value) == "vmhost exited before answering (status 64): Error: --backend: no such file"

    made: List[Any] = []
    with pytest.raises(vmhost.HostExited) as refused:
        session.start(Call("ping"), lambda: made.append(1) or Future())
    assert str(refused.value) == "vmhost exited (status 64): Error: --backend: no such file"
    assert made == []  # no future is made for a request that cannot be sent
    session.fail([])  # nothing pending: nothing to say


def test_a_write_the_host_does_not_take_is_host_exited() -> None:
    wire = Wire()
    session = wire.session()
    wire.broken, wire.status = True, -9
    with pytest.raises(vmhost.HostExited) as exited:
        session.start(Call("ping"), new_future)
    assert str(exited.value) == "vmhost is not reading its input ([Errno 32] Broken pipe) (signal 9)"
    assert isinstance(exited.value.__cause__, BrokenPipeError)
    assert session.end() == []  # the request is not left pending
