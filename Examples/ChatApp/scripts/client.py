#!/usr/bin/env python3
"""Drives the chat host against its loopback server with the Python standard library only.

    python3 scripts/client.py [PATH-TO-chat-host]

Starts scripts/server.py and the host on it with a manual clock, opens the thread (loaded by its
long-poll), receives a message pushed by someone else, sends one, searches, meets the server's
500, a malformed body and a timeout on the host's clock, then closes the thread, whose held poll
the server sees aborted. Prints what a UI would draw after each step; exits non-zero when a reply
is not what the protocol promises, so that scripts/test.sh can run it.
"""
import json
import queue
import select
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Host:
    def __init__(self, command):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.next_id = 0
        self.values = {}  # vm -> {property: value}, mirrored from vm.changed
        self.events = []
        # Lines are read on a thread of their own, so that a missing reply fails after a deadline.
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout] + [self.lines.put("")], daemon=True).start()

    def send(self, method, params=None):
        """Sends a request and reads up to its reply, applying the notifications before it."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            try:
                line = self.lines.get(timeout=10)
            except queue.Empty:
                raise SystemExit(f"no reply to {method} within 10 s") from None
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

    def subscribe(self, vm):
        """Subscribes to every output of *vm*; the mirror starts from the values the reply holds."""
        self.values[vm] = dict(self.send("vm.subscribe", {"vm": vm})["result"]["values"])

    def close(self):
        self.send("shutdown")
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "exit"}) + "\n")
        self.process.stdin.close()
        return self.process.wait(timeout=10)


class Server:
    """scripts/server.py: its URL, its log (waited on with the server's own deadline)."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, str(HERE / "server.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 10)
        check(ready, "the server printed its URL")
        self.url = self.process.stdout.readline().strip()

    def call(self, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        with urllib.request.urlopen(urllib.request.Request(self.url + path, data=data), timeout=15) as response:
            return json.load(response)

    def wait(self, event, path, count=1):
        return self.call(f"/_log?wait={event}&path={path}&count={count}")["log"]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def check(condition, what):
    if not condition:
        raise SystemExit(f"unexpected: {what}")


def show_thread(values):
    for message in values.get("messages", []):
        print(f"  {message['author']:>6}: {message['text']}")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(HERE.parent / ".build" / "debug" / "chat-host")
    server = Server()
    host = Host([binary, "--server-url", server.url, "--clock", "manual", "--test-controls"])
    try:
        check("result" in host.send("initialize", {"locale": "en"}), "initialize")
        thread = host.send("vm.create", {"kind": "Thread"})["result"]["vm"]
        server.wait("waiting", "/messages")  # the thread came with the first poll; the next is held
        host.subscribe(thread)
        print("thread:")
        show_thread(host.values[thread])
        check(len(host.values[thread]["messages"]) == 2, "the thread from the server")

        server.call("/messages", {"author": "grace", "text": "Anyone there?"})
        server.wait("waiting", "/messages", count=2)  # the push was applied; the next poll is held
        host.send("ping")  # its reply follows the change the push made
        print("pushed by the server:")
        show_thread(host.values[thread])
        check(host.values[thread]["messages"][-1]["text"] == "Anyone there?", "the pushed message")

        host.send("vm.send", {"vm": thread, "input": "draft", "value": "Here, from vmhost"})
        sent = host.send("vm.send", {"vm": thread, "input": "send"})["result"]["value"]
        print(f"sent #{sent['id']}:")
        show_thread(host.values[thread])
        check(sent["text"] == "Here, from vmhost", "the message the server stored")

        search = host.send("vm.create", {"kind": "Search"})["result"]["vm"]
        host.subscribe(search)
        host.send("vm.send", {"vm": search, "input": "query", "value": "vmhost"})
        host.send("vm.send", {"vm": search, "input": "search"})
        print("search 'vmhost':", [m["text"] for m in host.values[search]["results"]])
        check(len(host.values[search]["results"]) == 1, "one result")

        for query, kind in [("boom", "server"), ("garbled", "malformed")]:
            host.send("vm.send", {"vm": search, "input": "query", "value": query})
            reply = host.send("vm.send", {"vm": search, "input": "search"})
            error = reply.get("error", {}).get("data", {})
            print(f"search '{query}': {error.get('kind')}: {error.get('message')}")
            check(reply.get("error", {}).get("code") == -32004 and error.get("kind") == kind, f"{kind} for '{query}'")

        # A timeout on the host's clock: the server holds the search; 10 s pass in no real time.
        host.send("vm.send", {"vm": search, "input": "query", "value": "slow"})
        host.next_id += 1
        slow = host.next_id
        host.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": slow, "method": "vm.send", "params": {"vm": search, "input": "search"}}) + "\n")
        host.process.stdin.flush()
        server.wait("waiting", "/search")
        host.send("control.clock.advance", {"ms": 10_000})
        error = host.values[search].get("lastError") or {}
        print(f"search 'slow': {error.get('kind')}: {error.get('message')}")
        check(error.get("kind") == "slow", "a timeout")
        server.wait("aborted", "/search")
        print("  the server saw the search aborted")

        host.send("vm.dispose", {"vm": thread})
        server.wait("aborted", "/messages")
        print("thread closed: the server saw its held poll aborted")
        check(host.close() == 0, "a clean exit")
    finally:
        if host.process.poll() is None:
            host.process.kill()
        server.stop()


if __name__ == "__main__":
    main()
