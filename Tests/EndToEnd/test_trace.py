"""`--trace FILE` through the real binary (BRIEF §3, Trace): every message in and out as NDJSON
`{t, dir, msg}`, and secrets written as "***" (SPEC §8): the values of the inputs the kinds declare
secret (Login's `password` and `code`), string values of members named like them or like the
reference app's secret member `token` at any depth, and in a `vm.send` everything but the handle, the
input's name and the value of a declared, non-secret input (so a refused or malformed send leaks
nothing either). Each test plants distinct secrets and then searches the whole file (and stderr at
the most verbose log level) for them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import encode, frame, run_once

SECRETS = ["hunter2-pw", "tok-8f3a", "sms-424242", "vm-send-pw", "vm-send-code", "vm-send-tok",
           "batch-pw", "notify-code", "deep-token"]


def traced(tmp_path: Path, data: bytes, *args: str, framing: str = "ndjson"):
    path = tmp_path / "trace.ndjson"
    done = run_once(data, "--trace", str(path), "--log-level", "trace", *args, framing=framing)
    assert done.returncode == 0
    raw = path.read_bytes()
    lines = [json.loads(line) for line in raw.decode().splitlines()]
    return done, raw, lines


def script(framing: str, *messages) -> bytes:
    return b"".join(frame(m if isinstance(m, bytes) else encode(m), framing) for m in messages)


SECRET_MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"clientInfo": {"name": "e2e", "token": "tok-8f3a"}, "password": "hunter2-pw"}},
    {"jsonrpc": "2.0", "id": 2, "method": "ping",
     "params": {"a": [{"b": {"code": "sms-424242"}}, {"c": [[{"token": "deep-token"}]]}]}},
    {"jsonrpc": "2.0", "id": 3, "method": "vm.send", "params": {"vm": "nope", "input": "password", "value": "vm-send-pw"}},
    {"jsonrpc": "2.0", "id": 4, "method": "vm.send", "params": {"vm": "nope", "input": "code", "value": "vm-send-code"}},
    {"jsonrpc": "2.0", "method": "vm.send", "params": {"vm": "nope", "input": "token", "value": "vm-send-tok"}},
    [{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"password": "batch-pw"}},
     {"jsonrpc": "2.0", "method": "no.such", "params": {"code": "notify-code"}}],
    {"jsonrpc": "2.0", "id": 6, "method": "ping"},
]


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_every_message_in_and_out_is_traced_as_ndjson(tmp_path, framing):
    done, raw, lines = traced(tmp_path, script(framing, *SECRET_MESSAGES), framing=framing)
    assert raw.endswith(b"\n")
    for line in lines:
        assert set(line) == {"t", "dir", "msg"}, line
        assert isinstance(line["t"], (int, float)) and not isinstance(line["t"], bool)
        assert line["dir"] in ("in", "out")
    ins = [line["msg"] for line in lines if line["dir"] == "in"]
    outs = [line["msg"] for line in lines if line["dir"] == "out"]
    assert len(ins) == len(SECRET_MESSAGES)
    assert outs == done.messages  # out lines are exactly what went to stdout (nothing secret in them)
    # the in lines are the messages received, with only the secrets replaced
    assert [json.dumps(m).count('"***"') for m in ins] == [2, 2, 1, 1, 1, 2, 0]


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_no_secret_reaches_the_trace_or_the_logs(tmp_path, framing):
    done, raw, lines = traced(tmp_path, script(framing, *SECRET_MESSAGES), framing=framing)
    for secret in SECRETS:
        assert secret.encode() not in raw, secret
        assert secret.encode() not in done.stderr, secret


def test_redaction_keeps_everything_else(tmp_path):
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping",
               "params": {"username": "13800138000", "password": "hunter2-pw",
                          "nested": [{"token": "tok-8f3a", "other": "keep-me"}], "passwordHint": "kept"}}
    _, _, lines = traced(tmp_path, script("ndjson", message))
    assert lines[0]["msg"] == {"jsonrpc": "2.0", "id": 1, "method": "ping",
                               "params": {"username": "13800138000", "password": "***",
                                          "nested": [{"token": "***", "other": "keep-me"}],
                                          "passwordHint": "kept"}}


@pytest.mark.parametrize("value", ["vm-send-pw", 123456, {"digits": "vm-send-code"}, ["vm-send-tok"]],
                         ids=["string", "number", "object", "array"])
@pytest.mark.parametrize("input", ["password", "code", "token"])
def test_the_value_of_a_secret_vm_send_is_hidden_whatever_its_type(tmp_path, input, value):
    message = {"jsonrpc": "2.0", "id": 1, "method": "vm.send", "params": {"vm": "nope", "input": input, "value": value}}
    done, raw, lines = traced(tmp_path, script("ndjson", message))
    assert done.messages[0]["error"]["code"] == -32001  # unknown view-model, yet traced
    assert lines[0]["msg"]["params"] == {"vm": "nope", "input": input, "value": "***"}
    assert json.dumps(value).encode() not in raw


def test_a_plain_vm_send_value_is_kept(tmp_path):
    message = {"jsonrpc": "2.0", "id": 1, "method": "vm.send",
               "params": {"vm": "nope", "input": "username", "value": "13800138000"}}
    _, _, lines = traced(tmp_path, script("ndjson", message))
    assert lines[0]["msg"]["params"]["value"] == "13800138000"


def test_the_trace_file_is_appended_to(tmp_path):
    path = tmp_path / "trace.ndjson"
    for id in (1, 2):
        run_once(script("ndjson", {"jsonrpc": "2.0", "id": id, "method": "ping"}), "--trace", str(path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["dir"], line["msg"]["id"]) for line in lines] == [("in", 1), ("out", 1), ("in", 2), ("out", 2)]


def test_every_reply_follows_its_request_in_the_trace(tmp_path):
    messages = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(50)]
    _, _, lines = traced(tmp_path, script("ndjson", *messages))
    seen_in = set()
    for line in lines:
        if line["dir"] == "in":
            seen_in.add(line["msg"]["id"])
        else:
            assert line["msg"]["id"] in seen_in


@pytest.mark.parametrize("text", [
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"password":"hunter2-pw"',
    b'{"jsonrpc":"2.0","id":1,"method":"vm.send","params":{"vm":"x","input":"code","value":"sms-424242",}}',
], ids=["truncated", "trailing-comma"])
def test_a_secret_in_an_unparseable_frame_does_not_reach_the_trace(tmp_path, text):
    done, raw, _ = traced(tmp_path, script("ndjson", text), "--framing", "ndjson")
    assert done.messages[0]["error"]["code"] == -32700
    for secret in SECRETS:
        assert secret.encode() not in raw, secret


# -- masking by what the value is (SPEC §8): refused and malformed sends ----------------------------

CREATE_LOGIN = {"jsonrpc": "2.0", "id": 0, "method": "vm.create", "params": {"kind": "Login", "id": "login"}}

REFUSED_SENDS = {
    "positional": ["login", "password", "pos-pw-1"],
    "positional-reordered": ["pos-pw-2", "login", "code"],
    "unknown-vm": {"vm": "nope", "input": "password", "value": "unknown-vm-pw"},
    "unknown-input": {"vm": "login", "input": "passwd", "value": "unknown-input-pw"},
    "input-not-a-string": {"vm": "login", "input": ["password"], "value": "input-array-pw"},
    "no-input": {"vm": "login", "value": "no-input-pw"},
    "extra-member": {"vm": "login", "input": "password", "value": "x", "valeu": "extra-member-pw"},
    "extra-member-of-a-plain-input": {"vm": "login", "input": "username", "value": "u", "pw": "extra-plain-pw"},
    "secret-as-handle": {"vm": {"password": "handle-pw"}, "input": "code", "value": "handle-code"},
}


@pytest.mark.parametrize("notification", [False, True], ids=["request", "notification"])
@pytest.mark.parametrize("name", list(REFUSED_SENDS))
def test_a_refused_or_malformed_vm_send_leaks_no_secret(tmp_path, name, notification):
    params = REFUSED_SENDS[name]
    send = {"jsonrpc": "2.0", "method": "vm.send", "params": params}
    if not notification:
        send["id"] = 1
    done, raw, lines = traced(tmp_path, script("ndjson", CREATE_LOGIN, send, {"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    replies = {m.get("id"): m for m in done.messages if "id" in m}
    if not notification:
        assert replies[1]["error"]["code"] in (-32602, -32001, -32002), replies[1]
    assert replies[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}  # and the host keeps serving
    secrets = [text for text in json.dumps(params).split('"') if text.endswith(("-pw", "-code")) or "-pw-" in text]
    assert secrets, name
    for secret in secrets:
        assert secret.encode() not in raw, (name, secret)
        assert secret.encode() not in done.stderr, (name, secret)
        assert secret.encode() not in done.stdout, (name, secret)
    traced_send = next(line["msg"] for line in lines if line["dir"] == "in" and line["msg"].get("method") == "vm.send")
    assert "***" in json.dumps(traced_send)


def test_a_positional_send_is_masked_element_by_element(tmp_path):
    send = {"jsonrpc": "2.0", "id": 1, "method": "vm.send", "params": ["login", "password", "pos-pw"]}
    _, _, lines = traced(tmp_path, script("ndjson", CREATE_LOGIN, send))
    traced_send = [line["msg"] for line in lines if line["dir"] == "in"][1]
    assert traced_send["params"] == ["***", "***", "***"]


def test_an_accepted_secret_send_is_masked_and_a_plain_one_kept(tmp_path):
    sends = [{"jsonrpc": "2.0", "id": 1, "method": "vm.send", "params": {"vm": "login", "input": "password", "value": "ok-pw-1"}},
             {"jsonrpc": "2.0", "id": 2, "method": "vm.send", "params": {"vm": "login", "input": "username", "value": "user-1"}}]
    done, raw, lines = traced(tmp_path, script("ndjson", CREATE_LOGIN, *sends))
    assert [m.get("result") for m in done.messages if m.get("id") in (1, 2)] == [{}, {}]
    ins = [line["msg"] for line in lines if line["dir"] == "in"]
    assert ins[1]["params"] == {"vm": "login", "input": "password", "value": "***"}
    assert ins[2]["params"] == {"vm": "login", "input": "username", "value": "user-1"}
    assert b"ok-pw-1" not in raw


def test_secret_inputs_are_declared_in_host_describe(tmp_path):
    done = run_once(encode({"jsonrpc": "2.0", "id": 1, "method": "host.describe", "params": {"kind": "Login"}}) + b"\n")
    inputs = {i["name"]: i for i in done.messages[0]["result"]["kinds"][0]["inputs"]}
    assert {name for name, i in inputs.items() if i.get("secret") is True} == {"password", "code"}
    assert all("secret" not in i for name, i in inputs.items() if name not in ("password", "code"))
