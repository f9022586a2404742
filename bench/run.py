#!/usr/bin/env python3
"""Benchmark driver for vmhost (issue 9, points 1-3).

Spawns the release binary and a minimal C JSON-RPC echo server on jansson (bench/echo_server.c, the
floor), drives both over stdio with ndjson, and prints one JSON line per scenario and measurement
followed by a readable table in which every figure that has a C counterpart is also given as a
ratio to the C server measured in the same run.

Scenarios: (a) ping, (b) Login inputs, (c) ProductList paging, (d) bytes per load-more of a
5,000-item list in full and diff mode (vmhost --demo-products 5000), and what a load-more costs as
the list grows (at 1,000, 10,000 and 50,000 items), the memory per listed product and 5,000
load-mores of 20 on a 100,000-product catalogue, with a diff, a full-value or no subscriber, (e) RSS per view-model,
(f) a client that stops reading while 100,000 property changes happen, (g) the in-process
micro-benchmarks of Sources/vmhost-bench (JSON layer, dispatch), (h) 2,000 Login countdowns over
60 s of a manual clock (one `control.clock.advance`; JSON line only), (i) the peak RSS of a 50 MB
response from an HTTP backend, refused by the size limit and read under a raised one, (j) the HTTP
client: the first call of a fresh host and warm calls against a keep-alive server on loopback,
(k) the reference app in process through the C ABI (libvmhost-embedded), from C and from Python,
beside the same exchanges through a pipe (bench/embedded.py; its own table).

Python standard library only. Linux only (/proc). Uses valgrind (callgrind) when it is installed.

    python3 bench/run.py            # full run (about 2-3 minutes on 2 cores)
    python3 bench/run.py --quick    # smaller counts, no callgrind for (b)
    python3 bench/run.py --only dfg # some scenarios only
"""

import argparse
import hashlib
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


