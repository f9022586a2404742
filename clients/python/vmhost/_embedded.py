"""vmhost in this process: a library of the C ABI (``include/vmhost.h``) through ctypes.

:meth:`vmhost.Host.embedded` opens a host in a library such as ``libvmhost-embedded.so`` (the
reference app) and drives it with the same :class:`~vmhost.Host` as a spawned process: this module
gives the library the face of the ``subprocess.Popen`` that ``Host`` reads and writes. The
protocol is the same, byte for byte (protocol/embedding.md).

:class:`Library` is the ABI itself, for callers that want the raw calls (the conformance replayer,
the benchmarks, the hostile-use tests).
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import logging
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from ._binary import _repo_roots, build_in

__all__ = ["Library", "EmbeddedError", "EmbeddedProcess", "find_library"]

log = logging.getLogger("vmhost")

_NAME = "libvmhost-embedded" + (".dylib" if sys.platform == "darwin" else ".so")

# Return codes of include/vmhost.h.
OK = 0
ERR_ARGUMENT = -1
ERR_USAGE = -2
ERR_HANDLE = -3
ERR_CLOSED = -4
ERR_TRACE = -5
ERR_FULL = -6

#: ``on_message(context, message, length)``; message NULL and length 0 once, at the end.
MESSAGE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
#: ``on_log(context, level, line, length)``.
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)

LOG_LEVELS = ["trace", "debug", "info", "notice", "warning", "error", "critical"]


def find_library(library: Union[str, "os.PathLike[str]", None] = None) -> str:
    """The path of the embedded library: *library*, ``$VMHOST_LIBRARY``, the newer of this
    checkout's ``.build/release`` and ``.build/debug`` builds of ``libvmhost-embedded``, then the
    system's (``ctypes.util.find_library``). Raises :class:`FileNotFoundError`."""
    if library is not None:
        return os.fspath(library)
    env = os.environ.get("VMHOST_LIBRARY")
    if env:
        return env
    tried: List[str] = []
    for root in _repo_roots():
        tried += [str(root / ".build" / config / _NAME) for config in ("release", "debug")]
        found = build_in(root, _NAME, executable=False)
        if found is not None:
            log.debug("vmhost library: %s (the newer of %s/.build/release and debug)", found, root)
            return str(found)
    system = ctypes.util.find_library("vmhost-embedded")
    if system:
        return system
    raise FileNotFoundError(
        "vmhost embedded library not found: pass library=, set $VMHOST_LIBRARY or build it "
        f"(swift build --product vmhost-embedded) (tried: {', '.join(tried) or 'no repository'})")


class EmbeddedError(OSError):
    """A call of the ABI refused, with its return code and the library's text for it."""

    def __init__(self, call: str, code: int, text: str, detail: str = "") -> None:
        self.code = code
        super().__init__(f"{call}: {text}" + (f": {detail}" if detail else ""))


_LOADED: Dict[str, "Library"] = {}
_LOADED_LOCK = threading.Lock()


