"""`--record FILE` and `--backend recorded:FILE` through the real binary
(protocol/conformance/README.md, "Recordings"; protocol/backend.md, "Recorded backend").

A session is recorded, then replayed by the Python client's replayer (`vmhost.replay`) against the
embedded backend and with no backend; secrets never reach the file (each test plants distinct ones
and searches the whole file for them); the end of a session (EOF with work in flight, `exit` with
and without `shutdown`, a frame that is not JSON) replays as it happened; a session recorded
against an HTTP server replays once the server is gone; and a recorded backend that cannot be
used, or that has no answer for a call, says so.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import ROOT, HostProcess, LoopbackServer, QuietHandler, binary, encode, run_once

sys.path.insert(0, str(ROOT / "clients" / "python"))
from vmhost.replay import Secrets, read_steps, replay, step_text  # noqa: E402

MANUAL = ("--clock", "manual", "--test-controls")


def replays(path: Path, secrets: dict[str, str] | None = None, offline: bool = False) -> None:
    failure = replay(path, binary=binary(), offline=offline, secrets=Secrets(secrets or {}, environ={}))
    assert failure is None, failure.report()


def test_the_args_line_keeps_what_the_session_needs(tmp_path):
    path = tmp_path / "session.jsonl"
    state, trace = tmp_path / "state", tmp_path / "trace.ndjson"
    done = run_once(encode({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + b"\n",
                    "--framing", "ndjson", "--record", str(path), "--trace", str(trace), "--state-dir", str(state),
                    "--timeout-ms", "500", *MANUAL)
    assert done.returncode == 0
    first, *rest = read_steps(path)
    assert first == {"args": ["--clock", "manual", "--test-controls", "--timeout-ms", "500"],
                     "offlineArgs": ["--clock", "manual", "--test-controls", "--timeout-ms", "500",
                                     "--backend", "recorded:$transcript"]}
    comments = [line["comment"] for line in rest if "comment" in line]
    assert any("--state-dir" in c for c in comments)
    assert not any("system clock" in c for c in comments)
    steps = [line for line in rest if "comment" not in line]
    assert steps == [{"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
                     {"expect": {"jsonrpc": "2.0", "id": 1, "result": {}}}, {"close": True}]
    replays(path)


def test_a_recording_on_the_system_clock_says_so(tmp_path):
    path = tmp_path / "session.jsonl"
    assert run_once(b"", "--record", str(path)).returncode == 0
    first, *rest = read_steps(path)
    assert first["args"] == []
    assert any("system clock" in line.get("comment", "") for line in rest)


SECRETS = ["hunter2-pw", "tok-8f3a", "sms-424242", "vm-send-pw", "vm-send-code", "vm-send-tok",
           "batch-pw", "notify-code", "deep-token", "13912345678-typed"]


def secrets_sent(recorded, sent, found):
    """The secrets' texts: each placeholder of the recorded sends beside the text sent in its place."""
    if isinstance(recorded, str) and recorded.startswith("$secret:"):
        name, length = recorded[len("$secret:"):].rsplit(":", 1)
        assert len(sent) == int(length)
        found[name] = sent
    elif isinstance(recorded, dict):
        for key, value in recorded.items():
            secrets_sent(value, sent[key], found)
    elif isinstance(recorded, list):
        for value, text in zip(recorded, sent):
            secrets_sent(value, text, found)
    return found


