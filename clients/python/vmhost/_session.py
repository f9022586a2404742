"""One connection's protocol state, shared by the sync and the asyncio host, without any I/O.

A :class:`Session` numbers requests, keeps the pending ones with their futures, dispatches what
the host writes (replies settle futures, notifications update subscribed view-models and reach
the callbacks), keeps the subscriptions and says why the host ended. Its host gives it a function
that writes bytes, one that tells the exit status, and one that takes a callback's return value,
and does the rest itself: the process, the reading, waiting for futures and timeouts."""

from __future__ import annotations

import itertools
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, List, Optional, Protocol, Tuple, TypeVar

from . import _protocol as protocol
from ._protocol import Call, OnResult, Params
from ._stderr import StderrTail, exit_message
from .errors import HostExited

if TYPE_CHECKING:
    from ._proxy import ViewModelBase

log = logging.getLogger("vmhost")


class Future(Protocol):
    """What a session needs of a future: a ``concurrent.futures`` or an ``asyncio`` one."""

    def done(self) -> bool: ...

    def set_result(self, result: Any, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...


class Notifier(Protocol):
    def notify(self, method: str, params: Params = None) -> None: ...


F = TypeVar("F", bound=Future)


class Session:
    """The requests, replies, notifications and subscriptions of one connection to a host.

    *write* sends bytes to the host (an :class:`OSError` means it has gone); *exit_status* is its
    exit status once it ended (``None`` while unknown); *consume* takes what a callback returned
    (the asyncio host runs a coroutine as a task); an error reply to no request is logged when
    *warn_unmatched*. Safe to use from several threads: its tables are locked.
    """

    def __init__(self, write: Callable[[bytes], None], exit_status: Callable[[], Optional[int]],
                 stderr_tail: Optional[StderrTail], consume: Callable[[Any], None],
                 warn_unmatched: bool = True) -> None:
        self._write = write
        self._exit_status = exit_status
        self._stderr_tail = stderr_tail
        self.consume = consume
        self._warn_unmatched = warn_unmatched
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: Dict[int, Tuple[Future, Optional[OnResult]]] = {}
        self._subscriptions: Dict[str, ViewModelBase] = {}
        self._notification_callbacks: List[Callable[[str, Any], Any]] = []
        self._exited = False

    @property
    def exited(self) -> bool:
        """Whether the host's output ended (no request can be answered any more)."""
        return self._exited

    # -- writing -------------------------------------------------------------

    def start(self, call: Call, new_future: Callable[[], F]) -> Tuple[int, F]:
        """Sends *call* as a request; returns its id and the future (from *new_future*) that its
        reply settles.

        Raises :class:`~vmhost.HostExited` once the host has ended or when it does not take the
        request."""
        if self._exited:  # before making a future: an asyncio one needs the running loop
            raise self.exited_error("vmhost exited")
        future = new_future()
        with self._lock:
            exited = self._exited
            if not exited:
                request_id = next(self._ids)
                self._pending[request_id] = (future, call.on_result)
        if exited:
            raise self.exited_error("vmhost exited")
        try:
            self._write(protocol.frame(protocol.message(call.method, call.params, request_id)))
        except OSError as error:
            with self._lock:
                self._pending.pop(request_id, None)
            # A write fails once the host has gone: say why it ended (its status and last words),
            # as a read of its end would; the status may come a moment after the pipe broke.
            raise self.exited_error(f"vmhost is not reading its input ({error})") from error
        return request_id, future

    def notify(self, method: str, params: Params = None) -> None:
        """Sends a notification."""
        self._write(protocol.frame(protocol.message(method, params)))

    # -- reading -------------------------------------------------------------

    def receive(self, line: bytes, keep: Optional[Callable[[Any], None]] = None) -> None:
        """Dispatches the message in *line* (each of a batch's), after *keep* got it whole."""
        message = protocol.parse(line)
        if message is protocol.NOTHING:
            return
        if keep is not None:
            keep(message)
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict):
                self.dispatch(item)

    def dispatch(self, message: Dict[str, Any]) -> None:
        """A reply settles its request's future; a notification goes to its view-model and to the
        notification callbacks."""
        if "method" in message:
            self._notification(message["method"], message.get("params") or {})
            return
        request_id = message.get("id")
        with self._lock:
            entry = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if entry is None:
            if "error" in message and self._warn_unmatched:
                log.warning("vmhost: error for request %r: %s", request_id, message["error"])
            return
        future, on_result = entry
        if not future.done():
            protocol.settle(future, message, on_result)

    def _notification(self, method: str, params: Dict[str, Any]) -> None:
        if method in ("vm.changed", "vm.event"):
            with self._lock:
                vm = self._subscriptions.get(params.get("subscription", ""))
            protocol.apply_to(vm, method, params)
        for callback in list(self._notification_callbacks):
            try:
                self.consume(callback(method, params))
            except Exception:
                log.exception("vmhost: notification callback %r raised", callback)

    def on_notification(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        """Calls ``callback(method, params)`` for every notification; returns its remover."""
        self._notification_callbacks.append(callback)
        return lambda: self._notification_callbacks.remove(callback)

    # -- subscriptions -------------------------------------------------------

    def register(self, subscription: str, vm: ViewModelBase) -> None:
        """Routes the notifications of *subscription* to *vm*."""
        with self._lock:
            self._subscriptions[subscription] = vm

    def unregister(self, subscription: Optional[str]) -> None:
        with self._lock:
            self._subscriptions.pop(subscription or "", None)

    # -- the end -------------------------------------------------------------

    def end(self) -> List[Future]:
        """Marks the host's output as ended; returns the futures of the requests left unanswered,
        for :meth:`fail` (their host may first wait for the exit status)."""
        with self._lock:
            self._exited = True
            pending = [future for future, _ in self._pending.values()]
            self._pending.clear()
        return pending

    def fail(self, futures: List[Future]) -> None:
        """Fails *futures* with :class:`~vmhost.HostExited`, saying why the host ended."""
        if not futures:
            return
        error = self.exited_error("vmhost exited before answering")
        for future in futures:
            if not future.done():
                future.set_exception(error)

    def exited_error(self, what: str) -> HostExited:
        """*what*, the exit status and the host's last words on stderr, as a ``HostExited``."""
        return HostExited(exit_message(what, self._exit_status(), self._stderr_tail))

    def stderr_text(self) -> str:
        """The last lines the host wrote to stderr, when kept; else ``""``."""
        return self._stderr_tail.text() if self._stderr_tail is not None else ""


class PendingBase(Generic[F]):
    """What :class:`~vmhost.PendingCommand` and :class:`~vmhost.AsyncPendingCommand` share: a
    request's id, the future its reply settles, how to cancel it."""

    _host: Notifier
    _future: F
    _transform: Callable[[Any], Any]
    id: int

    def cancel(self) -> None:
        """Send ``$/cancelRequest`` for this request (nothing happens if it already ended)."""
        if not self._future.done():
            self._host.notify("$/cancelRequest", {"id": self.id})

    def done(self) -> bool:
        return self._future.done()

    def __repr__(self) -> str:
        state = "done" if self._future.done() else "pending"
        return f"<{type(self).__name__} id={self.id} {state}>"
