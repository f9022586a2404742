"""The asyncio client: the same surface as :mod:`vmhost.host`, with coroutines."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
import os
from typing import IO, Any, Awaitable, Callable, Dict, Generator, List, Mapping, Optional, Union

from ._binary import find_binary
from ._proxy import MISSING, ViewModelBase
from ._stderr import StderrTail, exit_message, forward_target
from .errors import HostExited, RPCError
from . import _protocol as protocol

__all__ = ["AsyncHost", "AsyncViewModel", "AsyncPendingCommand"]

log = logging.getLogger("vmhost")

Params = Union[Mapping[str, Any], List[Any], None]
_OnResult = Callable[[Any], None]
_LINE_LIMIT = 64 * 1024 * 1024  # frames may be up to --max-message-bytes (4 MiB by default)


class AsyncPendingCommand:
    """A request that was sent and not yet answered; ``await`` it or :meth:`result`."""

    def __init__(self, host: "AsyncHost", request_id: int, future: "asyncio.Future[Any]",
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

    async def result(self, timeout: Optional[float] = None) -> Any:
        """Wait for the answer; raises its :class:`~vmhost.RPCError`, or :class:`TimeoutError`."""
        try:
            result = await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"request {self.id} not answered within {timeout}s") from None
        return self._transform(result)

    def __await__(self) -> Generator[Any, None, Any]:
        return self.result().__await__()

    def __repr__(self) -> str:
        state = "done" if self._future.done() else "pending"
        return f"<AsyncPendingCommand id={self.id} {state}>"


class _Spawn:
    """What :meth:`AsyncHost.spawn` returns: ``await`` it, or use it in ``async with``."""

    def __init__(self, factory: Callable[[], Awaitable["AsyncHost"]]) -> None:
        self._factory = factory
        self._host: Optional[AsyncHost] = None

    def __await__(self) -> Generator[Any, None, "AsyncHost"]:
        return self._factory().__await__()

    async def __aenter__(self) -> "AsyncHost":
        self._host = await self._factory()
        return self._host

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._host is not None:
            await self._host.close()


class AsyncHost:
    """A running vmhost process driven from asyncio.

    ``async with AsyncHost.spawn(...) as host:`` starts it and, on exit, sends ``shutdown`` and
    ``exit`` and waits for it. A reader task answers requests and applies notifications in order.
    """

    def __init__(self, process: asyncio.subprocess.Process,
                 stderr_tail: Optional[StderrTail] = None) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._stderr_tail = stderr_tail
        self._stderr_reader: "Optional[asyncio.Task[None]]" = None
        if stderr_tail is not None and process.stderr is not None:
            self._stderr_reader = asyncio.get_running_loop().create_task(
                self._read_stderr(process.stderr, stderr_tail))
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._ids = itertools.count(1)
        self._pending: Dict[int, "tuple[asyncio.Future[Any], Optional[_OnResult]]"] = {}
        self._subscriptions: Dict[str, ViewModelBase] = {}
        self._exited = False
        self._closed = False
        self._notification_callbacks: List[Callable[[str, Any], Any]] = []
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    def spawn(cls, *options: str, binary: Union[str, "os.PathLike[str]", None] = None,
              stderr: Union[int, str, IO[Any], None] = None,
              env: Optional[Mapping[str, str]] = None) -> _Spawn:
        """Start vmhost with *options*; see :meth:`vmhost.Host.spawn` (*stderr* alike)."""
        path = find_binary(binary)
        target, tail = forward_target(stderr)

        async def start() -> AsyncHost:
            process = await asyncio.create_subprocess_exec(
                path, *options,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE if target == "pipe" else target,
                env=dict(env) if env is not None else None, limit=_LINE_LIMIT,
            )
            return cls(process, stderr_tail=tail)

        return _Spawn(start)

    async def __aenter__(self) -> "AsyncHost":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> Optional[int]:
        return self._process.returncode

    async def close(self, timeout: float = 5.0) -> Optional[int]:
        """Send ``shutdown`` then ``exit``, close stdin and wait for the process; return its status."""
        if self._closed:
            return self._process.returncode
        self._closed = True
        if not self._exited:
            try:
                await self._start("shutdown", None).result(timeout)
                self.notify("exit")
                await self._stdin.drain()
            except (RPCError, HostExited, TimeoutError, OSError):
                pass
        try:
            self._stdin.close()
        except OSError:
            pass
        try:
            status = await asyncio.wait_for(self._process.wait(), timeout)
        except asyncio.TimeoutError:
            self._process.kill()
            status = await self._process.wait()
        await self._reader
        if self._stderr_reader is not None:
            await self._stderr_reader
        return status

    # -- requests ------------------------------------------------------------

    async def request(self, method: str, params: Params = None,
                      timeout: Optional[float] = None) -> Any:
        """Send a request and return its result, or raise :class:`~vmhost.RPCError`."""
        pending = self._start(method, params)
        await self._drain()
        try:
            return await pending.result(timeout)
        except TimeoutError:
            pending.cancel()
            raise

    def request_async(self, method: str, params: Params = None) -> AsyncPendingCommand:
        """Send a request without waiting for it."""
        return self._start(method, params)

    def notify(self, method: str, params: Params = None) -> None:
        """Send a notification (no reply)."""
        self._write(protocol.message(method, params))

    def on_notification(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        """Call ``callback(method, params)`` for every notification the host writes."""
        self._notification_callbacks.append(callback)
        return lambda: self._notification_callbacks.remove(callback)

    def _start(self, method: str, params: Params, on_result: Optional[_OnResult] = None,
               transform: Callable[[Any], Any] = lambda result: result) -> AsyncPendingCommand:
        if self._exited:
            raise HostExited(exit_message("vmhost exited", self._process.returncode, self._stderr_tail))
        request_id = next(self._ids)
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (future, on_result)
        try:
            self._write(protocol.message(method, params, request_id))
        except OSError as error:
            self._pending.pop(request_id, None)
            # A write fails once the host has gone: say why it ended, as far as is known yet.
            raise HostExited(exit_message(f"vmhost is not reading its input ({error})",
                                          self._process.returncode, self._stderr_tail)) from error
        return AsyncPendingCommand(self, request_id, future, transform)

    def _write(self, message: Mapping[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._stdin.write(data + b"\n")

    async def _drain(self) -> None:
        try:
            await self._stdin.drain()
        except (OSError, RuntimeError):
            pass  # the reader reports the exit to every pending request

    # -- the usual methods ---------------------------------------------------

    async def initialize(self, locale: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        if locale is not None:
            params["locale"] = locale
        return await self.request("initialize", params)  # type: ignore[no-any-return]

    async def ping(self) -> None:
        await self.request("ping")

    async def describe(self, kind: Optional[str] = None) -> Dict[str, Any]:
        return await self.request("host.describe", {"kind": kind} if kind is not None else {})  # type: ignore[no-any-return]

    async def list(self) -> List[Dict[str, Any]]:
        return await self.request("vm.list")  # type: ignore[no-any-return]

    async def create(self, kind: str, args: Optional[Mapping[str, Any]] = None,
                     id: Optional[str] = None) -> "AsyncViewModel":
        params: Dict[str, Any] = {"kind": kind}
        if args is not None:
            params["args"] = args
        if id is not None:
            params["id"] = id
        return AsyncViewModel(self, await self.request("vm.create", params))

    # -- the reader ----------------------------------------------------------

    async def _read(self) -> None:
        try:
            while True:
                line = await self._stdout.readline()
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    log.warning("vmhost: unparsable frame of %d bytes", len(line))
                    continue
                for item in message if isinstance(message, list) else [message]:
                    if isinstance(item, dict):
                        self._dispatch(item)
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            self._exited = True
            pending = list(self._pending.values())
            self._pending.clear()
            if pending:
                # stdout closes just before the process exits: wait a moment for its status.
                try:
                    await asyncio.wait_for(self._process.wait(), 2.0)
                    if self._stderr_reader is not None:
                        await asyncio.wait_for(asyncio.shield(self._stderr_reader), 2.0)
                except asyncio.TimeoutError:
                    pass
            message = exit_message("vmhost exited before answering", self._process.returncode,
                                   self._stderr_tail)
            for future, _ in pending:
                if not future.done():
                    future.set_exception(HostExited(message))

    @staticmethod
    async def _read_stderr(stream: asyncio.StreamReader, tail: StderrTail) -> None:
        try:
            while True:
                chunk = await stream.read(65536)
                if not chunk:
                    break
                tail.feed(chunk)
        except (OSError, ValueError):
            pass

    @property
    def stderr_tail(self) -> str:
        """The last lines the host wrote to stderr, when kept (see :meth:`spawn`); else ``""``."""
        return self._stderr_tail.text() if self._stderr_tail is not None else ""

    def _dispatch(self, message: Dict[str, Any]) -> None:
        if "method" in message:
            self._notification(message["method"], message.get("params") or {})
            return
        request_id = message.get("id")
        entry = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if entry is None:
            return
        future, on_result = entry
        if not future.done():
            protocol.settle(future, message, on_result)

    def _notification(self, method: str, params: Dict[str, Any]) -> None:
        if method in ("vm.changed", "vm.event"):
            protocol.apply_to(self._subscriptions.get(params.get("subscription", "")), method, params)
        for callback in list(self._notification_callbacks):
            try:
                _schedule(callback(method, params))
            except Exception:
                log.exception("vmhost: notification callback %r raised", callback)

    def _register(self, subscription: str, vm: ViewModelBase) -> None:
        self._subscriptions[subscription] = vm

    def _unregister(self, subscription: Optional[str]) -> None:
        self._subscriptions.pop(subscription or "", None)


def _schedule(result: Any) -> None:
    """Run a coroutine returned by a callback as a task."""
    if inspect.isawaitable(result):
        asyncio.ensure_future(result)


class AsyncViewModel(ViewModelBase):
    """The asyncio proxy for one view-model: as :class:`~vmhost.ViewModel`, with coroutines.

    Callbacks may be plain functions or coroutine functions (run as tasks).
    """

    def __init__(self, host: AsyncHost, description: Mapping[str, Any]) -> None:
        super().__init__(description)
        self._host = host

    @property
    def host(self) -> AsyncHost:
        return self._host

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if name.startswith("_"):
            raise AttributeError(name)
        self._check_input(name)

        async def send(value: Any = MISSING, timeout: Optional[float] = None) -> Any:
            return await self.send(name, value, timeout=timeout)

        send.__name__ = name
        return send

    async def send(self, input: str, value: Any = MISSING, timeout: Optional[float] = None) -> Any:
        """Send *input* and wait until it is applied or its command ends; see ViewModel.send."""
        pending = self.send_async(input, value)
        await self._host._drain()
        try:
            return await pending.result(timeout)
        except TimeoutError:
            pending.cancel()
            raise

    def send_async(self, input: str, value: Any = MISSING) -> AsyncPendingCommand:
        """Send *input* without waiting; the pending command can be cancelled and awaited."""
        self._check_input(input)
        params: Dict[str, Any] = {"vm": self._handle, "input": input}
        if value is not MISSING:
            params["value"] = value
        return self._host._start("vm.send", params, transform=protocol.command_value)

    async def get(self, *outputs: str) -> Dict[str, Any]:
        params: Dict[str, Any] = {"vm": self._handle}
        if outputs:
            params["outputs"] = self._check_outputs(list(outputs))
        return (await self._host.request("vm.get", params))["values"]  # type: ignore[no-any-return]

    async def subscribe(self, outputs: Optional[List[str]] = None,
                        diff: bool = False) -> Dict[str, Any]:
        """Subscribe and keep the mirror current; return its values."""
        if self._subscription is not None:
            raise RuntimeError(f"{self._handle} is already subscribed ({self._subscription}); "
                               "call unsubscribe() first")
        params: Dict[str, Any] = {"vm": self._handle, "diff": diff}
        names = self._check_outputs(outputs)
        if names is not None:
            params["outputs"] = names

        def on_result(result: Any) -> None:
            self._subscribed(result["subscription"], result.get("values") or {})
            self._host._register(result["subscription"], self)

        pending = self._host._start("vm.subscribe", params, on_result=on_result)
        await self._host._drain()
        await pending
        return self.values

    async def unsubscribe(self) -> None:
        subscription = self._subscription
        if subscription is None:
            return
        self._host._unregister(subscription)
        self._unsubscribed()
        await self._host.request("vm.unsubscribe", {"subscription": subscription})

    async def dispose(self) -> None:
        if self._disposed:
            return
        await self._host.request("vm.dispose", {"vm": self._handle})
        self._disposed = True
        self._host._unregister(self._subscription)
        self._unsubscribed()

    def _invoke(self, callback: Callable[[Any], Any], argument: Any) -> None:
        try:
            _schedule(callback(argument))
        except Exception:
            log.exception("vmhost: callback %r of %s raised", callback, self._handle)