def test_secrets_never_reach_the_recording_and_it_still_replays(tmp_path):
    path = tmp_path / "session.jsonl"
    sent = []
    with HostProcess("--record", str(path), *MANUAL) as host:
        def request(method, params):
            sent.append({"jsonrpc": "2.0", "id": host.next_id + 1, "method": method, "params": params})
            return host.request(method, params)

        request("initialize", {"clientInfo": {"name": "e2e", "token": "tok-8f3a"}})
        request("ping", {"a": [{"b": {"code": "sms-424242"}}, {"c": [[{"token": "deep-token"}]]}]})
        request("vm.send", {"vm": "nope", "input": "password", "value": "vm-send-pw"})
        request("vm.send", {"vm": "nope", "input": "code", "value": "vm-send-code"})
        sent.append({"jsonrpc": "2.0", "method": "vm.send", "params": {"vm": "nope", "input": "token", "value": "vm-send-tok"}})
        host.send(sent[-1])
        sent.append([{"jsonrpc": "2.0", "id": "b", "method": "ping", "params": {"password": "batch-pw"}},
                     {"jsonrpc": "2.0", "method": "no.such", "params": {"code": "notify-code"}}])
        host.send(sent[-1])
        assert [reply["id"] for reply in host.read_message()] == ["b"]
        request("vm.create", {"kind": "Login", "id": "login", "args": {"mode": "code"}})
        request("vm.subscribe", {"vm": "login"})
        request("vm.send", {"vm": "login", "input": "phone", "value": "13912345678"})
        for code in ("hunter2-pw", "13912345678-typed", "123456"):
            request("vm.send", {"vm": "login", "input": "code", "value": code})
        request("vm.send", {"vm": "login", "input": "submit"})
        assert host.close() == 0
    text = path.read_text(encoding="utf-8")
    for secret in SECRETS + ["demo-token"]:
        assert secret not in text, secret
    recorded = [line["send"] for line in read_steps(path) if "send" in line]
    assert len(recorded) == len(sent)
    secrets = {}
    for recorded_message, message in zip(recorded, sent):
        secrets_sent(recorded_message, message, secrets)
    for secret in SECRETS:
        assert secret in secrets.values(), secret
    # The phone is no secret: it stays as it was sent. The code in the backend's request is the same
    # placeholder; the phone beside it holds the code (…123456…) inside it, so the app's line masks
    # it too (a recorded body matches any text there).
    code = next(name for name, value in secrets.items() if value == "123456")
    assert {"vm": "login", "input": "phone", "value": "13912345678"} in \
        [message.get("params") for message in recorded if isinstance(message, dict)]
    assert f'"phone":"$secret:{code}:inside","code":"$secret:{code}:6"' in text
    replays(path, secrets)
    replays(path, secrets, offline=True)


def test_the_end_of_input_with_work_in_flight_replays(tmp_path):
    path = tmp_path / "session.jsonl"
    with HostProcess("--record", str(path), *MANUAL) as host:
        host.request("control.backend.latency", {"ms": 100})
        host.request("vm.create", {"kind": "ProductList", "id": "p"})
        host.request("vm.subscribe", {"vm": "p", "outputs": ["isRefreshing"]})
        host.send({"jsonrpc": "2.0", "id": "r", "method": "vm.send", "params": {"vm": "p", "input": "refresh"}})
        assert host.read_message()["params"]["values"] == {"isRefreshing": True}
        assert host.close() == 0
    steps = [line for line in read_steps(path) if "comment" not in line and "args" not in line and "backend" not in line]
    close = steps.index({"close": True})
    after = steps[close + 1:]
    assert after[-1]["expect"]["error"]["code"] == -32800 and after[-1]["expect"]["id"] == "r"
    assert after[-1]["expect"]["error"]["message"]
    # The recorded call never ended: with no backend it waits, and is cancelled as it was.
    backend = [line["backend"] for line in read_steps(path) if "backend" in line]
    assert backend == [{"method": "GET", "path": "/products?page=1&pageSize=20", "ms": 0, "cancelled": True}]
    replays(path)
    replays(path, offline=True)


@pytest.mark.parametrize("shutdown, status", [(True, 0), (False, 1)])
def test_exit_replays_with_its_status(tmp_path, shutdown, status):
    path = tmp_path / "session.jsonl"
    with HostProcess("--record", str(path), *MANUAL) as host:
        if shutdown:
            host.request("shutdown")
        host.notify("exit")
        assert host.read_all() == []
        assert host.close() == status
    steps = read_steps(path)
    assert {"exit": status} in steps
    assert steps[steps.index({"exit": status}) - 1] == {"send": {"jsonrpc": "2.0", "method": "exit"}}
    replays(path)


def test_exit_sent_with_an_id_replays_with_its_status(tmp_path):
    """`exit` as a request is answered, then the host exits (1 without `shutdown`): an `exit` step."""
    path = tmp_path / "session.jsonl"
    with HostProcess("--record", str(path), *MANUAL) as host:
        assert host.request("exit").result is None
        assert host.read_all() == []
        assert host.close() == 1
    steps = [line for line in read_steps(path) if "comment" not in line]
    assert steps[-3:] == [{"send": {"jsonrpc": "2.0", "id": 1, "method": "exit"}},
                          {"expect": {"jsonrpc": "2.0", "id": 1, "result": None}}, {"exit": 1}]
    replays(path)


