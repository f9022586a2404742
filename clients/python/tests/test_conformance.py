"""Replays every conformance transcript (protocol/conformance/*.jsonl) through the client.

One test per transcript, and one more with no backend for each transcript that recorded its
backend exchanges (``offlineArgs``). The format and the matching rules are in
protocol/conformance/README.md; the replayer is the client's module ``vmhost.replay`` (the
reference; the Node client's is ``clients/js/replay.js``), which ``python3 -m vmhost.replay``
also runs from a command line. Both are checked against protocol/conformance/matching.json. A
failure names the transcript, its line, the JSON path and a diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from vmhost.replay import Mismatch, Secrets, Transcript, match, replay, substitute

ROOT = Path(__file__).resolve().parents[3]
TRANSCRIPTS = ROOT / "protocol" / "conformance"
CASES = json.loads((TRANSCRIPTS / "matching.json").read_text(encoding="utf-8"))
FILES = sorted(TRANSCRIPTS.glob("*.jsonl"))
OFFLINE = [path for path in FILES if "offlineArgs" in Transcript.load(path).steps[0][1]]


def secrets_of(path: Path) -> Secrets:
    """The secrets a transcript names, from ``<name>.secrets.json`` beside it (demo values)."""
    beside = path.with_suffix(".secrets.json")
    return Secrets.from_file(str(beside) if beside.exists() else None, environ={})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
    failure = replay(path, secrets=secrets_of(path))
    if failure is not None:
        pytest.fail(failure.report(), pytrace=False)


@pytest.mark.parametrize("path", OFFLINE, ids=lambda p: p.stem)
def test_transcript_with_no_backend(path: Path) -> None:
    failure = replay(path, offline=True, secrets=secrets_of(path))
    if failure is not None:
        pytest.fail(failure.report(), pytrace=False)


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
