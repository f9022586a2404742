"""Fixtures: a vmhost on a manual clock with test controls, found as Host.spawn finds it."""

from __future__ import annotations

import subprocess
from typing import Iterator

import pytest

import vmhost

OPTIONS = ("--clock", "manual", "--test-controls")


def advance(host: vmhost.Host, ms: int) -> int:
    """Move the host's manual clock; everything due fires before the reply."""
    return int(host.request("control.clock.advance", {"ms": ms})["now"])


@pytest.fixture
def host() -> Iterator[vmhost.Host]:
    with vmhost.Host.spawn(*OPTIONS, stderr=subprocess.DEVNULL) as running:
        yield running
    assert running.returncode == 0
