#!/usr/bin/env python3
"""What a screen costs (issue 38, items 1-3): instructions counted by callgrind on the release build.

- `create`: a Login `vm.create` + `vm.dispose` pair (1,000 pairs minus none, both runs after one
  pair, so that what a kind pays once, its description and its member names, is left out);
  the same for a ProductList;
- `loadmore`: a ProductList `loadMore` of 100 cells with a `diff: true` subscriber, at 1,000 and at
  10,000 listed items (a run that pages to the mark and then 20 more load-mores, minus a run that
  only pages to the mark; driven one request at a time, since a load-more refuses while another
  runs);
- `input`: a Login `username` input, alternately valid and invalid (`vm.create` + `vm.subscribe`
  + 5,000 inputs minus the create and subscribe alone), as `ping_path.py` counts it.

Each figure is the median of `--rounds` runs. Python standard library only; uses run.py's drivers,
and counts on run.py's copy of the binary that valgrind can read (README.md, "How callgrind reads
the binary").

    python3 bench/screen_costs.py                          # .build-release/release/vmhost, 3 rounds
    python3 bench/screen_costs.py --vmhost PATH --rounds 5 --only create,input
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def create_pair(kind, i):
    return (b'{"jsonrpc":"2.0","id":"c%d","method":"vm.create","params":{"kind":"%s","id":"v%d"}}\n'
            b'{"jsonrpc":"2.0","id":"d%d","method":"vm.dispose","params":{"vm":"v%d"}}\n'
            % (i, kind.encode(), i, i, i))


def per_create(vmhost, kind, n, tag):
    prefix = create_pair(kind, 0)
    ipr, _, _ = run.callgrind_per_item([vmhost, "--framing", "ndjson"], prefix, lambda i: create_pair(kind, i + 1), n, tag)
    return ipr


def callgrind_pager(vmhost, products, mark, extra, tag):
    """Total instructions of a host of `products` demo products whose ProductList (pageSize 100,
    diff subscriber) is paged to `mark` items, then `extra` more load-mores."""
    out = os.path.join(run.OUT, f"callgrind.{tag}.out")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, run.readable_copy(vmhost), "--framing", "ndjson"]
    pager = run.Pager(cmd, products, 100, mode="diff")
    pager.page_to(mark)
    for _ in range(extra):
        pager.load_more()
    pager.close()
    pager.s.proc.wait()
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def per_load_more(vmhost, mark, extra, tag):
    products = mark + (extra + 1) * 100
    base = callgrind_pager(vmhost, products, mark, 0, tag + ".0")
    full = callgrind_pager(vmhost, products, mark, extra, tag + f".{extra}")
    return (full - base) / extra


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vmhost", default=os.path.join(run.ROOT, ".build-release", "release", "vmhost"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="create,loadmore,input")
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--inputs", type=int, default=5000)
    ap.add_argument("--load-mores", type=int, default=20)
    ap.add_argument("--marks", default="1000,10000")
    args = ap.parse_args()
    os.makedirs(run.OUT, exist_ok=True)
    only = set(args.only.split(","))
    vmhost = args.vmhost
    measures = {}
    if "create" in only:
        measures["login_create_dispose"] = lambda r: per_create(vmhost, "Login", args.pairs, f"create.Login.{r}")
        measures["productlist_create_dispose"] = lambda r: per_create(vmhost, "ProductList", args.pairs, f"create.ProductList.{r}")
    if "loadmore" in only:
        for mark in (int(m) for m in args.marks.split(",")):
            measures[f"load_more_100_at_{mark}"] = (
                lambda r, mark=mark: per_load_more(vmhost, mark, args.load_mores, f"loadmore.{mark}.{r}"))
    if "input" in only:
        measures["login_username_input"] = lambda r: run.callgrind_per_item(
            [vmhost, "--framing", "ndjson"], run.LOGIN_PREFIX, run.login_input, args.inputs, f"input.Login.{r}")[0]
    result = {"vmhost": vmhost, "rounds": args.rounds, "load_average": os.getloadavg()[0]}
    for name, measure in measures.items():
        values = [measure(r) for r in range(args.rounds)]
        result[name] = {"median": round(statistics.median(values)), "rounds": [round(v) for v in values]}
        print(json.dumps({name: result[name]}), flush=True)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
