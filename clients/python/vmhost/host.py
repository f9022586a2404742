"""The synchronous client: a vmhost process, a reader thread, and view-model proxies."""

from __future__ import annotations

import itertools
import json
import logging
import os
import queue
import subprocess
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Union

from ._binary import find_binary
from ._stderr import StderrTail, exit_message, forward_target
from ._proxy import MISSING, ViewModelBase
from .errors import HostExited, RPCError
from . import _protocol as protocol

__all__ = ["Host", "ViewModel", "PendingCommand"]

log = logging.getLogger("vmhost")

Params = Union[Mapping[str, Any], List[Any], None]
_OnResult = Callable[[Any], None]


class PendingCommand:
    """A request that was sent and not yet answered.

    :meth:`result` waits for the answer; :meth:`cancel` asks the host to cancel it
    (``$/cancelRequest``), after which :meth:`result` raises :class:`~vmhost.RequestCancelled`
    unless the answer was already on its way.
    """

    def __init__(self, host: "Host", request_id: int, future: "Future[Any]",
                 transform: Callable[[Any], Any] = lambda result: result) -> None:
        self._host = host
        self._future = future
        self._transform = transform
        self.id = request_id

    def cancel(self) -> None:
        """Send ``$/cancelRequest`` for this request (nothing happens if it already ended)."""
        if not self._future.done():
            self._host.notify("$/cancelRequest", {"id": self.id})

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: Optional[float] = None) -> Any:
        """Wait for the answer and return it, or raise its :class:`~vmhost.RPCError`.

        Raises :class:`TimeoutError` when *timeout* seconds pass first (the request stays pending).
        """
        try:
            return self._transform(self._future.result(timeout))
        except _FutureTimeout:
            raise TimeoutError(f"request {self.id} not answered within {timeout}s") from None

    def __repr__(self) -> str:
        state = "done" if self._future.done() else "pending"
        return f"<PendingCommand id={self.id} {state}>"


