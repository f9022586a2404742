#!/usr/bin/env python3
"""The chat server of the example's tests: a loopback HTTP server on the standard library only.

    python3 scripts/server.py [--port N]

Listens on 127.0.0.1 (an ephemeral port unless --port says), prints ``http://127.0.0.1:PORT`` on
its first line of stdout, and serves until stdin closes or it is interrupted.

- ``GET /messages?after=N&reader=NAME``: ``{"messages": [...]}``, the messages whose id is over N:
  at once when there is one, else when someone other than NAME writes one (a long-poll, given up
  after 30 s with an empty list), or as soon as the client goes away (logged ``aborted``).
- ``POST /messages`` ``{"author", "text"}``: 201 and the message stored.
- ``GET /search?q=TEXT``: the messages whose text contains TEXT, except for three queries that
  play a failure: ``slow`` answers only when the client goes away (``aborted``, at most 30 s),
  ``boom`` answers 500, ``garbled`` answers a body of the wrong shape.
- ``GET /_log?wait=EVENT&path=PATH&count=N``: what the server saw, as ``{"log": [{"event", "method",
  "path", ...}]}``; with ``wait``, answered once N entries (default 1) of that event (and path)
  were logged, or 504 after 10 s: a test waits on the server's side with a deadline and no sleep.

Events: ``request`` (a request came), ``answered`` (its answer was written), ``waiting`` (a
long-poll or a slow search is held), ``aborted`` (the client closed the connection first).
"""
import argparse
import json
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HOLD_LIMIT = 30.0  # seconds a long-poll or a slow search is held at most
WAIT_LIMIT = 10.0  # seconds a /_log?wait=… waits at most


class Chat:
    def __init__(self):
        self.changed = threading.Condition()
        self.messages = [
            {"id": 1, "author": "ada", "text": "Hello from the server"},
            {"id": 2, "author": "grace", "text": "Swift on Linux works"},
        ]
        self.log = []

    def record(self, event, method, path, **extra):
        with self.changed:
            self.log.append({"event": event, "method": method, "path": path, **extra})
            self.changed.notify_all()

    def after(self, last):
        return [m for m in self.messages if m["id"] > last]

    def add(self, author, text):
        with self.changed:
            message = {"id": self.messages[-1]["id"] + 1 if self.messages else 1, "author": author, "text": text}
            self.messages.append(message)
            self.changed.notify_all()
            return message

    def matching(self, event, path):
        return [e for e in self.log if e["event"] == event and (path is None or e["path"] == path)]


CHAT = Chat()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # stdout is the port's; the log is /_log

    def answer(self, status, value=None, raw=None):
        body = raw if raw is not None else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if not self.path.startswith("/_log"):
            CHAT.record("answered", self.command, urlsplit(self.path).path, status=status)

    def client_gone(self):
        """Whether the client closed its end (readable with nothing to read)."""
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def hold(self, path, ready):
        """Waits until `ready()` gives a value or the client goes away (None, logged `aborted`)."""
        CHAT.record("waiting", self.command, path)
        deadline = time.monotonic() + HOLD_LIMIT
        with CHAT.changed:
            while True:
                value = ready()
                if value:
                    return value
                if self.client_gone():
                    break
                if time.monotonic() >= deadline:
                    return []
                # Woken by a new message; the client's going away is looked at every 20 ms.
                CHAT.changed.wait(0.02)
        CHAT.record("aborted", self.command, path)
        self.close_connection = True
        return None

    def do_GET(self):
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path == "/_log":
            return self.log(query)
        CHAT.record("request", "GET", url.path, query=url.query)
        if url.path == "/messages":
            try:
                last = int(query.get("after", "0"))
            except ValueError:
                return self.answer(400, {"error": "after must be a number"})
            reader = query.get("reader")
            # Held until someone other than the reader writes: the reader's own sends do not wake it.
            found = CHAT.after(last) or self.hold(
                url.path, lambda: CHAT.after(last) if any(m["author"] != reader for m in CHAT.after(last)) else [])
            if found is not None:
                self.answer(200, {"messages": found})
        elif url.path == "/search":
            q = query.get("q", "")
            if q == "slow":
                if self.hold(url.path, lambda: None) is not None:
                    self.answer(200, {"messages": []})
            elif q == "boom":
                self.answer(500, {"error": "boom"})
            elif q == "garbled":
                self.answer(200, {"messages": [{"id": "one", "author": "ada"}]})
            else:
                self.answer(200, {"messages": [m for m in CHAT.messages if q.lower() in m["text"].lower()]})
        else:
            self.answer(404, {"error": "no such path"})

    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length > 1 << 16:
            return self.answer(413, {"error": "too large"})
        body = self.rfile.read(length)
        CHAT.record("request", "POST", url.path, body=body.decode("utf-8", "replace"))
        if url.path != "/messages":
            return self.answer(404, {"error": "no such path"})
        try:
            draft = json.loads(body)
            message = CHAT.add(str(draft["author"]), str(draft["text"]))
        except (ValueError, KeyError, TypeError):
            return self.answer(400, {"error": "expected {author, text}"})
        self.answer(201, message)

    def log(self, query):
        event, path = query.get("wait"), query.get("path")
        count = int(query.get("count", "1"))
        if event:
            deadline = time.monotonic() + WAIT_LIMIT
            with CHAT.changed:
                while len(CHAT.matching(event, path)) < count:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return self.answer(504, {"error": f"no {count} '{event}' on {path} in {WAIT_LIMIT} s", "log": CHAT.log})
                    CHAT.changed.wait(left)
        with CHAT.changed:
            log = list(CHAT.log)
        self.answer(200, {"log": log})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sys.stdin.read()  # serves until stdin closes
    except KeyboardInterrupt:
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
