#!/usr/bin/env python3
"""Drives the todo host through a pipe with the Python standard library only.

    python3 scripts/client.py [PATH-TO-todo-host]

Starts the host with a manual clock, loads the list, adds a todo, toggles one, renames one in an
editor, and prints what a UI would draw after each step. Exits non-zero when a reply is not what
the protocol promises, so that scripts/test.sh can run it.
"""
import json
import subprocess
import sys


class Host:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.next_id = 0
        self.values = {}  # vm -> {property: value}, mirrored from vm.changed

    def send(self, method, params=None, wait=True):
        """Sends a request; with wait, reads up to its reply and returns it (notifications applied)."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return self.read_until(self.next_id) if wait else self.next_id

    def read_until(self, request_id):
        events = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the host closed its output")
            message = json.loads(line)
            if message.get("method") == "vm.changed":
                params = message["params"]
                self.values.setdefault(params["vm"], {}).update(params.get("values", {}))
            elif message.get("method") == "vm.event":
                events.append(message["params"])
            elif message.get("id") == request_id:
                message["events"] = events
                return message

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


def show(host, vm):
    values = host.values.get(vm, {})
    for item in values.get("items", []):
        print(f"  [{'x' if item['done'] else ' '}] {item['id']} {item['title']}")
    print(f"  {values.get('remaining')} open, loading={values.get('loading')}")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/todo-host"
    host = Host([binary, "--clock", "manual", "--test-controls"])
    kinds = host.send("initialize", {"locale": "en"})["result"]["kinds"]
    check(kinds == ["TodoList", "TodoEditor"], kinds)

    host.send("vm.create", {"kind": "TodoList", "id": "list"})
    host.values["list"] = host.send("vm.subscribe", {"vm": "list"})["result"]["values"]
    load = host.send("vm.send", {"vm": "list", "input": "load"}, wait=False)
    host.advance(200)  # the in-memory backend's latency, on the manual clock
    print("loaded:")
    show(host, "list")
    check(len(host.values["list"]["items"]) == 3, "three todos")

    refused = host.send("vm.send", {"vm": "list", "input": "add", "value": "  "})
    check(refused["error"]["code"] == -32602, refused)
    print(f"an empty title: {refused['error']['message']}")

    host.send("vm.send", {"vm": "list", "input": "add", "value": "Read the guide"}, wait=False)
    host.advance(200)
    host.send("vm.send", {"vm": "list", "input": "toggle", "value": {"id": "t1"}}, wait=False)
    host.advance(200)
    print("after add and toggle:")
    show(host, "list")
    check(host.values["list"]["remaining"] == 2, "two open todos")

    edit = host.send("vm.send", {"vm": "list", "input": "edit", "value": {"id": "t3"}})
    args = edit["events"][0]["value"]
    host.send("vm.create", {"kind": "TodoEditor", "args": args, "id": "editor"})
    host.send("vm.send", {"vm": "editor", "input": "title", "value": "Water the garden"})
    host.send("vm.send", {"vm": "editor", "input": "save"}, wait=False)
    host.advance(200)  # the rename
    host.advance(200)  # the list's reload
    print("after renaming t3:")
    show(host, "list")
    titles = [item["title"] for item in host.values["list"]["items"]]
    check("Water the garden" in titles, titles)

    status = host.close()
    check(status == 0, f"exit status {status}")
    print("ok")


if __name__ == "__main__":
    main()
