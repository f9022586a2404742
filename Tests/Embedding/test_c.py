"""C programs on the ABI: the example of clients/c (the reference app in process: log in, list
products) and the open/use/close cycles with the hostile calls between them."""
from __future__ import annotations

import subprocess

from conftest import ROOT


def test_the_c_example_logs_in_and_lists_products(compile_c) -> None:
    exe = compile_c(ROOT / "clients" / "c" / "example.c", "-ljansson")
    run = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "serving: vmhost"
    assert lines[1] == "logged in as 13800138000"
    assert lines[2].startswith("p001\t")
    assert "products: 20" in lines
    assert lines[-1] == "closed: done, status 0"


def test_open_use_close_cycles_with_hostile_calls(compile_c) -> None:
    exe = compile_c(ROOT / "Tests" / "Embedding" / "cycles.c")
    run = subprocess.run([exe, "1000"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("1000 cycles, 0 failures")
