#!/usr/bin/env python3
"""Start-up and idle memory of two or more `vmhost` binaries, measured in turn in the same run.

Scenario (a)'s start-up and idle RSS (bench/run.py), for a before/after comparison on a shared
machine: each round measures every binary once, one after the other, so that a change of load
reaches all of them alike. Per binary and round:

- start-up to the first reply of a `ping`, median of `--startups` start-ups, with the embedded
  backend and with `--backend http://127.0.0.1:9` (an HTTP backend never called);
- idle RSS after that reply, median of `--idle` hosts, for both;
- what a host has loaded and started by then: whether libcurl is mapped, and its threads;
- with `--callgrind`, once per binary: the instructions of a start-up answering one `ping`, exec to
  exit (callgrind, all threads), which no load moves;
- with `--c-floor`, the C + jansson echo server (bench/echo_server.c, built with `cc -O2`) measured
  in the same rounds, first in each, and each binary's start-up as a multiple of it (the embedded
  backend's; issue 38 sets start-up at most 2.0x C): in wall-clock time, and in CPU time (user +
  system, the kernel's exec, mappings and page faults included, exec to exit), which a loaded
  machine moves far less.

Idle RSS counts the pages of the binary mapped so far, and how many the kernel maps at each fault
depends on the file's page cache: only cached pages are mapped around a fault, and a large folio
(how a file written by the linker or `objcopy` may sit in the cache) can be mapped whole, up to
2 MiB for one fault. So before each round every binary's cached pages are written back and
dropped (`fsync`, `POSIX_FADV_DONTNEED`), and the file read whole again: all are measured in the
same state, all cached by reading, as a binary started again and again is, whatever wrote it.
With `--cold` the file is not read again: the round's first start-up reads what it touches (and
the kernel's read-ahead around it), as on a machine where nothing else read the binary.

    python3 bench/startup_idle.py --rounds 3 before=/tmp/a/vmhost after=.build-release/release/vmhost

Prints one JSON line per binary and round, then the medians over the rounds and each binary's
change from the first one. Python standard library only; Linux (/proc).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import OUT, Server, callgrind_total, median_startup_ms, ping_line  # noqa: E402

HTTP = ["--backend", "http://127.0.0.1:9"]


def idle(cmd, n):
    """Idle RSS (KiB) after the first reply, median of n hosts; libcurl mapped in any; threads."""
    rss, curl, threads = [], False, []
    for _ in range(n):
        host = Server(cmd)
        host.send(ping_line(1))
        host.readline()
        time.sleep(0.05)
        rss.append(host.rss_kib())
        with open(f"/proc/{host.pid}/maps") as maps:
            curl = curl or "libcurl" in maps.read()
        with open(f"/proc/{host.pid}/status") as status:
            threads.append(next(int(line.split()[1]) for line in status if line.startswith("Threads:")))
        host.close()
    return statistics.median(rss), curl, max(threads)


def cache(binary, cold=False):
    """Drops the file's pages from the page cache and, unless `cold`, reads it whole again: every
    page of it is cached, in the folios a sequential read makes, whatever wrote the file (see above)."""
    with open(binary, "rb") as file:
        os.fsync(file.fileno())
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while not cold and file.read(1 << 20):
            pass


def measure(binary, args):
    cache(binary, args.cold)
    figures = {}
    for name, extra in (("embedded", []), ("http", HTTP)):
        cmd = [binary] + extra
        startup = median_startup_ms(cmd, args.startups)
        cpu = cpu_per_startup_us(cmd, args.startups)
        rss, curl, threads = idle(cmd, args.idle)
        figures[name] = {"startup_ms": round(startup, 2), "startup_cpu_us": cpu, "idle_rss_mib": round(rss / 1024, 2),
                         "libcurl_mapped": curl, "threads": threads}
    return figures


def cpu_per_startup_us(cmd, n):
    """CPU time (µs, all threads, user and kernel) of a start-up answering one ping, exec to exit,
    median of n: perf's task-clock, which the scheduler measures to the nanosecond (getrusage's
    times are sampled at the timer tick: a start-up of a millisecond or two is charged in whole
    ticks or not at all). None without perf."""
    if not shutil.which("perf"):
        return None
    times = []
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "perf.csv")
        for _ in range(n):
            host = Server(["perf", "stat", "-x", ",", "-e", "task-clock", "-o", out, "--"] + cmd)
            host.send(ping_line(1))
            host.readline()
            host.close()
            with open(out) as lines:
                times += [float(line.split(",")[0]) * 1000 for line in lines if "task-clock" in line]
    return statistics.median(times) if times else None


def measure_c(binary, args):
    """The C echo server's start-up and idle RSS, measured as a binary's embedded figures are."""
    cache(binary, args.cold)
    rss, _, _ = idle([binary], args.idle)
    return {"startup_ms": round(median_startup_ms([binary], args.startups), 2),
            "startup_cpu_us": cpu_per_startup_us([binary], args.startups), "idle_rss_mib": round(rss / 1024, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binaries", nargs="+", metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--startups", type=int, default=20)
    parser.add_argument("--idle", type=int, default=15)
    parser.add_argument("--callgrind", action="store_true", help="also count a start-up's instructions (valgrind)")
    parser.add_argument("--cold", action="store_true", help="drop each binary's cached pages without reading it again")
    parser.add_argument("--c-floor", action="store_true", help="also measure the C echo server, in the same rounds")
    args = parser.parse_args()
    binaries = [entry.split("=", 1) for entry in args.binaries]
    floor = []
    if args.c_floor:
        os.makedirs(OUT, exist_ok=True)
        echo = os.path.join(OUT, "echo_server")
        subprocess.run(["cc", "-O2", "-o", echo, os.path.join(os.path.dirname(os.path.abspath(__file__)), "echo_server.c"),
                        "-ljansson"], check=True)
    if args.callgrind:
        for name, path in binaries:
            counts = {backend: callgrind_total([path] + extra, ping_line(1), f"startup.{name}.{backend}")[0]
                      for backend, extra in (("embedded", []), ("http", HTTP))}
            print(json.dumps({"binary": name, "startup_instructions": counts}), flush=True)
    rounds = {name: [] for name, _ in binaries}
    for number in range(1, args.rounds + 1):
        if args.c_floor:
            floor.append(measure_c(echo, args))
            print(json.dumps({"round": number, "binary": "c-echo", **floor[-1]}), flush=True)
        for name, path in binaries:
            figures = measure(path, args)
            rounds[name].append(figures)
            print(json.dumps({"round": number, "binary": name, **figures}), flush=True)
    first = binaries[0][0]
    print(f"\nmedians of {args.rounds} rounds (start-up: median of {args.startups} each; idle RSS: median of {args.idle} hosts each)")
    for backend in ("embedded", "http"):
        for key, unit in (("startup_ms", "ms"), ("startup_cpu_us", "µs"), ("idle_rss_mib", "MiB")):
            if any(r[backend][key] is None for rs in rounds.values() for r in rs):
                continue  # no perf: no CPU figure
            base = statistics.median(r[backend][key] for r in rounds[first])
            cells = []
            for name, _ in binaries:
                value = statistics.median(r[backend][key] for r in rounds[name])
                change = "" if name == first else f" ({(value - base) / base:+.1%})"
                cells.append(f"{name} {value:.2f} {unit}{change}")
            print(f"{backend:9} {key:13} " + ", ".join(cells))
    if floor:
        c_startup = statistics.median(f["startup_ms"] for f in floor)
        c_rss = statistics.median(f["idle_rss_mib"] for f in floor)
        c_cpu = statistics.median(f["startup_cpu_us"] or 0 for f in floor)
        print(f"C echo server: start-up {c_startup:.2f} ms, {c_cpu:.0f} µs CPU, idle RSS {c_rss:.2f} MiB "
              f"(medians of {args.rounds} rounds)")
        for name, _ in binaries:
            # Per round, the binary's start-up over C's of the same round; then the median.
            for key, what in (("startup_ms", "wall clock"), ("startup_cpu_us", "CPU")):
                ratios = [r["embedded"][key] / f[key] for r, f in zip(rounds[name], floor) if f[key] and r["embedded"][key]]
                if not ratios:
                    continue
                print(f"{name}: start-up {statistics.median(ratios):.2f}x C in {what} (per round: "
                      + ", ".join(f"{x:.2f}" for x in ratios) + ")")
    for name, _ in binaries:
        mapped = {backend: any(r[backend]["libcurl_mapped"] for r in rounds[name]) for backend in ("embedded", "http")}
        threads = {backend: max(r[backend]["threads"] for r in rounds[name]) for backend in ("embedded", "http")}
        print(f"{name}: libcurl mapped after the first reply {mapped}, threads {threads}, "
              f"binary {os.path.getsize(dict(binaries)[name]) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
