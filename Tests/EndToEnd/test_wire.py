"""The wire of BRIEF §3 through the real binary: both framings, auto-detection, the size limit,
every JSON-RPC 2.0 edge case, and the methods that need no view-model.

Most tests feed a whole script to stdin and read stdout to EOF (`run_once`): EOF ends the host, so
no test waits on time. Tests that must interleave (a notification, then a ping) drive a live host.
"""
from __future__ import annotations

import json

import pytest

from harness import HostProcess, encode, frame, parse_frames, problems, run_once

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
FRAMINGS = ("ndjson", "lsp")


def ping(id=1) -> bytes:
    return encode({"jsonrpc": "2.0", "id": id, "method": "ping"})


def request(method, params=None, id=1) -> bytes:
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return encode(message)


def script(framing: str, *bodies: bytes) -> bytes:
    return b"".join(frame(body, framing) for body in bodies)


def well_formed(messages: list) -> list:
    for message in messages:
        assert problems(message) == [], message
    return messages


def only(messages: list) -> dict:
    assert len(messages) == 1, messages
    return messages[0]


# -- framing --------------------------------------------------------------------------------


def test_ndjson_answers_one_line_per_request():
    done = run_once(script("ndjson", ping(1), ping(2), ping("three")))
    assert done.returncode == 0
    assert done.messages == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
        {"jsonrpc": "2.0", "id": "three", "result": {}},
    ]


def test_ndjson_tolerates_crlf_and_ignores_blank_lines():
    data = b"\n\r\n" + ping(1) + b"\r\n\r\n\n   \n" + ping(2) + b"\r\n\t\r\n"
    done = run_once(data)
    assert [m["id"] for m in done.messages] == [1, 2]


def test_ndjson_last_line_without_newline_is_still_read_at_eof():
    done = run_once(ping(7), "--framing", "ndjson")
    assert done.messages == [{"jsonrpc": "2.0", "id": 7, "result": {}}]


def test_lsp_frames_are_answered_as_lsp_frames():
    done = run_once(script("lsp", ping(1), ping(2)), framing="lsp")
    assert done.returncode == 0
    assert done.stdout.startswith(b"Content-Length: ")
    assert [m["id"] for m in done.messages] == [1, 2]


def test_lsp_header_names_are_case_insensitive_and_other_headers_ignored():
    body = ping(5)
    data = (b"content-length: %d\r\n\r\n" % len(body) + body
            + b"CONTENT-LENGTH: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
              b"X-Anything: at all\r\n\r\n" % len(body) + body
            + b"X-First: yes\r\ncOnTeNt-LeNgTh:%d\r\n\r\n" % len(body) + body)
    done = run_once(data, framing="lsp")
    assert [m["id"] for m in done.messages] == [5, 5, 5]


def test_lsp_body_may_contain_newlines_and_frames_may_be_glued():
    body = b'{\n  "jsonrpc": "2.0",\r\n  "id": 9,\n  "method": "ping"\n}'
    data = frame(body, "lsp") + frame(ping(10), "lsp")
    done = run_once(data, framing="lsp")
    assert [m["id"] for m in done.messages] == [9, 10]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_auto_framing_decides_from_the_first_non_whitespace_byte(framing):
    data = b" \r\n\t\n" + script(framing, ping(1), ping(2))
    done = run_once(data, framing=framing)
    assert [m["id"] for m in done.messages] == [1, 2]
    assert run_once(data, "--framing", "auto", framing=framing).messages == done.messages


@pytest.mark.parametrize("framing", FRAMINGS)
def test_auto_framing_skips_a_byte_order_mark(framing):
    done = run_once(b"\xef\xbb\xbf" + script(framing, ping(1), ping(2)), framing=framing)
    assert [m["id"] for m in done.messages] == [1, 2]


@pytest.mark.parametrize("first", [b"garbage", b"nul", b"Content-Length 12"])
def test_auto_framing_answers_a_first_line_that_is_no_header_as_an_ndjson_parse_error(first):
    done = run_once(first + b"\n" + ping(1) + b"\n" + ping(2) + b"\n")
    error, *replies = done.messages
    assert error["id"] is None and error["error"]["code"] == -32700
    assert [m["id"] for m in replies] == [1, 2]


