"""Process behaviour of BRIEF §3 (Lifecycle) and the command line of §8, through the real binary:
shutdown and exit codes, EOF, signals, a reader that closes stdout, --help, --version, bad options.

Waits are bounded `wait(timeout=...)` calls that only turn a hang into a failure.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pytest

from harness import HostProcess, binary, encode, frame, parse_frames, problems, run_once
from test_http_backend import mapped_files

# BRIEF §3 says EOF and signals end the host "within one second"; the guard leaves room for a
# loaded CI machine so that only a real hang fails.
PROMPT = 5.0
FRAMINGS = ("ndjson", "lsp")


def ping(id=1) -> bytes:
    return encode({"jsonrpc": "2.0", "id": id, "method": "ping"})


EXIT = encode({"jsonrpc": "2.0", "method": "exit"})
SHUTDOWN = encode({"jsonrpc": "2.0", "id": "down", "method": "shutdown"})


# -- shutdown and exit ------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_shutdown_answers_null_then_requests_answer_shutting_down(framing):
    with HostProcess(framing=framing) as host:
        assert host.request("ping").result == {}
        down = host.request("shutdown")
        assert down.response == {"jsonrpc": "2.0", "id": down.id, "result": None}
        for method, params in (("ping", None), ("vm.list", None), ("initialize", {}),
                               ("vm.create", {"kind": "ProductList"}), ("no.such.method", None)):
            assert host.request(method, params).code == -32005, method
        host.notify("exit")
        assert host.read_all() == []
        assert host.process.wait(timeout=PROMPT) == 0


@pytest.mark.parametrize("framing", FRAMINGS)
def test_exit_after_shutdown_exits_0(framing):
    done = run_once(frame(SHUTDOWN, framing) + frame(EXIT, framing) + frame(ping(), framing),
                    framing=framing)
    assert done.returncode == 0
    assert done.messages == [{"jsonrpc": "2.0", "id": "down", "result": None}]  # nothing after exit


@pytest.mark.parametrize("framing", FRAMINGS)
def test_exit_without_shutdown_exits_1(framing):
    done = run_once(frame(ping(), framing) + frame(EXIT, framing) + frame(ping(2), framing),
                    framing=framing)
    assert done.returncode == 1
    assert done.messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_exit_on_a_live_host_ends_it_without_eof():
    with HostProcess() as host:
        assert host.request("shutdown").result is None
        host.notify("exit")  # stdin stays open: exit alone must end the process
        assert host.process.wait(timeout=PROMPT) == 0


def test_exit_sent_as_a_request_is_still_exit():
    done = run_once(SHUTDOWN + b"\n" + encode({"jsonrpc": "2.0", "id": 2, "method": "exit"}) + b"\n")
    assert done.returncode == 0
    assert all(problems(m) == [] for m in done.messages)


def test_a_batch_with_shutdown_answers_it_in_the_array():
    batch = b"[" + ping(1) + b"," + SHUTDOWN + b"]\n" + ping(2) + b"\n"
    reply, after = run_once(batch).messages
    assert {r["id"]: r.get("result") for r in reply} == {1: {}, "down": None}
    assert after["error"]["code"] == -32005


# -- EOF, signals, a closed stdout ------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_eof_flushes_every_reply_and_exits_0_promptly(framing):
    with HostProcess(framing=framing) as host:
        host.write_raw(b"".join(frame(ping(i), framing) for i in range(200)))
        host.process.stdin.close()
        started = time.monotonic()
        assert host.process.wait(timeout=PROMPT) == 0
        elapsed = time.monotonic() - started
        assert [m["id"] for m in host.read_all()] == list(range(200))
    assert elapsed < PROMPT


def test_eof_on_an_idle_host_exits_0():
    with HostProcess() as host:
        assert host.close() == 0


def test_eof_after_shutdown_exits_0():
    done = run_once(SHUTDOWN + b"\n")
    assert done.returncode == 0


def test_eof_inside_a_frame_still_exits_0():
    assert run_once(b'{"jsonrpc":"2.0","id":1,"meth', "--framing", "ndjson").returncode == 0
    assert run_once(b"Content-Length: 50\r\n\r\n{", "--framing", "lsp", framing="lsp").returncode == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_host_with_0(signum):
    with HostProcess() as host:
        assert host.request("ping").result == {}
        host.process.send_signal(signum)
        assert host.process.wait(timeout=PROMPT) == 0
        assert host.read_all() == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_an_lsp_host_mid_frame_with_0(signum):
    with HostProcess(framing="lsp") as host:
        assert host.request("ping").result == {}
        host.write_raw(b"Content-Length: 1000\r\n\r\n{")  # the host waits for the rest
        host.process.send_signal(signum)
        assert host.process.wait(timeout=PROMPT) == 0


def test_a_closed_stdout_ends_the_host_quietly():
    with HostProcess(stderr=subprocess.PIPE) as host:
        assert host.request("ping").result == {}
        host.process.stdout.close()  # the reader goes away
        try:
            for i in range(1000):
                host.write_raw(ping(i) + b"\n")
        except BrokenPipeError:
            pass  # the host already left, as it should
        status = host.process.wait(timeout=PROMPT)
        stderr = host.process.stderr.read()
    assert status >= 0, "killed by signal %d (SIGPIPE not ignored?)" % -status
    assert b"Fatal error" not in stderr and b"Stack dump" not in stderr, stderr


# -- command line -----------------------------------------------------------------------------

OPTIONS = ["--framing", "--backend", "--timeout-ms", "--clock", "--test-controls", "--trace", "--record",
           "--log-level", "--max-message-bytes", "--max-response-bytes", "--version", "--help"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), *args], input=b"", capture_output=True, timeout=PROMPT)


def test_help_explains_every_option():
    done = cli("--help")
    assert done.returncode == 0
    text = done.stdout.decode()
    for option in OPTIONS:
        assert option in text, option
    for value in ("auto", "ndjson", "lsp", "embedded", "system", "manual"):
        assert value in text, value
    # every option's entry carries an explanation, not just the usage synopsis
    body = text.split("OPTIONS:", 1)[1]
    entries = re.split(r"\n(?=\s{1,4}-)", body)
    for option in OPTIONS:
        entry = next(e for e in entries if re.match(r"\s*(-\w, )?" + re.escape(option) + r"\b", e))
        words = re.sub(r"<[^>]*>|--?[\w-]+", " ", entry).split()
        assert len(words) >= 3, "no explanation for %s: %r" % (option, entry)


def test_help_writes_every_value_in_one_style():
    """A value is a word in capitals naming what is given (FILE, N, MS, BYTES, LEVEL, DIR), or a
    few fixed words between bars (auto|ndjson|lsp): never the option's own name in lower case."""
    text = cli("--help").stdout.decode()
    placeholders = re.findall(r"--[\w-]+ <([^>]*)>", text)
    assert placeholders, text
    for value in placeholders:
        assert re.fullmatch(r"[A-Z][A-Z:]*|[\w.-]+(\|[\w.-]+)+", value), f"<{value}> in --help"
    for expected in ("--max-message-bytes <BYTES>", "--timeout-ms <MS>", "--max-response-bytes <BYTES>",
                     "--framing <auto|ndjson|lsp>", "--clock <system|manual>", "--log-level <LEVEL>",
                     "--demo-products <N>", "--trace <FILE>", "--state-dir <DIR>", "--backend <embedded|URL>"):
        assert expected in text, expected


