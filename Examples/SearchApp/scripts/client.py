#!/usr/bin/env python3
"""Drives the search host through a pipe with the Python standard library only.

    python3 scripts/client.py [PATH-TO-search-host]

Starts the host with a manual clock, types a query keystroke by keystroke (one search goes out,
300 ms after the last), pages, survives a failure and retries it, then opens an article and
toggles its favourite. Prints what a UI would draw after each step; exits non-zero when a reply
is not what the protocol promises, so that scripts/test.sh can run it.
"""
import json
import subprocess
import sys


class Host:
    def __init__(self, command):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.next_id = 0
        self.values = {}  # vm -> {property: value}, mirrored from vm.changed
        self.events = []

    def send(self, method, params=None):
        """Sends a request and reads up to its reply, applying the notifications before it."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the host closed its output")
            reply = json.loads(line)
            if reply.get("method") == "vm.changed":
                params = reply["params"]
                self.values.setdefault(params["vm"], {}).update(params.get("values", {}))
            elif reply.get("method") == "vm.event":
                self.events.append(reply["params"])
            elif reply.get("id") == self.next_id:
                return reply

    def notify(self, method, params):
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}) + "\n")
        self.process.stdin.flush()

    def advance(self, ms):
        return self.send("control.clock.advance", {"ms": ms})

    def close(self):
        self.send("shutdown")
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "exit"}) + "\n")
        self.process.stdin.close()
        return self.process.wait(timeout=10)


def check(condition, what):
    if not condition:
        raise SystemExit(f"unexpected: {what}")


def titles(host):
    return [article["title"] for article in host.values["search"].get("articles", [])]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/search-host"
    host = Host([binary, "--clock", "manual", "--test-controls", "--latency-ms", "100"])
    check(host.send("vm.create", {"kind": "Search", "id": "search"})["result"]["vm"] == "search", "a search screen")
    host.send("vm.subscribe", {"vm": "search"})

    # Typed keystroke by keystroke, 100 ms apart: one search, 300 ms after the last keystroke.
    for typed in ["s", "sw", "swi"]:
        check("result" in host.send("vm.send", {"vm": "search", "input": "query", "value": typed}), "a keystroke")
        host.advance(100)
    host.advance(200)
    check(host.values["search"]["loadState"] == "loading", "the search runs")
    host.advance(100)
    print("search 'swi':", titles(host), "more:", host.values["search"]["hasMore"])
    check(titles(host) == ["Swift concurrency", "Swift macros", "Swift on Linux"], "the first page")

    # A failed page keeps the results shown; retry repeats it.
    host.send("control.search.fail", {"calls": 1})
    host.notify("vm.send", {"vm": "search", "input": "loadMore"})
    host.advance(100)
    check(host.values["search"]["loadState"] == "failed", "the page failed")
    check(host.events[-1]["value"]["kind"] == "unavailable", "one error event")
    print("load more failed:", host.values["search"]["lastError"]["message"], "| still shown:", len(titles(host)))
    host.notify("vm.send", {"vm": "search", "input": "retry"})
    host.advance(100)
    print("after retry:", titles(host), "more:", host.values["search"]["hasMore"])
    check(len(titles(host)) == 6 and host.values["search"]["loadState"] == "loaded", "retry appended the page")

    # The article screen loads as it opens; the favourite flips at once.
    host.send("vm.create", {"kind": "Article", "id": "article", "args": {"id": "a1"}})
    host.send("vm.subscribe", {"vm": "article"})
    host.advance(100)
    check(host.values["article"]["article"]["title"] == "Swift concurrency", "the article")
    host.notify("vm.send", {"vm": "article", "input": "favourite"})
    host.send("ping")
    check(host.values["article"]["article"]["favourite"] is True, "flipped at once")
    host.advance(100)
    print("favourite:", host.values["article"]["article"]["favourite"])
    check(host.close() == 0, "exit status 0")


if __name__ == "__main__":
    main()
