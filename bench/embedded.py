"""Scenario (k) of bench/run.py: the reference app in process through the C ABI of
include/vmhost.h (libvmhost-embedded), beside the same exchanges through a pipe, in the same run.

Round trips of a `ping` and of a Login `username` input (its `vm.changed` delivered before its
reply), sequential, from C (bench/embedded_bench.c, through the ABI and to a spawned process over
pipes) and from Python (ctypes, and the pipe client of run.py); CPU per message through the ABI
(the whole process: caller and host) beside the server's CPU per message over a pipe, for vmhost
and for the C echo server.

The library is a release build (`swift build -c release --product vmhost-embedded` with
cross-module optimisation, in .build-embedded); the pipe's vmhost is run.py's (scripts/build-release.sh).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRATCH = os.path.join(ROOT, ".build-embedded")
LIBRARY = os.path.join(SCRATCH, "release", "libvmhost-embedded.so")

sys.path.insert(0, os.path.join(ROOT, "clients", "python"))


def build(no_build: bool, out: str) -> str:
    """The release library (built unless --no-build) and bench/embedded_bench.c compiled against
    it; returns the path of the C program."""
    if not no_build:
        print("building libvmhost-embedded (release, .build-embedded) ...", file=sys.stderr, flush=True)
        # Clean when the sources changed: an incremental build with cross-module optimisation may
        # keep inlined code that is no longer there (bench/README.md).
        subprocess.run([os.path.join(ROOT, "scripts", "clean-stale-build.sh"), SCRATCH], check=True)
        subprocess.run(["swift", "build", "-c", "release", "--product", "vmhost-embedded", "--scratch-path", SCRATCH,
                        "-Xswiftc", "-cross-module-optimization"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(LIBRARY):
        sys.exit(f"{LIBRARY} missing")
    exe = os.path.join(out, "embedded_bench")
    lib_dir = os.path.dirname(LIBRARY)
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "embedded_bench.c"),
                    "-I" + os.path.join(ROOT, "Sources", "CVMHost", "include"), "-L" + lib_dir, "-lvmhost-embedded",
                    "-Wl,-rpath," + lib_dir, "-lpthread"], check=True)
    return exe


def run_c(exe: str, mode: str, n: int, m: int, rest: List[str]) -> List[Dict[str, Any]]:
    text = subprocess.run([exe, mode, str(n), str(m), *rest], check=True, capture_output=True, text=True,
                          timeout=600).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def percentiles(samples: List[float]) -> Dict[str, float]:
    samples = sorted(samples)

    def at(p: float) -> float:
        k = min(len(samples) - 1, max(0, int(round(p / 100.0 * len(samples) + 0.5)) - 1))
        return round(samples[k], 2)
    return {"p50_us": at(50), "p99_us": at(99), "p999_us": at(99.9)}


LOGIN_SETUP = (b'{"jsonrpc":"2.0","id":"c","method":"vm.create","params":{"kind":"Login","id":"login"}}\n'
               b'{"jsonrpc":"2.0","id":"s","method":"vm.subscribe","params":{"vm":"login"}}\n')


def login_line(i: int) -> bytes:
    value = b"13800138000" if i % 2 == 0 else b"12800138000"
    return (b'{"jsonrpc":"2.0","id":%d,"method":"vm.send","params":{"vm":"login","input":"username","value":"%s"}}\n'
            % (i, value))


def ping_line(i: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i


class PythonABI:
    """The library from Python through ctypes: a callback that counts responses."""

    def __init__(self) -> None:
        from vmhost._embedded import MESSAGE_FN, OK, Library
        self.library = Library.load(LIBRARY)
        self.responses = 0
        self.notifications = 0
        self.changed = threading.Condition()
        self.on_message = MESSAGE_FN(self._message)
        code, self.handle = self.library.open_raw(["--framing", "ndjson"], self.on_message)
        assert code == OK, self.library.strerror(code)
        self.write = self.library._lib.vmhost_write

    def _message(self, _context: Any, message: Any, length: int) -> None:
        if not message:
            return
        if ctypes.string_at(message, 21) == b'{"jsonrpc":"2.0","id"':
            self.responses += 1
        else:
            self.notifications += 1
        if self.waiting:
            with self.changed:
                self.changed.notify_all()

    waiting = False

    def wait(self, count: int) -> None:
        if self.responses >= count:
            return
        with self.changed:
            self.waiting = True
            self.changed.wait_for(lambda: self.responses >= count, 30)
            self.waiting = False

    def round_trips(self, lines: List[bytes]) -> List[float]:
        times = []
        write, handle = self.write, self.handle
        for line in lines:
            expected = self.responses + 1
            t0 = time.perf_counter_ns()
            write(handle, line, len(line))
            self.wait(expected)
            times.append((time.perf_counter_ns() - t0) / 1000)
        return times

    def cpu_per_message(self, lines: List[bytes]) -> float:
        expected = self.responses + len(lines)
        write, handle = self.write, self.handle
        c0 = time.process_time_ns()
        for line in lines:
            write(handle, line, len(line))
        self.wait(expected)
        return (time.process_time_ns() - c0) / 1000 / len(lines)

    def close(self) -> int:
        return self.library.close(self.handle)[1]


def scenario_embedded(args: Any, vmhost_cmd: List[str], echo_cmd: List[str], emit: Callable[..., None],
                      Server: Any, pipelined: Callable[..., Any], out: str) -> None:
    exe = build(args.no_build, out)
    n, m = args.sequential, args.pipelined

    # From C: through the ABI, and over pipes to vmhost and to the C echo server.
    for record in run_c(exe, "abi", n, m, ["--framing", "ndjson"]):
        emit("embedded", "abi-c", **record)
    for name, cmd in (("pipe-c-vmhost", vmhost_cmd), ("pipe-c-echo", echo_cmd)):
        for record in run_c(exe, "pipe", n, 0, cmd):
            emit("embedded", name, **record)

    # From Python: through the ABI (ctypes).
    host = PythonABI()
    host.round_trips([ping_line(i) for i in range(1000)])
    emit("embedded", "abi-python", metric="ping_round_trip", n=n, **percentiles(host.round_trips([ping_line(i) for i in range(n)])))
    emit("embedded", "abi-python", metric="ping_cpu", n=m // 4,
         cpu_us_per_msg=round(host.cpu_per_message([ping_line(i) for i in range(m // 4)]), 3))
    expected = host.responses + 2
    host.write(host.handle, LOGIN_SETUP, len(LOGIN_SETUP))
    host.wait(expected)
    emit("embedded", "abi-python", metric="login_round_trip", n=n, **percentiles(host.round_trips([login_line(i) for i in range(n)])))
    status = host.close()
    assert status == 0, status

    # From Python: over a pipe (run.py's client), the round trips and the server's CPU per message.
    s = Server(vmhost_cmd)
    s.request({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    for i in range(1000):
        s.reply_line(ping_line(i + 1), i + 1)

    def pipe_round_trips(make_line: Callable[[int], bytes]) -> Dict[str, float]:
        times = []
        for i in range(n):
            line = make_line(i + 1)
            t0 = time.perf_counter_ns()
            s.reply_line(line, i + 1)
            times.append((time.perf_counter_ns() - t0) / 1000)
        return percentiles(times)

    emit("embedded", "pipe-python-vmhost", metric="ping_round_trip", n=n, **pipe_round_trips(ping_line))
    s.send(LOGIN_SETUP)
    s.readline()
    s.readline()
    emit("embedded", "pipe-python-vmhost", metric="login_round_trip", n=n, **pipe_round_trips(login_line))
    s.close()
    for name, cmd in (("pipe-vmhost", vmhost_cmd), ("pipe-c-echo", echo_cmd)):
        s = Server(cmd)
        s.request({"jsonrpc": "2.0", "id": 0, "method": "ping"})
        _, cpu = pipelined(s, b"".join(ping_line(i + 1) for i in range(m)), m)
        s.close()
        emit("embedded", name, metric="ping_cpu", n=m, cpu_us_per_msg=round(cpu / m, 3))
        s = Server(cmd)
        s.send(LOGIN_SETUP)
        s.readline()
        s.readline()
        _, cpu = pipelined(s, b"".join(login_line(i + 1) for i in range(m // 2)), m // 2, only_responses=True)
        s.close()
        emit("embedded", name, metric="login_cpu", n=m // 2, cpu_us_per_msg=round(cpu / (m // 2), 3))


def table_embedded(results: List[Dict[str, Any]]) -> str:
    """The figures of (k): through the ABI beside through a pipe, with the targets of issue 24."""

    def get(server: str, metric: str, key: str) -> Optional[float]:
        return next((r.get(key) for r in results if r["scenario"] == "embedded" and r["server"] == server
                     and r["metric"] == metric), None)

    rows = []

    def add(label: str, abi: Optional[float], pipe: Optional[float], unit: str, target: str, check: str = "") -> None:
        ratio = f"{abi / pipe:.2f}×" if abi is not None and pipe else "–"
        mark = ""
        if check and abi is not None and pipe:
            limit = float(check)
            mark = " ✔" if abi / pipe <= limit else " ✘"
        rows.append((label, "–" if abi is None else f"{abi:g}{unit}", "–" if pipe is None else f"{pipe:g}{unit}",
                     ratio, target + mark))

    for source, abi, pipe in (("C", "abi-c", "pipe-c-vmhost"), ("Python", "abi-python", "pipe-python-vmhost")):
        for metric, label in (("ping_round_trip", "ping"), ("login_round_trip", "Login username input")):
            for key in ("p50_us", "p99_us"):
                target = "≤ 0.1× (10× shorter)" if (source == "C" and metric == "ping_round_trip" and key == "p50_us") else ""
                add(f"(k) {label} round trip {key[:-3]} from {source}: ABI / pipe to vmhost", get(abi, metric, key),
                    get(pipe, metric, key), " µs", target, "0.1" if target else "")
    add("(k) ping round trip p50 from C: pipe to the C echo server", None, get("pipe-c-echo", "ping_round_trip", "p50_us"), " µs", "")
    share = get("abi-c", "ping_round_trip", "answered_before_return")
    rows.append(("(k) ping replies delivered before vmhost_write returned (C)", "–" if share is None else f"{share * 100:.1f}%",
                 "–", "–", ""))
    echo = get("pipe-c-echo", "ping_cpu", "cpu_us_per_msg")
    add("(k) ping CPU per message: ABI from C, one per call / C echo server over a pipe", get("abi-c", "ping_cpu", "cpu_us_per_msg"),
        echo, " µs", "≤ 1× C echo", "1")
    add("(k) ping CPU per message: ABI from C, 64 KiB writes / C echo server over a pipe",
        get("abi-c", "ping_cpu_chunked", "cpu_us_per_msg"), echo, " µs", "≤ 1× C echo", "1")
    add("(k) ping CPU per message: ABI from C, one per call / vmhost over a pipe", get("abi-c", "ping_cpu", "cpu_us_per_msg"),
        get("pipe-vmhost", "ping_cpu", "cpu_us_per_msg"), " µs", "")
    add("(k) ping CPU per message: ABI from Python / vmhost over a pipe", get("abi-python", "ping_cpu", "cpu_us_per_msg"),
        get("pipe-vmhost", "ping_cpu", "cpu_us_per_msg"), " µs", "")
    add("(k) Login input CPU: ABI from C / vmhost over a pipe", get("abi-c", "login_cpu", "cpu_us_per_msg"),
        get("pipe-vmhost", "login_cpu", "cpu_us_per_msg"), " µs", "")
    add("(k) Login input CPU: ABI from C / C echo server over a pipe", get("abi-c", "login_cpu", "cpu_us_per_msg"),
        get("pipe-c-echo", "login_cpu", "cpu_us_per_msg"), " µs", "")

    head = ("scenario / figure", "through the ABI", "through a pipe", "ABI / pipe", "target")
    widths = [max(len(head[i]), max(len(r[i]) for r in rows)) for i in range(5)]
    lines = ["| " + " | ".join(h.ljust(widths[i]) for i, h in enumerate(head)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)) + " |")
    return "\n".join(lines)