class Library:
    """A loaded library of the ABI. :meth:`load` keeps one per path.

    ``open`` returns a handle; ``write`` and ``close`` return the library's return codes (``close``
    with the status) without raising, as the C functions do: the hostile-use tests call them with
    wrong arguments on purpose.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        lib = ctypes.CDLL(path)
        self._lib = lib
        lib.vmhost_abi_version.restype = ctypes.c_int
        lib.vmhost_abi_version.argtypes = []
        lib.vmhost_open.restype = ctypes.c_int
        lib.vmhost_open.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), MESSAGE_FN, LOG_FN,
                                    ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)]
        lib.vmhost_write.restype = ctypes.c_int
        lib.vmhost_write.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        lib.vmhost_close.restype = ctypes.c_int
        lib.vmhost_close.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
        lib.vmhost_strerror.restype = ctypes.c_char_p
        lib.vmhost_strerror.argtypes = [ctypes.c_int]
        if lib.vmhost_abi_version() != 1:
            raise EmbeddedError("vmhost_abi_version", lib.vmhost_abi_version(),
                                f"{path} speaks ABI version {lib.vmhost_abi_version()}, this client 1")

    @classmethod
    def load(cls, library: Union[str, "os.PathLike[str]", None] = None) -> "Library":
        path = find_library(library)
        with _LOADED_LOCK:
            if path not in _LOADED:
                _LOADED[path] = cls(path)
            return _LOADED[path]

    def strerror(self, code: int) -> str:
        text: bytes = self._lib.vmhost_strerror(code)
        return text.decode()

    def open_raw(self, args: Sequence[Union[str, bytes, None]], on_message: Any, on_log: Any = None,
                 context: Optional[int] = None) -> "tuple[int, int]":
        """``vmhost_open`` as given: (return code, handle). *on_message* and *on_log* are ctypes
        callbacks (``MESSAGE_FN``, ``LOG_FN``) or None; the caller keeps them alive."""
        argv = (ctypes.c_char_p * max(1, len(args)))(
            *[a.encode() if isinstance(a, str) else a for a in args])
        handle = ctypes.c_uint64(0)
        code = self._lib.vmhost_open(len(args), argv if args else None,
                                     on_message if on_message is not None else MESSAGE_FN(),
                                     on_log if on_log is not None else LOG_FN(), context,
                                     ctypes.byref(handle))
        return code, handle.value

    def write(self, handle: int, data: Optional[bytes], length: Optional[int] = None) -> int:
        """``vmhost_write``: its return code."""
        return int(self._lib.vmhost_write(handle, data, len(data or b"") if length is None else length))

    def close(self, handle: int) -> "tuple[int, int]":
        """``vmhost_close``: (return code, status). Blocks until the host has ended."""
        status = ctypes.c_int(-2)
        code = self._lib.vmhost_close(handle, ctypes.byref(status))
        return int(code), status.value


class _Input:
    """The host's stdin: each write is one ``vmhost_write``."""

    def __init__(self, process: "EmbeddedProcess") -> None:
        self._process = process

    def write(self, data: bytes) -> int:
        if data:
            self._process._write(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self._process._close_input()


class _Output:
    """The host's stdout: the messages, one per line, as the callback delivered them."""

    def __init__(self, messages: "queue.Queue[Optional[bytes]]") -> None:
        self._messages = messages
        self._ended = False

    def __iter__(self) -> Iterator[bytes]:
        while not self._ended:
            message = self._messages.get()
            if message is None:
                self._ended = True
                self._messages.put(None)
                return
            yield message + b"\n"

    def close(self) -> None:
        pass


# Hosts still open: their callbacks must outlive them whatever the caller drops; at exit, each is
# closed (it ends as at EOF) before the interpreter goes away under a running callback.
_OPEN: "set[EmbeddedProcess]" = set()
_OPEN_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    with _OPEN_LOCK:
        hosts = list(_OPEN)
    for host in hosts:
        host._close_input()
        host.wait(30)


class EmbeddedProcess:
    """A host opened in a library, with what ``Host`` uses of a ``subprocess.Popen``: ``stdin``
    (writes go to ``vmhost_write``), ``stdout`` (the messages, one per line), ``poll``, ``wait``,
    ``kill`` (which, in process, ends the input as ``close`` does) and ``pid`` (this process's).
    Log lines go to *on_log_line* (a line without its newline)."""

    def __init__(self, library: Library, options: Sequence[str],
                 on_log_line: Optional[Callable[[str], None]] = None) -> None:
        self.library = library
        self.args = [library.path, *options]
        self.pid = os.getpid()
        self.stderr = None
        self._messages: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self.stdin = _Input(self)
        self.stdout = _Output(self._messages)
        self._status: Optional[int] = None
        self._ended = threading.Event()
        self._close_lock = threading.Lock()
        self._closer: Optional[threading.Thread] = None
        self._on_log_line = on_log_line
        self._log_lines: List[str] = []
        # Kept as attributes: ctypes frees a callback's trampoline with its object.
        self._on_message = MESSAGE_FN(self._message)
        self._on_log = LOG_FN(self._log)
        with _OPEN_LOCK:
            _OPEN.add(self)
        code, handle = library.open_raw(options, self._on_message, self._on_log)
        if code != OK:
            with _OPEN_LOCK:
                _OPEN.discard(self)
            raise EmbeddedError("vmhost_open", code, library.strerror(code), "\n".join(self._log_lines))
        self.handle = handle

    # -- the callbacks (any thread; they only hand over) --------------------------------------

    def _message(self, _context: Any, message: Any, length: int) -> None:
        if not message:
            self._messages.put(None)
            # Ended by itself (`exit`): its status comes with the close, which frees it.
            self._start_close()
            return
        self._messages.put(ctypes.string_at(message, length))

    def _log(self, _context: Any, level: int, line: Any, length: int) -> None:
        text = ctypes.string_at(line, length).decode("utf-8", "replace")
        self._log_lines.append(text)
        if self._on_log_line is not None:
            try:
                self._on_log_line(text)
            except Exception:  # a logging problem never reaches the host
                pass

    # -- the Popen face -----------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        code = self.library.write(self.handle, data)
        if code == ERR_FULL:
            # Written from inside a callback while the host holds 8 MiB of queued input: it cannot
            # wait there (protocol/embedding.md, Back-pressure).
            raise BlockingIOError(f"vmhost_write: {self.library.strerror(code)}")
        if code != OK:
            # As a write to a process that has gone: the host no longer reads.
            raise BrokenPipeError(f"vmhost_write: {self.library.strerror(code)}")

    def _close_input(self) -> None:
        self._start_close()

    def _start_close(self) -> None:
        with self._close_lock:
            if self._closer is not None:
                return
            # vmhost_close blocks until the host has ended: on a thread of its own, so that a
            # caller closes the input and goes on reading, as with a process.
            self._closer = threading.Thread(target=self._close, name="vmhost-close", daemon=True)
            self._closer.start()

    def _close(self) -> None:
        code, status = self.library.close(self.handle)
        self._status = status if code == OK else 1
        self._ended.set()
        with _OPEN_LOCK:
            _OPEN.discard(self)

    def poll(self) -> Optional[int]:
        return self._status if self._ended.is_set() else None

    def wait(self, timeout: Optional[float] = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self._status is not None
        return self._status

    def kill(self) -> None:
        """In process there is nothing to kill: the input ends (as ``close``), the host ends."""
        self._start_close()

    @property
    def returncode(self) -> Optional[int]:
        return self.poll()


def log_sink(stderr: Any, tail: Any) -> Optional[Callable[[str], None]]:
    """Where an embedded host's log lines go, for ``Host.embedded(stderr=…)`` as for ``spawn``:
    the tail (shown on our stderr, or kept only), a file or descriptor given, or nowhere."""
    if tail is not None:
        return lambda line: tail.feed((line + "\n").encode())
    if stderr is None or stderr == subprocess.DEVNULL:
        return None
    if isinstance(stderr, int):
        fd = stderr

        def write_fd(line: str) -> None:
            os.write(fd, (line + "\n").encode())
        return write_fd
    target: IO[Any] = stderr

    def write(line: str) -> None:
        try:
            target.write(line + "\n")
        except TypeError:
            target.write((line + "\n").encode())
        target.flush()
    return write
