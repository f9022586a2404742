"""Locating the vmhost executable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Optional, Union

__all__ = ["find_binary"]

_NAME = "vmhost"


def _repo_roots() -> List[Path]:
    """The repository holding this package (clients/python/vmhost → repo), then the cwd's."""
    roots: List[Path] = []
    here = Path(__file__).resolve()
    if len(here.parents) > 3:
        roots.append(here.parents[3])
    cwd = Path.cwd().resolve()
    for candidate in (cwd, *cwd.parents):
        if (candidate / "Package.swift").is_file():
            roots.append(candidate)
            break
    return roots


def find_binary(binary: Union[str, "os.PathLike[str]", None] = None) -> str:
    """Return the path of the vmhost executable.

    Looked up in order: *binary*, ``$VMHOST_BIN``, ``<repo>/.build/release/vmhost``,
    ``<repo>/.build/debug/vmhost``, then ``PATH``. Raises :class:`FileNotFoundError`.
    """
    if binary is not None:
        return os.fspath(binary)
    env = os.environ.get("VMHOST_BIN")
    if env:
        return env
    tried: List[str] = []
    for root in _repo_roots():
        for config in ("release", "debug"):
            path = root / ".build" / config / _NAME
            tried.append(str(path))
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    found: Optional[str] = shutil.which(_NAME)
    if found:
        return found
    raise FileNotFoundError(
        "vmhost binary not found: pass binary=, set $VMHOST_BIN, build it "
        f"(swift build -c release) or put it on PATH (tried: {', '.join(tried) or 'no repository'})"
    )
