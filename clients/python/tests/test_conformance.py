"""Replays every conformance transcript (protocol/conformance/*.jsonl) through the client.

One test per transcript, and one more with no backend for each transcript that recorded its
backend exchanges (``offlineArgs``). The format and the matching rules are in
protocol/conformance/README.md; the replayer is the client's module ``vmhost.replay`` (the
reference; the Node client's is ``clients/js/replay.js``), which ``python3 -m vmhost.replay``
also runs from a command line. Both are checked against protocol/conformance/matching.json. A
failure names the transcript, its line, the JSON path and a diff.

``replay`` and ``replay_steps`` below are what the other suites replay with (the examples of the
kind documents, the check of openrpc.json): they fail the test with the replayer's report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from vmhost import replay as replayer
from vmhost.replay import Mismatch, Observer, Secrets, Transcript, match, step_spans, step_text, substitute

ROOT = Path(__file__).resolve().parents[3]
TRANSCRIPTS = ROOT / "protocol" / "conformance"
CASES = json.loads((TRANSCRIPTS / "matching.json").read_text(encoding="utf-8"))
LAYOUT = json.loads((TRANSCRIPTS / "layout.json").read_text(encoding="utf-8"))["cases"]
FILES = sorted(TRANSCRIPTS.glob("*.jsonl"))
OFFLINE = [path for path in FILES if "offlineArgs" in Transcript.load(path).steps[0][1]]


def secrets_of(path: Path) -> Secrets:
    """The secrets a transcript names, from ``<name>.secrets.json`` beside it (demo values)."""
    beside = path.with_suffix(".secrets.json")
    return Secrets.from_file(str(beside) if beside.exists() else None, environ={})


def replay(path: Path, exact_texts: bool = False, observe: Optional[Observer] = None,
           offline: bool = False) -> None:
    """Replays the transcript at *path* with the secrets beside it; fails the test with the report."""
    failure = replayer.replay(path, offline=offline, secrets=secrets_of(path), exact_texts=exact_texts,
                              observe=observe)
    if failure is not None:
        pytest.fail(failure.report(), pytrace=False)


def replay_steps(name: str, steps: List[Tuple[int, Dict[str, Any]]], exact_texts: bool = False,
                 observe: Optional[Observer] = None) -> None:
    """Replays *steps* (line number, step), the first one `args`; *name* and the line numbers are
    what a failure reports."""
    failure = replayer.replay(Transcript.of_steps(name, steps), secrets=Secrets({}, environ={}),
                              exact_texts=exact_texts, observe=observe)
    if failure is not None:
        pytest.fail(failure.report(), pytrace=False)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
    replay(path)


@pytest.mark.parametrize("path", OFFLINE, ids=lambda p: p.stem)
def test_transcript_with_no_backend(path: Path) -> None:
    replay(path, offline=True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_texts_are_this_hosts(path: Path) -> None:
    """The error texts a transcript shows are this host's, word for word (conformance/README.md:
    every expectation was produced by the binary). Other hosts' texts may differ: the replay
    above does not compare them."""
    replay(path, exact_texts=True)


def test_there_are_transcripts() -> None:
    assert len(FILES) >= 20
    assert OFFLINE, "no transcript replays with no backend"


@pytest.mark.parametrize("case", CASES["match"], ids=lambda c: c["why"])
def test_matching_cases(case: Dict[str, Any]) -> None:
    captures = dict(case.get("captures", {}))
    secrets = Secrets(case.get("secrets", {}), environ={})
    if case["matches"]:
        match(case["pattern"], case["actual"], captures, "$", secrets)
        for name, value in case.get("capturesAfter", {}).items():
            assert captures[name] == value
    else:
        with pytest.raises(Mismatch):
            match(case["pattern"], case["actual"], captures, "$", secrets)


@pytest.mark.parametrize("case", CASES["send"], ids=lambda c: c["why"])
def test_send_cases(case: Dict[str, Any]) -> None:
    captures = dict(case.get("captures", {}))
    secrets = Secrets(case.get("secrets", {}), environ={})
    if "sent" in case:
        assert substitute(case["send"], captures, secrets) == case["sent"]
    else:
        with pytest.raises(Mismatch):
            substitute(case["send"], captures, secrets)


@pytest.mark.parametrize("case", LAYOUT, ids=lambda c: c["why"])
def test_layout_cases(case: Dict[str, Any]) -> None:
    """A step is written as every writer of a recording writes it (layout.json: the host's
    ``--record`` and the Node replayer are checked against the same cases), and reads back as
    one step."""
    text = step_text(case["step"])
    assert text == case["text"]
    lines = text.split("\n")
    assert step_spans(lines) == [(1, len(lines))]
    assert json.loads(text) == case["step"]


def test_match_rules() -> None:
    captures: Dict[str, Any] = {}
    match({"a": 1, "...": True}, {"a": 1.0, "b": 2}, captures)
    match(["$any", "$capture:x"], [None, {"k": [1]}], captures)
    match("$ref:x", {"k": [1]}, captures)
    match({"$literal": {"...": True, "a": "$any"}}, {"...": True, "a": "$any"}, captures)
    match({"error": {"code": 1, "message": "Unknown view-model \"a\""}},
          {"error": {"code": 1, "message": "no view-model a"}}, captures)  # texts are not matched
    for pattern, actual in [({"a": 1}, {"a": 1, "b": 2}), ({"a": True}, {"a": 1}),
                            ([1], [1, 2]), (None, 0), ("$ref:x", {"k": [2]}),
                            ("$ref:nope", 1), ("$capture:x", 3),
                            ({"$literal": "$any"}, 1), ({"$literal": {"...": True}}, {"a": 1}),
                            ({"error": {"code": 1, "message": "x"}}, {"error": {"code": 1, "message": 2}}),
                            ({"error": {"code": 1, "message": "x"}}, {"error": {"code": 2, "message": "x"}})]:
        with pytest.raises(Mismatch):
            match(pattern, actual, captures)


def test_exact_texts() -> None:
    """With exact texts an error's message must be the transcript's, word for word."""
    pattern = {"error": {"code": 1, "message": "no view-model a"}}
    match(pattern, {"error": {"code": 1, "message": "no view-model a"}}, {}, exact_texts=True)
    with pytest.raises(Mismatch):
        match(pattern, {"error": {"code": 1, "message": "Unknown view-model"}}, {}, exact_texts=True)
