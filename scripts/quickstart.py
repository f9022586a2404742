#!/usr/bin/env python3
"""Builds the Guide's quick start as written and runs its pipe: docs/Guide.md, section 1.

Every ```swift block of that section whose first or second line is `// hello/PATH` is written to
PATH in a new directory outside this package, next to a link `vmhost` to this checkout (the Guide's
`.package(path: "../vmhost")`). The section's ```sh block is run there, and the last lines it prints
(after the build's) must be the block after it. Usage: scripts/quickstart.py [--keep DIR] (DIR: where to build; by default a
temporary directory, removed after). Exits 0 when the output is the Guide's, else 1 saying why.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "Guide.md"
BUILD_LIMIT = 1800  # seconds: a guard for a cold build on a loaded machine, not a measure


def quick_start(text: str) -> str:
    match = re.search(r"^## 1\. Quick start\n(.*?)(?=^## )", text, re.S | re.M)
    if not match:
        raise SystemExit("quickstart: docs/Guide.md has no section '## 1. Quick start'")
    return match.group(1)


def files(section: str) -> dict[str, str]:
    """The files of the section's swift blocks, by their path under hello/."""
    found: dict[str, str] = {}
    for block in re.findall(r"```swift\n(.*?)```", section, re.S):
        for line in block.splitlines()[:2]:
            named = re.fullmatch(r"// hello/(\S+)", line.strip())
            if named:
                found[named.group(1)] = block
    if "Package.swift" not in found:
        raise SystemExit("quickstart: no `// hello/Package.swift` block in the quick start")
    return found


def pipe(section: str) -> tuple[str, str]:
    """The section's sh block and the output block right after it."""
    match = re.search(r"```sh\n(.*?)```\s*```\n(.*?)```", section, re.S)
    if not match:
        raise SystemExit("quickstart: no ```sh block followed by its output in the quick start")
    return match.group(1), match.group(2)


def run(directory: Path) -> int:
    section = quick_start(GUIDE.read_text(encoding="utf-8"))
    package = directory / "hello"
    for path, content in files(section).items():
        target = package / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    link = directory / "vmhost"
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    script, expected = pipe(section)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=package, capture_output=True,
                          text=True, timeout=BUILD_LIMIT)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        print(f"quickstart: the Guide's commands failed (status {done.returncode}) in {package}")
        return 1
    # The build prints its progress first: the app's output is the last lines.
    wanted = expected.strip().splitlines()
    printed = done.stdout.strip().splitlines()[-len(wanted):]
    if printed != wanted:
        shown = "\n".join(printed)
        print(f"quickstart: the Guide says\n{expected.strip()}\nthe app printed (last lines)\n{shown}")
        return 1
    print(f"quickstart: ok ({package})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build in DIR and keep it")
    arguments = parser.parse_args()
    if arguments.keep:
        arguments.keep.mkdir(parents=True, exist_ok=True)
        return run(arguments.keep.resolve())
    with tempfile.TemporaryDirectory(prefix="vmhost-quickstart-") as directory:
        return run(Path(directory))


if __name__ == "__main__":
    sys.exit(main())
