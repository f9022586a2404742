"""Drives the real vmhost binary through a pipe, for end-to-end tests.

    with HostProcess("--clock", "manual", "--test-controls") as host:
        reply = host.request("ping")
        assert reply.result == {}

`request` returns an Exchange: every message written up to and including the response, so a
test can assert the notifications a request caused and that they came before its reply.
Reads have a generous deadline only to turn a hang into a failure; no test waits on time.
"""
from __future__ import annotations

import http.server
import json
import os
import select
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HANG_LIMIT = 20.0  # seconds before a missing reply counts as a hang


def binary() -> str:
    """The vmhost binary: $VMHOST_BIN, else the debug build, else the release build."""
    env = os.environ.get("VMHOST_BIN")
    if env:
        return env
    for config in ("debug", "release"):
        path = ROOT / ".build" / config / "vmhost"
        if path.exists():
            return str(path)
    raise RuntimeError("vmhost is not built: run `swift build` first or set VMHOST_BIN")


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler of a test's HTTP server: it logs nothing, the test output stays the test's."""

    def log_message(self, *args: Any) -> None:
        pass


class LoopbackServer:
    """A threaded HTTP server on loopback: `serve(Handler)` starts it (its base URL is `url`),
    `close()` ends it."""

    def serve(self, handler: type[http.server.BaseHTTPRequestHandler]) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Exchange:
    id: Any
    messages: list[dict]

    @property
    def response(self) -> dict | None:
        for message in reversed(self.messages):
            if "method" not in message and message.get("id") == self.id:
                return message
        return None

    @property
    def result(self) -> Any:
        return (self.response or {}).get("result")

    @property
    def error(self) -> dict | None:
        return (self.response or {}).get("error")

    @property
    def code(self) -> int | None:
        return (self.error or {}).get("code")

    @property
    def notifications(self) -> list[dict]:
        return [m for m in self.messages if "method" in m]

    @property
    def changes(self) -> list[dict]:
        return [m["params"] for m in self.notifications if m["method"] == "vm.changed"]

    @property
    def events(self) -> list[dict]:
        return [m["params"] for m in self.notifications if m["method"] == "vm.event"]


@dataclass
class HostProcess:
    args: tuple[str, ...] = ()
    framing: str = "ndjson"
    process: subprocess.Popen | None = None
    buffer: bytes = b""
    next_id: int = 0
    backlog: list[dict] = field(default_factory=list)

    def __init__(self, *args: str, framing: str = "ndjson", stderr: Any = subprocess.DEVNULL,
                 strict: bool = False) -> None:
        self.args = args
        self.framing = framing
        self.strict = strict  # parse replies as RFC 8259 demands (UTF-8, no NaN / Infinity)
        self.buffer = b""
        self.next_id = 0
        self.backlog = []
        self.process = subprocess.Popen(
            [binary(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)

    def __enter__(self) -> "HostProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------

    def write_raw(self, data: bytes) -> None:
        assert self.process and self.process.stdin
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        body = json.dumps(message, ensure_ascii=False).encode()
        if self.framing == "lsp":
            self.write_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        else:
            self.write_raw(body + b"\n")

    def request(self, method: str, params: Any = None, id: Any = None) -> Exchange:
        if id is None:
            self.next_id += 1
            id = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.until_response(id)

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- reading -----------------------------------------------------------------------------

    def read_message(self, timeout: float = HANG_LIMIT) -> dict | list | None:
        """The next message, or None at EOF. Fails on a hang."""
        if self.backlog:
            return self.backlog.pop(0)
        while True:
            message = self._take_buffered()
            if message is not None:
                return message
            assert self.process and self.process.stdout
            ready, _, _ = select.select([self.process.stdout], [], [], timeout)
            if not ready:
                raise TimeoutError("vmhost wrote nothing for %.0f s" % timeout)
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buffer += chunk

    def _take_buffered(self) -> Any:
        if self.framing == "lsp":
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return None
            header = self.buffer[:end].decode()
            length = int(header.split(":", 1)[1])
            if len(self.buffer) < end + 4 + length:
                return None
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            return loads_strict(body) if self.strict else json.loads(body)
        newline = self.buffer.find(b"\n")
        if newline < 0:
            return None
        line = self.buffer[:newline]
        self.buffer = self.buffer[newline + 1:]
        return loads_strict(line) if self.strict else json.loads(line)

    def until_response(self, id: Any) -> Exchange:
        messages = []
        while True:
            message = self.read_message()
            if message is None:
                raise EOFError("vmhost closed stdout before answering %r" % (id,))
            messages.append(message)
            if isinstance(message, dict) and "method" not in message and message.get("id") == id:
                return Exchange(id, messages)

    def read_all(self) -> list:
        """Every message until EOF (after closing stdin)."""
        messages = list(self.backlog)
        self.backlog = []
        while True:
            message = self.read_message()
            if message is None:
                return messages
            messages.append(message)

    def close(self) -> int:
        """Closes stdin and waits for the exit status."""
        assert self.process
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.process.wait(timeout=HANG_LIMIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()


# -- one-shot runs and strict checks (used by the wire, lifecycle, trace and fuzz suites) ------


def _reject_constant(name: str) -> Any:
    raise ValueError("non-standard JSON constant %s" % name)


def loads_strict(data: bytes) -> Any:
    """Parses one JSON text as RFC 8259 requires: UTF-8, no NaN or Infinity."""
    return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)


def parse_frames(data: bytes, framing: str) -> list:
    """Every message in `data`, a complete capture of stdout. Fails on any byte that is not part
    of a well-formed frame: stdout carries protocol frames only."""
    messages = []
    if framing == "ndjson":
        assert data == b"" or data.endswith(b"\n"), "stdout ends inside a line: %r" % data[-80:]
        for line in data.split(b"\n")[:-1]:
            assert line.strip(), "blank line on stdout"
            messages.append(loads_strict(line))
        return messages
    assert framing == "lsp", framing
    position = 0
    while position < len(data):
        end = data.find(b"\r\n\r\n", position)
        assert end >= 0, "a header block without its end: %r" % data[position:position + 80]
        fields = {}
        for line in data[position:end].decode("ascii").split("\r\n"):
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        assert "content-length" in fields, "no Content-Length in %r" % data[position:end]
        length = int(fields["content-length"])
        body = data[end + 4:end + 4 + length]
        assert len(body) == length, "a frame cut short: %d of %d bytes" % (len(body), length)
        messages.append(loads_strict(body))
        position = end + 4 + length
    return messages


def frame(body: bytes, framing: str) -> bytes:
    """`body` as one frame of `framing` (ndjson does not check that body has no newline)."""
    if framing == "lsp":
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    return body + b"\n"


def encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class Completed:
    returncode: int
    stdout: bytes
    stderr: bytes
    framing: str

    @property
    def messages(self) -> list:
        return parse_frames(self.stdout, self.framing)


def rss_kib(pid: int) -> int:
    """The resident memory of process `pid`, in KiB (VmRSS of /proc/PID/status)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def run_once(data: bytes, *args: str, framing: str = "ndjson", timeout: float = HANG_LIMIT) -> Completed:
    """Runs the host on `data` as its whole stdin (EOF after it) and returns what it did.
    `framing` is the framing its stdout is expected in."""
    completed = subprocess.run([binary(), *args], input=data, capture_output=True, timeout=timeout)
    return Completed(completed.returncode, completed.stdout, completed.stderr, framing)