def test_a_signal_with_a_request_in_flight_replays_by_cancelling_it(tmp_path):
    """On the system clock the end of input lets a command run to its end (SPEC §7), where a signal
    cancelled it: the recording cancels it with $/cancelRequest before it ends the input."""
    path = tmp_path / "session.jsonl"
    with HostProcess("--record", str(path), "--test-controls") as host:
        host.request("control.backend.latency", {"ms": 60_000})
        host.request("vm.create", {"kind": "ProductList", "id": "p"})
        host.request("vm.subscribe", {"vm": "p", "outputs": ["isRefreshing"]})
        host.send({"jsonrpc": "2.0", "id": "r", "method": "vm.send", "params": {"vm": "p", "input": "refresh"}})
        assert host.read_message()["params"]["values"] == {"isRefreshing": True}
        host.process.send_signal(signal.SIGTERM)
        messages = host.read_all()
        assert messages[-1]["id"] == "r" and messages[-1]["error"]["code"] == -32800
        assert host.close() == 0
    lines = read_steps(path)
    steps = [line for line in lines if "comment" not in line and "backend" not in line]
    close = steps.index({"close": True})
    assert steps[close - 1] == {"send": {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "r"}}}
    assert steps[-1]["expect"]["id"] == "r" and steps[-1]["expect"]["error"]["code"] == -32800
    assert any("signal" in line.get("comment", "") for line in lines)
    assert [(b["method"], b["path"], b.get("cancelled")) for b in (line["backend"] for line in lines if "backend" in line)] \
        == [("GET", "/products?page=1&pageSize=20", True)]
    replays(path)
    replays(path, offline=True)


def test_a_frame_that_is_not_json_is_replaced_by_a_stand_in(tmp_path):
    path = tmp_path / "session.jsonl"
    secret = "not-json-pw-77"
    with HostProcess("--record", str(path), *MANUAL) as host:
        host.write_raw(b'{"password": "' + secret.encode() + b'",\n')
        assert host.read_message()["error"]["code"] == -32700
        host.request("ping")
        assert host.close() == 0
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    steps = read_steps(path)
    assert {"sendRaw": "{\n"} in steps
    replays(path)


def test_pattern_like_texts_are_recorded_as_literals(tmp_path):
    path = tmp_path / "session.jsonl"
    with HostProcess("--record", str(path), *MANUAL) as host:
        host.request("vm.create", {"kind": "MenuEditGroup", "id": "e", "args": {"menuUid": "m1"}})
        host.request("vm.subscribe", {"vm": "e", "outputs": ["name"]})
        for name in ("$any", "$ref:s1", "$secret:x"):
            host.request("vm.send", {"vm": "e", "input": "name", "value": name})
        assert host.close() == 0
    sent = [line["send"]["params"]["value"] for line in read_steps(path)
            if "send" in line and line["send"].get("params", {}).get("input") == "name"]
    assert sent == ["$any", {"$literal": "$ref:s1"}, {"$literal": "$secret:x"}]
    values = [line["expect"]["params"]["values"]["name"] for line in read_steps(path)
              if "expect" in line and line["expect"].get("method") == "vm.changed"]
    assert values == [{"$literal": "$any"}, {"$literal": "$ref:s1"}, {"$literal": "$secret:x"}]
    replays(path)


class Backend(LoopbackServer):
    """An HTTP backend on loopback in the `{code, msg}` convention, up until it is closed."""

    def __init__(self):
        calls = self.calls = []

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.0"

            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                calls.append((self.command, self.path, body))
                status, reply = 200, {"code": "0", "msg": "成功", "data": None}
                if self.path == "/auth/login":
                    if body.get("password") == "http-pw-5150":
                        reply["data"] = {"token": "http-token-0042"}
                    else:  # a server that says what it was sent: the recording must not
                        reply = {"code": "1001", "msg": f"密码 {body.get('password')} 错误"}
                elif self.path.startswith("/products"):
                    if sum(1 for c in calls if c[1].startswith("/products")) == 1:
                        status, reply = 502, {"code": "502", "msg": "Bad Gateway"}
                    else:
                        reply = {"code": 0, "msg": "成功", "page": {"index": 1, "size": 20, "total": 1}, "data": [
                            {"id": "p1", "name": "Fund", "bank": "Bank", "annualRate": 4.35, "saleStatus": "soldOut",
                             "termDays": 90, "minAmount": 50000}]}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = answer

        self.serve(Handler)


