"""What loading the library and opening a host do to the process: nothing the header does not say
(include/vmhost.h: a host never touches the process's signal handlers)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import ctypes, json, signal, sys

def caught():
    for line in open("/proc/self/status"):
        if line.startswith("SigCgt"):
            return int(line.split()[1], 16)
    return 0

names = {s.value: s.name for s in signal.Signals}
def new(before, after):
    # Signals 1-31: the real-time ones above are the C library's own (glibc's SIGCANCEL and
    # SIGSETXID, set up with the first thread).
    return [names.get(i + 1, str(i + 1)) for i in range(31) if (after & ~before) >> i & 1]

before = caught()
library = ctypes.CDLL(sys.argv[1])
loaded = caught()
MESSAGE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
on_message = MESSAGE_FN(lambda context, message, length: None)
handle = ctypes.c_uint64(0)
code = library.vmhost_open(0, None, on_message, None, None, ctypes.byref(handle))
opened = caught()
status = ctypes.c_int(0)
library.vmhost_close(handle, ctypes.byref(status))
print(json.dumps({"loaded": new(before, loaded), "opened": new(before, opened), "open": code}))
"""


def probe(library_path: Path, **environment: str) -> dict:
    import json
    env = {key: value for key, value in os.environ.items() if key != "SWIFT_BACKTRACE"}
    env.update(environment)
    out = subprocess.run([sys.executable, "-c", PROBE, str(library_path)], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_loading_and_opening_install_no_signal_handler(library_path: Path) -> None:
    seen = probe(library_path)
    assert seen["open"] == 0
    assert seen["loaded"] == [], f"loading the library installed handlers for {seen['loaded']}"
    assert seen["opened"] == [], f"opening a host installed handlers for {seen['opened']}"


def test_an_app_that_asks_for_the_runtimes_backtracer_keeps_it(library_path: Path) -> None:
    import pytest
    needed = subprocess.run(["readelf", "-d", str(library_path)], capture_output=True, text=True).stdout
    if "libswiftCore" not in needed:
        # The library as it ships links the runtime in statically, and a static runtime installs
        # no crash handler (its backtracer needs the toolchain's helper): nothing to keep.
        pytest.skip("the runtime is linked in statically: it installs no crash handler")
    seen = probe(library_path, SWIFT_BACKTRACE="enable=yes")
    assert "SIGSEGV" in seen["loaded"]


THREADS = r"""
import ctypes, json, os, sys
library = ctypes.CDLL(sys.argv[1])
MESSAGE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
on_message = MESSAGE_FN(lambda context, message, length: None)

def threads():
    return len(os.listdir("/proc/self/task"))

before = threads()
arguments = [b"--test-controls"]
argv = (ctypes.c_char_p * len(arguments))(*arguments)
handle = ctypes.c_uint64(0)
assert library.vmhost_open(len(arguments), argv, on_message, None, None, ctypes.byref(handle)) == 0
for line in ['{"jsonrpc":"2.0","id":1,"method":"control.backend.latency","params":{"ms":60000}}',
             '{"jsonrpc":"2.0","id":2,"method":"vm.create","params":{"kind":"ProductList","id":"p"}}',
             '{"jsonrpc":"2.0","id":3,"method":"vm.send","params":{"vm":"p","input":"refresh"}}',
             # The refresh waits for the backend: shutdown and exit cancel it.
             '{"jsonrpc":"2.0","id":4,"method":"shutdown"}', '{"jsonrpc":"2.0","method":"exit"}']:
    data = (line + "\n").encode()
    assert library.vmhost_write(handle, data, len(data)) == 0
opened = threads()
status = ctypes.c_int(-2)
assert library.vmhost_close(handle, ctypes.byref(status)) == 0
print(json.dumps({"before": before, "opened": opened, "closed": threads(), "status": status.value}))
"""


def test_a_close_that_cancels_a_command_leaves_only_the_host_thread(library_path: Path) -> None:
    """embedding.md: the library starts one thread, the host thread, which lives as long as the
    process; a close that cancels work in flight starts none (the host's tasks never go through
    Swift's global pool)."""
    import json
    out = subprocess.run([sys.executable, "-c", THREADS, str(library_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["status"] == 0
    assert seen["opened"] >= seen["before"] + 1, seen
    assert seen["closed"] == seen["before"] + 1, f"threads after the close: {seen}"
