#!/usr/bin/env python3
"""Benchmark driver for vmhost (issue 9, points 1-3).

Spawns the release binary and a minimal C JSON-RPC echo server on jansson (bench/echo_server.c, the
floor), drives both over stdio with ndjson, and prints one JSON line per scenario and measurement
followed by a readable table in which every figure that has a C counterpart is also given as a
ratio to the C server measured in the same run.

Python standard library only. Linux only (/proc). Uses valgrind (callgrind) when it is installed.

    python3 bench/run.py            # full run (about 2-3 minutes on 2 cores)
    python3 bench/run.py --quick    # smaller counts, no callgrind for (b)
"""

import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------
# process helpers

def cpu_us(pid):
    """utime + stime of the whole process (all threads), in µs."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()
    # fields[0] is state (field 3); utime is field 14, stime field 15
    return (int(fields[11]) + int(fields[12])) * 1_000_000 / CLK_TCK


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


class Server:
    """A server process with stdin/stdout pipes and a line reader on stdout."""

    def __init__(self, cmd, pin_cpu=None):
        preexec = None
        if pin_cpu is not None:
            def preexec():
                os.sched_setaffinity(0, {pin_cpu})
        self.t0 = time.perf_counter_ns()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0, preexec_fn=preexec)
        self.pid = self.proc.pid
        self.win = self.proc.stdin.fileno()
        self.rout = self.proc.stdout.fileno()
        self.buf = b""
        self.bytes_read = 0

    def send(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.win, view)
            view = view[n:]

    def readline(self):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = self.buf[:i]
                self.buf = self.buf[i + 1:]
                return line
            chunk = os.read(self.rout, 1 << 16)
            if not chunk:
                raise EOFError("server closed stdout")
            self.bytes_read += len(chunk)
            self.buf += chunk

    def request(self, obj):
        """Send one request and return (response, [notifications]) once its response is read."""
        self.send(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        notes = []
        while True:
            msg = json.loads(self.readline())
            if "method" in msg:
                notes.append(msg)
            elif msg.get("id") == obj["id"]:
                return msg, notes

    def cpu_us(self):
        return cpu_us(self.pid)

    def rss_kib(self):
        return status_kib(self.pid, "VmRSS")

    def hwm_kib(self):
        return status_kib(self.pid, "VmHWM")

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            self.proc.stdout.close()
        except OSError:
            pass


def ping_line(i):
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i


def pings(n, start=1):
    return b"".join(ping_line(i) for i in range(start, start + n))


def pipelined(server, payload, replies, only_responses=False):
    """Write `payload` from a thread while reading until `replies` lines (or, with only_responses,
    `replies` responses: notifications may merge while the writer is behind, so their number is not
    fixed) have arrived; returns seconds elapsed and server CPU µs spent."""
    c0 = server.cpu_us()
    t0 = time.perf_counter()
    writer = threading.Thread(target=server.send, args=(payload,), daemon=True)
    writer.start()
    read_count(server, replies, only_responses)
    t1 = time.perf_counter()
    writer.join()
    c1 = server.cpu_us()
    return t1 - t0, c1 - c0


NOTE_PREFIX = b'{"jsonrpc":"2.0","method"'


def read_count(server, count, only_responses=False, timeout=120):
    """Read and discard lines until `count` of them (responses only, with only_responses) have
    been read. Everything after the last counted line that is already read is dropped too: callers
    use this only at the end of a pipelined exchange."""
    deadline = time.monotonic() + timeout
    tail = server.buf
    have = 0
    while True:
        if only_responses:
            parts = tail.split(b"\n")
            tail = parts.pop()
            have += sum(1 for p in parts if not p.startswith(NOTE_PREFIX))
        else:
            have += tail.count(b"\n")
            tail = tail[tail.rfind(b"\n") + 1:]
        if have >= count:
            break
        r, _, _ = select.select([server.rout], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            raise TimeoutError(f"only {have} of {count} replies after {timeout} s")
        chunk = os.read(server.rout, 1 << 20)
        if not chunk:
            raise EOFError("server closed stdout")
        server.bytes_read += len(chunk)
        tail += chunk
    server.buf = tail


def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


# --------------------------------------------------------------------------------------------
# callgrind

def callgrind_total(cmd, stdin_bytes, tag):
    """Total instructions (Ir) of `cmd` reading `stdin_bytes`, all threads."""
    os.makedirs(OUT, exist_ok=True)
    out = os.path.join(OUT, f"callgrind.{tag}.out")
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(stdin_bytes)
        inp = f.name
    try:
        with open(inp, "rb") as stdin:
            subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                           stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False, timeout=600)
    finally:
        os.unlink(inp)
    total = None
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    return total, out


def callgrind_per_item(cmd, prefix, item_fn, n, tag):
    """Instructions per item: run(prefix + n items) - run(prefix), divided by n.
    Returns (per item, path of the full run, path of the base run)."""
    base, base_path = callgrind_total(cmd, prefix, tag + ".0")
    full, path = callgrind_total(cmd, prefix + b"".join(item_fn(i) for i in range(n)), tag + f".{n}")
    if base is None or full is None:
        return None, path, base_path
    return (full - base) / n, path, base_path


def annotate_diff(path, base_path, n, k=12):
    """Top functions by self instructions per item: the full run minus the start-up-only run."""
    full = {fn: ir for ir, _, fn in annotate_top(path, 10_000)}
    base = {fn: ir for ir, _, fn in annotate_top(base_path, 10_000)}
    diff = sorted(((ir - base.get(fn, 0), fn) for fn, ir in full.items()), reverse=True)
    total = sum(d for d, _ in diff if d > 0) or 1
    return [{"ir_per_item": round(d / n), "pct": round(100 * d / total, 1), "fn": fn[:160]} for d, fn in diff[:k] if d > 0]


def annotate_top(path, k=12):
    """(self Ir, %, function) rows of callgrind_annotate, largest first."""
    if not shutil.which("callgrind_annotate"):
        return []
    try:
        text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", path], capture_output=True,
                              text=True, timeout=120).stdout
    except Exception:
        return []
    rows = []
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in line and not m.group(3).startswith("=>"):
            rows.append((int(m.group(1).replace(",", "")), float(m.group(2)), m.group(3).strip()))
    return rows[:k]


# --------------------------------------------------------------------------------------------
# output

RESULTS = []


def emit(scenario, server, **fields):
    rec = {"scenario": scenario, "server": server}
    rec.update(fields)
    RESULTS.append(rec)
    print(json.dumps(rec, ensure_ascii=False), flush=True)


def get(scenario, server, key):
    for r in RESULTS:
        if r["scenario"] == scenario and r["server"] == server and key in r:
            return r[key]
    return None


# --------------------------------------------------------------------------------------------
# scenario (a): ping

def scenario_ping(name, cmd, args):
    n_pipe = args.pipelined
    n_seq = args.sequential

    # start-up to first reply, median of 20
    starts = []
    for _ in range(args.startups):
        t0 = time.perf_counter_ns()
        s = Server(cmd)
        s.send(ping_line(1))
        s.readline()
        starts.append((time.perf_counter_ns() - t0) / 1e6)
        s.close()
    startup_ms = statistics.median(starts)

    # pipelined throughput and CPU per message; idle and peak RSS
    s = Server(cmd)
    s.send(ping_line(0))
    s.readline()
    time.sleep(0.05)
    idle_rss = s.rss_kib()
    payload = pings(n_pipe, start=1)
    secs, cpu = pipelined(s, payload, n_pipe)
    peak = s.hwm_kib()
    s.close()
    emit("ping", name, metric="pipelined", n=n_pipe, msgs_per_s=round(n_pipe / secs),
         cpu_us_per_msg=round(cpu / n_pipe, 3), startup_ms=round(startup_ms, 2),
         idle_rss_mib=round(idle_rss / 1024, 2), peak_rss_mib=round(peak / 1024, 2))

    # sequential round trips, unpinned and pinned (harness and server on CPU 0)
    for pinned in (False, True):
        old = os.sched_getaffinity(0)
        if pinned:
            os.sched_setaffinity(0, {0})
        try:
            s = Server(cmd, pin_cpu=0 if pinned else None)
            s.send(ping_line(0))
            s.readline()
            lat = []
            for i in range(1, n_seq + 1):
                line = ping_line(i)
                t0 = time.perf_counter_ns()
                s.send(line)
                s.readline()
                lat.append(time.perf_counter_ns() - t0)
            s.close()
        finally:
            os.sched_setaffinity(0, old)
        lat.sort()
        emit("ping", name, metric="sequential_pinned" if pinned else "sequential", n=n_seq,
             p50_us=round(percentile(lat, 50) / 1000, 1), p99_us=round(percentile(lat, 99) / 1000, 1),
             p999_us=round(percentile(lat, 99.9) / 1000, 1))

    if args.callgrind:
        ipr, path, base_path = callgrind_per_item(cmd, b"", lambda i: ping_line(i + 1), args.callgrind_pings, f"ping.{name}")
        emit("ping", name, metric="callgrind", n=args.callgrind_pings,
             instructions_per_req=round(ipr) if ipr else None, callgrind_out=os.path.relpath(path, ROOT))
        if name == "vmhost":
            top = annotate_diff(path, base_path, args.callgrind_pings)
            if top:
                emit("ping", name, metric="callgrind_top_per_req", top=top)


# --------------------------------------------------------------------------------------------
# scenario (b): Login username inputs alternating valid / invalid

LOGIN_PREFIX = (b'{"jsonrpc":"2.0","id":"c","method":"vm.create","params":{"kind":"Login","id":"login"}}\n'
                b'{"jsonrpc":"2.0","id":"s","method":"vm.subscribe","params":{"vm":"login"}}\n')


def login_input(i):
    value = "13800138000" if i % 2 == 0 else "12800138000"
    return (b'{"jsonrpc":"2.0","id":%d,"method":"vm.send","params":{"vm":"login","input":"username","value":"%s"}}\n'
            % (i + 1, value.encode()))


def scenario_login(name, cmd, args, is_vmhost):
    n = args.login_inputs
    s = Server(cmd)
    s.send(LOGIN_PREFIX)
    s.readline()
    s.readline()
    payload = b"".join(login_input(i) for i in range(n))
    secs, cpu = pipelined(s, payload, n, only_responses=True)
    s.close()
    rec = dict(metric="pipelined", n=n, cpu_us_per_input=round(cpu / n, 3), inputs_per_s=round(n / secs))
    if args.callgrind and args.callgrind_login:
        ipr, path, base_path = callgrind_per_item(cmd, LOGIN_PREFIX, login_input, args.callgrind_login, f"login.{name}")
        rec["instructions_per_input"] = round(ipr) if ipr else None
        rec["callgrind_n"] = args.callgrind_login
        if is_vmhost:
            top = annotate_diff(path, base_path, args.callgrind_login, 10)
            if top:
                emit("login", name, metric="callgrind_top_per_input", top=top)
    emit("login", name, **rec)


def check_login_changes(cmd):
    """Sanity: each alternating input causes exactly one vm.changed."""
    s = Server(cmd)
    s.request({"jsonrpc": "2.0", "id": "c", "method": "vm.create", "params": {"kind": "Login", "id": "login"}})
    s.request({"jsonrpc": "2.0", "id": "s", "method": "vm.subscribe", "params": {"vm": "login"}})
    counts = []
    for i in range(4):
        value = "13800138000" if i % 2 == 0 else "12800138000"
        _, notes = s.request({"jsonrpc": "2.0", "id": i + 1, "method": "vm.send",
                              "params": {"vm": "login", "input": "username", "value": value}})
        counts.append(len([m for m in notes if m["method"] == "vm.changed"]))
    s.close()
    return counts


# --------------------------------------------------------------------------------------------
# scenario (c): ProductList refresh + load-more to the end

def productlist_run(s, k, page_size=None):
    """One full run on a new view-model: create, subscribe, refresh, load more until refused.
    Returns the list of request objects sent (so the same sequence can be replayed)."""
    vm = f"pl{k}"
    create = {"kind": "ProductList", "id": vm}
    if page_size:
        create["args"] = {"pageSize": page_size}
    sent = []

    def req(method, params):
        obj = {"jsonrpc": "2.0", "id": len(sent) + 1, "method": method, "params": params}
        sent.append(obj)
        return s.request(obj)

    req("vm.create", create)
    req("vm.subscribe", {"vm": vm})
    r, _ = req("vm.send", {"vm": vm, "input": "refresh"})
    assert "result" in r, r
    loads = 0
    while True:
        r, _ = req("vm.send", {"vm": vm, "input": "loadMore"})
        if "error" in r:
            assert r["error"]["code"] == -32003, r
            break
        loads += 1
    req("vm.dispose", {"vm": vm})
    return sent, loads


def scenario_productlist(vmhost_cmd, echo_cmd, args):
    s = Server(vmhost_cmd)
    s.request({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    sent, loads = productlist_run(s, 0)  # warm-up
    c0 = s.cpu_us()
    t0 = time.perf_counter()
    for k in range(1, args.pl_runs + 1):
        productlist_run(s, k)
    t1 = time.perf_counter()
    c1 = s.cpu_us()
    s.close()
    emit("productlist", "vmhost", metric="full_run", runs=args.pl_runs, load_mores_per_run=loads,
         requests_per_run=len(sent), ms_per_run=round((t1 - t0) * 1000 / args.pl_runs, 3),
         cpu_ms_per_run=round((c1 - c0) / 1000 / args.pl_runs, 3))
    # the C server answers the same request sequence with {}: the cost of the round trips alone
    e = Server(echo_cmd)
    e.request({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    c0 = e.cpu_us()
    t0 = time.perf_counter()
    for _ in range(args.pl_runs):
        for obj in sent:
            e.request(obj)
    t1 = time.perf_counter()
    c1 = e.cpu_us()
    e.close()
    emit("productlist", "c-echo", metric="full_run", runs=args.pl_runs, requests_per_run=len(sent),
         ms_per_run=round((t1 - t0) * 1000 / args.pl_runs, 3),
         cpu_ms_per_run=round((c1 - c0) / 1000 / args.pl_runs, 3))


# --------------------------------------------------------------------------------------------
# scenario (d): bytes on the wire per load-more, full vs diff

def list_bytes(cmd, page_size, diff):
    s = Server(cmd)
    sub = {"vm": "pl"}
    if diff:
        sub["diff"] = True
    s.request({"jsonrpc": "2.0", "id": 1, "method": "vm.create",
               "params": {"kind": "ProductList", "id": "pl", "args": {"pageSize": page_size}}})
    s.request({"jsonrpc": "2.0", "id": 2, "method": "vm.subscribe", "params": sub})
    s.request({"jsonrpc": "2.0", "id": 3, "method": "vm.send", "params": {"vm": "pl", "input": "refresh"}})
    per_load = []
    items = None
    i = 4
    while True:
        before = s.bytes_read - len(s.buf)
        r, notes = s.request({"jsonrpc": "2.0", "id": i, "method": "vm.send", "params": {"vm": "pl", "input": "loadMore"}})
        i += 1
        after = s.bytes_read - len(s.buf)
        if "error" in r:
            break
        per_load.append(after - before)
    r, _ = s.request({"jsonrpc": "2.0", "id": i, "method": "vm.get", "params": {"vm": "pl", "outputs": ["items"]}})
    items = r["result"]["values"]["items"]
    s.close()
    return per_load, items


def scenario_list_bytes(cmd, args):
    # the demo backend holds 57 products: pageSize 100 gives one page and no load-more at all, so the
    # measurement uses smaller pages to get several load-mores on the same data
    for page_size in (100, args.list_page_size):
        full, items = list_bytes(cmd, page_size, False)
        diff, items_d = list_bytes(cmd, page_size, True)
        assert items == items_d
        rec = dict(metric="bytes_per_load_more", page_size=page_size, total_items=len(items),
                   load_mores=len(full))
        if full:
            mf = statistics.mean(full)
            md = statistics.mean(diff)
            rec.update(full_bytes_per_load_more=round(mf), diff_bytes_per_load_more=round(md),
                       diff_over_full=round(md / mf, 4), full_bytes=full, diff_bytes=diff)
        else:
            rec["note"] = f"only {len(items)} demo products: pageSize {page_size} loads them all in the refresh, no load-more exists"
        emit("list_bytes", "vmhost", **rec)
    # model of the 5,000-item list (pageSize 100, 50 load-mores) from the measured cell size:
    # full mode resends the whole array (k·100 cells on load-more k), diff mode sends 100 cells
    cell = statistics.mean(len(json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode()) + 1 for c in items)
    full_model = statistics.mean(k * 100 * cell for k in range(2, 51))
    diff_model = 100 * cell
    emit("list_bytes", "vmhost", metric="model_5000_items", cell_bytes=round(cell, 1),
         full_bytes_per_load_more=round(full_model), diff_bytes_per_load_more=round(diff_model),
         diff_over_full=round(diff_model / full_model, 4),
         note="modelled from the measured cell size, not measured: the embedded backend has 57 products")


# --------------------------------------------------------------------------------------------
# scenario (e): RSS per view-model

def scenario_vm_rss(cmd, args):
    for kind in ("Login", "ProductList"):
        n = args.vms
        s = Server(cmd)
        s.request({"jsonrpc": "2.0", "id": 0, "method": "ping"})
        time.sleep(0.05)
        r0 = s.rss_kib()
        lines = []
        for i in range(n):
            lines.append(b'{"jsonrpc":"2.0","id":"c%d","method":"vm.create","params":{"kind":"%s","id":"v%d"}}\n'
                         % (i, kind.encode(), i))
            lines.append(b'{"jsonrpc":"2.0","id":"s%d","method":"vm.subscribe","params":{"vm":"v%d"}}\n' % (i, i))
        secs, cpu = pipelined(s, b"".join(lines), 2 * n, only_responses=True)
        time.sleep(0.05)
        r1 = s.rss_kib()
        hwm = s.hwm_kib()
        s.close()
        emit("vm_rss", "vmhost", metric="create_subscribe", kind=kind, n=n,
             rss_before_mib=round(r0 / 1024, 2), rss_after_mib=round(r1 / 1024, 2), peak_rss_mib=round(hwm / 1024, 2),
             kib_per_vm=round((r1 - r0) / n, 2), cpu_us_per_vm=round(cpu / n, 2))


# --------------------------------------------------------------------------------------------
# table

def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def fmt(v, unit=""):
    if v is None:
        return "–"
    if isinstance(v, float):
        v = f"{v:,.2f}" if abs(v) < 100 else f"{v:,.0f}"
    elif isinstance(v, int):
        v = f"{v:,}"
    return f"{v}{unit}"


def table(args):
    rows = []

    def add(label, v, c, unit="", target=""):
        rows.append((label, fmt(v, unit), fmt(c, unit), ratio(v, c), target))

    P = lambda s, m, k: next((r.get(k) for r in RESULTS if r["scenario"] == "ping" and r["server"] == s and r["metric"] == m), None)
    add("(a) ping: instructions/req (callgrind)", P("vmhost", "callgrind", "instructions_per_req"),
        P("c-echo", "callgrind", "instructions_per_req"), "", "≤ 2× C (≤ ~40k)")
    add("(a) ping: server CPU µs/msg", P("vmhost", "pipelined", "cpu_us_per_msg"), P("c-echo", "pipelined", "cpu_us_per_msg"), " µs", "≤ 2× C")
    add("(a) ping: pipelined msgs/s", P("vmhost", "pipelined", "msgs_per_s"), P("c-echo", "pipelined", "msgs_per_s"), "", "≥ 0.5× C")
    for m, lbl in (("sequential_pinned", "pinned"), ("sequential", "unpinned")):
        for k, kl in (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9")):
            tgt = "≤ 1.5× C" if (m == "sequential_pinned" and k == "p50_us") else ""
            add(f"(a) ping: round trip {lbl} {kl}", P("vmhost", m, k), P("c-echo", m, k), " µs", tgt)
    add("(a) ping: start-up to first reply (median)", P("vmhost", "pipelined", "startup_ms"), P("c-echo", "pipelined", "startup_ms"), " ms", "≤ 10 ms")
    add("(a) ping: idle RSS", P("vmhost", "pipelined", "idle_rss_mib"), P("c-echo", "pipelined", "idle_rss_mib"), " MiB", "≤ 20 MiB")
    add("(a) ping: peak RSS after pipelined run", P("vmhost", "pipelined", "peak_rss_mib"), P("c-echo", "pipelined", "peak_rss_mib"), " MiB", "")

    L = lambda s, k: next((r.get(k) for r in RESULTS if r["scenario"] == "login" and r["server"] == s and r["metric"] == "pipelined"), None)
    add("(b) Login username: instructions/input", L("vmhost", "instructions_per_input"), L("c-echo", "instructions_per_input"), "", "≤ 80k")
    add("(b) Login username: CPU µs/input", L("vmhost", "cpu_us_per_input"), L("c-echo", "cpu_us_per_input"), " µs", "≤ 10 µs")
    add("(b) Login username: inputs/s pipelined", L("vmhost", "inputs_per_s"), L("c-echo", "inputs_per_s"), "", "")

    C = lambda s, k: get("productlist", s, k)
    add(f"(c) ProductList refresh+load-more to end (57 items, {C('vmhost', 'load_mores_per_run')} load-mores): ms/run",
        C("vmhost", "ms_per_run"), C("c-echo", "ms_per_run"), " ms", "")
    add("(c) ProductList full run: server CPU ms/run", C("vmhost", "cpu_ms_per_run"), C("c-echo", "cpu_ms_per_run"), " ms", "")

    for r in RESULTS:
        if r["scenario"] == "list_bytes" and r["metric"] == "bytes_per_load_more" and r.get("load_mores"):
            ps = r["page_size"]
            add(f"(d) pageSize {ps}, {r['total_items']} items: bytes/load-more full", r["full_bytes_per_load_more"], None, " B")
            add(f"(d) pageSize {ps}, {r['total_items']} items: bytes/load-more diff", r["diff_bytes_per_load_more"], None, " B")
            rows.append((f"(d) pageSize {ps}: diff / full (measured)", f"{r['diff_over_full'] * 100:.1f}%", "–", "–", "≤ 5%"))
        elif r["scenario"] == "list_bytes" and r["metric"] == "bytes_per_load_more":
            rows.append((f"(d) pageSize {r['page_size']}: no load-more possible", "–", "–", "–", ""))
        elif r["scenario"] == "list_bytes" and r["metric"] == "model_5000_items":
            rows.append(("(d) 5,000 items, pageSize 100: diff / full (modelled)", f"{r['diff_over_full'] * 100:.1f}%", "–", "–", "≤ 5%"))
    for r in RESULTS:
        if r["scenario"] == "vm_rss":
            add(f"(e) {r['n']:,} {r['kind']} created+subscribed: RSS per view-model", r["kib_per_vm"], None, " KiB", "≤ 8 KiB")
    rows.append(("(f) slow client, (g) micro-benchmarks", "not run", "–", "–", "left out"))

    w0 = max(len(r[0]) for r in rows)
    head = ("scenario / figure", "vmhost", "C jansson", "vmhost / C", "target")
    ws = [max(len(head[i]), max(len(r[i]) for r in rows)) for i in range(5)]
    ws[0] = max(ws[0], w0)
    lines = ["| " + " | ".join(h.ljust(ws[i]) for i, h in enumerate(head)) + " |",
             "|" + "|".join("-" * (w + 2) for w in ws) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c).ljust(ws[i]) for i, c in enumerate(r)) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller counts; callgrind for ping only")
    ap.add_argument("--vmhost", default=os.path.join(ROOT, ".build-bench", "release", "vmhost"),
                    help="the vmhost binary (default: .build-bench/release/vmhost, built if missing)")
    ap.add_argument("--no-build", action="store_true", help="do not build vmhost when the binary is missing")
    ap.add_argument("--no-callgrind", action="store_true", help="skip valgrind even when it is installed")
    ap.add_argument("--json-out", default=os.path.join(OUT, "results.jsonl"), help="also write the JSON lines here")
    args = ap.parse_args()

    args.pipelined = 200_000
    args.sequential = 20_000
    args.startups = 20
    args.callgrind_pings = 20_000
    args.login_inputs = 100_000
    args.callgrind_login = 5_000
    args.pl_runs = 300
    args.list_page_size = 10
    args.vms = 10_000
    if args.quick:
        args.pipelined = 50_000
        args.sequential = 5_000
        args.startups = 10
        args.callgrind_pings = 5_000
        args.login_inputs = 20_000
        args.callgrind_login = 0
        args.pl_runs = 50
        args.vms = 2_000
    args.callgrind = bool(shutil.which("valgrind")) and not args.no_callgrind

    os.makedirs(OUT, exist_ok=True)
    if not os.path.exists(args.vmhost):
        if args.no_build:
            sys.exit(f"{args.vmhost} is missing")
        print("building vmhost (release, scratch path .build-bench) ...", file=sys.stderr, flush=True)
        subprocess.run(["swift", "build", "-c", "release", "--scratch-path", ".build-bench"], cwd=ROOT, check=True)
    echo_bin = os.path.join(OUT, "echo_server")
    subprocess.run(["cc", "-O2", "-o", echo_bin, os.path.join(HERE, "echo_server.c"), "-ljansson"], check=True)

    vmhost_cmd = [args.vmhost, "--framing", "ndjson"]
    echo_cmd = [echo_bin]
    t_start = time.time()

    for name, cmd in (("c-echo", echo_cmd), ("vmhost", vmhost_cmd)):
        scenario_ping(name, cmd, args)

    counts = check_login_changes(vmhost_cmd)
    if counts != [1, 1, 1, 1]:
        print(f"warning: Login username inputs caused {counts} vm.changed each (expected 1)", file=sys.stderr)
    scenario_login("c-echo", echo_cmd, args, False)
    scenario_login("vmhost", vmhost_cmd, args, True)

    scenario_productlist(vmhost_cmd, echo_cmd, args)
    scenario_list_bytes(vmhost_cmd, args)
    scenario_vm_rss(vmhost_cmd, args)
    emit("slow_client", "vmhost", metric="skipped", note="scenario (f) is not implemented in this driver")
    emit("micro", "vmhost", metric="skipped", note="scenario (g) is not implemented in this driver")

    with open(args.json_out, "w") as f:
        for r in RESULTS:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")

    print()
    print(table(args))
    print()
    print(f"nproc {os.cpu_count()}; {'callgrind' if args.callgrind else 'no callgrind'}; "
          f"{'quick' if args.quick else 'full'} run in {time.time() - t_start:.0f} s; "
          f"JSON lines also in {os.path.relpath(args.json_out, ROOT)}")


if __name__ == "__main__":
    main()