def test_version_prints_the_version_of_server_info():
    done = cli("--version")
    assert done.returncode == 0
    version = done.stdout.decode().strip()
    assert version
    reply = run_once(encode({"jsonrpc": "2.0", "id": 1, "method": "initialize"}) + b"\n").messages[0]
    assert reply["result"]["serverInfo"]["version"] in version


def test_options_take_their_value_after_a_space_or_an_equals_sign():
    line = encode({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + b"\n"
    for args in (("--framing", "ndjson"), ("--framing=ndjson",), ("--log-level=error", "--clock", "manual")):
        done = subprocess.run([binary(), *args], input=line, capture_output=True, timeout=PROMPT)
        assert done.returncode == 0, (args, done.stderr)
        assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_short_help_is_help():
    assert cli("-h").stdout == cli("--help").stdout


@pytest.mark.parametrize("args", [
    ("--framing", "bogus"),
    ("--framing", "--clock", "manual"),
    ("--test-controls=yes",),
    ("stray",),
    ("--clock", "sundial"),
    ("--log-level", "loud"),
    ("--max-message-bytes", "abc"),
    ("--max-message-bytes", "0"),
    ("--timeout-ms", "soon"),
    ("--max-response-bytes", "0"),
    ("--max-response-bytes", "-5"),
    ("--max-response-bytes", "lots"),
    ("--backend", "ftp://example.invalid"),
    ("--no-such-option",),
    ("--framing",),
], ids=lambda a: " ".join(a))
def test_a_bad_option_exits_non_zero_with_a_message_on_stderr(args):
    done = cli(*args)
    assert done.returncode != 0
    assert done.stderr.strip()
    assert done.stdout == b""


def test_an_unwritable_trace_file_is_refused_at_start():
    done = cli("--trace", "/nonexistent-dir/trace.ndjson")
    assert done.returncode != 0
    assert b"trace" in done.stderr


def test_options_are_accepted_together():
    done = run_once(ping() + b"\n", "--framing", "ndjson", "--backend", "embedded", "--timeout-ms", "500",
                    "--clock", "manual", "--test-controls", "--log-level", "error",
                    "--max-message-bytes", "65536")
    assert done.returncode == 0
    assert parse_frames(done.stdout, "ndjson") == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_libm_comes_with_the_first_call_of_a_function_of_it_not_at_start_up():
    # With the Swift runtime linked in (scripts/build-release.sh), libm is loaded by the first call
    # of one of its functions (Sources/ReferenceApp/LibmOnFirstCall): a `ping` needs none, a price
    # of the product list is rounded by libm's `round`. A shared runtime (debug builds) loads libm
    # itself, at start-up: there is nothing to see then.
    with HostProcess() as host:
        assert host.request("ping").result is not None
        pid = host.process.pid
        files = mapped_files(pid)
        if any(name.startswith("libswiftCore") for name in files):
            pytest.skip("the Swift runtime is a shared library here, and loads libm itself")
        assert not [name for name in files if name.startswith("libm.so")]
        host.request("vm.create", {"kind": "ProductList", "id": "pl"})
        host.request("vm.subscribe", {"vm": "pl"})
        assert host.request("vm.send", {"vm": "pl", "input": "loadMore"}).result == {}
        assert [name for name in mapped_files(pid) if name.startswith("libm.so")]
