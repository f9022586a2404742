#!/usr/bin/env python3
"""What bringing sessions back after a restart costs (protocol/SPEC.md §12, "After a restart"),
against vmhost-web with `--session-dir`:

- N resumable sessions (a Login each, subscribed, a username typed), then SIGTERM: the time the
  server takes to stop (writing every session's file), and the disk bytes per session;
- started again on the same port: the time from starting the process to serving (every session
  is resumable from then: a session is made again when its page comes back, not before);
- each page resumes with its token: the time from opening the connection to having its screen
  back (`$/session` and the resync's `vm.changed`), median and p95, and for all N one after the
  other.

    python3 bench/web_restart.py [--bin web/.build/release/vmhost-web] [--sessions 1000]

The server runs as one process (`--workers 0`); the figures are for the build given (say which
in RESULTS.md).
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import websocket

from web_resume import Page

ROOT = Path(__file__).resolve().parents[1]


def start(binary: str, folder: str, listen: str):
    started = time.perf_counter()
    server = subprocess.Popen(
        [binary, "--listen", listen, "--workers", "0", "--session-dir", folder, "--log-level", "error"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        found = re.search(r"serving http://[^:]+:(\d+)/", line)
        if found:
            return server, int(found.group(1)), time.perf_counter() - started
    raise RuntimeError("vmhost-web did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=str(ROOT / "web/.build/release/vmhost-web"))
    parser.add_argument("--sessions", type=int, default=1000)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as temporary:
        folder = str(Path(temporary) / "sessions")
        server, port, _ = start(options.bin, folder, "127.0.0.1:0")
        pages = []
        try:
            for _ in range(options.sessions):
                page = Page(port, "resume=new", timeout=60)
                page.frame()
                page.call(1, "vm.create", {"kind": "Login", "id": "login"})
                page.call(2, "vm.subscribe", {"vm": "login", "outputs": ["usernameValid", "canSubmit"]})
                page.call(3, "vm.send", {"vm": "login", "input": "username", "value": "13800138000"})
                pages.append(page)
            stopping = time.perf_counter()
            server.terminate()
            server.wait(timeout=30)
            stopped = time.perf_counter() - stopping
        finally:
            if server.poll() is None:
                server.kill()
        for page in pages:
            page.ws.close()
        files = list(Path(folder).glob("*.session"))
        total = sum(path.stat().st_size for path in files)
        print(f"stop with {options.sessions} sessions: {stopped * 1e3:.0f} ms; {len(files)} files, "
              f"{total / len(files):.0f} bytes per session")

        server, _, serving = start(options.bin, folder, f"127.0.0.1:{port}")
        try:
            print(f"start → serving (every session resumable): {serving * 1e3:.0f} ms")
            timings = []
            began = time.perf_counter()
            for page in pages:
                opened = time.perf_counter()
                again = Page(port, f"resume={quote(page.token)}&received={page.received}", timeout=60)
                session = again.frame()
                assert session["params"]["resumed"]["resync"] is True, session
                changed = again.frame()
                assert changed["params"]["values"]["usernameValid"] is True, changed
                timings.append(time.perf_counter() - opened)
                again.ws.send(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
                again.ws.close()
            everything = time.perf_counter() - began
        finally:
            server.terminate()
            server.wait(timeout=30)
        timings.sort()
        print(f"resume → screen back after the restart ({len(timings)} pages): median {statistics.median(timings) * 1e3:.2f} ms, "
              f"p95 {timings[int(len(timings) * 0.95)] * 1e3:.2f} ms; all {len(timings)} one after the other {everything:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