def test_auto_framing_takes_a_batch_as_ndjson():
    done = run_once(b"[" + ping(1) + b"]\n")
    assert done.messages == [[{"jsonrpc": "2.0", "id": 1, "result": {}}]]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_forced_framing_is_used_for_input_and_output(framing):
    done = run_once(script(framing, ping(1)), "--framing", framing, framing=framing)
    assert done.messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_forced_ndjson_reads_lsp_headers_as_bad_json_and_keeps_serving():
    done = run_once(script("lsp", ping(1)) + b"\n" + ping(2) + b"\n", "--framing", "ndjson")
    messages = well_formed(done.messages)
    assert messages[0]["error"]["code"] == -32700 and messages[0]["id"] is None
    assert messages[-1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


@pytest.mark.parametrize("framing", FRAMINGS)
def test_bytes_dripped_one_at_a_time_make_whole_frames(framing):
    with HostProcess("--framing", framing, framing=framing) as host:
        for byte in script(framing, ping(1), request("vm.list", id=2)):
            host.write_raw(bytes([byte]))
        assert host.read_message() == {"jsonrpc": "2.0", "id": 1, "result": {}}
        assert host.read_message() == {"jsonrpc": "2.0", "id": 2, "result": []}
        assert host.close() == 0


@pytest.mark.parametrize("framing", FRAMINGS)
def test_many_frames_glued_into_one_write_are_all_answered_in_order(framing):
    data = script(framing, *(ping(i) for i in range(500)))
    done = run_once(data, framing=framing)
    assert [m["id"] for m in done.messages] == list(range(500))


# -- the size limit ---------------------------------------------------------------------------

LIMIT = 256


def sized_ping(size: int, id) -> bytes:
    """A ping request whose JSON text is exactly `size` bytes."""
    # Padded with spaces before its last brace: ping takes no params (SPEC §2).
    bare = encode({"jsonrpc": "2.0", "id": id, "method": "ping"})
    body = bare[:-1] + b" " * (size - len(bare)) + b"}"
    assert len(body) == size
    return body


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_frame_at_the_limit_is_accepted_and_one_byte_over_is_rejected(framing):
    data = script(framing, sized_ping(LIMIT, "at"), sized_ping(LIMIT + 1, "over"), ping("after"))
    done = run_once(data, "--max-message-bytes", str(LIMIT), "--framing", framing, framing=framing)
    assert done.returncode == 0
    at, over, after = well_formed(done.messages)
    assert at == {"jsonrpc": "2.0", "id": "at", "result": {}}
    assert over["id"] is None
    assert over["error"]["code"] == -32600
    assert str(LIMIT) in over["error"]["message"]
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


@pytest.mark.parametrize("framing", FRAMINGS)
def test_an_oversized_frame_is_skipped_and_the_live_host_keeps_serving(framing):
    with HostProcess("--max-message-bytes", str(LIMIT), framing=framing) as host:
        host.write_raw(frame(sized_ping(LIMIT * 40, "big"), framing))
        reply = host.read_message()
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert host.request("ping").result == {}
        assert host.close() == 0


def test_crlf_does_not_count_against_the_ndjson_limit():
    data = sized_ping(LIMIT, "at") + b"\r\n" + ping("after") + b"\n"
    done = run_once(data, "--max-message-bytes", str(LIMIT))
    assert [m.get("result") for m in done.messages] == [{}, {}]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_frame_far_over_the_limit_is_not_buffered_and_is_skipped(framing):
    huge = b'{"jsonrpc":"2.0","id":1,"method":"ping"' + b" " * (8 << 20) + b'}'
    done = run_once(frame(huge, framing) + frame(ping(2), framing),
                    "--max-message-bytes", "4096", framing=framing)
    rejected, after = well_formed(done.messages)
    assert rejected["id"] is None and rejected["error"]["code"] == -32600
    assert after == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_the_default_limit_is_four_mebibytes():
    data = script("ndjson", sized_ping(4 << 20, "at"), sized_ping((4 << 20) + 1, "over"), ping("after"))
    at, over, after = run_once(data).messages
    assert at["result"] == {}
    assert over["id"] is None and over["error"]["code"] == -32600
    assert after["result"] == {}


# -- bad LSP headers --------------------------------------------------------------------------


@pytest.mark.parametrize("header", [
    b"Content-Type: application/json\r\n\r\n",             # no Content-Length at all
    b"Content-Length: abc\r\n\r\n",                        # not a number
    b"Content-Length: -5\r\n\r\n",                         # negative
    b"Content-Length: 99999999999999999999999999\r\n\r\n",  # does not fit
    b"no colon on this line\r\n\r\n",                      # not a header
    b"X" * 20000 + b"\r\n\r\n",                            # a header block far too long
], ids=["missing", "not-a-number", "negative", "overflow", "no-colon", "too-long"])
def test_a_bad_header_is_a_parse_error_and_the_host_keeps_serving(header):
    done = run_once(header + frame(ping(2), "lsp"), "--framing", "lsp", framing="lsp")
    error, after = well_formed(done.messages)
    assert error["id"] is None and error["error"]["code"] == -32700
    assert after == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_a_bad_header_in_a_live_lsp_session_does_not_end_it():
    with HostProcess(framing="lsp") as host:
        assert host.request("ping").result == {}
        host.write_raw(b"Content-Length: twelve\r\n\r\n")
        error = host.read_message()
        assert error["id"] is None and error["error"]["code"] == -32700
        assert host.request("ping").result == {}
        assert host.close() == 0


def test_a_stream_that_ends_inside_an_lsp_body_gets_a_parse_error():
    done = run_once(b"Content-Length: 100\r\n\r\n" + ping(1), "--framing", "lsp", framing="lsp")
    assert done.returncode == 0
    error = only(well_formed(done.messages))
    assert error["id"] is None and error["error"]["code"] == -32700


# -- JSON-RPC 2.0 -----------------------------------------------------------------------------


def answers(*lines: bytes, args: tuple = ()) -> list:
    """The host's replies to `lines` in ndjson (forced: auto would take a garbage first line for a header)."""
    return well_formed(run_once(script("ndjson", *lines), "--framing", "ndjson", *args).messages)


@pytest.mark.parametrize("text", [b"{bad", b'{"jsonrpc":"2.0","id":1,"method":"ping"', b"nul",
                                  b'{"jsonrpc":"2.0","id":1,"method":"ping"} {"x":1}',
                                  b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}'],
                         ids=["garbage", "truncated", "bad-literal", "two-texts", "invalid-utf8"])
def test_unparseable_json_is_a_parse_error_with_id_null(text):
    error, after = answers(text, ping(2))
    assert error["id"] is None and error["error"]["code"] == -32700
    assert after["result"] == {}


def test_an_empty_batch_is_one_invalid_request():
    error = only(answers(b"[]"))
    assert isinstance(error, dict)
    assert error["id"] is None and error["error"]["code"] == -32600


def test_a_batch_of_a_non_object_is_an_array_of_one_invalid_request():
    reply = only(answers(b"[1]"))
    assert isinstance(reply, list) and len(reply) == 1
    assert reply[0]["id"] is None and reply[0]["error"]["code"] == -32600


def test_a_batch_of_junk_is_an_array_of_invalid_requests():
    reply = only(answers(b'[1, "x", null, true, [], {}]'))
    assert [r["error"]["code"] for r in reply] == [-32600] * 6
    assert all(r["id"] is None for r in reply)


def test_a_mixed_batch_is_answered_by_the_requests_responses_only():
    batch = json.dumps([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "no.such.method"},
        {"jsonrpc": "2.0", "method": "no.such.notification"},
        {"jsonrpc": "2.0", "id": 3, "method": "vm.list"},
    ]).encode()
    reply = only(answers(batch))
    assert isinstance(reply, list)
    assert {r["id"]: r for r in reply}.keys() == {"a", 2, 3}
    by_id = {r["id"]: r for r in reply}
    assert by_id["a"]["result"] == {}
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["result"] == []


