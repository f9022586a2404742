#!/usr/bin/env python3
"""vmhost-web on 1 worker against N (bench/RESULTS.md, "vmhost-web on every core").

Runs bench/web_load.mjs alternately with each --workers value, --runs times each, for each --batch
size, and prints the median of every figure with its range, the ratio of the last configuration to
the first run by run (each pair shares the machine's load of its moment: median and range), and the
load average around the runs. Each run's JSON report is appended to --json-out.

    python3 bench/web_workers.py [--workers 1,2] [--runs 5] [--batch 1,16] [--sessions 1000]
        [--seconds 10] [--bursts 10] [--rate 8000] [--bin PATH] [--json-out bench/out/web-workers.jsonl]

Needs the release build (`scripts/build-release.sh vmhost-web`) and Node 20.10 or later (its WebSocket, --experimental-websocket).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(options: list[str]) -> dict:
    done = subprocess.run(
        ["node", "--experimental-websocket", str(ROOT / "bench" / "web_load.mjs"), *options],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"web_load.mjs failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    # The JSON report comes first, up to its closing brace at the start of a line.
    text = done.stdout
    return json.loads(text[: text.index("\n}\n") + 2])


def micros(text: str) -> float:
    value, unit = text.split()
    return float(value) * (1000.0 if unit == "ms" else 1.0)


def figures(report: dict) -> dict:
    out = {
        "memory per idle session (KiB)": report["memoryPerIdleSessionKiB"],
        "server RSS, 1 session (KiB)": report["rssOneSessionKiB"],
        "burst: messages per second": report["burst"]["perSecond"],
        "burst: p99 (µs)": micros(report["burst"]["p99"]),
        "sustained: messages per second": report["sustained"]["perSecond"],
        "sustained: p50 (µs)": micros(report["sustained"]["p50"]),
        "sustained: p99 (µs)": micros(report["sustained"]["p99"]),
        "sustained: server cores": report["sustained"]["serverCores"],
        "sustained: driver cores": report["sustained"]["driverCores"],
        "sustained: machine busy cores": report["sustained"]["machineCores"],
        "sustained: other processes' cores": max(0.0, report["sustained"]["machineCores"] - report["sustained"]["serverCores"]
                                                 - report["sustained"]["driverCores"]),
        "load average at start": report["loadAverage"]["start"],
    }
    if "paced" in report:
        out["paced: answered per second"] = report["paced"]["perSecond"]
        out["paced: p50 (µs)"] = micros(report["paced"]["p50"])
        out["paced: p99 (µs)"] = micros(report["paced"]["p99"])
        out["paced: server cores"] = report["paced"]["serverCores"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch", default="1,16")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--bursts", type=int, default=10)
    parser.add_argument("--rate", type=int, help="also a paced phase at this many vm.sends per second (batch 1 only)")
    parser.add_argument("--bin")
    parser.add_argument("--json-out", default=str(ROOT / "bench" / "out" / "web-workers.jsonl"))
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    batches = [int(b) for b in args.batch.split(",")]
    Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
    results: dict[tuple[int, int], list[dict]] = {}
    loads = [os.getloadavg()[0]]
    for batch in batches:
        for _ in range(args.runs):
            for count in workers:
                options = ["--sessions", str(args.sessions), "--samples", str(args.samples), "--workers", str(count),
                           "--seconds", str(args.seconds), "--bursts", str(args.bursts), "--batch", str(batch)]
                if args.rate and batch == 1:
                    options += ["--rate", str(args.rate)]
                if args.bin:
                    options += ["--bin", args.bin]
                report = run(options)
                with open(args.json_out, "a") as out:
                    out.write(json.dumps(report) + "\n")
                results.setdefault((batch, count), []).append(figures(report))
                loads.append(os.getloadavg()[0])
                print(f"batch {batch}, {count} worker(s): sustained {report['sustained']['perSecond']}/s, "
                      f"burst {report['burst']['perSecond']}/s, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print(f"\nnproc {os.cpu_count()}; load average (1 min) over the runs: {min(loads):.2f} to {max(loads):.2f}, "
          f"median {statistics.median(loads):.2f}; {args.runs} runs each, medians [min–max]\n")
    for batch in batches:
        names = list(results[(batch, workers[0])][0])
        header = "| figure (batch %d) | " % batch + " | ".join(f"{w} worker(s)" for w in workers) + " | ratio, run by run |"
        print(header)
        print("|---" * (len(workers) + 2) + "|")
        for name in names:
            cells, medians = [], []
            for count in workers:
                values = [one[name] for one in results[(batch, count)] if name in one]
                middle = statistics.median(values)
                medians.append(middle)
                cells.append(f"{middle:,.1f} [{min(values):,.1f}–{max(values):,.1f}]")
            # The ratio of each run to the run of the first configuration just before it (the pair
            # shares the machine's load of the moment), median and range.
            first = [one.get(name) for one in results[(batch, workers[0])]]
            last = [one.get(name) for one in results[(batch, workers[-1])]]
            pairs = [b / a for a, b in zip(first, last) if a and b is not None]
            ratio = f"{statistics.median(pairs):.2f}× [{min(pairs):.2f}–{max(pairs):.2f}]" if pairs else ""
            print(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")
        print()


if __name__ == "__main__":
    main()
