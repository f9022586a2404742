"""The shell examples of clients/shell run against the real binary and print what they promise."""
import json
import os
import subprocess

from harness import ROOT, binary

SHELL = ROOT / "clients" / "shell"


def run(script: str, *args: str) -> str:
    env = dict(os.environ, VMHOST_BIN=binary())
    done = subprocess.run([str(SHELL / script), *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_describe_lists_every_kind_with_its_inputs_and_outputs():
    out = run("describe.sh")
    for kind in ("ProductList", "Login", "MenuSubGroup", "MenuEditGroup"):
        assert kind + "\n" in out
    assert "refresh (command), loadMore (command), cancel (trigger)" in out


def test_products_loads_every_page_and_prints_the_cells():
    env = dict(os.environ, VMHOST_BIN=binary())
    done = subprocess.run([str(SHELL / "products.sh"), "en"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "page 3, more: false, 57 products\n"
    lines = done.stdout.splitlines()
    # A table and nothing else: a header row, then one row per product, each of seven columns.
    assert lines[0].split("\t") == ["id", "name", "bank", "profit", "saleStatus", "term", "amount"]
    assert len(lines) == 58
    assert all(len(line.split("\t")) == 7 for line in lines)
    assert lines[1].split("\t")[0] == "p001"
    assert lines[1].split("\t")[3:] == ["4.35%", "On sale", "90 days", "¥50,000"]


def test_errors_shows_one_event_and_the_same_object_in_the_reply():
    lines = [json.loads(line) for line in run("errors.sh").splitlines()]
    error = {"kind": "server", "code": 500, "message": "服务器错误（500），请稍后重试",
             "detail": "the server answered HTTP 500", "input": "refresh"}
    assert lines == [{"event": "error", "value": error}, {"reply": -32004, "data": error}]


def test_the_tour_walks_every_screen_and_exits_cleanly():
    out = run("tour.sh", binary())
    assert '"name":"navigate","value":{"route":"ProductList"}' in out
    assert '"reason":"no more pages"' in out
    assert "vmhost exited with status 0" in out


def test_the_examples_find_this_checkouts_build_without_vmhost_on_path():
    env = {k: v for k, v in os.environ.items() if k != "VMHOST_BIN"}
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    done = subprocess.run([str(SHELL / "describe.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "ProductList" in done.stdout


def test_the_examples_run_the_newer_of_the_release_and_the_debug_build(tmp_path):
    """A stale release build does not hide a fresh debug one (nor the other way round)."""
    shell = tmp_path / "clients" / "shell"
    shell.mkdir(parents=True)
    (shell / "vmhost-path.sh").write_text((SHELL / "vmhost-path.sh").read_text())
    paths = {}
    for config in ("release", "debug"):
        path = tmp_path / ".build" / config / "vmhost"
        path.parent.mkdir(parents=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        paths[config] = path
    env = {k: v for k, v in os.environ.items() if k != "VMHOST_BIN"}

    def chosen() -> str:
        done = subprocess.run(["bash", "-c", f'source "{shell}/vmhost-path.sh"; echo "$VMHOST"'],
                              env=env, capture_output=True, text=True, timeout=10)
        return done.stdout.strip()

    os.utime(paths["release"], (1_000_000, 1_000_000))
    os.utime(paths["debug"], (2_000_000, 2_000_000))
    assert chosen() == str(paths["debug"])
    os.utime(paths["release"], (3_000_000, 3_000_000))
    assert chosen() == str(paths["release"])
    env["VMHOST_BIN"] = "/elsewhere/vmhost"
    assert chosen() == "/elsewhere/vmhost"  # always first
