"""Every row of protocol/SPEC.md §10 (Limits), through the real binary: what a client sees at a
limit and just past it, in both framings where the framing matters.

| §10 row                       | tests here                                   | also
|-------------------------------|----------------------------------------------|--------------------------------
| message size                  | test_message_size_*                          | EndToEnd/test_wire.py (default 4 MiB, CRLF)
| LSP header block              | test_header_block_*                          | the libFuzzer target (any read sizes)
| JSON nesting                  | test_nesting_*                               |
| integers and reals            | test_integers_*, test_reals_*                |
| object keys                   |                                              | EndToEnd/test_wire.py (NUL in a key)
| batch: members, replies       | test_a_batch_of_*, test_past_4_mib_*         | Browser/test_hardening.py (the same over WebSocket)
| pending output                | test_responses_are_kept_*                    | EndToEnd/test_slow_reader.py (changes merge)
| messages waiting (vmhost-web) |                                              | web/Tests/VMHostWebSocketTests/InboxTests.swift (each bound at and one past its value, turns)
| requests in flight            | test_requests_in_flight_*                    |
| view-models and subscriptions | test_view_models_have_no_count_limit         | Hardening/test_process.py (memory returned)
| recording                     | test_recording_and_trace_bounds_*            | EndToEnd/test_record.py (the comment, the session going on); EmbeddingTests/SessionRecorderTests.swift (the server's budget)
| trace                         | test_a_trace_stops_at_*, test_recording_and_trace_bounds_* | ViewModelHostTests/HostTests.swift (the last line's room)
| HTTP replay                   | test_an_http_replay_file_*                   | VMHostHTTPTests/HTTPReplayTests.swift (a line's members, matching)
| log queue                     | test_log_*                                   |
| resumable sessions (vmhost-web) |                                            | Browser/test_resume.py (grace, buffer, the connection cap)
| sessions kept for a restart   |                                              | Browser/test_restart.py (256 KiB, a file that does not read); web/Tests/VMHostWebSocketTests/SessionFolderTests.swift (files, counts); ViewModelHostTests/RestartTests.swift (counters)

No test waits on time: a blocking read of the next frame (with a hang guard) is the only wait.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "EndToEnd"))

from harness import HostProcess, binary, encode, frame, problems, run_once  # noqa: E402

FRAMINGS = ("ndjson", "lsp")
LIMIT = 256  # --max-message-bytes for the size tests: small, so that crossing it is cheap
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def ping(id) -> bytes:
    return encode({"jsonrpc": "2.0", "id": id, "method": "ping"})


def sized_ping(size: int, id) -> bytes:
    """A ping whose JSON text is exactly `size` bytes (padded with spaces)."""
    # Padded with spaces before its last brace: ping takes no params (SPEC §2).
    bare = encode({"jsonrpc": "2.0", "id": id, "method": "ping"})
    body = bare[:-1] + b" " * (size - len(bare)) + b"}"
    assert len(body) == size
    return body


def replies(data: bytes, *args: str, framing: str = "ndjson") -> list:
    done = run_once(data, "--framing", framing, *args, framing=framing)
    assert done.returncode == 0, done.stderr[-2000:]
    messages = done.messages  # parse_frames: stdout holds whole frames only
    for message in messages:
        assert problems(message) == [], message
    return messages


def is_error(message: dict, code: int, id=None) -> bool:
    return message.get("id") == id and message.get("error", {}).get("code") == code


# -- message size ---------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_message_size_exactly_at_the_limit_is_served_one_byte_over_is_refused(framing):
    data = b"".join(frame(body, framing) for body in
                    (sized_ping(LIMIT, "at"), sized_ping(LIMIT + 1, "over"), ping("after")))
    at, over, after = replies(data, "--max-message-bytes", str(LIMIT), framing=framing)
    assert at == {"jsonrpc": "2.0", "id": "at", "result": {}}
    assert is_error(over, INVALID_REQUEST)
    assert over["error"]["data"] == {"limit": LIMIT}
    assert str(LIMIT) in over["error"]["message"]
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_message_size_of_an_unterminated_last_line_is_checked_too():
    """The last ndjson line may end without a newline (read at EOF): one byte over is refused."""
    for size, served in ((LIMIT, True), (LIMIT + 1, False)):
        (reply,) = replies(ping("first") + b"\n" + sized_ping(size, "last"), "--max-message-bytes", str(LIMIT))[1:]
        assert (reply == {"jsonrpc": "2.0", "id": "last", "result": {}}) if served else is_error(reply, INVALID_REQUEST)


@pytest.mark.parametrize("framing", FRAMINGS)
def test_message_size_is_refused_as_soon_as_the_excess_is_seen_and_the_rest_skipped_unread(framing):
    """The refusal comes before the message has arrived: an LSP header announcing too much is
    answered at once, an ndjson line as soon as it is longer than the limit without its end. The
    rest is skipped as it streams past (never held), and the host serves what follows."""
    with HostProcess("--framing", framing, "--max-message-bytes", str(LIMIT), framing=framing) as host:
        body = sized_ping(LIMIT * 64, "big")
        if framing == "lsp":
            host.write_raw(b"Content-Length: %d\r\n\r\n" % len(body))  # the header alone
        else:
            host.write_raw(body[:LIMIT + 2])  # longer than the limit, no newline yet
        refused = host.read_message()
        assert is_error(refused, INVALID_REQUEST) and refused["error"]["data"] == {"limit": LIMIT}
        host.write_raw(body if framing == "lsp" else body[LIMIT + 2:] + b"\n")
        assert host.request("ping").result == {}
        assert host.close() == 0


def test_message_size_limit_is_at_least_64_bytes():
    """A smaller --max-message-bytes is refused at start (a usage error, nothing on stdout)."""
    refused = subprocess.run([binary(), "--max-message-bytes", "63"], input=b"", capture_output=True, timeout=20)
    assert refused.returncode != 0 and b"64" in refused.stderr and refused.stdout == b""
    small = sized_ping(64, "x")
    assert replies(small + b"\n", "--max-message-bytes", "64") == [{"jsonrpc": "2.0", "id": "x", "result": {}}]


# -- LSP header block -----------------------------------------------------------------------------

HEADER_LIMIT = 8192


def header_block(total: int, body: bytes | None) -> bytes:
    """A header block of exactly `total` bytes, its final blank line included: Content-Length of
    `body` (none when body is None) and an X-Pad header that fills it up."""
    base = b"Content-Length: %d\r\n" % len(body) if body is not None else b""
    pad = total - len(base) - len(b"X-Pad: \r\n") - 2
    block = base + b"X-Pad: " + b"p" * pad + b"\r\n\r\n"
    assert len(block) == total
    return block


@pytest.mark.parametrize("framing", ["lsp", "auto"])
@pytest.mark.parametrize("reads", ["one write", "dripped"])
def test_header_block_of_8_kib_is_read_one_byte_more_is_refused(framing, reads):
    """8192 bytes from the block's first byte to the end of its blank line are accepted, 8193 are
    not, however the bytes arrive. The refused block is skipped up to its blank line (so this one
    has no body: a body would be read as the next header block), and the host keeps serving."""
    at = header_block(HEADER_LIMIT, ping("at")) + ping("at")
    over = header_block(HEADER_LIMIT + 1, None)
    after = frame(ping("after"), "lsp")
    with HostProcess("--framing", framing, framing="lsp") as host:
        if reads == "one write":
            host.write_raw(at + over + after)
        else:
            for start in range(0, len(at + over), 97):  # many small writes: the host reads what is there
                host.write_raw((at + over)[start:start + 97])
            host.write_raw(after)
        first, second, third = (host.read_message() for _ in range(3))
        assert first == {"jsonrpc": "2.0", "id": "at", "result": {}}
        assert is_error(second, PARSE_ERROR) and "8192" in second["error"]["message"]
        assert third == {"jsonrpc": "2.0", "id": "after", "result": {}}
        assert host.close() == 0


def test_header_block_far_over_the_limit_is_skipped_without_being_held():
    """A block of 1 MiB with no end in sight is refused once it passes 8 KiB; the host keeps
    reading (and dropping) it until its blank line, then serves the next message."""
    with HostProcess("--framing", "lsp", framing="lsp") as host:
        host.write_raw(b"X-Pad: " + b"p" * (HEADER_LIMIT + 10))
        refused = host.read_message()  # answered before the block ends
        assert is_error(refused, PARSE_ERROR)
        host.write_raw(b"q" * (1 << 20) + b"\r\n\r\n" + frame(ping("after"), "lsp"))
        assert host.read_message() == {"jsonrpc": "2.0", "id": "after", "result": {}}
        assert host.close() == 0


# -- JSON nesting ---------------------------------------------------------------------------------


def nested_request(levels: int, id) -> bytes:
    """An initialize nested `levels` deep in all: the message object is level 1, its params 2,
    params.clientInfo (which takes any object) 3, arrays in it the rest."""
    inner = levels - 3
    return (b'{"jsonrpc":"2.0","id":' + json.dumps(id).encode() + b',"method":"initialize","params":{"clientInfo":{"n":'
            + b"[" * inner + b"]" * inner + b"}}}")


@pytest.mark.parametrize("framing", FRAMINGS)
def test_nesting_of_2048_levels_is_read_2049_is_a_parse_error(framing):
    data = b"".join(frame(body, framing) for body in (nested_request(2048, "deep"), nested_request(2049, "deeper"),
                                                       ping("after")))
    deep, deeper, after = replies(data, framing=framing)
    assert deep["id"] == "deep" and deep["result"]["protocolVersion"] == "1"
    assert is_error(deeper, PARSE_ERROR)  # id null: the message could not be read
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


@pytest.mark.parametrize("framing", FRAMINGS)
def test_nesting_counts_a_batch_as_a_level(framing):
    """A batch is an array: the same limit counts it. 2048 levels in all is read (and answered as a
    batch whose member is not a request), 2049 is a parse error."""
    read = b"[" * 2048 + b"]" * 2048
    unread = b"[" * 2049 + b"]" * 2049
    first, second = replies(frame(read, framing) + frame(unread, framing), framing=framing)
    assert isinstance(first, list) and len(first) == 1 and is_error(first[0], INVALID_REQUEST)
    assert is_error(second, PARSE_ERROR)


# -- integers and reals ---------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_integers_of_64_bits_are_exact_and_one_past_either_end_is_a_parse_error(framing):
    tokens = [b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808", b"-9223372036854775809"]
    data = b"".join(frame(b'{"jsonrpc":"2.0","id":' + t + b',"method":"ping"}', framing) for t in tokens)
    top, past_top, bottom, past_bottom = replies(data, framing=framing)
    assert top == {"jsonrpc": "2.0", "id": 2**63 - 1, "result": {}}  # echoed exactly
    assert bottom == {"jsonrpc": "2.0", "id": -2**63, "result": {}}
    assert is_error(past_top, PARSE_ERROR) and is_error(past_bottom, PARSE_ERROR)


@pytest.mark.parametrize("framing", FRAMINGS)
def test_reals_beyond_a_double_are_a_parse_error(framing):
    tokens = [b"1.7976931348623157e308", b"1e400", b"-1e400", b"5e-324"]
    data = b"".join(frame(b'{"jsonrpc":"2.0","id":' + t + b',"method":"ping"}', framing) for t in tokens)
    largest, over, under, smallest = replies(data, framing=framing)
    assert largest["id"] == 1.7976931348623157e308 and smallest["id"] == 5e-324
    assert is_error(over, PARSE_ERROR) and is_error(under, PARSE_ERROR)


# -- batch ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_batch_of_1000_members_is_served_and_one_of_1001_is_refused_whole(framing):
    """1,000 requests in one batch get one array of 1,000 responses, in order; 1,001 get one
    -32600 naming the limit, and none of them is handled (the `exit` inside it does not end the
    host)."""
    count = 1000
    batch = b"[" + b",".join(ping(i) for i in range(count)) + b"]"
    over = b"[" + b",".join([ping(i) for i in range(count)] + [encode({"jsonrpc": "2.0", "method": "exit"})]) + b"]"
    reply, refused, after = replies(frame(batch, framing) + frame(over, framing) + frame(ping("after"), framing),
                                    framing=framing)
    assert [r["id"] for r in reply] == list(range(count))
    assert all(r["result"] == {} for r in reply)
    assert is_error(refused, INVALID_REQUEST) and refused["id"] is None
    assert refused["error"]["data"] == {"name": "batchMembers", "limit": count}
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_past_4_mib_of_replies_a_batchs_requests_are_answered_without_being_handled():
    """1,000 host.describe in one batch (about 60 KiB) would be about 7 MB of replies: once the
    replies reach 4 MiB, each further request is answered -32600 naming the limit, unhandled; a
    notification there gets nothing. The array holds an answer per request, in order."""
    members = [encode({"jsonrpc": "2.0", "id": i, "method": "host.describe"}) for i in range(999)]
    members.append(encode({"jsonrpc": "2.0", "method": "vm.create", "params": {"kind": "Login", "id": "late"}}))
    data = b"[" + b",".join(members) + b"]\n" + encode({"jsonrpc": "2.0", "id": "list", "method": "vm.list"}) + b"\n"
    reply, listed = replies(data)
    assert [r["id"] for r in reply] == list(range(999))
    answered = [r for r in reply if "result" in r]
    refused = reply[len(answered):]
    assert answered and refused
    assert all(is_error(r, INVALID_REQUEST, r["id"]) and r["error"]["data"] == {"name": "batchReplyBytes", "limit": 4 << 20}
               for r in refused)
    sizes = [len(encode(r)) for r in answered]
    assert sum(sizes[:-1]) < 4 << 20 <= sum(sizes)
    assert listed["result"] == []  # the notification past the bound was not handled


# -- pending output and requests in flight ---------------------------------------------------------


def test_responses_are_kept_in_full_while_the_client_does_not_read():
    """§10, pending output: responses are never merged or dropped. A client that writes 20,000
    requests without reading a reply gets all of them, in order, once it reads: the host held them
    meanwhile (its memory grows with them; that is the bound a client must keep itself)."""
    count = 20_000
    with HostProcess() as host:
        assert host.request("ping").result == {}
        host.write_raw(b"".join(ping(i) + b"\n" for i in range(count)))  # nothing read meanwhile
        exchange = host.request("ping", id="last")
        assert [m["id"] for m in exchange.messages] == list(range(count)) + ["last"]
        assert host.close() == 0


def test_requests_in_flight_have_no_count_limit():
    """2,000 commands in flight at once (refreshes of 2,000 lists behind a latency that the manual
    clock has not reached) all stay pending, and all answer when the clock moves."""
    count = 2000
    with HostProcess("--clock", "manual", "--test-controls") as host:
        assert host.request("control.backend.latency", {"ms": 100}).result == {}
        creates = [encode({"jsonrpc": "2.0", "id": "c%d" % i, "method": "vm.create",
                           "params": {"kind": "ProductList", "id": "p%d" % i}}) for i in range(count)]
        host.write_raw(b"".join(c + b"\n" for c in creates))
        assert host.until_response("c%d" % (count - 1)).response["result"]["vm"] == "p%d" % (count - 1)
        sends = [encode({"jsonrpc": "2.0", "id": "r%d" % i, "method": "vm.send",
                         "params": {"vm": "p%d" % i, "input": "refresh"}}) for i in range(count)]
        host.write_raw(b"".join(s + b"\n" for s in sends))
        pending = host.request("ping")
        assert [m for m in pending.messages if "id" in m and str(m["id"]).startswith("r")] == []
        moved = host.request("control.clock.advance", {"ms": 100})
        answered = {m["id"]: m for m in moved.messages if "id" in m and str(m["id"]).startswith("r")}
        assert len(answered) == count and all(m["result"] == {} for m in answered.values())
        assert host.close() == 0


# -- view-models and subscriptions ----------------------------------------------------------------


def test_view_models_have_no_count_limit():
    """3,000 view-models, each subscribed twice, live at once; `vm.list` names them all. (What they
    cost and that disposing returns it: Hardening/test_process.py.)"""
    count = 3000
    with HostProcess() as host:
        messages = []
        for i in range(count):
            messages.append({"jsonrpc": "2.0", "id": "c%d" % i, "method": "vm.create", "params": {"kind": "Login", "id": "l%d" % i}})
            for j in range(2):
                messages.append({"jsonrpc": "2.0", "id": "s%d-%d" % (i, j), "method": "vm.subscribe", "params": {"vm": "l%d" % i, "outputs": ["canSubmit"]}})
        for start in range(0, len(messages), 1000):
            host.write_raw(b"".join(encode(m) + b"\n" for m in messages[start:start + 1000]))
            last = messages[min(start + 1000, len(messages)) - 1]["id"]
            assert host.until_response(last).error is None
        listed = host.request("vm.list").result
        assert len(listed) == count and listed[-1] == {"vm": "l%d" % (count - 1), "kind": "Login"}
        assert host.close() == 0


# -- log queue ------------------------------------------------------------------------------------


# -- recordings and traces ------------------------------------------------------------------------


def test_a_trace_stops_at_its_bound_with_a_last_line_and_the_host_goes_on(tmp_path):
    trace = tmp_path / "trace.ndjson"
    data = b"".join(ping(n) + b"\n" for n in range(1, 501))
    done = run_once(data, "--trace", str(trace), "--max-trace-bytes", "4096")
    assert done.returncode == 0 and len(done.messages) == 500
    text = trace.read_bytes()
    assert len(text) <= 4096
    *lines, last = [json.loads(line) for line in text.splitlines()]
    assert last["dir"] == "end" and "--max-trace-bytes" in last["msg"]
    assert lines and all(line["dir"] in ("in", "out") for line in lines)


@pytest.mark.parametrize("option", ["--max-record-bytes", "--max-record-total-bytes", "--max-trace-bytes"])
def test_recording_and_trace_bounds_are_at_least_1024_bytes(option):
    assert run_once(b"", option, "1024").returncode == 0
    done = run_once(b"", option, "1023")
    assert done.returncode == 64 and option.encode() in done.stderr


def test_an_http_replay_file_is_checked_at_start_without_waiting_on_it(tmp_path):
    """--http-replay reads a regular file only (a FIFO is refused, never waited on); a line that
    is not JSON or a malformed http line is a usage error naming the file, the line and the member."""
    import os
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    done = run_once(b"", "--http-replay", str(fifo))
    assert done.returncode == 64 and b"not a regular file" in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"args": []}\n{"http": {"method": "GET", "path": "/a", "ms": 86400001, "cancelled": true}}\n')
    done = run_once(b"", "--http-replay", str(bad))
    assert done.returncode == 64 and f"{bad}:2: http: ms: expected an integer from 0 to 86400000".encode() in done.stderr
    bad.write_text('{"args": []}\nnot json\n')
    done = run_once(b"", "--http-replay", str(bad))
    assert done.returncode == 64 and f"{bad}:2: not JSON".encode() in done.stderr
    good = tmp_path / "good.jsonl"
    good.write_text('{"args": []}\n{"http": {"method": "GET", "path": "/a", "ms": 86400000, "cancelled": true}}\n')
    done = run_once(ping(1) + b"\n", "--http-replay", str(good), "--http-replay-ignore", "query:ts,header:X-Id,body:at")
    assert done.returncode == 0 and done.messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    done = run_once(b"", "--http-replay", str(good), "--http-replay-ignore", "cookie:sid")
    assert done.returncode == 64 and b"--http-replay-ignore: expected header:NAME" in done.stderr
    done = run_once(b"", "--http-replay-ignore", "query:ts")
    assert done.returncode == 64 and b"--http-replay-ignore applies to --http-replay only" in done.stderr


def test_log_lines_are_cut_at_1_kib():
    """A log line may quote input (an unknown method's name): it is cut at 1 KiB and marked with
    its length, so a stalled stderr holds at most 10,000 lines of 1 KiB."""
    name = "m" * 100_000
    data = encode({"jsonrpc": "2.0", "method": name}) + b"\n" + ping(1) + b"\n"
    done = run_once(data, "--log-level", "debug")
    assert done.messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    lines = done.stderr.split(b"\n")
    quoting = [line for line in lines if b"mmmm" in line]
    assert len(quoting) == 1, lines
    assert re.search(rb"\(cut, 1000\d\d bytes\)$", quoting[0]), quoting[0][-60:]
    assert all(len(line) <= 1024 for line in lines)


def test_log_lines_are_dropped_while_stderr_blocks_and_the_host_never_waits_for_it():
    """stderr is a pipe nobody reads: it fills after about 64 KiB. 30,000 requests that each log a
    line at debug level are all handled all the same, and stderr then holds fewer lines than were
    logged: while it blocked, the queue filled to its 10,000 lines and the rest were dropped."""
    count = 30_000
    with HostProcess("--framing", "ndjson", "--log-level", "debug", stderr=subprocess.PIPE) as host:
        notifications = b"".join(encode({"jsonrpc": "2.0", "method": "no.such.method.%d" % i}) + b"\n"
                                 for i in range(count))
        host.write_raw(notifications)  # each one logs "ignored notification of unknown method …"
        assert host.request("ping", id="after").messages == [{"jsonrpc": "2.0", "id": "after", "result": {}}]
        # Only now is stderr read: the host handled all 30,000 without waiting for it.
        logged: list = []
        reader = threading.Thread(target=lambda: logged.append(host.process.stderr.read()), daemon=True)
        reader.start()
        assert host.close() == 0
        reader.join(timeout=20)
    ignored = logged[0].count(b"ignored notification of unknown method")
    assert 0 < ignored < count, ignored