def test_a_session_recorded_against_an_http_backend_replays_with_none(tmp_path):
    server = Backend()
    path = tmp_path / "session.jsonl"
    try:
        with HostProcess("--record", str(path), "--backend", server.url, *MANUAL) as host:
            host.request("vm.create", {"kind": "Login", "id": "login"})
            host.request("vm.send", {"vm": "login", "input": "username", "value": "13800138000"})
            host.request("vm.send", {"vm": "login", "input": "password", "value": "wrong-pw-1"})
            assert host.request("vm.send", {"vm": "login", "input": "submit"}).code == -32004
            host.request("vm.send", {"vm": "login", "input": "password", "value": "http-pw-5150"})
            assert host.request("vm.send", {"vm": "login", "input": "submit"}).error is None
            host.request("vm.create", {"kind": "ProductList", "id": "p"})
            host.request("vm.subscribe", {"vm": "p", "outputs": ["items", "loadState"]})
            assert host.request("vm.send", {"vm": "p", "input": "refresh"}).error["data"]["code"] == 502
            assert host.request("vm.send", {"vm": "p", "input": "refresh"}).error is None
            assert host.close() == 0
    finally:
        server.close()
    assert len(server.calls) == 4
    text = path.read_text(encoding="utf-8")
    for secret in ("wrong-pw-1", "http-pw-5150", "http-token-0042"):
        assert secret not in text, secret
    # The server's message held the password: "$any" where the host wrote it.
    failures = [line["expect"] for line in read_steps(path) if "expect" in line and "error" in line["expect"]]
    assert failures[0]["error"]["message"] == "$any" and failures[0]["error"]["data"]["message"] == "$any"
    login = [line["backend"] for line in read_steps(path) if "backend" in line][0]
    assert login["error"]["message"] == "$secret:password:inside"
    first = read_steps(path)[0]
    assert first["args"] == [*MANUAL, "--backend", server.url]
    assert first["offlineArgs"] == [*MANUAL, "--backend", "recorded:$transcript"]
    # The server is gone: only the recorded answers can make this pass.
    replays(path, {"password": "wrong-pw-1", "password_2": "http-pw-5150"}, offline=True)
    # The same session, any app's way: the HTTP client itself answers from the recording's http
    # lines (--http-replay), the backend's address leading nowhere; the device id, new in each
    # process, is left out of the matching.
    http = [line["http"] for line in read_steps(path) if "http" in line]
    assert [(line["method"], line["path"]) for line in http] == [
        ("POST", "/auth/login"), ("POST", "/auth/login"), ("GET", "/products?page=1&pageSize=20"),
        ("GET", "/products?page=1&pageSize=20")], http
    assert all(field[1].startswith("$secret:") for line in http for field in line["headers"] if field[0] == "Authorization")
    first["offlineArgs"] = [*MANUAL, "--backend", "http://127.0.0.1:9", "--http-replay", "$transcript",
                            "--http-replay-ignore", "header:X-Device-Id,header:uuid"]
    (tmp_path / "any-app.jsonl").write_text("".join(step_text(step) + "\n" for step in [first, *read_steps(path)[1:]]),
                                            encoding="utf-8")
    failure = replay(tmp_path / "any-app.jsonl", binary=binary(), offline=True, trust_args=True,
                     secrets=Secrets({"password": "wrong-pw-1", "password_2": "http-pw-5150"}, environ={}))
    assert failure is None, failure.report()


def test_a_password_quoted_by_the_server_reaches_neither_the_trace_nor_the_recording(tmp_path):
    server = Backend()
    path, trace = tmp_path / "session.jsonl", tmp_path / "trace.ndjson"
    try:
        with HostProcess("--record", str(path), "--trace", str(trace), "--backend", server.url, *MANUAL) as host:
            host.request("vm.create", {"kind": "Login", "id": "login"})
            host.request("vm.send", {"vm": "login", "input": "username", "value": "13800138000"})
            host.request("vm.send", {"vm": "login", "input": "password", "value": "quoted-pw-77"})
            failed = host.request("vm.send", {"vm": "login", "input": "submit"})
            assert "quoted-pw-77" in json.dumps(failed.error, ensure_ascii=False)  # the server said it
            assert host.close() == 0
    finally:
        server.close()
    for file in (path, trace):
        assert "quoted-pw-77" not in file.read_text(encoding="utf-8"), file
        assert file.stat().st_mode & 0o777 == 0o600, file


