"""The host's stderr, kept: its last bytes explain an exit (e.g. a bad option) in ``HostExited``."""

from __future__ import annotations

import sys
import threading
from typing import IO, Any, Optional

#: ``Host.spawn(stderr=KEEP)``: keep the host's stderr for ``HostExited`` without showing it.
KEEP = "keep"

_LIMIT = 4096


class StderrTail:
    """The last ``_LIMIT`` bytes the host wrote to stderr; each chunk is also forwarded to
    *forward* (a text stream such as ``sys.stderr``) when given."""

    def __init__(self, forward: Optional[IO[str]] = None) -> None:
        self._forward = forward
        self._data = bytearray()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self._data += chunk
            del self._data[:-_LIMIT]
        if self._forward is not None:
            try:
                self._forward.write(chunk.decode("utf-8", "replace"))
                self._forward.flush()
            except (OSError, ValueError):
                self._forward = None

    def text(self) -> str:
        with self._lock:
            return self._data.decode("utf-8", "replace").strip()

    def read_in_thread(self, stream: IO[bytes]) -> None:
        """Reads *stream* to its end on a daemon thread."""

        def run() -> None:
            try:
                while True:
                    chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
                    if not chunk:
                        break
                    self.feed(chunk)
            except (OSError, ValueError):
                pass

        self._thread = threading.Thread(target=run, name="vmhost-stderr", daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


def forward_target(stderr: Any) -> "tuple[Any, Optional[StderrTail]]":
    """What to pass to the process for *stderr*, and the tail that keeps it (None: not kept).

    ``None`` (the default) keeps the host's stderr and shows it on ours; ``KEEP`` keeps it only;
    anything else (``subprocess.DEVNULL``, a file) is passed through and not kept."""
    if stderr is None:
        return "pipe", StderrTail(sys.stderr)
    if stderr == KEEP:
        return "pipe", StderrTail()
    return stderr, None


def exit_message(what: str, status: Optional[int], tail: Optional[StderrTail]) -> str:
    """``vmhost exited (status 64): Error: --backend: …``: the status and what the host said."""
    if status is None:
        text = what
    elif status < 0:
        text = f"{what} (signal {-status})"
    else:
        text = f"{what} (status {status})"
    said = tail.text() if tail is not None else ""
    return f"{text}: {said}" if said else text
