"""SPEC §6 for every flag of every kind, on every path that cancels a command.

With latency on the embedded backend and a manual clock, a command is left in flight and then
cancelled by each path that applies to it: the `cancel` input, `$/cancelRequest`, a `latest`
resend, `vm.dispose` and EOF. In the notifications written before its -32800, every boolean output
of the view-model ("every flag": isRefreshing, isLoadingMore, isSubmitting, loading, isSaving, and
the can*/is*/hide* ones too) is back to what it was before the command was sent, and a `vm.get`
written right behind the cancellation reads the same. A resend leaves the new run's flags up until
it ends, and then every flag is back as well.
"""
from __future__ import annotations

import pytest

from harness import HostProcess

LATENCY = 100
VM = "v"

# kind, args, inputs that prepare the view-model (value inputs, then commands that must succeed),
# the command to cancel and its value, and whether its policy is `latest`.
CASES = {
    "ProductList.refresh": ("ProductList", {}, [], "refresh", None, True),
    "ProductList.loadMore": ("ProductList", {}, [("refresh", None)], "loadMore", None, False),
    "Login.submit": ("Login", {}, [("username", "13800138000"), ("password", "123456")], "submit", None, False),
    "Login.sendCode": ("Login", {"mode": "code"}, [("phone", "13912345678")], "sendCode", None, False),
    "MenuSubGroup.load": ("MenuSubGroup", {"menuUid": "m1"}, [], "load", None, True),
    "MenuSubGroup.delete": ("MenuSubGroup", {"menuUid": "m1"}, [("load", None)], "delete", {"groupId": "g1"}, False),
    "MenuEditGroup.save": ("MenuEditGroup", {"menuUid": "m1"}, [("name", "新分组")], "save", None, False),
}

PATHS = ["cancel-input", "cancel-request", "resend", "dispose", "eof"]


def applicable(case: str, path: str) -> bool:
    latest = CASES[case][5]
    if path == "cancel-input":
        return CASES[case][0] == "ProductList"
    if path == "resend":
        return latest
    return True


def flags(values: dict) -> dict:
    return {name: value for name, value in values.items() if isinstance(value, bool)}


class Tracker:
    """The view-model's outputs as a subscriber sees them."""

    def __init__(self, host: HostProcess) -> None:
        self.host = host
        self.values: dict = {}

    def apply(self, message: dict) -> None:
        if message.get("method") == "vm.changed" and message["params"]["vm"] == VM:
            self.values.update(message["params"]["values"])

    def until(self, id, messages=None) -> dict:
        """Reads up to the response to `id`, applying every change before it."""
        while True:
            message = self.host.read_message()
            assert message is not None, "stdout ended before the response to %r" % (id,)
            if messages is not None:
                messages.append(message)
            if "method" in message:
                self.apply(message)
            elif message.get("id") == id:
                return message


def prepare(host: HostProcess, case: str) -> Tracker:
    kind, args, inputs, *_ = CASES[case]
    assert host.request("control.backend.latency", {"ms": LATENCY}).result == {}
    assert "result" in host.request("vm.create", {"kind": kind, "args": args, "id": VM}).response
    tracker = Tracker(host)
    subscribed = host.request("vm.subscribe", {"vm": VM})
    tracker.values.update(subscribed.result["values"])
    for name, value in inputs:
        params = {"vm": VM, "input": name}
        if value is not None:
            params["value"] = value
        host.send({"jsonrpc": "2.0", "id": "prep", "method": "vm.send", "params": params})
        host.send({"jsonrpc": "2.0", "id": "tick", "method": "control.clock.advance", "params": {"ms": LATENCY}})
        assert "result" in tracker.until("prep"), (case, name)
        tracker.until("tick")
    return tracker


@pytest.mark.parametrize("case,path", [(c, p) for c in CASES for p in PATHS if applicable(c, p)])
def test_every_flag_is_down_before_the_minus_32800(case, path):
    _, _, _, command, value, _ = CASES[case]
    with HostProcess("--clock", "manual", "--test-controls") as host:
        tracker = prepare(host, case)
        before = flags(tracker.values)
        params = {"vm": VM, "input": command}
        if value is not None:
            params["value"] = value
        # The command, and its cancellation in the same write.
        host.send({"jsonrpc": "2.0", "id": "run", "method": "vm.send", "params": params})
        if path == "cancel-input":
            host.send({"jsonrpc": "2.0", "id": "cancel", "method": "vm.send", "params": {"vm": VM, "input": "cancel"}})
        elif path == "cancel-request":
            host.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "run"}})
        elif path == "resend":
            host.send({"jsonrpc": "2.0", "id": "again", "method": "vm.send", "params": params})
        elif path == "dispose":
            host.send({"jsonrpc": "2.0", "id": "dispose", "method": "vm.dispose", "params": {"vm": VM}})
        if path in ("cancel-input", "cancel-request", "resend"):
            host.send({"jsonrpc": "2.0", "id": "get", "method": "vm.get", "params": {"vm": VM}})
        if path == "eof":
            host.process.stdin.close()

        reply = tracker.until("run")
        assert reply.get("error", {}).get("code") == -32800, (case, path, reply)

        if path == "resend":
            # The new run holds the flags up, then ends; every flag is back.
            got = tracker.until("get")
            host.send({"jsonrpc": "2.0", "id": "tick", "method": "control.clock.advance", "params": {"ms": LATENCY}})
            assert "result" in tracker.until("again"), case
            tracker.until("tick")
            after = host.request("vm.get", {"vm": VM}).result["values"]
            # Every flag the command raises is down once the resend has ended.
            for name, was in before.items():
                if was is False and got["result"]["values"][name] is True:
                    assert after[name] is False and tracker.values[name] is False, (case, name)
            return

        assert flags(tracker.values) == before, (case, path)
        if path in ("cancel-input", "cancel-request"):
            got = tracker.until("get")
            assert flags(got["result"]["values"]) == before, (case, path)
            # The clock moving on (the backend's answer falling due) changes no flag either.
            host.send({"jsonrpc": "2.0", "id": "tick", "method": "control.clock.advance", "params": {"ms": LATENCY}})
            tracker.until("tick")
            assert flags(tracker.values) == before, (case, path)
        if path == "eof":
            rest = host.read_all()
            assert all(m.get("id") != "run" for m in rest)
            assert host.close() == 0
