"""The protocol documents against the binary, where a document lists what the binary has.

protocol/cli.md is the command-line reference (SPEC says it lists every option): its tables before
the `## vmhost-web` section must name exactly the options `vmhost --help` lists, and that section's
table exactly the options `vmhost-web --help` adds to them. (openrpc.json is checked against what the host
answers by clients/python/tests/test_openrpc.py; the examples of protocol/viewmodels/*.md are
replayed by clients/python/tests/test_examples.py.)
"""
from __future__ import annotations

import os
import re
import subprocess

from harness import ROOT, binary


def help_options(program: str | None = None) -> set[str]:
    """The options `vmhost --help` (or `program`'s) lists: each entry of its OPTIONS section starts a
    line with two spaces, then `--name` (or `-h, --help`)."""
    text = subprocess.run([program or binary(), "--help"], capture_output=True, text=True, timeout=20, check=True).stdout
    section = text[text.index("OPTIONS:"):]
    return set(re.findall(r"^  (?:-[a-z], )?(--[a-z-]+)", section, re.MULTILINE))


def documented_options(web: bool = False) -> set[str]:
    """The options the tables of protocol/cli.md name: those before its `## vmhost-web` section, or
    (`web`) those of that section."""
    text = (ROOT / "protocol" / "cli.md").read_text(encoding="utf-8")
    stdio, _, rest = text.partition("\n## vmhost-web")
    options = set()
    for line in (rest if web else stdio).splitlines():
        if line.startswith("| `-"):
            first = line.split("|")[1]
            options |= set(re.findall(r"`(--?[a-z-]+)`", first))
    return options - {"-h"}  # the short form of --help


def test_cli_md_lists_every_option_of_help_and_no_other():
    listed = help_options()
    assert "--max-response-bytes" in listed and "--framing" in listed and "--help" in listed, listed
    documented = documented_options()
    assert listed - documented == set(), "in --help, not in protocol/cli.md"
    assert documented - listed == set(), "in protocol/cli.md, not in --help"


def test_cli_md_lists_the_options_vmhost_web_adds_and_no_other():
    program = os.environ.get("VMHOST_WEB_BIN") or str(ROOT / "web" / ".build" / "debug" / "vmhost-web")
    added = help_options(program) - help_options()
    assert "--listen" in added and "--max-view-models" in added, added
    documented = documented_options(web=True)
    assert added - documented == set(), "in vmhost-web --help, not in protocol/cli.md"
    assert documented - added == set(), "in protocol/cli.md's vmhost-web section, not in vmhost-web --help"


def test_the_protocol_readme_starts_a_client_author_at_the_checklist_and_its_links_resolve():
    import re

    text = (ROOT / "protocol" / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links[0] == "client-checklist.md", links  # the first thing to read
    assert links[1] == "SPEC.md" and links[2].startswith("conformance/"), links
    for link in links:
        assert (ROOT / "protocol" / link).exists(), f"protocol/README.md links to a missing {link}"
    for document in (ROOT / "protocol").glob("*.md"):
        assert document.name == "README.md" or f"]({document.name})" in text, f"{document.name} is not in protocol/README.md"