def test_a_recording_past_its_bound_ends_with_a_comment_and_the_session_goes_on(tmp_path):
    path = tmp_path / "session.jsonl"
    pings = b"".join(encode({"jsonrpc": "2.0", "id": n, "method": "ping"}) + b"\n" for n in range(1, 2001))
    done = run_once(pings, "--record", str(path), "--max-record-bytes", "8192", *MANUAL)
    assert done.returncode == 0
    assert done.stdout.count(b'"result"') == 2000  # every ping answered
    assert path.stat().st_size <= 8192 + 16 * 1024
    comments = [line["comment"] for line in read_steps(path) if "comment" in line]
    assert any("The recording stops here: it reached --max-record-bytes (8192 bytes)" in c for c in comments)
    assert "--max-record-bytes" not in json.dumps(read_steps(path)[0])  # the bound is the recording's own


def test_a_recorded_backend_that_is_no_regular_file_is_a_usage_error_at_once(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    done = run_once(b"", "--backend", f"recorded:{fifo}")
    assert done.returncode == 64
    assert b"not a regular file" in done.stderr


def test_a_call_with_no_recorded_answer_fails_naming_it(tmp_path):
    path = tmp_path / "backend.jsonl"
    path.write_text(json.dumps({"backend": {"method": "GET", "path": "/products?page=1&pageSize=20", "ms": 0,
                                            "error": {"kind": "server", "code": 503, "detail": "the server answered HTTP 503"}}})
                    + "\n", encoding="utf-8")
    with HostProcess("--backend", "recorded:" + str(path), *MANUAL) as host:
        host.request("vm.create", {"kind": "ProductList", "id": "p", "args": {"pageSize": 20}})
        first = host.request("vm.send", {"vm": "p", "input": "refresh"}).error["data"]
        assert (first["kind"], first["code"]) == ("server", 503)
        second = host.request("vm.send", {"vm": "p", "input": "refresh"}).error["data"]
        assert second["kind"] == "network"
        assert second["detail"].startswith("no recorded answer for GET /products?page=1&pageSize=20")
        # The test controls are accepted as the embedded backend accepts them.
        assert host.request("control.backend.script", {"endpoint": "products", "outcomes": ["ok"]}).error is None
        assert host.request("control.backend.script", {"endpoint": "nope", "outcomes": []}).code == -32602
        assert host.close() == 0


@pytest.mark.parametrize("content, says", [
    (None, "cannot read the recorded backend"),
    ('{"args": []}\nnot json\n', ":2: not JSON"),
    ('{"backend": {"method": "GET", "path": "/x", "ms": 0}}\n', ":1: backend: expected exactly one of response, error and cancelled"),
    ('{"backend": {"method": "GET", "path": "/x", "ms": -1, "cancelled": true}}\n', ":1: backend: ms: expected an integer"),
    ('{"backend": {"method": "GET", "path": "/x", "ms": 0, "cancelled": true, "extra": 1}}\n', 'unknown member "extra"'),
    ('{"backend": {"method": "GET", "path": "/x", "ms": 0, "response": {"success": false}}}\n', "expected a success envelope"),
])
def test_a_recorded_backend_that_cannot_be_used_is_a_usage_error(tmp_path, content, says):
    path = tmp_path / "backend.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    done = subprocess.run([binary(), "--backend", "recorded:" + str(path)], input=b"", capture_output=True, timeout=20)
    assert done.returncode == 64
    assert says in done.stderr.decode(), done.stderr
    assert done.stdout == b""


def test_demo_products_beside_a_recorded_backend_is_a_usage_error(tmp_path):
    path = tmp_path / "backend.jsonl"
    path.write_text("", encoding="utf-8")
    done = subprocess.run([binary(), "--backend", "recorded:" + str(path), "--demo-products", "5"], input=b"",
                          capture_output=True, timeout=20)
    assert done.returncode == 64 and b"--demo-products" in done.stderr


@pytest.mark.parametrize("where", ["/nonexistent-dir/session.jsonl", "."])
def test_a_recording_file_that_cannot_be_used_ends_the_host_at_start(where):
    done = subprocess.run([binary(), "--record", where], input=b"", capture_output=True, timeout=20)
    assert done.returncode == 2
    assert b"record" in done.stderr and done.stdout == b""
