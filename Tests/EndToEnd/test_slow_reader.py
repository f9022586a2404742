"""A client that stops reading: property changes merge (latest wins) while stdout is full, memory
stays bounded, and once the client reads again its mirror ends at the right values."""
import json
import os
import threading

from harness import HANG_LIMIT, HostProcess, rss_kib


def test_changes_merge_while_the_reader_is_stalled_and_the_final_state_is_right(tmp_path):
    # The host reads its input ahead of handling it (SPEC §7), so the client's writes end before the
    # host has handled them. The client learns that the host reached the last message from the trace,
    # a FIFO read here, and only then reads stdout: until then it is a reader that stopped reading.
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    trace = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(trace, True)
    keep_open = os.open(fifo, os.O_WRONLY)  # a writer from the start: no EOF before the host opens it
    reached = threading.Event()
    marker = "last-before-reading"

    def follow() -> None:
        seen = b""
        while chunk := os.read(trace, 65536):
            seen = seen[-256:] + chunk
            if marker.encode() in seen:
                reached.set()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    try:
        with HostProcess("--trace", str(fifo)) as host:
            host.request("vm.create", {"kind": "Login", "id": "l"})
            host.request("vm.subscribe", {"vm": "l", "outputs": ["usernameValid"]})
            before = rss_kib(host.process.pid)
            inputs = 20_000
            chunk = []
            for i in range(inputs):
                value = "13800138000" if i % 2 == 0 else "1"
                chunk.append('{"jsonrpc":"2.0","method":"vm.send","params":{"vm":"l","input":"username","value":"%s"}}\n' % value)
                if len(chunk) == 1000:
                    host.write_raw("".join(chunk).encode())
                    chunk = []
            host.write_raw((json.dumps({"jsonrpc": "2.0", "id": marker, "method": "ping"}) + "\n").encode())
            assert reached.wait(HANG_LIMIT), "the host never reached the last message"
            # Nothing was read while 20,000 changes were made: stdout filled up long ago.
            during = rss_kib(host.process.pid)
            exchange = host.until_response(marker)
            changes = exchange.changes
            assert exchange.result == {}
            assert 0 < len(changes) < inputs / 2, len(changes)
            assert changes[-1]["values"] == {"usernameValid": False}  # the last input was "1"
            assert during - before < 16 * 1024, (before, during)
            assert host.request("vm.get", {"vm": "l", "outputs": ["usernameValid"]}).result == {"values": {"usernameValid": False}}
    finally:
        os.close(keep_open)
        follower.join(HANG_LIMIT)
        os.close(trace)
