"""The generated typed bindings of the reference app (clients/bindings) drive the real host."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import vmhost

BINDINGS = Path(__file__).resolve().parents[2] / "bindings"
sys.path.insert(0, str(BINDINGS))

import example  # noqa: E402
import viewmodels  # noqa: E402


def test_the_typed_walk_runs(host: vmhost.Host) -> None:
    shown = example.log_in_and_list(host)
    assert shown[0] == "ProductList" and len(shown) == 6


def test_a_wrapper_refuses_another_kind(host: vmhost.Host) -> None:
    with pytest.raises(TypeError):
        viewmodels.Login(host.create("ProductList"))


def test_every_kind_of_the_host_has_a_class(host: vmhost.Host) -> None:
    kinds = [kind["kind"] for kind in host.describe()["kinds"]]
    assert list(viewmodels.KINDS) == kinds


def test_check_fails_on_stale_bindings(tmp_path: Path) -> None:
    generator = BINDINGS.parents[1] / "scripts" / "gen-bindings.py"
    binary = vmhost.find_binary()
    command = [sys.executable, str(generator), "--host", binary, "--out", str(tmp_path), "--js-client", "../js/index.js"]
    subprocess.run(command, check=True, capture_output=True)
    assert subprocess.run(command + ["--check"], capture_output=True).returncode == 0
    for name in ("viewmodels.py", "viewmodels.d.ts"):
        assert (tmp_path / name).read_text() == (BINDINGS / name).read_text()
    (tmp_path / "viewmodels.d.ts").write_text("// edited\n")
    stale = subprocess.run(command + ["--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "stale" in stale.stderr
