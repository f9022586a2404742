#!/usr/bin/env python3
"""What resuming a WebSocket session costs (protocol/SPEC.md §12, "Resume"), against vmhost-web:

- reconnect → resumed screen: from opening the new connection with the token to having read its
  `$/session` and every frame missed (a Login's two changes and two replies), median and p95;
- memory per suspended session: the server's RSS with N resumable sessions connected (a Login
  each, subscribed), then with the same N suspended (their connections cut), per session, against
  the RSS before any.

    python3 bench/web_resume.py [--bin web/.build/release/vmhost-web] [--sessions 1000] [--rounds 200]

The server runs as one process (`--workers 0`) so that its RSS is the whole server's; the figures
are for the build given (say which in RESULTS.md).
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import websocket

ROOT = Path(__file__).resolve().parents[1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Page:
    """A page's connection to `/rpc?QUERY`: the frames it received counted, its resume token kept
    (bench/web_restart.py uses it too)."""

    def __init__(self, port: int, query: str, timeout: float = 30):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/rpc?{query}", timeout=timeout)
        self.received = 0
        self.token = None

    def frame(self):
        while True:
            message = json.loads(self.ws.recv())
            if isinstance(message, dict) and message.get("method") == "$/session":
                self.token = message["params"]["token"]
                return message
            if isinstance(message, dict) and message.get("method") == "$/ack":
                continue
            self.received += 1
            return message

    def call(self, id: int, method: str, params: dict):
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        while True:
            message = self.frame()
            if message.get("id") == id:
                return message

    def drop(self):
        self.ws.sock.shutdown(socket.SHUT_RDWR)
        self.ws.sock.close()


def login_page(port: int) -> Page:
    page = Page(port, "resume=new")
    page.frame()  # $/session
    page.call(1, "vm.create", {"kind": "Login", "id": "login"})
    page.call(2, "vm.subscribe", {"vm": "login"})
    return page


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=str(ROOT / "web/.build/release/vmhost-web"))
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=200)
    options = parser.parse_args()

    server = subprocess.Popen(
        [options.bin, "--listen", "127.0.0.1:0", "--workers", "0", "--log-level", "debug"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in server.stderr:
            found = re.search(r"serving http://[^:]+:(\d+)/", line)
            if found:
                port = int(found.group(1))
                break
        assert port, "vmhost-web did not start"

        def wait_suspended(count: int):
            seen = 0
            for line in server.stderr:
                if re.search(r"session \d+ suspended", line):
                    seen += 1
                    if seen == count:
                        return

        # Reconnect → resumed screen.
        timings = []
        for _ in range(options.rounds):
            page = login_page(port)
            seen = page.received
            page.ws.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "vm.send",
                                     "params": {"vm": "login", "input": "username", "value": "13800138000"}}))
            page.ws.send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "vm.send",
                                     "params": {"vm": "login", "input": "password", "value": "123456"}}))
            page.drop()
            wait_suspended(1)
            started = time.perf_counter()
            again = Page(port, f"resume={quote(page.token)}&received={seen}")
            again.received = seen
            session = again.frame()
            assert session["params"]["resumed"]["resync"] is False
            while again.received < seen + 4:
                again.frame()
            timings.append(time.perf_counter() - started)
            again.ws.send(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
            again.ws.close()
        timings.sort()
        print(f"reconnect → resumed screen ({options.rounds} rounds): median {statistics.median(timings) * 1e3:.2f} ms, "
              f"p95 {timings[int(len(timings) * 0.95)] * 1e3:.2f} ms")

        before = rss_kib(server.pid)
        pages = [login_page(port) for _ in range(options.sessions)]
        connected = rss_kib(server.pid)
        for page in pages:
            page.drop()
        wait_suspended(options.sessions)
        suspended = rss_kib(server.pid)
        print(f"RSS: {before} KiB before, {connected} KiB with {options.sessions} connected, "
              f"{suspended} KiB with them suspended")
        print(f"per session: connected {(connected - before) / options.sessions:.1f} KiB, "
              f"suspended {(suspended - before) / options.sessions:.1f} KiB")
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
