"""What the chat example's tests share: its loopback server, its host, and waits with deadlines.

The host is ``.build/debug/chat-host`` of this package unless ``CHAT_HOST`` names another; the
Python client is the repository's (``clients/python``).
"""
import json
import os
import select
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PACKAGE.parents[1] / "clients" / "python"))

import vmhost  # noqa: E402

BINARY = os.environ.get("CHAT_HOST", str(PACKAGE / ".build" / "debug" / "chat-host"))
DEADLINE = 10.0  # seconds of real time any wait gives up after, with a message


class ChatServer:
    """scripts/server.py in a process of its own: its URL, its log, a message from someone else."""

    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, str(PACKAGE / "scripts" / "server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], DEADLINE)
        if not ready:
            self.stop()
            raise AssertionError(f"the chat server printed no URL in {DEADLINE} s")
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def _call(self, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method="POST" if data else "GET")
        with urllib.request.urlopen(request, timeout=DEADLINE + 5) as response:
            return json.load(response)

    def post(self, author, text):
        """A message from another client of the server."""
        return self._call("/messages", {"author": author, "text": text})

    def log(self, wait=None, path=None, count=1):
        """What the server saw; with *wait*, once *count* events *wait* (on *path*) were logged
        (the server answers 504 after its own deadline, which fails the test naming the event)."""
        query = f"?wait={wait}&count={count}" + (f"&path={path}" if path else "") if wait else ""
        try:
            return self._call("/_log" + query)["log"]
        except urllib.error.HTTPError as error:
            raise AssertionError(f"the server did not log {count} '{wait}' on {path}: {error.read().decode()}") from None

    def events(self, event, path, method="GET"):
        return [e for e in self.log() if e["event"] == event and e["path"] == path and e["method"] == method]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(DEADLINE)


@pytest.fixture
def server():
    chat = ChatServer()
    yield chat
    chat.stop()


def spawn(url, *options):
    """The chat host on *url*, time moving only when a test advances it."""
    return vmhost.Host.spawn("--server-url", url, "--clock", "manual", "--test-controls", *options, binary=BINARY)


@pytest.fixture
def host(server):
    with spawn(server.url) as chat:
        yield chat


def until(vm, what, predicate):
    """Waits until *predicate* holds of the view-model's mirrored values, or fails naming *what*."""
    changed = threading.Condition()

    def notify(_values):
        with changed:
            changed.notify_all()

    remove = vm.on_change(notify)
    try:
        with changed:
            if not changed.wait_for(lambda: predicate(vm.values), DEADLINE):
                raise AssertionError(f"no {what} within {DEADLINE} s: {vm.values}")
    finally:
        remove()


def advance(host, ms):
    return host.request("control.clock.advance", {"ms": ms})