_RESPONSE_KEYS = {"jsonrpc", "id", "result", "error"}
_NOTIFICATION_KEYS = {"jsonrpc", "method", "params"}


def problems(message: Any) -> list[str]:
    """What is wrong with one message the host wrote, as JSON-RPC 2.0; [] when it is well formed.
    A message is a response, an array of responses (a batch reply), or a host notification."""
    if isinstance(message, list):
        if not message:
            return ["an empty array"]
        found = []
        for member in message:
            if not isinstance(member, dict) or "method" in member:
                found.append("a batch reply member that is not a response: %r" % (member,))
            else:
                found += _response_problems(member)
        return found
    if not isinstance(message, dict):
        return ["neither an object nor an array: %r" % (message,)]
    if "method" in message:
        found = []
        if message.get("jsonrpc") != "2.0":
            found.append("jsonrpc is not \"2.0\"")
        if not isinstance(message["method"], str):
            found.append("method is not a string")
        if "id" in message:
            found.append("the host sent a request")
        if set(message) - _NOTIFICATION_KEYS:
            found.append("unexpected keys %s" % sorted(set(message) - _NOTIFICATION_KEYS))
        return found
    return _response_problems(message)


def _response_problems(message: dict) -> list[str]:
    found = []
    if message.get("jsonrpc") != "2.0":
        found.append("jsonrpc is not \"2.0\": %r" % (message,))
    if "id" not in message:
        found.append("no id: %r" % (message,))
    elif isinstance(message["id"], (bool, dict, list)):
        found.append("id of a wrong type: %r" % (message,))
    if ("result" in message) == ("error" in message):
        found.append("not exactly one of result and error: %r" % (message,))
    if set(message) - _RESPONSE_KEYS:
        found.append("unexpected keys %s" % sorted(set(message) - _RESPONSE_KEYS))
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict):
            found.append("error is not an object: %r" % (message,))
        else:
            code = error.get("code")
            if not isinstance(code, int) or isinstance(code, bool):
                found.append("error code is not an integer: %r" % (message,))
            if not isinstance(error.get("message"), str):
                found.append("error message is not a string: %r" % (message,))
            if set(error) - {"code", "message", "data"}:
                found.append("unexpected error keys: %r" % (message,))
    return found
