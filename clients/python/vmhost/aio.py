"""The asyncio client: the same surface as :mod:`vmhost.host`, with coroutines."""

from __future__ import annotations

import asyncio
import inspect
import os
from typing import IO, Any, Awaitable, Callable, Dict, Generator, List, Mapping, Optional, Union

from ._binary import find_binary
from ._protocol import Call, Params
from ._proxy import MISSING, ViewModelBase
from ._session import PendingBase, Session
from ._stderr import StderrTail, forward_target
from .errors import HostExited, RPCError
from . import _protocol as protocol

__all__ = ["AsyncHost", "AsyncViewModel", "AsyncPendingCommand"]

_LINE_LIMIT = 64 * 1024 * 1024  # frames may be up to --max-message-bytes (4 MiB by default)


class AsyncPendingCommand(PendingBase["asyncio.Future[Any]"]):
    """A request that was sent and not yet answered; ``await`` it or :meth:`result`."""

    def __init__(self, host: "AsyncHost", request_id: int, future: "asyncio.Future[Any]",
                 transform: Callable[[Any], Any] = lambda result: result) -> None:
        self._host = host
        self._future = future
        self._transform = transform
        self.id = request_id

    async def result(self, timeout: Optional[float] = None) -> Any:
        """Wait for the answer; raises its :class:`~vmhost.RPCError`, or :class:`TimeoutError`."""
        try:
            result = await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"request {self.id} not answered within {timeout}s") from None
        return self._transform(result)

    def __await__(self) -> Generator[Any, None, Any]:
        return self.result().__await__()


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
        self._stderr_reader: "Optional[asyncio.Task[None]]" = None
        if stderr_tail is not None and process.stderr is not None:
            self._stderr_reader = asyncio.get_running_loop().create_task(
                self._read_stderr(process.stderr, stderr_tail))
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._session = Session(self._stdin.write, lambda: self._process.returncode, stderr_tail,
                                consume=_schedule, warn_unmatched=False)
        self._closed = False
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
        if not self._session.exited:
            try:
                await self._start(Call("shutdown")).result(timeout)
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
        return await self._wait(self._start(Call(method, params)), timeout)

    def request_async(self, method: str, params: Params = None) -> AsyncPendingCommand:
        """Send a request without waiting for it."""
        return self._start(Call(method, params))

    def notify(self, method: str, params: Params = None) -> None:
        """Send a notification (no reply)."""
        self._session.notify(method, params)

    def on_notification(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        """Call ``callback(method, params)`` for every notification the host writes."""
        return self._session.on_notification(callback)

    def _start(self, call: Call) -> AsyncPendingCommand:
        request_id, future = self._session.start(call, _new_future)
        return AsyncPendingCommand(self, request_id, future, call.transform)

    async def _wait(self, pending: AsyncPendingCommand, timeout: Optional[float] = None) -> Any:
        """*pending*'s result once it was written; cancelled when *timeout* passes first."""
        await self._drain()
        try:
            return await pending.result(timeout)
        except TimeoutError:
            pending.cancel()
            raise

    async def _call(self, call: Call) -> Any:
        return await self._wait(self._start(call))

    async def _drain(self) -> None:
        try:
            await self._stdin.drain()
        except (OSError, RuntimeError):
            pass  # the reader reports the exit to every pending request

    # -- the usual methods ---------------------------------------------------

    async def initialize(self, locale: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        return await self._call(protocol.initialize(locale, params))  # type: ignore[no-any-return]

    async def ping(self) -> None:
        await self.request("ping")

    async def describe(self, kind: Optional[str] = None) -> Dict[str, Any]:
        return await self._call(protocol.describe(kind))  # type: ignore[no-any-return]

    async def list(self) -> List[Dict[str, Any]]:
        return await self.request("vm.list")  # type: ignore[no-any-return]

    async def create(self, kind: str, args: Optional[Mapping[str, Any]] = None,
                     id: Optional[str] = None) -> "AsyncViewModel":
        return AsyncViewModel(self, await self._call(protocol.create(kind, args, id)))

    # -- the reader ----------------------------------------------------------

    async def _read(self) -> None:
        try:
            while True:
                line = await self._stdout.readline()
                if not line:
                    break
                self._session.receive(line)
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            pending = self._session.end()
            if pending:
                # stdout closes just before the process exits: wait a moment for its status.
                try:
                    await asyncio.wait_for(self._process.wait(), 2.0)
                    if self._stderr_reader is not None:
                        await asyncio.wait_for(asyncio.shield(self._stderr_reader), 2.0)
                except asyncio.TimeoutError:
                    pass
            self._session.fail(pending)

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
        return self._session.stderr_text()


def _new_future() -> "asyncio.Future[Any]":
    return asyncio.get_running_loop().create_future()


def _schedule(result: Any) -> None:
    """Run a coroutine returned by a callback as a task."""
    if inspect.isawaitable(result):
        asyncio.ensure_future(result)


class AsyncViewModel(ViewModelBase):
    """The asyncio proxy for one view-model: as :class:`~vmhost.ViewModel`, with coroutines.

    Callbacks may be plain functions or coroutine functions (run as tasks).
    """

    def __init__(self, host: AsyncHost, description: Mapping[str, Any]) -> None:
        super().__init__(host._session, description)
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
        return await self._host._wait(self.send_async(input, value), timeout)

    def send_async(self, input: str, value: Any = MISSING) -> AsyncPendingCommand:
        """Send *input* without waiting; the pending command can be cancelled and awaited."""
        return self._host._start(self._send_call(input, value))

    async def get(self, *outputs: str) -> Dict[str, Any]:
        return await self._host._call(self._get_call(outputs))  # type: ignore[no-any-return]

    async def subscribe(self, outputs: Optional[List[str]] = None,
                        diff: bool = False) -> Dict[str, Any]:
        """Subscribe and keep the mirror current; return its values."""
        return await self._host._call(self._subscribe_call(outputs, diff))  # type: ignore[no-any-return]

    async def unsubscribe(self) -> None:
        call = self._unsubscribe_call()
        if call is not None:
            await self._host._call(call)

    async def dispose(self) -> None:
        call = self._dispose_call()
        if call is not None:
            await self._host._call(call)

