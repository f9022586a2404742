"""Locating the vmhost executable."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import List, Optional, Union

__all__ = ["find_binary"]

_NAME = "vmhost"
log = logging.getLogger("vmhost")


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


def build_in(root: Path, name: str = _NAME, executable: bool = True) -> Optional[Path]:
    """The *name* (vmhost, or a library when not *executable*) built in the checkout *root*: the
    newer (by modification time) of ``.build/release/NAME`` and ``.build/debug/NAME``, so that an
    old build of the one never hides a fresh build of the other; ``None`` when neither is there."""
    built = []
    for config in ("release", "debug"):
        path = root / ".build" / config / name
        try:
            if path.is_file() and (not executable or os.access(path, os.X_OK)):
                # On equal times, release (ranked first) wins.
                built.append((path.stat().st_mtime, config == "release", path))
        except OSError:
            continue
    return max(built)[2] if built else None


def find_binary(binary: Union[str, "os.PathLike[str]", None] = None) -> str:
    """Return the path of the vmhost executable.

    Looked up in order: *binary*, ``$VMHOST_BIN`` (which always wins over a build), the build of
    this package's checkout, then of the checkout around the working directory (the newer of
    ``.build/release/vmhost`` and ``.build/debug/vmhost``: :func:`build_in`), then ``PATH``. The
    choice is logged at debug level on the ``vmhost`` logger. Raises :class:`FileNotFoundError`.
    """
    if binary is not None:
        return os.fspath(binary)
    env = os.environ.get("VMHOST_BIN")
    if env:
        return env
    tried: List[str] = []
    for root in _repo_roots():
        found_build = build_in(root)
        if found_build is not None:
            log.debug("vmhost binary: %s (the newer of %s/.build/release and debug)", found_build, root)
            return str(found_build)
        tried += [str(root / ".build" / config / _NAME) for config in ("release", "debug")]
    found: Optional[str] = shutil.which(_NAME)
    if found:
        log.debug("vmhost binary: %s (on PATH)", found)
        return found
    raise FileNotFoundError(
        "vmhost binary not found: pass binary=, set $VMHOST_BIN, build it "
        f"(swift build) or put it on PATH (tried: {', '.join(tried) or 'no repository'})"
    )
