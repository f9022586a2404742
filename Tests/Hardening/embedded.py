"""The host in this process, through the C ABI of include/vmhost.h (ctypes), with the face of the
harness's HostProcess: the fuzzer drives either the same way. The library is ``$VMHOST_LIBRARY``
or this checkout's build of ``libvmhost-embedded``."""
from __future__ import annotations

import ctypes
import queue
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))
sys.path.insert(0, str(ROOT / "Tests" / "EndToEnd"))

from harness import HANG_LIMIT, HostProcess, json, loads_strict  # noqa: E402
from vmhost._embedded import LOG_FN, MESSAGE_FN, OK, Library  # noqa: E402


class _Ended:
    """What HostProcess.process offers that the fuzzer uses: wait, kill, poll."""

    def __init__(self, host: "EmbeddedHostProcess") -> None:
        self.host = host

    def wait(self, timeout: Optional[float] = None) -> int:
        return self.host.close()

    def kill(self) -> None:
        self.host.close()

    def poll(self) -> Optional[int]:
        return self.host.status


class EmbeddedHostProcess(HostProcess):
    """A HostProcess whose host is in this process: its writing and reading through the ABI, its
    requests, notifications and reading until a response the harness's own."""

    def __init__(self, *args: str, framing: str = "ndjson", stderr: Any = None, strict: bool = False) -> None:
        self.args = args
        self.framing = framing
        self.strict = strict
        self.next_id = 0
        self.buffer = b""
        self.backlog = []
        self.status: Optional[int] = None
        self.library = Library.load()
        self.messages: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self.stderr = stderr
        self.on_message = MESSAGE_FN(self._message)
        self.on_log = LOG_FN(self._log)
        code, self.handle = self.library.open_raw(list(args), self.on_message, self.on_log)
        assert code == OK, self.library.strerror(code)
        self.process = _Ended(self)

    def _message(self, _context: Any, message: Any, length: int) -> None:
        self.messages.put(ctypes.string_at(message, length) if message else None)

    def _log(self, _context: Any, _level: int, line: Any, length: int) -> None:
        if self.stderr is not None and hasattr(self.stderr, "write"):
            self.stderr.write(ctypes.string_at(line, length) + b"\n")

    def write_raw(self, data: bytes) -> None:
        code = self.library.write(self.handle, data)
        if code != OK:
            raise BrokenPipeError(self.library.strerror(code))

    def read_message(self, timeout: float = HANG_LIMIT) -> Any:
        """The next message (each callback call is one whole message), or None once ended."""
        try:
            body = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("the host delivered nothing for %.0f s" % timeout) from None
        if body is None:
            self.messages.put(None)
            return None
        return loads_strict(body) if self.strict else json.loads(body)

    def close(self) -> int:
        if self.status is None:
            code, status = self.library.close(self.handle)
            self.status = status if code == OK else -1
        return self.status

    def __enter__(self) -> "EmbeddedHostProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["EmbeddedHostProcess", "subprocess"]
