"""The embedding suite: the C ABI of include/vmhost.h used as an app shell would, and as a hostile
one would. The library is ``$VMHOST_LIBRARY`` or this checkout's build of ``libvmhost-embedded``
(``swift build --product vmhost-embedded``); C programs are compiled with ``cc`` against the
header."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))

from vmhost._embedded import Library, find_library  # noqa: E402

HEADER_DIR = ROOT / "Sources" / "CVMHost" / "include"


@pytest.fixture(scope="session")
def library() -> Library:
    return Library.load()


@pytest.fixture(scope="session")
def library_path() -> Path:
    return Path(find_library())


@pytest.fixture(scope="session")
def compile_c(library_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """Compiles a C file against the header and the library; returns the executable's path."""
    out = tmp_path_factory.mktemp("c")

    def build(source: Path, *libraries: str) -> Path:
        exe = out / source.stem
        command = ["cc", "-Wall", "-Wextra", "-Werror", "-O1", "-o", str(exe), str(source), f"-I{HEADER_DIR}",
                   f"-L{library_path.parent}", "-lvmhost-embedded", f"-Wl,-rpath,{library_path.parent}",
                   *libraries, "-lpthread"]
        subprocess.run(command, check=True, cwd=ROOT)
        return exe

    return build
