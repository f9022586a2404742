"""The version is stated in one place, VERSION, which releases are tagged from
(scripts/tag-release.sh): the framework reports it, and the documents that show a dependency line
depend on it."""
from __future__ import annotations

import re
import subprocess

from harness import ROOT, binary


def version() -> str:
    return (ROOT / "VERSION").read_text().strip()


def test_version_is_a_semantic_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", version()), version()


def test_the_binary_reports_the_version():
    out = subprocess.run([binary(), "--version"], capture_output=True, text=True, timeout=20, check=True).stdout
    assert out.strip() == f"vmhost {version()}"


def test_the_dependency_lines_of_the_documents_name_the_version():
    for document in ["docs/Guide.md", "Examples/TodoApp/README.md"]:
        text = (ROOT / document).read_text(encoding="utf-8")
        lines = re.findall(r'\.package\(url: "[^"]*vmhost[^"]*", from: "([^"]+)"\)', text)
        assert lines, f"{document} shows no dependency line on vmhost"
        assert set(lines) == {version()}, f"{document}: {lines}"