class Host:
    """A running vmhost process spoken to over ndjson on its stdin/stdout.

    Use :meth:`spawn` and a ``with`` block; leaving it sends ``shutdown`` and ``exit`` and waits
    for the process. A reader thread answers waiting callers and applies notifications to the
    view-models' mirrors, in the order the host wrote them, so once a request returns every
    change it caused is already in the mirror.

    With ``raw=True`` the host also keeps every message it reads, whole and in order (a batch
    reply stays one list), for :meth:`next_message`; :meth:`send_raw` writes bytes as given and
    :meth:`close_input` closes stdin. Together they let a caller speak the wire protocol itself,
    e.g. to replay the conformance transcripts, while the process, the binary lookup and the
    reading stay the client's.
    """

    _END = object()

    def __init__(self, process: "subprocess.Popen[bytes]", raw: bool = False,
                 stderr_tail: Optional[StderrTail] = None) -> None:
        self._process = process
        self._stderr_tail = stderr_tail
        if stderr_tail is not None and process.stderr is not None:
            stderr_tail.read_in_thread(process.stderr)
        assert process.stdin is not None and process.stdout is not None
        self._stdin: IO[bytes] = process.stdin
        self._stdout: IO[bytes] = process.stdout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: Dict[int, "tuple[Future[Any], Optional[_OnResult]]"] = {}
        self._subscriptions: Dict[str, ViewModelBase] = {}
        self._exited = False
        self._closed = False
        self._notification_callbacks: List[Callable[[str, Any], Any]] = []
        self._raw: "Optional[queue.Queue[Any]]" = queue.Queue() if raw else None
        self._input_closed = False
        self._reader = threading.Thread(target=self._read, name="vmhost-reader", daemon=True)
        self._reader.start()

    @classmethod
    def spawn(cls, *options: str, binary: Union[str, "os.PathLike[str]", None] = None,
              stderr: Union[int, str, IO[Any], None] = None,
              env: Optional[Mapping[str, str]] = None, raw: bool = False) -> "Host":
        """Start vmhost with *options* (e.g. ``"--clock", "manual", "--test-controls"``).

        The binary is *binary*, ``$VMHOST_BIN``, ``<repo>/.build/release/vmhost``,
        ``<repo>/.build/debug/vmhost`` or ``vmhost`` on ``PATH``. *stderr* (the host's logs): by
        default shown on ours and its last lines kept, so that :class:`~vmhost.HostExited` says
        why the host ended (e.g. a bad option); ``vmhost.KEEP_STDERR`` keeps them without showing
        them; anything else (``subprocess.DEVNULL``, a file) is passed to the process as is.
        *raw* keeps every message for :meth:`next_message` (see the class documentation).
        """
        target, tail = forward_target(stderr)
        process = subprocess.Popen(
            [find_binary(binary), *options],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if target == "pipe" else target,
            env=dict(env) if env is not None else None,
        )
        return cls(process, raw=raw, stderr_tail=tail)

    @classmethod
    def embedded(cls, *options: str, library: Union[str, "os.PathLike[str]", None] = None,
                 stderr: Union[int, str, IO[Any], None] = None, raw: bool = False) -> "Host":
        """Open a host in this process, in the library of the C ABI (``include/vmhost.h``), with
        *options* as :meth:`spawn` takes them; everything else is as with :meth:`spawn`.

        The library is *library*, ``$VMHOST_LIBRARY``, ``<repo>/.build/{release,debug}/
        libvmhost-embedded.so`` (the newer) or the system's. The host's log lines go where
        *stderr* says, as for :meth:`spawn`. Options the host refuses raise
        :class:`~vmhost.HostExited` at once (a process would exit 64). :meth:`close`, and
        :meth:`kill`, end its input as EOF does; :attr:`pid` is this process's.
        """
        from ._embedded import EmbeddedError, EmbeddedProcess, Library, log_sink

        _, tail = forward_target(stderr)
        try:
            process = EmbeddedProcess(Library.load(library), options, log_sink(stderr, tail))
        except EmbeddedError as error:
            # What the process would have exited with, and said (when its logs are kept).
            status = 2 if error.code == -5 else 64
            message = exit_message("vmhost exited", status, tail)
            if tail is None or not tail.text():
                message += f": {error}"
            raise HostExited(message) from error
        return cls(process, raw=raw, stderr_tail=tail)  # type: ignore[arg-type]

    # -- context manager -----------------------------------------------------

    def __enter__(self) -> "Host":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> Optional[int]:
        """The exit status once the process ended, else ``None``."""
        return self._process.poll()

    def close(self, timeout: float = 5.0) -> Optional[int]:
        """Send ``shutdown`` then ``exit``, close stdin and wait for the process; return its status.

        Kills the process if it is still running after *timeout* seconds.
        """
        if self._closed:
            return self._process.poll()
        self._closed = True
        if not self._exited and not self._input_closed:
            try:
                self._start("shutdown", None).result(timeout)
                self.notify("exit")
            except (RPCError, HostExited, TimeoutError, OSError):
                pass
        self.close_input()
        try:
            status = self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            status = self._process.wait()
        self._reader.join(timeout)
        self._stdout.close()
        return status

    # -- the raw wire --------------------------------------------------------

    def send_raw(self, data: Union[bytes, str]) -> None:
        """Write *data* to the host's stdin exactly as given (no newline added, no framing).

        A ``str`` is encoded as UTF-8. Replies are not matched to anything: read them with
        :meth:`next_message` (requires ``raw=True``).
        """
        if isinstance(data, str):
            data = data.encode("utf-8")
        with self._write_lock:
            self._stdin.write(data)
            self._stdin.flush()

    def next_message(self, timeout: Optional[float] = None) -> Any:
        """The next message the host wrote, parsed, exactly as written (a batch reply is a list).

        Only with ``raw=True``. Raises :class:`TimeoutError` when none arrives within *timeout*
        seconds and :class:`EOFError` once the host's stdout has ended and every message was read.
        Messages are also dispatched as usual (replies to :meth:`request`, mirrors, callbacks).
        """
        if self._raw is None:
            raise RuntimeError("next_message needs a host spawned with raw=True")
        try:
            message = self._raw.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from vmhost within {timeout}s") from None
        if message is Host._END:
            self._raw.put(message)  # stays at the end for later calls
            raise EOFError("vmhost closed its output")
        return message

    def close_input(self) -> None:
        """Close the host's stdin (EOF) without ``shutdown``/``exit``; it then ends on its own."""
        self._input_closed = True
        with self._write_lock:
            try:
                self._stdin.close()
            except OSError:
                pass

    def wait(self, timeout: Optional[float] = None) -> int:
        """Wait for the process to end and return its status; :class:`subprocess.TimeoutExpired`."""
        return self._process.wait(timeout)

    def kill(self) -> None:
        """Kill the process if it still runs and reap it (no ``shutdown``)."""
        self._closed = True
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self.close_input()

    # -- requests ------------------------------------------------------------

    def request(self, method: str, params: Params = None, timeout: Optional[float] = None) -> Any:
        """Send a request and return its result, or raise :class:`~vmhost.RPCError`.

        When *timeout* seconds pass, the request is cancelled and :class:`TimeoutError` raised.
        Do not call this from a callback: callbacks run on the reader, which answers requests.
        """
        pending = self.request_async(method, params)
        try:
            return pending.result(timeout)
        except TimeoutError:
            pending.cancel()
            raise

    def request_async(self, method: str, params: Params = None) -> PendingCommand:
        """Send a request without waiting for it; see :class:`PendingCommand`."""
        return self._start(method, params)

    def notify(self, method: str, params: Params = None) -> None:
        """Send a notification (no reply)."""
        self._write(protocol.message(method, params))

    def on_notification(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        """Call ``callback(method, params)`` for every notification the host writes."""
        self._notification_callbacks.append(callback)
        return lambda: self._notification_callbacks.remove(callback)

    def _start(self, method: str, params: Params, on_result: Optional[_OnResult] = None,
               transform: Callable[[Any], Any] = lambda result: result) -> PendingCommand:
        future: "Future[Any]" = Future()
        with self._lock:
            exited = self._exited
            if not exited:
                request_id = next(self._ids)
                self._pending[request_id] = (future, on_result)
        if exited:
            raise HostExited(self._exit_message("vmhost exited"))
        try:
            self._write(protocol.message(method, params, request_id))
        except OSError as error:
            with self._lock:
                self._pending.pop(request_id, None)
            # A write fails once the host has gone: say why it ended (its status and last words),
            # as a read of its end would; the status may come a moment after the pipe broke.
            raise HostExited(self._exit_message(f"vmhost is not reading its input ({error})")) from error
        pending = PendingCommand(self, request_id, future, transform)
        if threading.current_thread() is self._reader:
            pending.result = _forbid_wait  # type: ignore[method-assign]
        return pending

    def _write(self, message: Mapping[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            self._stdin.write(data)
            self._stdin.flush()

    # -- the usual methods ---------------------------------------------------

    def initialize(self, locale: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        """``initialize``: sets the display language of view-models created afterwards."""
        if locale is not None:
            params["locale"] = locale
        return self.request("initialize", params)  # type: ignore[no-any-return]

    def ping(self) -> None:
        self.request("ping")

    def describe(self, kind: Optional[str] = None) -> Dict[str, Any]:
        """``host.describe``: the kinds with their args, inputs and outputs."""
        return self.request("host.describe", {"kind": kind} if kind is not None else {})  # type: ignore[no-any-return]

    def list(self) -> List[Dict[str, Any]]:
        """``vm.list``: ``[{vm, kind}]`` in creation order."""
        return self.request("vm.list")  # type: ignore[no-any-return]

    def create(self, kind: str, args: Optional[Mapping[str, Any]] = None,
               id: Optional[str] = None) -> "ViewModel":
        """``vm.create``: a proxy for a new view-model of *kind*."""
        params: Dict[str, Any] = {"kind": kind}
        if args is not None:
            params["args"] = args
        if id is not None:
            params["id"] = id
        return ViewModel(self, self.request("vm.create", params))

    # -- the reader ----------------------------------------------------------

    def _read(self) -> None:
        try:
            for line in self._stdout:
                line = line.strip()
                if not line:
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    log.warning("vmhost: unparsable frame of %d bytes", len(line))
                    continue
                if self._raw is not None:
                    self._raw.put(message)
                for item in message if isinstance(message, list) else [message]:
                    if isinstance(item, dict):
                        self._dispatch(item)
        except (OSError, ValueError):
            pass  # stdout closed under us
        finally:
            if self._raw is not None:
                self._raw.put(Host._END)
            self._fail_pending()

    def _dispatch(self, message: Dict[str, Any]) -> None:
        if "method" in message:
            self._notification(message["method"], message.get("params") or {})
            return
        request_id = message.get("id")
        with self._lock:
            entry = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if entry is None:
            if "error" in message and self._raw is None:
                log.warning("vmhost: error for request %r: %s", request_id, message["error"])
            return
        future, on_result = entry
        protocol.settle(future, message, on_result)

    def _notification(self, method: str, params: Dict[str, Any]) -> None:
        if method in ("vm.changed", "vm.event"):
            with self._lock:
                vm = self._subscriptions.get(params.get("subscription", ""))
            protocol.apply_to(vm, method, params)
        for callback in list(self._notification_callbacks):
            try:
                callback(method, params)
            except Exception:
                log.exception("vmhost: notification callback %r raised", callback)

    def _fail_pending(self) -> None:
        with self._lock:
            self._exited = True
            pending = list(self._pending.values())
            self._pending.clear()
        message = self._exit_message("vmhost exited before answering") if pending else ""
        for future, _ in pending:
            future.set_exception(HostExited(message))

    def _exit_message(self, what: str) -> str:
        """*what*, the exit status and the host's last words on stderr, once it ended (its stdout
        closes just before it exits: wait a moment for the status)."""
        try:
            status: Optional[int] = self._process.wait(2.0)
        except subprocess.TimeoutExpired:
            status = None
        if self._stderr_tail is not None:
            self._stderr_tail.join(2.0)
        return exit_message(what, status, self._stderr_tail)

    @property
    def stderr_tail(self) -> str:
        """The last lines the host wrote to stderr, when kept (see :meth:`spawn`); else ``""``."""
        return self._stderr_tail.text() if self._stderr_tail is not None else ""

    def _register(self, subscription: str, vm: ViewModelBase) -> None:
        with self._lock:
            self._subscriptions[subscription] = vm

    def _unregister(self, subscription: Optional[str]) -> None:
        with self._lock:
            self._subscriptions.pop(subscription or "", None)


def _forbid_wait(timeout: Optional[float] = None) -> Any:
    raise RuntimeError(
        "cannot wait for a reply inside a vmhost callback: the callback runs on the reader "
        "that delivers replies; keep the PendingCommand and wait elsewhere"
    )


class ViewModel(ViewModelBase):
    """A proxy for one view-model, built from its ``vm.create`` reply.

    Inputs are methods (``vm.refresh()``, ``vm.username("13800138000")``) or
    ``vm.send(name, value)``; properties are read from the local mirror with ``vm["items"]``
    once :meth:`subscribe` was called. Misspelt names raise at once, listing the valid ones.
    """

    def __init__(self, host: Host, description: Mapping[str, Any]) -> None:
        super().__init__(description)
        self._host = host

    @property
    def host(self) -> Host:
        return self._host

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        self._check_input(name)

        def send(value: Any = MISSING, timeout: Optional[float] = None) -> Any:
            return self.send(name, value, timeout=timeout)

        send.__name__ = name
        send.__doc__ = f"Send input {name!r} of {self._kind} (see vm.send)."
        return send

    def send(self, input: str, value: Any = MISSING, timeout: Optional[float] = None) -> Any:
        """Send *input* (with *value*, if given) and wait until it is applied or its command ends.

        Returns the command's ``value`` (``None`` if it has none, and for value and trigger
        inputs). Raises :class:`~vmhost.CommandFailed`, :class:`~vmhost.InputDisabled`,
        :class:`~vmhost.RequestCancelled`, … When *timeout* passes, the send is cancelled and
        :class:`TimeoutError` raised.
        """
        pending = self.send_async(input, value)
        try:
            return pending.result(timeout)
        except TimeoutError:
            pending.cancel()
            raise

    def send_async(self, input: str, value: Any = MISSING) -> PendingCommand:
        """Send *input* without waiting; the :class:`PendingCommand` can be cancelled."""
        self._check_input(input)
        params: Dict[str, Any] = {"vm": self._handle, "input": input}
        if value is not MISSING:
            params["value"] = value
        return self._host._start("vm.send", params, transform=protocol.command_value)

    def get(self, *outputs: str) -> Dict[str, Any]:
        """``vm.get``: the current values of *outputs* (default: every property), read once."""
        params: Dict[str, Any] = {"vm": self._handle}
        if outputs:
            params["outputs"] = self._check_outputs(list(outputs))
        return self._host.request("vm.get", params)["values"]  # type: ignore[no-any-return]

    def subscribe(self, outputs: Optional[List[str]] = None, diff: bool = False) -> Dict[str, Any]:
        """Subscribe to *outputs* (default: all) and keep the mirror current; return its values.

        With ``diff=True`` the host sends list splices, which are applied the same way.
        """
        if self._subscription is not None:
            raise RuntimeError(f"{self._handle} is already subscribed ({self._subscription}); "
                               "call unsubscribe() first")
        params: Dict[str, Any] = {"vm": self._handle, "diff": diff}
        names = self._check_outputs(outputs)
        if names is not None:
            params["outputs"] = names

        def on_result(result: Any) -> None:  # on the reader, before any later notification
            self._subscribed(result["subscription"], result.get("values") or {})
            self._host._register(result["subscription"], self)

        self._host._start("vm.subscribe", params, on_result=on_result).result()
        return self.values

    def unsubscribe(self) -> None:
        """End the subscription; the mirror keeps its last values."""
        subscription = self._subscription
        if subscription is None:
            return
        self._host._unregister(subscription)
        self._unsubscribed()
        self._host.request("vm.unsubscribe", {"subscription": subscription})

    def dispose(self) -> None:
        """``vm.dispose``: its running commands answer -32800 and its subscriptions end."""
        if self._disposed:
            return
        self._host.request("vm.dispose", {"vm": self._handle})
        self._disposed = True
        self._host._unregister(self._subscription)
        self._unsubscribed()