def test_an_all_notification_batch_gets_no_reply():
    batch = json.dumps([{"jsonrpc": "2.0", "method": "ping"}, {"jsonrpc": "2.0", "method": "nope"}]).encode()
    assert answers(batch, ping("after")) == [{"jsonrpc": "2.0", "id": "after", "result": {}}]


@pytest.mark.parametrize("id", ["a string", "", "ünï €", 0, -7, 9223372036854775807, 1.5, None],
                         ids=["string", "empty", "unicode", "zero", "negative", "int64-max", "real", "null"])
def test_ids_are_echoed_exactly(id):
    reply = only(answers(request("ping", id=id)))
    assert reply == {"jsonrpc": "2.0", "id": id, "result": {}}
    assert type(reply["id"]) is type(id)


@pytest.mark.parametrize("id", [b"{}", b"true", b"false", b"[1]"], ids=["object", "true", "false", "array"])
def test_an_id_of_a_wrong_type_is_an_invalid_request_with_id_null(id):
    error, after = answers(b'{"jsonrpc":"2.0","id":' + id + b',"method":"ping"}', ping(2))
    assert error["id"] is None and error["error"]["code"] == -32600
    assert after["result"] == {}


@pytest.mark.parametrize("message", [
    {"id": 1, "method": "ping"},
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": 2.0, "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "text"},
    {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3},
], ids=["no-jsonrpc", "jsonrpc-1.0", "jsonrpc-number", "no-method", "method-number",
        "params-string", "params-number"])
