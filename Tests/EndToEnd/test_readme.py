"""The README's client snippets, run as written: the Python one, the Node one saved as `.mjs` at
the top of a checkout, and the typed bindings one. A snippet that stops working fails here."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import HANG_LIMIT, ROOT, binary

README = (ROOT / "README.md").read_text()


def snippet(after: str, language: str) -> str:
    """The first ```language block after the text `after` in the README."""
    found = re.search(re.escape(after) + r".*?```" + language + r"\n(.*?)```", README, re.S)
    assert found, f"no {language} block after {after!r} in README.md"
    return found.group(1)


def environment(*python_paths: Path) -> dict:
    env = dict(os.environ, VMHOST_BIN=binary())
    env["PYTHONPATH"] = os.pathsep.join(str(path) for path in python_paths)
    return env


def forty_products(output: str) -> None:
    """What the Python and the Node snippets print: two pages of cells, a name and a rate each."""
    lines = output.splitlines()
    assert len(lines) == 40, output
    assert lines[0] == "稳健增利1号 4.35%"
    assert all(re.fullmatch(r"\S+ \d+\.\d\d%", line) for line in lines), output


def test_the_python_snippet(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(snippet("**Python**", "python"))
    done = subprocess.run([sys.executable, str(script)], env=environment(ROOT / "clients" / "python"),
                          capture_output=True, text=True, timeout=HANG_LIMIT)
    assert done.returncode == 0, done.stderr
    forty_products(done.stdout)


# More Node binaries to run the snippet with (e.g. Debian's Node 18 beside a newer one), separated
# by the path separator; by default the `node` on PATH.
NODES = os.environ.get("VMHOST_README_NODES", "node").split(os.pathsep)


@pytest.mark.parametrize("node", NODES)
def test_the_node_snippet_saved_as_mjs_at_the_top_of_a_checkout(tmp_path, node):
    if shutil.which(node) is None:
        pytest.skip(f"{node} is not installed")
    # The top of a checkout, as far as the snippet's import sees it.
    (tmp_path / "clients").symlink_to(ROOT / "clients")
    assert "`node example.mjs`" in README
    script = tmp_path / "example.mjs"
    script.write_text(snippet("**Node**", "js"))
    done = subprocess.run([node, script.name], cwd=tmp_path, env=environment(), capture_output=True,
                          text=True, timeout=HANG_LIMIT)
    assert done.returncode == 0, done.stderr
    forty_products(done.stdout)


def test_the_typed_bindings_snippet(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(snippet("**Typed bindings.**", "python"))
    env = environment(ROOT / "clients" / "python", ROOT / "clients" / "bindings")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=HANG_LIMIT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "code 获取验证码\n"


def test_the_piped_example_builds_only_vmhost_and_answers_as_the_readme_says():
    """It builds the stdio host only (`--product vmhost`), not every product of the package, and the
    pipe after it answers the send after its notifications."""
    import json

    block = snippet("## A piped example", "sh")
    build, pipe = block.split("\n", 1)
    assert build.split("#")[0].split() == ["swift", "build", "--product", "vmhost"], build
    done = subprocess.run(["bash", "-c", pipe.replace(".build/debug/vmhost", binary())], capture_output=True,
                          text=True, timeout=HANG_LIMIT)
    assert done.returncode == 0, done.stderr
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert messages[-1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert any(m.get("method") == "vm.changed" and m["params"]["values"].get("page") == 1 for m in messages)
