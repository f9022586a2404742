"""The examples of protocol/embedding.md and the README's in-process snippet, as written: the C
program is compiled and run, the Python snippets run, each against the reference app's library."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT

DOCUMENT = (ROOT / "protocol" / "embedding.md").read_text()


def blocks(language: str) -> list:
    return re.findall(r"```" + language + r"\n(.*?)```", DOCUMENT, re.S)


def test_the_c_example_of_the_document(compile_c, tmp_path) -> None:
    program = next(block for block in blocks("c") if "int main" in block)
    source = tmp_path / "document.c"
    source.write_text(program)
    run = subprocess.run([compile_c(source)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == '{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_the_python_examples_of_the_document(library_path) -> None:
    snippets = blocks("python")
    assert len(snippets) == 2
    env = dict(os.environ, PYTHONPATH=str(ROOT / "clients" / "python"))
    for snippet in snippets:
        code = snippet.replace(".build/debug/libvmhost-embedded.so", str(library_path))
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
        assert run.returncode == 0, run.stderr
    raw = snippets[1].replace(".build/debug/libvmhost-embedded.so", str(library_path))
    out = subprocess.run([sys.executable, "-c", raw], capture_output=True, text=True, timeout=60, env=env).stdout
    assert out.strip() == """[b'{"jsonrpc":"2.0","id":1,"result":{}}', None] 0"""


def test_the_readme_snippet(library_path) -> None:
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## In process.*?```python\n(.*?)```", readme, re.S).group(1)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "clients" / "python"), VMHOST_LIBRARY=str(library_path))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "20\n"