def cpu_ns(pid):
    """Time on a CPU of every thread of the process, in ns (/proc/PID/task/*/schedstat): finer than
    the clock ticks of cpu_us, for figures of a millisecond."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


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
        i = self.buf.find(b"\n")
        if i >= 0:
            line = self.buf[:i]
            self.buf = self.buf[i + 1:]
            return line
        # A long line (a full list of 50,000 items is megabytes) is gathered in parts and joined
        # once: searching and growing one buffer per chunk would cost the square of its length.
        parts = [self.buf]
        while True:
            chunk = os.read(self.rout, 1 << 20)
            if not chunk:
                raise EOFError("server closed stdout")
            self.bytes_read += len(chunk)
            j = chunk.find(b"\n")
            if j >= 0:
                parts.append(chunk[:j])
                self.buf = chunk[j + 1:]
                return b"".join(parts)
            parts.append(chunk)

    def reply_line(self, line, request_id):
        """Sends one request line and returns its reply line, skipping (not parsing) notifications."""
        self.send(line)
        prefix = b'{"jsonrpc":"2.0","id":%d,' % request_id
        while True:
            reply = self.readline()
            if reply.startswith(prefix):
                return reply

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

def readable_copy(binary):
    """A copy of `binary` that valgrind can read: valgrind 3.19 gives up on the tuned release build
    ("Possibly corrupted debuginfo file": DWARF 5 from Swift beside DWARF 4 from the static
    libstdc++), so the count runs on a copy without debug information (`objcopy --strip-debug`,
    the symbol table kept: callgrind still names every function). Made again when the binary is
    newer; the binary itself is returned when it has no debug information or objcopy is missing."""
    tool = shutil.which("objcopy")
    if not tool:
        return binary
    try:
        sections = subprocess.run(["objdump", "-h", binary], capture_output=True, text=True, timeout=60).stdout
    except Exception:
        sections = ".debug_"
    if ".debug_" not in sections:
        return binary
    os.makedirs(OUT, exist_ok=True)
    tag = hashlib.sha1(os.path.abspath(binary).encode()).hexdigest()[:8]
    copy = os.path.join(OUT, "callgrind-bin", f"{os.path.basename(binary)}-{tag}")
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    if not os.path.exists(copy) or os.path.getmtime(copy) < os.path.getmtime(binary):
        subprocess.run([tool, "--strip-debug", binary, copy], check=True)
    return copy


def callgrind_total(cmd, stdin_bytes, tag):
    """Total instructions (Ir) of `cmd` reading `stdin_bytes`, all threads (on ``readable_copy``)."""
    os.makedirs(OUT, exist_ok=True)
    cmd = [readable_copy(cmd[0])] + cmd[1:]
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

def median_startup_ms(cmd, n):
    """Start-up to the first reply of a ping, median of n start-ups."""
    starts = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        s = Server(cmd)
        s.send(ping_line(1))
        s.readline()
        starts.append((time.perf_counter_ns() - t0) / 1e6)
        s.close()
    return statistics.median(starts)


def scenario_startup_http(cmd, args):
    """vmhost with an HTTP backend it never calls: the client must cost nothing before the first call.
    Also the size of the binary."""
    http_cmd = cmd + ["--backend", "http://127.0.0.1:9"]
    emit("ping", "vmhost", metric="startup_http", startup_ms=round(median_startup_ms(http_cmd, args.startups), 2),
         binary_mb=round(os.path.getsize(cmd[0]) / 1e6, 1))

def scenario_ping(name, cmd, args):
    n_pipe = args.pipelined
    n_seq = args.sequential

    startup_ms = median_startup_ms(cmd, args.startups)

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
    """Pages a new ProductList from empty to the end with `loadMore` only (on a fresh list it loads
    page 1), counting the bytes read from stdout for each load-more: its `vm.changed`
    notifications and its reply. Returns (bytes per successful load-more, final items)."""
    s = Server(cmd)
    sub = {"vm": "pl"}
    if diff:
        sub["diff"] = True
    s.request({"jsonrpc": "2.0", "id": 1, "method": "vm.create",
               "params": {"kind": "ProductList", "id": "pl", "args": {"pageSize": page_size}}})
    s.request({"jsonrpc": "2.0", "id": 2, "method": "vm.subscribe", "params": sub})
    per_load = []
    i = 3
    while True:
        before = s.bytes_read - len(s.buf)
        r, notes = s.request({"jsonrpc": "2.0", "id": i, "method": "vm.send", "params": {"vm": "pl", "input": "loadMore"}})
        i += 1
        after = s.bytes_read - len(s.buf)
        if "error" in r:
            assert r["error"]["code"] == -32003 and r["error"]["data"]["reason"] == "no more pages", r
            break
        per_load.append(after - before)
    r, _ = s.request({"jsonrpc": "2.0", "id": i, "method": "vm.get", "params": {"vm": "pl", "outputs": ["items"]}})
    items = r["result"]["values"]["items"]
    s.close()
    return per_load, items


def scenario_list_bytes(cmd, args):
    n, page_size = args.list_items, args.list_page_size
    cmd = cmd + ["--demo-products", str(n)]
    full, items = list_bytes(cmd, page_size, False)
    diff, items_d = list_bytes(cmd, page_size, True)
    assert items == items_d and len(items) == n, (len(items), len(items_d))
    pages = -(-n // page_size)
    assert len(full) == len(diff) == pages, (len(full), len(diff), pages)
    mf = statistics.mean(full)
    md = statistics.mean(diff)
    emit("list_bytes", "vmhost", metric="bytes_per_load_more", total_items=n, page_size=page_size,
         load_mores=len(full), full_bytes_per_load_more=round(mf), diff_bytes_per_load_more=round(md),
         diff_over_full=round(md / mf, 4), last_diff_over_full=round(diff[-1] / full[-1], 4),
         full_total_bytes=sum(full), diff_total_bytes=sum(diff),
         full_first_last=[full[0], full[-1]], diff_first_last=[diff[0], diff[-1]])


class Pager:
    """A ProductList of an `--demo-products n` host paged with `loadMore`, subscribed as asked:
    `mode` is "diff" (`diff: true`), "full" (full values) or None (no subscription)."""

    def __init__(self, cmd, n, page_size, mode=None):
        self.s = Server(cmd + ["--demo-products", str(n)])
        self.next_id = 1
        self.call("vm.create", {"kind": "ProductList", "id": "pl", "args": {"pageSize": page_size}})
        self.length = 0
        self.page_size = page_size
        self.n = n
        if mode:
            self.subscribe(mode)

    def call(self, method, params):
        i = self.next_id
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}, separators=(",", ":"))
        return self.s.reply_line(line.encode() + b"\n", i)

    def subscribe(self, mode):
        params = {"vm": "pl", "outputs": ["items", "page", "hasMore"]}
        if mode == "diff":
            params["diff"] = True
        self.call("vm.subscribe", params)

    def load_more(self):
        """One load-more; returns its time in ms, from writing the request to reading the reply."""
        t0 = time.perf_counter()
        reply = self.call("vm.send", {"vm": "pl", "input": "loadMore"})
        t1 = time.perf_counter()
        assert b'"error"' not in reply, reply[:300]
        self.length = min(self.length + self.page_size, self.n)
        return (t1 - t0) * 1000

    def page_to(self, length):
        while self.length < length:
            self.load_more()

    def close(self):
        self.s.close()


def scenario_list_cost(cmd, args):
    """(d) continued: what a load-more costs the host as the list grows, and what a listed product
    costs in memory, with a diff subscriber, a full-value subscriber and none."""
    page_size = 100
    marks = args.cost_marks
    for mode in ("diff", "full"):
        for mark in marks:
            # Paged to the mark unsubscribed (the list the host holds is the same), then subscribed:
            # a full-value subscriber would otherwise read gigabytes on the way.
            window = args.cost_window[mode]
            p = Pager(cmd, mark + page_size * (window + 2), page_size)
            p.page_to(mark)
            p.subscribe(mode)
            c0 = cpu_ns(p.s.pid)
            times = sorted(p.load_more() for _ in range(window))
            c1 = cpu_ns(p.s.pid)
            p.close()
            emit("list_cost", "vmhost", metric="load_more_ms", mode=mode, page_size=page_size, at_items=mark,
                 load_mores=len(times), median_ms=round(statistics.median(times), 3),
                 min_ms=round(times[0], 3), max_ms=round(times[-1], 3),
                 cpu_ms_per_load_more=round((c1 - c0) / 1e6 / len(times), 3))
    n = args.mem_items
    for mode in (None, "diff", "full"):
        p = Pager(cmd, n, page_size, mode)
        p.call("ping", {})
        r0 = p.s.rss_kib()
        p.page_to(n)
        p.call("ping", {})
        r1 = p.s.rss_kib()
        p.close()
        emit("list_cost", "vmhost", metric="memory", mode=mode or "none", items=n,
             rss_growth_mib=round((r1 - r0) / 1024, 2), kib_per_item=round((r1 - r0) / n, 3))
    n, k, page_size = args.long_items, args.long_load_mores, 20
    p = Pager(cmd, n, page_size, "diff")
    t0 = time.perf_counter()
    c0 = p.s.cpu_us()
    for _ in range(k):
        p.load_more()
    t1 = time.perf_counter()
    c1 = p.s.cpu_us()
    p.close()
    emit("list_cost", "vmhost", metric="long_run", mode="diff", catalogue=n, page_size=page_size, load_mores=k,
         total_s=round(t1 - t0, 3), host_cpu_s=round((c1 - c0) / 1e6, 3))


# --------------------------------------------------------------------------------------------
# scenario (e): RSS per view-model

def scenario_large_body(cmd, args):
    """(i): a ProductList refresh against a local HTTP server whose answer is 50 MB (one product whose
    name is 50 MB long): with the default --max-response-bytes (refused unread) and with a limit
    above it (read, parsed, applied). Peak RSS of the host (VmHWM)."""
    import http.server

    size = 50 * 1000 * 1000
    product = ('{"id":"p1","name":"%s","bank":"b","annualRate":4.5,"termDays":30,"minAmount":1000,'
               '"saleStatus":"onSale"}')
    filler = size - len(product % "") - 100
    body = ('{"success":true,"code":"0","message":"ok","data":[' + product % ("x" * filler)
            + '],"page":{"index":1,"size":20,"total":1}}').encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass  # the client closed: the body was refused

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        for limit in (None, 64 * 1024 * 1024):
            extra = ["--backend", url] + (["--max-response-bytes", str(limit)] if limit else [])
            s = Server(cmd + extra)
            s.request({"jsonrpc": "2.0", "id": 1, "method": "vm.create", "params": {"kind": "ProductList", "id": "pl"}})
            s.request({"jsonrpc": "2.0", "id": 2, "method": "vm.subscribe", "params": {"vm": "pl"}})
            r, _ = s.request({"jsonrpc": "2.0", "id": 3, "method": "vm.send", "params": {"vm": "pl", "input": "refresh"}})
            outcome = "read" if "result" in r else "refused: " + str(r["error"].get("data", {}).get("kind", r["error"]["code"]))
            hwm = s.hwm_kib()
            s.close()
            emit("large_body", "vmhost", metric="peak_rss", body_mb=size / 1e6,
                 max_response_bytes=limit or 8 * 1024 * 1024, outcome=outcome, peak_rss_mib=round(hwm / 1024, 1))
    finally:
        httpd.shutdown()


def scenario_http_path(cmd, args):
    """(j): the HTTP client itself. A ProductList refresh against a keep-alive HTTP/1.1 server on
    loopback (one page of 20 products): the first call of a fresh host (which loads the client,
    starts its thread and connects), then warm calls on the same host (the connection reused).
    Wall time from writing the request to reading its reply; the host's CPU time per warm call
    (/proc/PID/task/*/schedstat); the host's RSS and threads before and after the calls."""
    import http.server

    product = ('{"id":"p%d","name":"稳健增利%d号","bank":"招商银行","annualRate":4.5,"saleStatus":"onSale",'
               '"termDays":90,"minAmount":1000}')
    body = ('{"success":true,"code":"0","message":"ok","data":[' + ",".join(product % (i, i) for i in range(20))
            + '],"page":{"index":1,"size":20,"total":20}}').encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The head and the body are written apart: without TCP_NODELAY the body would wait for the
        # client's delayed ACK (40 ms), whatever the client.
        disable_nagle_algorithm = True

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    firsts, warms, cpus = [], [], []
    rss = {}
    next_id = [10]

    def refresh(s):
        next_id[0] += 1
        line = b'{"jsonrpc":"2.0","id":%d,"method":"vm.send","params":{"vm":"pl","input":"refresh"}}\n' % next_id[0]
        t0 = time.perf_counter_ns()
        reply = s.reply_line(line, next_id[0])
        elapsed = (time.perf_counter_ns() - t0) / 1e6
        if b'"result"' not in reply:
            raise RuntimeError(f"(j) refresh failed: {reply[:300]!r}")
        return elapsed

    try:
        for run in range(args.http_hosts):
            s = Server(cmd + ["--backend", url])
            s.request({"jsonrpc": "2.0", "id": 1, "method": "vm.create", "params": {"kind": "ProductList", "id": "pl"}})
            s.request({"jsonrpc": "2.0", "id": 2, "method": "vm.subscribe", "params": {"vm": "pl"}})
            if run == 0:
                rss["before"] = s.rss_kib()
                rss["threads_before"] = len(os.listdir(f"/proc/{s.pid}/task"))
            firsts.append(refresh(s))
            c0 = cpu_ns(s.pid)
            for _ in range(args.http_warm_calls):
                warms.append(refresh(s))
            cpus.append((cpu_ns(s.pid) - c0) / args.http_warm_calls / 1000)
            if run == 0:
                time.sleep(0.05)
                rss["after"] = s.rss_kib()
                rss["threads_after"] = len(os.listdir(f"/proc/{s.pid}/task"))
            s.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    warms.sort()
    emit("http_path", "vmhost", metric="refresh", hosts=args.http_hosts, warm_calls=len(warms),
         first_call_ms=round(statistics.median(firsts), 2), first_call_min_ms=round(min(firsts), 2),
         warm_call_ms=round(statistics.median(warms), 3), warm_call_p90_ms=round(warms[int(len(warms) * 0.9)], 3),
         warm_cpu_us=round(statistics.median(cpus), 1),
         rss_before_mib=round(rss["before"] / 1024, 2), rss_after_mib=round(rss["after"] / 1024, 2),
         threads_before=rss["threads_before"], threads_after=rss["threads_after"])


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
# scenario (h): 2,000 Login countdowns over 60 s of a manual clock (timers fired per advance)

def scenario_countdowns(cmd, n=2000):
    s = Server(cmd + ["--clock", "manual", "--test-controls"])
    lines = []
    for i in range(n):
        lines.append(b'{"jsonrpc":"2.0","id":"c%d","method":"vm.create","params":{"kind":"Login","id":"v%d","args":{"mode":"code"}}}\n' % (i, i))
        lines.append(b'{"jsonrpc":"2.0","id":"p%d","method":"vm.send","params":{"vm":"v%d","input":"phone","value":"13912345678"}}\n' % (i, i))
        lines.append(b'{"jsonrpc":"2.0","id":"s%d","method":"vm.send","params":{"vm":"v%d","input":"sendCode"}}\n' % (i, i))
    pipelined(s, b"".join(lines), 3 * n, only_responses=True)
    secs, cpu = pipelined(s, b'{"jsonrpc":"2.0","id":"adv","method":"control.clock.advance","params":{"ms":60000}}\n', 1,
                          only_responses=True)
    s.close()
    emit("countdowns", "vmhost", metric="advance_60s", n=n, timers_fired=n * 60,
         wall_s=round(secs, 3), cpu_ms=round(cpu / 1000, 1))


# --------------------------------------------------------------------------------------------
# scenario (f): a client that stops reading while property changes happen

def slow_input(i):
    """Input i of (f): invalid, valid, invalid, … so that the last of an even count is valid."""
    value = "12800138000" if i % 2 == 0 else "13800138000"
    return (b'{"jsonrpc":"2.0","id":%d,"method":"vm.send","params":{"vm":"login","input":"username","value":"%s"}}\n'
            % (i + 1, value.encode()))


def scenario_slow_client(cmd, args):
    n = args.slow_inputs
    stall = args.slow_stall_s
    assert n % 2 == 0
    s = Server(cmd)
    _, _ = s.request({"jsonrpc": "2.0", "id": "c", "method": "vm.create", "params": {"kind": "Login", "id": "login"}})
    sub, _ = s.request({"jsonrpc": "2.0", "id": "s", "method": "vm.subscribe", "params": {"vm": "login"}})
    mirror = dict(sub["result"]["values"])
    initial = dict(mirror)
    subscription = sub["result"]["subscription"]
    assert mirror["usernameValid"] is False
    time.sleep(0.1)
    idle_rss = s.rss_kib()
    idle_hwm = s.hwm_kib()

    # the writer thread sends every input while the driver reads nothing for `stall` seconds
    payload = b"".join(slow_input(i) for i in range(n))
    sent = [0]
    written_at = [None]

    def write_all():
        view = memoryview(payload)
        while view:
            k = os.write(s.win, view[:1 << 16])
            view = view[k:]
            sent[0] += k
        written_at[0] = time.perf_counter()

    t0 = time.perf_counter()
    writer = threading.Thread(target=write_all, daemon=True)
    writer.start()
    samples = []
    while time.perf_counter() - t0 < stall:
        samples.append((round(time.perf_counter() - t0, 3), s.rss_kib(), s.hwm_kib()))
        time.sleep(0.05)
    sent_during_stall = sent[0]
    stall_rss = s.rss_kib()
    stall_hwm = s.hwm_kib()

    # resume: read until every response has arrived, applying vm.changed to a local mirror
    responses = {}
    duplicates = 0
    bad = []
    changed = 0
    events = 0
    out_of_order = 0
    last_id = 0
    mirror_at_last_reply = None
    t1 = time.perf_counter()
    while len(responses) < n:
        msg = json.loads(s.readline())
        method = msg.get("method")
        if method == "vm.changed":
            changed += 1
            params = msg["params"]
            assert params["subscription"] == subscription and params["vm"] == "login", params
            mirror.update(params["values"])
        elif method is not None:
            events += 1
        else:
            rid = msg.get("id")
            if rid in responses:
                duplicates += 1
            responses[rid] = msg
            if msg.get("result") != {}:
                bad.append(msg)
            if isinstance(rid, int):
                if rid < last_id:
                    out_of_order += 1
                last_id = max(last_id, rid)
            if rid == n:
                mirror_at_last_reply = dict(mirror)
    drain_s = time.perf_counter() - t1
    writer.join()
    after_rss = s.rss_kib()
    peak_hwm = s.hwm_kib()
    got, notes = s.request({"jsonrpc": "2.0", "id": "g", "method": "vm.get", "params": {"vm": "login"}})
    for m in notes:
        if m.get("method") == "vm.changed":
            changed += 1
            mirror.update(m["params"]["values"])
    state = got["result"]["values"]
    s.close()

    missing = [i for i in range(1, n + 1) if i not in responses]
    # what the last input (a valid number) implies: usernameValid true, every other property as
    # at the start (canSubmit needs a valid password too)
    expected_final = dict(initial, usernameValid=True)
    checks = {
        "every_request_answered_once": not missing and not duplicates and set(responses) == set(range(1, n + 1)),
        "every_result_is_empty_object": not bad,
        "responses_in_request_order": out_of_order == 0,
        "vm_get_is_what_the_last_input_implies": state == expected_final,
        "mirror_equals_vm_get": mirror == state,
        "mirror_at_last_reply_final": mirror_at_last_reply == expected_final,
        "no_events": events == 0,
    }
    growth_kib = max([h for _, _, h in samples] + [stall_hwm, peak_hwm]) - idle_rss
    emit("slow_client", "vmhost", metric="stalled_reader", inputs=n, stall_s=stall,
         bytes_sent_during_stall=sent_during_stall, bytes_total=len(payload),
         all_inputs_read_during_stall=sent_during_stall == len(payload),
         inputs_written_s=round(written_at[0] - t0, 3) if written_at[0] else None,
         idle_rss_mib=round(idle_rss / 1024, 2), idle_hwm_mib=round(idle_hwm / 1024, 2),
         stall_rss_mib=round(stall_rss / 1024, 2), stall_hwm_mib=round(stall_hwm / 1024, 2),
         rss_after_drain_mib=round(after_rss / 1024, 2), peak_hwm_mib=round(peak_hwm / 1024, 2),
         stall_growth_mib=round((stall_hwm - idle_rss) / 1024, 2),
         peak_growth_mib=round(growth_kib / 1024, 2), drain_s=round(drain_s, 3),
         responses=len(responses), missing=len(missing), duplicates=duplicates,
         vm_changed=changed, checks=checks, ok=all(checks.values()),
         rss_samples_mib=[(t, round(r / 1024, 1)) for t, r, _ in samples[::10]])


# --------------------------------------------------------------------------------------------
# scenario (g): in-process micro-benchmarks (Sources/vmhost-bench)

def scenario_micro(bench_bin, args):
    cmd = [bench_bin] + (["--quick"] if args.quick else [])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        emit("micro", "vmhost", metric="failed", status=done.returncode, stderr=done.stderr[-2000:])
        return
    for line in done.stdout.splitlines():
        rec = json.loads(line)
        kind = rec.pop("bench")
        emit("micro", "vmhost", metric=kind, **rec)


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
    add("(a) ping: start-up to first reply (median)", P("vmhost", "pipelined", "startup_ms"), P("c-echo", "pipelined", "startup_ms"), " ms", "≤ 2.5× C")
    add("(a) ping: start-up, --backend http://… never called", P("vmhost", "startup_http", "startup_ms"), P("c-echo", "pipelined", "startup_ms"), " ms", "≤ 3× C")
    add("(a) ping: idle RSS", P("vmhost", "pipelined", "idle_rss_mib"), P("c-echo", "pipelined", "idle_rss_mib"), " MiB", "≤ 6 MiB")
    add("(a) release binary size", P("vmhost", "startup_http", "binary_mb"), None, " MB", "≤ 25 MB")
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
        if r["scenario"] == "list_bytes" and r["metric"] == "bytes_per_load_more":
            lbl = f"(d) {r['total_items']:,} items, pageSize {r['page_size']}, {r['load_mores']} load-mores"
            add(f"{lbl}: mean bytes/load-more full", r["full_bytes_per_load_more"], None, " B")
            add(f"{lbl}: mean bytes/load-more diff", r["diff_bytes_per_load_more"], None, " B")
            rows.append((f"{lbl}: diff / full", f"{r['diff_over_full'] * 100:.1f}%", "–", "–", "≤ 5%"))
    D = lambda mode, at: next((r for r in RESULTS if r["scenario"] == "list_cost" and r["metric"] == "load_more_ms"
                               and r["mode"] == mode and r["at_items"] == at), None)
    for mode, tgt in (("diff", "≤ 1.5× at 1,000"), ("full", "proportional")):
        base = D(mode, args.cost_marks[0])
        for at in args.cost_marks:
            r = D(mode, at)
            if r is None:
                continue
            lbl = f"(d) loadMore of {r['page_size']} at {at:,} items, {mode} subscriber"
            add(f"{lbl}: host CPU ms; wall ms median, min", f"{r['cpu_ms_per_load_more']}; {r['median_ms']}, {r['min_ms']}", None, "")
            if base and at != base["at_items"]:
                rows.append((f"{lbl}: host CPU / at {base['at_items']:,}",
                             f"{r['cpu_ms_per_load_more'] / base['cpu_ms_per_load_more']:.2f}×", "–", "–", tgt))
    for r in RESULTS:
        if r["scenario"] == "list_cost" and r["metric"] == "memory":
            add(f"(d) {r['items']:,} products listed, {r['mode']} subscriber: RSS per product", r["kib_per_item"], None, " KiB",
                "≤ 0.5 KiB" if r["mode"] == "diff" else "")
        elif r["scenario"] == "list_cost" and r["metric"] == "long_run":
            add(f"(d) {r['load_mores']:,} load-mores of {r['page_size']} on {r['catalogue']:,} products, diff: total",
                r["total_s"], None, " s", "< 10 s")
    for r in RESULTS:
        if r["scenario"] == "vm_rss":
            add(f"(e) {r['n']:,} {r['kind']} created+subscribed: RSS per view-model", r["kib_per_vm"], None, " KiB", "≤ 8 KiB")
    for r in RESULTS:
        if r["scenario"] == "slow_client" and r["metric"] == "stalled_reader":
            lbl = f"(f) reader stalled {r['stall_s']:g} s, {r['inputs']:,} Login inputs"
            add(f"{lbl}: RSS growth during the stall", r["stall_growth_mib"], None, " MiB", "")
            add(f"{lbl}: peak RSS growth incl. the drain", r["peak_growth_mib"], None, " MiB", "≤ 16 MiB")
            rows.append((f"{lbl}: responses / vm.changed read",
                         f"{r['responses']:,} / {r['vm_changed']:,}", "–", "–", ""))
            failed = [k for k, v in r["checks"].items() if not v]
            rows.append((f"{lbl}: final state, every response",
                         "correct" if r["ok"] else "WRONG: " + ", ".join(failed), "–", "–", "nothing lost"))
    M = lambda kind, **kw: next((r for r in RESULTS if r["scenario"] == "micro" and r["metric"] == kind
                                 and all(r.get(k) == v for k, v in kw.items())), None)
    for r in RESULTS:
        if r["scenario"] == "micro" and r["metric"] == "json" and r["impl"] == "wire-jansson" and r["op"] == "parse+write":
            f = M("json", message=r["message"], impl="foundation-jsonserialization", op="parse+write")
            c = M("json", message=r["message"], impl="foundation-codable", op="parse+write")
            us = lambda x: f"{x['ns_per_op'] / 1000:.2f}" if x else "–"
            rows.append((f"(g) parse+write {r['message']} ({r['bytes']} B): Wire / JSONSerialization / Codable",
                         f"{us(r)} / {us(f)} / {us(c)} µs", "–", "–", ""))
        elif r["scenario"] == "micro" and r["metric"] == "dispatch":
            add(f"(g) RPCEngine dispatch of {r['request']} ({r['bytes']} B frame → reply), in process",
                r["ns_per_op"] / 1000, None, " µs", "")
        elif r["scenario"] == "micro" and r["metric"] == "failed":
            rows.append(("(g) micro-benchmarks", "failed", "–", "–", ""))

    for r in RESULTS:
        if r["scenario"] == "large_body":
            add(f"(i) {r['body_mb']:g} MB response, --max-response-bytes {r['max_response_bytes']:,} ({r['outcome']}): peak RSS",
                r["peak_rss_mib"], None, " MiB", "")

    for r in RESULTS:
        if r["scenario"] == "http_path":
            lbl = f"(j) ProductList refresh over HTTP, keep-alive server on loopback"
            add(f"{lbl}: first call of a fresh host (median of {r['hosts']})", r["first_call_ms"], None, " ms", "")
            add(f"{lbl}: warm call (median; p90 {r['warm_call_p90_ms']} ms)", r["warm_call_ms"], None, " ms", "")
            add(f"{lbl}: host CPU per warm call", r["warm_cpu_us"], None, " µs", "")
            rows.append((f"{lbl}: RSS before → after the calls", f"{r['rss_before_mib']} → {r['rss_after_mib']} MiB", "–", "–", ""))
            rows.append((f"{lbl}: threads before → after the calls", f"{r['threads_before']} → {r['threads_after']}", "–", "–", ""))

    rows = [r for r in rows if not re.match(r"^\([a-k]\)", r[0]) or r[0][1] in args.only]
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
    ap.add_argument("--vmhost", default=os.path.join(ROOT, ".build-release", "release", "vmhost"),
                    help="the vmhost binary (default: .build-release/release/vmhost, built by scripts/build-release.sh)")
    ap.add_argument("--bench-bin", default=os.path.join(ROOT, ".build-release", "release", "vmhost-bench"),
                    help="the micro-benchmark binary of (g) (default: .build-release/release/vmhost-bench, built by scripts/build-release.sh)")
    ap.add_argument("--no-build", action="store_true", help="use the binaries as they are (by default scripts/build-release.sh brings the tuned release build in .build-release up to date first)")
    ap.add_argument("--no-callgrind", action="store_true", help="skip valgrind even when it is installed")
    ap.add_argument("--json-out", default=os.path.join(OUT, "results.jsonl"), help="also write the JSON lines here")
    ap.add_argument("--only", default="abcdefghijk", metavar="LETTERS",
                    help="run only these scenarios, e.g. --only dfg (default: all of abcdefghijk)")
    args = ap.parse_args()
    unknown = set(args.only) - set("abcdefghijk")
    if unknown:
        ap.error(f"--only: unknown scenario letters {''.join(sorted(unknown))}; choose from abcdefghijk")

    args.pipelined = 200_000
    args.sequential = 20_000
    args.startups = 20
    args.callgrind_pings = 20_000
    args.login_inputs = 100_000
    args.callgrind_login = 5_000
    args.pl_runs = 300
    args.list_items = 5_000
    args.list_page_size = 100
    args.vms = 10_000
    args.cost_marks = [1_000, 10_000, 50_000]
    # Load-mores measured from each mark: the median of many, as other work on the machine shows up
    # as outliers; fewer for a full-value subscriber, whose every load-more writes the whole list.
    args.cost_window = {"diff": 100, "full": 10}
    args.mem_items = 20_000
    args.long_items = 100_000
    args.long_load_mores = 5_000
    args.slow_inputs = 100_000
    args.slow_stall_s = 5.0
    args.http_hosts = 10
    args.http_warm_calls = 50
    if args.quick:
        args.pipelined = 50_000
        args.sequential = 5_000
        args.startups = 10
        args.callgrind_pings = 5_000
        args.login_inputs = 20_000
        args.callgrind_login = 0
        args.pl_runs = 50
        args.vms = 2_000
        args.slow_stall_s = 2.0
    args.callgrind = bool(shutil.which("valgrind")) and not args.no_callgrind

    os.makedirs(OUT, exist_ok=True)
    needed = [args.vmhost] + ([args.bench_bin] if "g" in args.only else [])
    default_build = os.path.join(ROOT, ".build-release", "release")
    if not args.no_build and any(os.path.dirname(os.path.abspath(p)) == default_build for p in needed):
        # Always brought up to date (quick when it is): a stale binary would be measured otherwise.
        print("building vmhost and vmhost-bench (scripts/build-release.sh) ...", file=sys.stderr, flush=True)
        subprocess.run([os.path.join(ROOT, "scripts", "build-release.sh")], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        sys.exit(f"{', '.join(missing)} missing")
    echo_bin = os.path.join(OUT, "echo_server")
    subprocess.run(["cc", "-O2", "-o", echo_bin, os.path.join(HERE, "echo_server.c"), "-ljansson"], check=True)

    vmhost_cmd = [args.vmhost, "--framing", "ndjson"]
    echo_cmd = [echo_bin]
    t_start = time.time()

    if "a" in args.only:
        for name, cmd in (("c-echo", echo_cmd), ("vmhost", vmhost_cmd)):
            scenario_ping(name, cmd, args)
        scenario_startup_http(vmhost_cmd, args)

    if "b" in args.only:
        counts = check_login_changes(vmhost_cmd)
        if counts != [1, 1, 1, 1]:
            print(f"warning: Login username inputs caused {counts} vm.changed each (expected 1)", file=sys.stderr)
        scenario_login("c-echo", echo_cmd, args, False)
        scenario_login("vmhost", vmhost_cmd, args, True)

    if "c" in args.only:
        scenario_productlist(vmhost_cmd, echo_cmd, args)
    if "d" in args.only:
        scenario_list_bytes(vmhost_cmd, args)
        scenario_list_cost(vmhost_cmd, args)
    if "e" in args.only:
        scenario_vm_rss(vmhost_cmd, args)
    if "f" in args.only:
        scenario_slow_client(vmhost_cmd, args)
    if "g" in args.only:
        scenario_micro(args.bench_bin, args)
    if "h" in args.only:
        scenario_countdowns(vmhost_cmd)
    if "i" in args.only:
        scenario_large_body(vmhost_cmd, args)
    if "j" in args.only:
        scenario_http_path(vmhost_cmd, args)
    if "k" in args.only:
        import embedded
        embedded.scenario_embedded(args, vmhost_cmd, echo_cmd, emit, Server, pipelined, OUT)

    with open(args.json_out, "w") as f:
        for r in RESULTS:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")

    print()
    if set(args.only) - {"k"}:
        print(table(args))
    if "k" in args.only:
        import embedded
        print()
        print(embedded.table_embedded(RESULTS))
    print()
    print(f"nproc {os.cpu_count()}; {'callgrind' if args.callgrind else 'no callgrind'}; "
          f"{'quick' if args.quick else 'full'} run in {time.time() - t_start:.0f} s; "
          f"JSON lines also in {os.path.relpath(args.json_out, ROOT)}")


if __name__ == "__main__":
    main()
