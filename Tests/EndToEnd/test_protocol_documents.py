"""The protocol documents against the binary, where a document lists what the binary has.

protocol/cli.md is the command-line reference (SPEC says it lists every option): its table must
name exactly the options `vmhost --help` lists. (openrpc.json is checked against what the host
answers by clients/python/tests/test_openrpc.py; the examples of protocol/viewmodels/*.md are
replayed by clients/python/tests/test_examples.py.)
"""
from __future__ import annotations

import re
import subprocess

from harness import ROOT, binary


def help_options() -> set[str]:
    """The options `vmhost --help` lists: each entry of its OPTIONS section starts a line with two
    spaces, then `--name` (or `-h, --help`)."""
    text = subprocess.run([binary(), "--help"], capture_output=True, text=True, timeout=20, check=True).stdout
    section = text[text.index("OPTIONS:"):]
    return set(re.findall(r"^  (?:-[a-z], )?(--[a-z-]+)", section, re.MULTILINE))


def documented_options() -> set[str]:
    text = (ROOT / "protocol" / "cli.md").read_text(encoding="utf-8")
    options = set()
    for line in text.splitlines():
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
