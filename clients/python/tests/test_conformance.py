"""Replays every conformance transcript (protocol/conformance/*.jsonl) through the client.

One test per transcript. The format and the matching rules are in protocol/conformance/README.md;
this is the reference replayer (the Node client has its own). The process, the binary
lookup (``vmhost.find_binary``: ``$VMHOST_BIN``, ``<repo>/.build/…``, ``PATH``) and the reading of
stdout are the client's own: ``Host.spawn(raw=True)``, ``Host.send_raw``, ``Host.next_message``,
``Host.close_input`` and ``Host.wait``. A failure names the transcript, its line and a diff.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, NoReturn, Optional, Tuple

import pytest

import vmhost

ROOT = Path(__file__).resolve().parents[3]
TRANSCRIPTS = ROOT / "protocol" / "conformance"
READ_LIMIT = 5.0  # seconds: only turns a missing message into a failure; nothing waits on time
EXIT_LIMIT = 5.0
_NOTHING = object()


class Mismatch(Exception):
    pass


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def match(expected: Any, actual: Any, captures: Dict[str, Any], path: str = "$",
          exact_texts: bool = False) -> None:
    """Raise Mismatch naming the first difference; fill *captures*. With *exact_texts*, an error's
    `message` must be the transcript's text exactly (this host's own texts, see test_texts_are_this_hosts)."""
    if isinstance(expected, str):
        if expected == "$any":
            return
        if expected.startswith("$capture:"):
            name = expected[len("$capture:"):]
            if name in captures and not same_json(captures[name], actual):
                raise Mismatch(f"{path}: ${name} was captured as {dumps(captures[name])}, "
                               f"got {dumps(actual)}")
            captures[name] = actual
            return
        if expected.startswith("$ref:"):
            name = expected[len("$ref:"):]
            if name not in captures:
                raise Mismatch(f"{path}: ${name} was never captured (malformed transcript)")
            if not same_json(captures[name], actual):
                raise Mismatch(f"{path}: expected ${name} = {dumps(captures[name])}, "
                               f"got {dumps(actual)}")
            return
    if isinstance(expected, dict) and set(expected) == {"$literal"}:
        # Plain JSON equality, no pattern inside: a literal "$any", a member named "...".
        if not same_json(expected["$literal"], actual):
            raise Mismatch(f"{path}: expected {dumps(expected['$literal'])}, got {dumps(actual)}")
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise Mismatch(f"{path}: expected an object, got {dumps(actual)}")
        open_ended = expected.get("...") is True
        for key, value in expected.items():
            if key == "..." and open_ended:
                continue
            if key not in actual:
                raise Mismatch(f"{path}: missing member {key!r}")
            if key == "message" and path.endswith(".error") and is_plain_text(value) and not exact_texts:
                # An error's text is for people: SPEC gives it as an example; code and data decide.
                if not isinstance(actual[key], str) or not actual[key]:
                    raise Mismatch(f"{path}.message: expected a text, got {dumps(actual[key])}")
                continue
            match(value, actual[key], captures, f"{path}.{key}", exact_texts)
        if not open_ended:
            extra = sorted(set(actual) - set(expected))
            if extra:
                raise Mismatch(f"{path}: unexpected member(s) {extra}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise Mismatch(f"{path}: expected an array, got {dumps(actual)}")
        if len(expected) != len(actual):
            raise Mismatch(f"{path}: expected {len(expected)} elements, got {len(actual)}")
        for index, (e, a) in enumerate(zip(expected, actual)):
            match(e, a, captures, f"{path}[{index}]", exact_texts)
        return
    if not same_json(expected, actual):
        raise Mismatch(f"{path}: expected {dumps(expected)}, got {dumps(actual)}")


def is_plain_text(pattern: Any) -> bool:
    return isinstance(pattern, str) and pattern != "$any" and not pattern.startswith(("$capture:", "$ref:"))


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 equals 1.0, objects and arrays compare deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def substitute(value: Any, captures: Dict[str, Any]) -> Any:
    """Replace every "$ref:NAME" string in a message to send by the captured value."""
    if isinstance(value, str) and value.startswith("$ref:"):
        name = value[len("$ref:"):]
        if name not in captures:
            raise Mismatch(f"send uses ${name}, which was never captured")
        return captures[name]
    if isinstance(value, dict):
        return {k: substitute(v, captures) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, captures) for v in value]
    return value


def resolved(pattern: Any, captures: Dict[str, Any]) -> Any:
    """The pattern with captured "$ref:"/"$capture:" names shown by value, for the diff."""
    if isinstance(pattern, str):
        for prefix in ("$ref:", "$capture:"):
            if pattern.startswith(prefix) and pattern[len(prefix):] in captures:
                return captures[pattern[len(prefix):]]
        return pattern
    if isinstance(pattern, dict):
        return {k: resolved(v, captures) for k, v in pattern.items()}
    if isinstance(pattern, list):
        return [resolved(v, captures) for v in pattern]
    return pattern


def load(path: Path) -> List[Tuple[int, Dict[str, Any]]]:
    steps = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip():
            steps.append((number, json.loads(text)))
    return steps


Observer = Callable[[str, Any], None]


def replay(path: Path, exact_texts: bool = False, observe: Optional[Observer] = None,
           open_host: Optional[Callable[..., vmhost.Host]] = None) -> None:
    replay_steps(path.name, load(path), exact_texts, observe, open_host)


def replay_steps(name: str, steps: List[Tuple[int, Dict[str, Any]]], exact_texts: bool = False,
                 observe: Optional[Observer] = None,
                 open_host: Optional[Callable[..., vmhost.Host]] = None) -> None:
    """Runs one scenario: *steps* are (line number, step) pairs, the first one `args`; *name* and
    the line numbers are what a failure reports. *observe*, if given, is called with ("in",
    message) for every message sent and ("out", message) for every message the host wrote.
    *open_host* starts the host (``Host.spawn`` by default; ``Host.embedded`` replays through the
    C ABI)."""
    number, first = steps[0]
    assert "args" in first, f"{name}:{number}: the first line must be {{\"args\": [...]}}"
    stderr = tempfile.TemporaryFile()
    host = (open_host or vmhost.Host.spawn)(*first["args"], stderr=stderr, raw=True)
    captures: Dict[str, Any] = {}
    closed = False
    exited = False

    def stderr_text() -> str:
        stderr.seek(0)
        return stderr.read().decode("utf-8", "replace")[-2000:]

    def fail(line: int, why: str, expected: Any = _NOTHING, actual: Any = _NOTHING) -> NoReturn:
        text = f"{name}:{line}: {why}"
        if expected is not _NOTHING:
            text += f"\n  expected: {dumps(expected)}"
        if actual is not _NOTHING:
            text += f"\n  actual:   {dumps(actual)}"
        if expected is not _NOTHING and actual is not _NOTHING:
            diff = difflib.unified_diff(
                json.dumps(expected, ensure_ascii=False, indent=1).splitlines(),
                json.dumps(actual, ensure_ascii=False, indent=1).splitlines(),
                "expected", "actual", lineterm="", n=2)
            text += "\n  diff:\n    " + "\n    ".join(diff)
        text += f"\n  stderr: {stderr_text()}"
        pytest.fail(text, pytrace=False)

    def next_message(line: int, expected: Any = _NOTHING) -> Any:
        try:
            message = host.next_message(READ_LIMIT)
            if observe is not None:
                observe("out", message)
            return message
        except TimeoutError:
            fail(line, f"no message within {READ_LIMIT}s", expected)
        except EOFError:
            fail(line, "the host closed stdout", expected)

    def expect_end(line: int, why: str) -> None:
        try:
            extra = host.next_message(READ_LIMIT)
        except EOFError:
            return
        except TimeoutError:
            fail(line, f"stdout did not end within {READ_LIMIT}s")
        fail(line, why, actual=extra)

    try:
        for number, step in steps[1:]:
            if "comment" in step:
                continue
            if "send" in step:
                message: Optional[Any] = None
                problem = None
                try:
                    message = substitute(step["send"], captures)
                except Mismatch as error:
                    problem = str(error)
                if problem is not None:
                    fail(number, problem)
                if observe is not None:
                    observe("in", message)
                host.send_raw(dumps(message) + "\n")
            elif "sendRaw" in step:
                host.send_raw(step["sendRaw"])
            elif "expect" in step:
                actual = next_message(number, step["expect"])
                problem = None
                try:
                    match(step["expect"], actual, captures, exact_texts=exact_texts)
                except Mismatch as error:
                    problem = str(error)
                if problem is not None:  # outside the except: no chained traceback in the report
                    fail(number, problem, resolved(step["expect"], captures), actual)
            elif "close" in step:
                host.close_input()
                closed = True
            elif "exit" in step:
                expect_end(number, "a message came instead of the end of output")
                try:
                    status = host.wait(EXIT_LIMIT)
                except subprocess.TimeoutExpired:
                    fail(number, f"the host did not exit within {EXIT_LIMIT}s")
                if status != step["exit"]:
                    fail(number, f"exit status {status}, expected {step['exit']}")
                exited = True
            else:
                fail(number, f"unknown step {dumps(step)}")
        if not closed:
            # End of transcript: close stdin; no message may be left unexpected.
            host.close_input()
        if not exited:
            expect_end(steps[-1][0], "an unexpected message after the last line")
            try:
                status = host.wait(EXIT_LIMIT)
            except subprocess.TimeoutExpired:
                fail(steps[-1][0], f"the host did not exit within {EXIT_LIMIT}s after EOF")
            if status != 0:
                fail(steps[-1][0], f"exit status {status} after EOF, expected 0 (SPEC §7)")
    finally:
        host.kill()
        stderr.close()


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
    replay(path)


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_texts_are_this_hosts(path: Path) -> None:
    """The error texts a transcript shows are this host's, word for word (conformance/README.md:
    every expectation was produced by the binary). Other hosts' texts may differ: the replay
    above does not compare them."""
    replay(path, exact_texts=True)


def test_there_are_transcripts() -> None:
    assert len(list(TRANSCRIPTS.glob("*.jsonl"))) >= 20


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
