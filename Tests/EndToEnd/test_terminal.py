"""vmhost started by hand in a terminal: one line on stderr says what it reads; stdout stays for
frames. Through a pipe it says nothing."""
import json
import os
import pty
import select
import subprocess
import time

from harness import HANG_LIMIT, binary

HINT = ('vmhost: reading JSON-RPC 2.0 requests, one per line, e.g. '
        '{"jsonrpc":"2.0","id":1,"method":"host.describe"}; Ctrl-D ends; --help explains\n')


def read_line(fd: int, deadline: float) -> bytes:
    """One line from *fd*, or fails once *deadline* (time.monotonic) has passed."""
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0, f"no whole line within the limit; read {data!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1)
            assert chunk, f"end of output after {data!r}"
            data += chunk
    return data


def test_in_a_terminal_it_says_what_it_reads_on_stderr():
    main, terminal = pty.openpty()
    process = subprocess.Popen([binary()], stdin=terminal, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    os.close(terminal)
    try:
        deadline = time.monotonic() + HANG_LIMIT
        assert read_line(process.stderr.fileno(), deadline).decode() == HINT
        # A line typed at the terminal is served; stdout carries the reply only.
        os.write(main, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        reply = read_line(process.stdout.fileno(), deadline)
        assert json.loads(reply) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        os.write(main, b"\x04")  # Ctrl-D at the start of a line: end of input
        assert process.wait(timeout=HANG_LIMIT) == 0
        assert process.stdout.read() == b""
        assert process.stderr.read() == b""
    finally:
        os.close(main)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_through_a_pipe_it_says_nothing():
    done = subprocess.run([binary()], input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
                          capture_output=True, timeout=HANG_LIMIT)
    assert done.returncode == 0
    assert done.stderr == b""
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
