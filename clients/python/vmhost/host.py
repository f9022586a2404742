"""The synchronous client: a vmhost process, a reader thread, and view-model proxies."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Union

from ._binary import find_binary
from ._stderr import StderrTail, exit_message, forward_target
from ._protocol import Call, Params
from ._proxy import MISSING, ViewModelBase
from ._session import PendingBase, Session
from .errors import HostExited, RPCError
from . import _protocol as protocol

__all__ = ["Host", "ViewModel", "PendingCommand"]


class PendingCommand(PendingBase["Future[Any]"]):
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

    def result(self, timeout: Optional[float] = None) -> Any:
        """Wait for the answer and return it, or raise its :class:`~vmhost.RPCError`.

        Raises :class:`TimeoutError` when *timeout* seconds pass first (the request stays pending).
        """
        try:
            return self._transform(self._future.result(timeout))
        except _FutureTimeout:
            raise TimeoutError(f"request {self.id} not answered within {timeout}s") from None


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
        self._write_lock = threading.Lock()
        self._session = Session(self._write_bytes, self._exit_status, stderr_tail,
                                consume=lambda result: None, warn_unmatched=not raw)
        self._closed = False
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
        if not self._session.exited and not self._input_closed:
            try:
                self._start(Call("shutdown")).result(timeout)
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
        self._write_bytes(data.encode("utf-8") if isinstance(data, str) else data)

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
        return _wait(self.request_async(method, params), timeout)

    def request_async(self, method: str, params: Params = None) -> PendingCommand:
        """Send a request without waiting for it; see :class:`PendingCommand`."""
        return self._start(Call(method, params))

    def notify(self, method: str, params: Params = None) -> None:
        """Send a notification (no reply)."""
        self._session.notify(method, params)

    def on_notification(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        """Call ``callback(method, params)`` for every notification the host writes."""
        return self._session.on_notification(callback)

    def _start(self, call: Call) -> PendingCommand:
        request_id, future = self._session.start(call, _new_future)
        pending = PendingCommand(self, request_id, future, call.transform)
        if threading.current_thread() is self._reader:
            pending.result = _forbid_wait  # type: ignore[method-assign]
        return pending

    def _call(self, call: Call) -> Any:
        return self._start(call).result()

    def _write_bytes(self, data: bytes) -> None:
        with self._write_lock:
            self._stdin.write(data)
            self._stdin.flush()

    # -- the usual methods ---------------------------------------------------

    def initialize(self, locale: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        """``initialize``: sets the display language of view-models created afterwards."""
        return self._call(protocol.initialize(locale, params))  # type: ignore[no-any-return]

    def ping(self) -> None:
        self.request("ping")

    def describe(self, kind: Optional[str] = None) -> Dict[str, Any]:
        """``host.describe``: the kinds with their args, inputs and outputs."""
        return self._call(protocol.describe(kind))  # type: ignore[no-any-return]

    def list(self) -> List[Dict[str, Any]]:
        """``vm.list``: ``[{vm, kind}]`` in creation order."""
        return self.request("vm.list")  # type: ignore[no-any-return]

    def create(self, kind: str, args: Optional[Mapping[str, Any]] = None,
               id: Optional[str] = None) -> "ViewModel":
        """``vm.create``: a proxy for a new view-model of *kind*."""
        return ViewModel(self, self._call(protocol.create(kind, args, id)))

    # -- the reader ----------------------------------------------------------

    def _read(self) -> None:
        keep = self._raw.put if self._raw is not None else None
        try:
            for line in self._stdout:
                self._session.receive(line, keep)
        except (OSError, ValueError):
            pass  # stdout closed under us
        finally:
            if self._raw is not None:
                self._raw.put(Host._END)
            self._session.fail(self._session.end())

    def _exit_status(self) -> Optional[int]:
        """The exit status and, in the tail, the host's last words on stderr, once it ended (its
        stdout closes just before it exits: wait a moment for the status)."""
        try:
            status: Optional[int] = self._process.wait(2.0)
        except subprocess.TimeoutExpired:
            status = None
        if self._stderr_tail is not None:
            self._stderr_tail.join(2.0)
        return status

    @property
    def stderr_tail(self) -> str:
        """The last lines the host wrote to stderr, when kept (see :meth:`spawn`); else ``""``."""
        return self._session.stderr_text()


def _new_future() -> "Future[Any]":
    return Future()


def _wait(pending: PendingCommand, timeout: Optional[float]) -> Any:
    """*pending*'s result; cancelled when *timeout* passes first (:class:`TimeoutError`)."""
    try:
        return pending.result(timeout)
    except TimeoutError:
        pending.cancel()
        raise


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
        super().__init__(host._session, description)
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
        return _wait(self.send_async(input, value), timeout)

    def send_async(self, input: str, value: Any = MISSING) -> PendingCommand:
        """Send *input* without waiting; the :class:`PendingCommand` can be cancelled."""
        return self._host._start(self._send_call(input, value))

    def get(self, *outputs: str) -> Dict[str, Any]:
        """``vm.get``: the current values of *outputs* (default: every property), read once."""
        return self._host._call(self._get_call(outputs))  # type: ignore[no-any-return]

    def subscribe(self, outputs: Optional[List[str]] = None, diff: bool = False) -> Dict[str, Any]:
        """Subscribe to *outputs* (default: all) and keep the mirror current; return its values.

        With ``diff=True`` the host sends list splices, which are applied the same way.
        """
        return self._host._call(self._subscribe_call(outputs, diff))  # type: ignore[no-any-return]

    def unsubscribe(self) -> None:
        """End the subscription; the mirror keeps its last values."""
        call = self._unsubscribe_call()
        if call is not None:
            self._host._call(call)

    def dispose(self) -> None:
        """``vm.dispose``: its running commands answer -32800 and its subscriptions end."""
        call = self._dispose_call()
        if call is not None:
            self._host._call(call)

