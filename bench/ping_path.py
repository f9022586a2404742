#!/usr/bin/env python3
"""The ping path (issue 27): vmhost against the C echo server, several rounds in one run.

Each round runs 100,000 pipelined pings through the C echo server (bench/echo_server.c, the
floor) and through vmhost, one after the other, on fresh processes (a warm-up ping first); it
prints each round's server CPU per ping and pings per second, then the medians and vmhost's
ratios to C. Unless --no-callgrind, it then counts instructions per ping (20,000 pings minus none)
for both and per Login `username` input (5,000 inputs minus none) for vmhost, on copies valgrind
can read (run.py's readable_copy). Python standard library only; uses run.py's drivers.

    python3 bench/ping_path.py                     # 7 rounds, then callgrind
    python3 bench/ping_path.py --rounds 3 --no-callgrind --vmhost PATH
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def pipelined_round(cmd, n):
    """Server CPU per ping in µs (every thread's time on a CPU, /proc/PID/task/*/schedstat: finer
    than the clock ticks of run.py's figure) and pings per second, for n pipelined pings."""
    s = run.Server(cmd)
    s.send(run.ping_line(0))
    s.readline()
    time.sleep(0.05)
    c0 = run.cpu_ns(s.pid)
    secs, _ = run.pipelined(s, run.pings(n, start=1), n)
    c1 = run.cpu_ns(s.pid)
    s.close()
    return (c1 - c0) / 1000 / n, n / secs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vmhost", default=os.path.join(run.ROOT, ".build-release", "release", "vmhost"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pings", type=int, default=100_000)
    ap.add_argument("--no-callgrind", action="store_true")
    args = ap.parse_args()

    echo_bin = os.path.join(run.OUT, "echo_server")
    os.makedirs(run.OUT, exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", echo_bin, os.path.join(run.HERE, "echo_server.c"), "-ljansson"], check=True)
    servers = {"c-echo": [echo_bin], "vmhost": [args.vmhost, "--framing", "ndjson"]}

    rounds = {name: [] for name in servers}
    for i in range(args.rounds):
        for name, cmd in servers.items():
            cpu, rate = pipelined_round(cmd, args.pings)
            rounds[name].append((cpu, rate))
            print(json.dumps({"round": i + 1, "server": name, "cpu_us_per_ping": round(cpu, 3),
                              "pings_per_s": round(rate)}), flush=True)
    med = {name: (statistics.median(c for c, _ in r), statistics.median(p for _, p in r)) for name, r in rounds.items()}
    result = {"rounds": args.rounds, "pings": args.pings,
              "load_average": os.getloadavg()[0]}
    for name, (cpu, rate) in med.items():
        result[name] = {"cpu_us_per_ping": round(cpu, 3), "pings_per_s": round(rate)}
    result["cpu_ratio"] = round(med["vmhost"][0] / med["c-echo"][0], 2)
    result["rate_ratio"] = round(med["vmhost"][1] / med["c-echo"][1], 2)
    # The ratios of each round (vmhost to the C run just before it), their range.
    per_round = [(v[0] / c[0], v[1] / c[1]) for c, v in zip(rounds["c-echo"], rounds["vmhost"])]
    result["cpu_ratio_range"] = [round(min(r[0] for r in per_round), 2), round(max(r[0] for r in per_round), 2)]
    result["rate_ratio_range"] = [round(min(r[1] for r in per_round), 2), round(max(r[1] for r in per_round), 2)]

    if not args.no_callgrind:
        for name, cmd in servers.items():
            ipr, _, _ = run.callgrind_per_item(cmd, b"", lambda i: run.ping_line(i + 1), 20_000, f"ping.{name}")
            result[name]["instructions_per_ping"] = round(ipr)
        ipr, _, _ = run.callgrind_per_item(servers["vmhost"], run.LOGIN_PREFIX, run.login_input, 5_000, "login.vmhost")
        result["vmhost"]["instructions_per_login_input"] = round(ipr)
        result["instructions_ratio"] = round(result["vmhost"]["instructions_per_ping"] / result["c-echo"]["instructions_per_ping"], 3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