def test_a_malformed_request_is_an_invalid_request(message):
    error, after = answers(encode(message), ping("after"))
    assert error["error"]["code"] == -32600
    assert error["id"] in (1, None)
    assert after["result"] == {}


def test_an_unknown_method_is_method_not_found():
    error = only(answers(request("no.such.method", id=4)))
    assert error["id"] == 4 and error["error"]["code"] == -32601


def test_a_notification_is_never_answered_even_when_it_fails():
    with HostProcess() as host:
        for notification in ({"jsonrpc": "2.0", "method": "ping"},
                             {"jsonrpc": "2.0", "method": "no.such.method"},
                             {"jsonrpc": "2.0", "method": "vm.create", "params": {"kind": 5}},
                             {"jsonrpc": "2.0", "method": "vm.get", "params": {"vm": "nope"}},
                             {"jsonrpc": "2.0", "method": "vm.send",
                              "params": {"vm": "nope", "input": "x", "value": 1}}):
            host.send(notification)
            exchange = host.request("ping")
            assert exchange.messages == [{"jsonrpc": "2.0", "id": exchange.id, "result": {}}], notification
        assert host.close() == 0


@pytest.mark.parametrize("method,params,named", [
    ("vm.create", {"kind": 5}, "params.kind"),
    ("vm.create", {}, "params.kind"),
    ("vm.get", {"vm": 1}, "params.vm"),
    ("vm.send", {"input": "x"}, "params.vm"),
    ("vm.unsubscribe", {"subscription": []}, "params.subscription"),
    ("host.describe", {"kind": "NoSuchKind"}, "params.kind"),
    ("vm.dispose", {}, "params.vm"),
])
def test_invalid_params_name_the_param(method, params, named):
    error = only(answers(request(method, params, id=1)))
    assert error["error"]["code"] == -32602
    assert named in error["error"]["message"]


def test_requests_are_answered_in_the_order_they_were_read():
    lines = [request(m, id=i) for i, m in enumerate(["ping", "vm.list", "nope", "ping", "host.describe"] * 20)]
    assert [m["id"] for m in answers(*lines)] == list(range(100))


# -- methods without view-models --------------------------------------------------------------


