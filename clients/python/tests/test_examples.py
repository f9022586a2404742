"""Replays every example exchange of the kind documents (protocol/viewmodels/*.md) against the binary.

An example is a fenced block marked `jsonl` in the conformance format (protocol/conformance/README.md):
an `args` line, then `send` and `expect` lines (and `comment`, `close`, `exit`). Each block starts a
host of its own and is replayed by the reference replayer of test_conformance.py, with error texts
compared word for word: the documents show this host's texts. A failure names the document and the
line in it. So no example can go stale: changing what the host writes fails here until the
document shows it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from test_conformance import ROOT, replay_steps

DOCUMENTS = sorted((ROOT / "protocol" / "viewmodels").glob("*.md"))
FENCE = re.compile(r"^```(\S*)\s*$")


def fenced_blocks(path: Path) -> Iterator[Tuple[str, int, List[Tuple[int, str]]]]:
    """Every fenced block of a Markdown file: (its language, the line of its opening fence, its lines
    with their numbers)."""
    language = None
    start = 0
    lines: List[Tuple[int, str]] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = FENCE.match(text)
        if language is None:
            if fence:
                language, start, lines = fence.group(1), number, []
        elif text.strip() == "```":
            yield language, start, lines
            language = None
        else:
            lines.append((number, text))
    assert language is None, f"{path.name}:{start}: a fenced block is not closed"


def examples() -> List[Tuple[str, List[Tuple[int, Dict[str, Any]]]]]:
    found = []
    for path in DOCUMENTS:
        for language, start, lines in fenced_blocks(path):
            if language != "jsonl":
                continue
            steps = [(number, json.loads(text)) for number, text in lines if text.strip()]
            found.append((f"{path.relative_to(ROOT)}:{start}", steps))
    return found


@pytest.mark.parametrize("name, steps", examples(), ids=lambda value: value if isinstance(value, str) else "")
def test_example(name: str, steps: List[Tuple[int, Dict[str, Any]]]) -> None:
    replay_steps(name, steps, exact_texts=True)


def test_every_kind_document_has_a_checked_example() -> None:
    documents = {name.split(":")[0] for name, _ in examples()}
    assert documents == {str(path.relative_to(ROOT)) for path in DOCUMENTS}


def test_no_exchange_is_shown_outside_a_checked_block() -> None:
    """An exchange written another way (`→`/`←` or `>`/`<` lines) would not be replayed."""
    for path in DOCUMENTS:
        for language, start, lines in fenced_blocks(path):
            if language == "jsonl":
                continue
            for number, text in lines:
                assert not re.match(r"^\s*(→|←|>|<) *[{\[]", text), \
                    f"{path.name}:{number}: an exchange outside a jsonl block"
