"""Hostile use of the ABI from Python through ctypes: wrong arguments, stale handles, callbacks
that raise, that return late, that write or close from inside, threads that write at once. Each
gets a return code or the protocol's own answer, never a crash, and the host goes on serving.

Every wait is bounded (a missing message fails the test after 10 s); nothing waits on time."""
from __future__ import annotations

import ctypes
import json
import threading
from typing import Any, Callable, List, Optional

import pytest

from vmhost._embedded import (ERR_ARGUMENT, ERR_CLOSED, ERR_HANDLE, ERR_TRACE, ERR_USAGE, LOG_FN, MESSAGE_FN, OK,
                              Library)

LIMIT = 10.0
MANUAL = ["--clock", "manual", "--test-controls"]


def line(id: Any, method: str, params: Any = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


class Raw:
    """A host opened with raw ctypes callbacks; `react(message)` runs inside the message callback."""

    def __init__(self, library: Library, args: List[str] = MANUAL,
                 react: Optional[Callable[["Raw", Any], None]] = None) -> None:
        self.library = library
        self.messages: List[Any] = []
        self.logs: List[tuple] = []
        self.ended = threading.Event()
        self.after_end = 0
        self.changed = threading.Condition()
        self.react = react
        self.on_message = MESSAGE_FN(self._message)
        self.on_log = LOG_FN(self._log)
        code, self.handle = library.open_raw(args, self.on_message, self.on_log)
        assert code == OK, library.strerror(code)

    def _message(self, _context: Any, message: Any, length: int) -> None:
        if self.ended.is_set():
            self.after_end += 1
        if not message:
            assert length == 0
            self.ended.set()
        else:
            parsed = json.loads(ctypes.string_at(message, length))
            with self.changed:
                self.messages.append(parsed)
                self.changed.notify_all()
            if self.react is not None:
                self.react(self, parsed)
        with self.changed:
            self.changed.notify_all()

    def _log(self, _context: Any, level: int, text: Any, length: int) -> None:
        self.logs.append((level, ctypes.string_at(text, length).decode()))

    def write(self, data: bytes) -> int:
        return self.library.write(self.handle, data)

    def response(self, id: Any) -> Any:
        """The response to `id`, waiting at most 10 s."""
        def found() -> Any:
            return next((m for m in self.messages if isinstance(m, dict) and m.get("id") == id
                         and "method" not in m), None)
        with self.changed:
            assert self.changed.wait_for(lambda: found() is not None or self.ended.is_set(), LIMIT), \
                f"no response to {id!r} within {LIMIT} s"
            return found()

    def close(self) -> "tuple[int, int]":
        return self.library.close(self.handle)


def test_arguments_a_c_caller_can_get_wrong(library: Library) -> None:
    on_message = MESSAGE_FN(lambda *_: None)
    assert library.open_raw([], None)[0] == ERR_ARGUMENT                      # a null callback
    assert library._lib.vmhost_open(0, None, on_message, LOG_FN(), None, None) == ERR_ARGUMENT  # no handle out
    assert library._lib.vmhost_open(-1, None, on_message, LOG_FN(), None, ctypes.byref(ctypes.c_uint64())) == ERR_ARGUMENT
    assert library._lib.vmhost_open(1, None, on_message, LOG_FN(), None, ctypes.byref(ctypes.c_uint64())) == ERR_ARGUMENT
    assert library.open_raw(["--clock", None], on_message)[0] == ERR_ARGUMENT  # a null string in argv
    assert library.write(0, b"{}\n") == ERR_HANDLE
    assert library.write(2**63, b"{}\n") == ERR_HANDLE
    assert library.close(2**64 - 1)[0] == ERR_HANDLE
    assert library.strerror(ERR_HANDLE).startswith("no host has this handle")
    assert library.strerror(12345) == "unknown return code"


def test_zero_length_and_null_writes_are_refused_and_the_host_serves_on(library: Library) -> None:
    host = Raw(library)
    assert host.write(b"") == ERR_ARGUMENT
    assert library.write(host.handle, None, 5) == ERR_ARGUMENT
    assert host.write(line(1, "ping")) == OK
    assert host.response(1)["result"] == {}
    assert host.close() == (OK, 0)


def test_write_after_close_and_closing_twice(library: Library) -> None:
    host = Raw(library)
    assert host.close() == (OK, 0)
    assert host.ended.is_set() and host.after_end == 0
    assert host.write(line(1, "ping")) == ERR_HANDLE
    assert host.close()[0] == ERR_HANDLE


def test_after_exit_writes_are_refused_until_the_close_frees_it(library: Library) -> None:
    host = Raw(library)
    assert host.write(line(1, "ping") + b'{"jsonrpc":"2.0","method":"exit"}\n' + line(2, "ping")) == OK
    assert host.ended.wait(LIMIT)
    assert [m.get("id") for m in host.messages] == [1]  # what followed exit was not served
    assert host.write(line(3, "ping")) == ERR_CLOSED
    assert host.close() == (OK, 1)  # exit without shutdown
    assert host.close()[0] == ERR_HANDLE
    assert host.after_end == 0


def test_refused_options_say_why_through_the_log(library: Library) -> None:
    logs: List[tuple] = []
    on_log = LOG_FN(lambda _c, level, text, length: logs.append((level, ctypes.string_at(text, length).decode())))
    on_message = MESSAGE_FN(lambda *_: None)
    assert library.open_raw(["--max-message-bytes", "3"], on_message, on_log)[0] == ERR_USAGE
    assert logs and logs[-1][0] == 5 and "--max-message-bytes" in logs[-1][1]
    assert library.open_raw(["--help"], on_message, on_log)[0] == ERR_USAGE
    assert "--state-dir" in logs[-1][1]  # the help text names the app's options
    assert library.open_raw(["--trace", "/nonexistent/dir/trace"], on_message, on_log)[0] == ERR_TRACE
    assert library.open_raw(["--bogus"], on_message, None)[0] == ERR_USAGE  # no log: still refused


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_callback_that_raises_does_not_corrupt_the_host(library: Library) -> None:
    def react(host: Raw, message: Any) -> None:
        raise RuntimeError("a client bug")  # ctypes reports it and returns; the host goes on

    host = Raw(library, react=react)
    for id in range(1, 51):
        assert host.write(line(id, "ping")) == OK
    assert host.response(50)["result"] == {}
    assert [m["id"] for m in host.messages] == list(range(1, 51))
    assert host.close() == (OK, 0)


def test_a_callback_that_returns_late_loses_nothing(library: Library) -> None:
    release = threading.Event()
    entered = threading.Event()

    def react(host: Raw, message: Any) -> None:
        if message.get("id") == 1:
            entered.set()
            assert release.wait(LIMIT), "never released"

    host = Raw(library, react=react)
    other = Raw(library)  # opened before: an open waits for the host thread, as everything does
    writer = threading.Thread(target=host.write, args=(line(1, "ping"),))
    writer.start()
    assert entered.wait(LIMIT)
    # The host thread waits in the callback: these are queued, answered in order once it returns.
    for id in range(2, 21):
        assert host.write(line(id, "ping")) == OK
    assert other.write(line("other", "ping")) == OK  # another host waits as well, and loses nothing
    release.set()
    writer.join(LIMIT)
    assert host.response(20)["result"] == {}
    assert [m["id"] for m in host.messages] == list(range(1, 21))
    assert other.response("other")["result"] == {}
    assert host.close() == (OK, 0)
    assert other.close() == (OK, 0)


def test_writing_and_closing_from_inside_the_callback(library: Library) -> None:
    codes: List[Any] = []

    def react(host: Raw, message: Any) -> None:
        id = message.get("id")
        if isinstance(id, int) and id < 10:
            codes.append(host.write(line(id + 1, "ping")))  # handled after this returns
        elif id == 10:
            codes.append(host.close())  # returns at once: the status is not known yet

    host = Raw(library, react=react)
    assert host.write(line(1, "ping")) == OK
    assert host.ended.wait(LIMIT)
    assert [m["id"] for m in host.messages] == list(range(1, 11))
    assert codes[:9] == [OK] * 9 and codes[9] == (OK, -1)
    assert host.write(line(11, "ping")) == ERR_HANDLE  # freed after its last call
    assert host.after_end == 0


def test_threads_writing_at_once_each_get_every_reply(library: Library) -> None:
    host = Raw(library)
    hosts = [host, Raw(library)]
    per_thread = 200

    def write(target: Raw, thread: int) -> None:
        for n in range(per_thread):
            assert target.write(line(f"t{thread}-{n}", "ping")) == OK

    threads = [threading.Thread(target=write, args=(hosts[t % 2], t)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LIMIT * 3)
    for t in range(4):
        target = hosts[t % 2]
        assert target.response(f"t{t}-{per_thread - 1}")["result"] == {}
        ids = [m["id"] for m in target.messages if m["id"].startswith(f"t{t}-")]
        assert ids == [f"t{t}-{n}" for n in range(per_thread)]  # one thread's writes keep their order
    for target in hosts:
        assert target.close() == (OK, 0)


def test_a_stream_split_anywhere_in_lsp_framing(library: Library) -> None:
    host = Raw(library, ["--framing", "lsp", "--clock", "manual"])
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    stream = b"Content-Length: %d\r\n\r\n" % len(body) + body
    for index in range(len(stream)):
        assert host.write(stream[index:index + 1]) == OK
    assert host.response(1)["result"] == {}
    assert host.close() == (OK, 0)


def test_closing_while_a_command_runs_waits_for_it(library: Library) -> None:
    host = Raw(library, ["--test-controls"])  # the system clock: the command takes its 30 ms
    assert host.write(line(1, "control.backend.latency", {"ms": 30})) == OK
    assert host.write(line(2, "vm.create", {"kind": "ProductList", "id": "p"})) == OK
    assert host.write(line(3, "vm.send", {"vm": "p", "input": "refresh"})) == OK
    assert host.close() == (OK, 0)  # EOF: what was read runs to its end first (SPEC §7)
    assert host.messages[-1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