def test_initialize_reports_the_protocol_the_server_and_the_kinds():
    result = only(answers(request("initialize", {"locale": "en", "clientInfo": {"name": "e2e"}})))["result"]
    assert result["protocolVersion"] == "1"
    assert result["serverInfo"]["name"] == "vmhost"
    assert isinstance(result["serverInfo"]["version"], str) and result["serverInfo"]["version"]
    assert isinstance(result["kinds"], list)


def test_initialize_is_optional_and_params_may_be_omitted():
    assert only(answers(request("initialize")))["result"]["protocolVersion"] == "1"


def test_ping_answers_an_empty_object():
    assert only(answers(ping(1))) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_host_describe_agrees_with_initialize():
    kinds, described = answers(request("initialize", id=1), request("host.describe", id=2))
    assert isinstance(described["result"], dict)
    listed = described["result"]["kinds"]
    names = [k["kind"] if isinstance(k, dict) else k for k in listed]
    assert sorted(names) == sorted(k if isinstance(k, str) else k["kind"] for k in kinds["result"]["kinds"])


def test_host_describe_of_an_unknown_kind_is_an_error():
    error = only(answers(request("host.describe", {"kind": "NoSuchKind"})))
    assert "error" in error


def test_vm_list_is_empty_without_view_models():
    assert only(answers(request("vm.list")))["result"] == []


@pytest.mark.parametrize("method,params", [
    ("vm.get", {"vm": "nope"}),
    ("vm.send", {"vm": "nope", "input": "x", "value": 1}),
    ("vm.dispose", {"vm": "nope"}),
])
def test_methods_on_an_unknown_view_model_answer_unknown_view_model(method, params):
    error = only(answers(request(method, params, id=3)))
    assert error["id"] == 3 and error["error"]["code"] == -32001


def test_creating_an_unknown_kind_is_an_error_not_a_crash():
    error, after = answers(request("vm.create", {"kind": "NoSuchKind"}), ping(2))
    assert "error" in error
    assert after["result"] == {}


@pytest.mark.parametrize("method", ["control.clock.advance", "control.backend.script", "control.backend.latency"])
def test_control_methods_need_test_controls(method):
    error = only(answers(request(method, {"ms": 10})))
    assert error["error"]["code"] == -32601


def test_control_clock_advance_moves_a_manual_clock():
    first, second = answers(request("control.clock.advance", {"ms": 250}, id=1),
                            request("control.clock.advance", {"ms": 750}, id=2),
                            args=("--test-controls", "--clock", "manual"))
    assert second["result"]["now"] - first["result"]["now"] == 750
    assert first["result"]["now"] >= 250


def test_control_clock_advance_checks_its_params():
    error = only(answers(request("control.clock.advance", {"ms": "soon"}),
                         args=("--test-controls", "--clock", "manual")))
    assert error["error"]["code"] == -32602 and "params.ms" in error["error"]["message"]


# -- stdout carries frames only ---------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_stdout_is_frames_only_even_with_debug_logging(framing):
    bodies = [ping(1), b"{bad", b"[]", b"[1]", request("nope", id=2), request("vm.get", {"vm": "x"}, id=3),
              request("vm.create", {"kind": 5}, id=4), request("shutdown", id=5), ping(6)]
    done = run_once(script(framing, *bodies), "--log-level", "trace", framing=framing)
    messages = parse_frames(done.stdout, framing)  # fails on any stray byte
    well_formed(messages)
    assert len(messages) == len(bodies)
    assert b"vmhost" in done.stderr  # the logs went somewhere: stderr


def test_a_nul_in_an_object_key_is_refused_and_the_host_keeps_serving():
    """JSON allows "\\u0000" in a key; jansson cannot hold one. The host answers an error naming
    it rather than dropping or mangling the key, and carries on. (A limit for protocol/SPEC.md.)"""
    error, after = answers(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a\\u0000b":1}}', ping(2))
    assert "error" in error and error["id"] in (1, None)
    assert after["result"] == {}


def test_a_nul_inside_a_string_value_round_trips():
    reply = only(answers(request("ping", id="a\u0000b")))
    assert reply["id"] == "a\u0000b"
