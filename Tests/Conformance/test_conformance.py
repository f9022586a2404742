"""Replays every conformance transcript (protocol/conformance/*.jsonl) against the real binary.

One test per transcript. The format and the matching rules are in protocol/conformance/README.md;
this file is a reference replayer (standard library + pytest only).

The binary is $VMHOST_BIN, else <repo>/.build/debug/vmhost.
"""
from __future__ import annotations

import difflib
import json
import os
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "protocol" / "conformance"
READ_LIMIT = 5.0  # seconds: only turns a missing message into a failure; nothing waits on time
EXIT_LIMIT = 5.0


def binary() -> str:
    return os.environ.get("VMHOST_BIN") or str(ROOT / ".build" / "debug" / "vmhost")


class Mismatch(Exception):
    pass


def match(expected: Any, actual: Any, captures: dict[str, Any], path: str = "$") -> None:
    """Raises Mismatch naming the first difference; fills `captures`."""
    if isinstance(expected, str):
        if expected == "$any":
            return
        if expected.startswith("$capture:"):
            name = expected[len("$capture:"):]
            if name in captures and captures[name] != actual:
                raise Mismatch(f"{path}: ${name} was captured as {captures[name]!r}, got {actual!r}")
            captures[name] = actual
            return
        if expected.startswith("$ref:"):
            name = expected[len("$ref:"):]
            if name not in captures:
                raise Mismatch(f"{path}: ${name} was never captured")
            if captures[name] != actual:
                raise Mismatch(f"{path}: expected ${name} = {captures[name]!r}, got {actual!r}")
            return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise Mismatch(f"{path}: expected an object, got {json.dumps(actual, ensure_ascii=False)}")
        open_ended = expected.get("...") is True
        for key, value in expected.items():
            if key == "..." and open_ended:
                continue
            if key not in actual:
                raise Mismatch(f"{path}: missing member {key!r}")
            match(value, actual[key], captures, f"{path}.{key}")
        if not open_ended:
            extra = sorted(set(actual) - set(expected))
            if extra:
                raise Mismatch(f"{path}: unexpected member(s) {extra}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise Mismatch(f"{path}: expected an array, got {json.dumps(actual, ensure_ascii=False)}")
        if len(expected) != len(actual):
            raise Mismatch(f"{path}: expected {len(expected)} elements, got {len(actual)}")
        for index, (e, a) in enumerate(zip(expected, actual)):
            match(e, a, captures, f"{path}[{index}]")
        return
    # Scalars: JSON equality, where true is not 1 and 1 equals 1.0.
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = type(expected) is type(actual) and expected == actual
    elif isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        same = expected == actual
    else:
        same = type(expected) is type(actual) and expected == actual
    if not same:
        raise Mismatch(f"{path}: expected {json.dumps(expected, ensure_ascii=False)}, "
                       f"got {json.dumps(actual, ensure_ascii=False)}")


def substitute(value: Any, captures: dict[str, Any]) -> Any:
    """Replaces "$ref:name" strings in a message to send by the captured values."""
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


class Host:
    """The binary on a pipe: ndjson in, one parsed message per line out."""

    def __init__(self, args: list[str]):
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([binary(), *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # read as fast as possible: no pacing
            self.lines.put(line)
        self.lines.put(None)

    def send_raw(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode("utf-8"))
        self.process.stdin.flush()

    def close(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()

    def read(self, timeout: float = READ_LIMIT) -> Any:
        """The next message; raises queue.Empty on a hang and EOFError at the end of stdout."""
        line = self.lines.get(timeout=timeout)
        if line is None:
            self.lines.put(None)
            raise EOFError
        return json.loads(line)

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")[-2000:]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def load(path: Path) -> list[tuple[int, dict]]:
    steps = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip():
            steps.append((number, json.loads(text)))
    return steps


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def replay(path: Path) -> None:
    steps = load(path)
    number, first = steps[0]
    assert "args" in first, f"{path.name}:{number}: the first line must be {{\"args\": [...]}}"
    host = Host(first["args"])
    captures: dict[str, Any] = {}
    closed = False

    def fail(line: int, why: str, expected: Any = None, actual: Any = None) -> None:
        text = f"{path.name}:{line}: {why}"
        if expected is not None:
            text += f"\n  expected: {dumps(expected)}"
        if actual is not None:
            text += f"\n  actual:   {dumps(actual)}"
        if expected is not None and actual is not None:
            diff = difflib.unified_diff(
                json.dumps(expected, ensure_ascii=False, indent=1).splitlines(),
                json.dumps(actual, ensure_ascii=False, indent=1).splitlines(),
                "expected", "actual", lineterm="", n=2)
            text += "\n  diff:\n    " + "\n    ".join(diff)
        text += f"\n  stderr: {host.stderr_text()}"
        pytest.fail(text, pytrace=False)

    try:
        for number, step in steps[1:]:
            if "comment" in step:
                continue
            if "send" in step:
                try:
                    message = substitute(step["send"], captures)
                except Mismatch as error:
                    message, problem = None, str(error)
                if message is None:
                    fail(number, problem)
                host.send_raw(dumps(message) + "\n")
            elif "sendRaw" in step:
                host.send_raw(step["sendRaw"])
            elif "expect" in step:
                try:
                    actual = host.read()
                except queue.Empty:
                    fail(number, f"no message within {READ_LIMIT}s", step["expect"])
                except EOFError:
                    fail(number, "the host closed stdout", step["expect"])
                problem = None
                try:
                    match(step["expect"], actual, captures)
                except Mismatch as error:
                    problem = str(error)
                if problem:
                    fail(number, problem, step["expect"], actual)
            elif "close" in step:
                host.close()
                closed = True
            elif "exit" in step:
                try:
                    extra = host.read()
                    fail(number, "a message came instead of the end of output", None, extra)
                except EOFError:
                    pass
                except queue.Empty:
                    fail(number, "stdout did not end")
                try:
                    status = host.process.wait(timeout=EXIT_LIMIT)
                except subprocess.TimeoutExpired:
                    fail(number, f"the host did not exit within {EXIT_LIMIT}s")
                if status != step["exit"]:
                    fail(number, f"exit status {status}, expected {step['exit']}")
            else:
                fail(number, f"unknown step {dumps(step)}")
        if not closed:
            # End of transcript: no message may be left unexpected.
            host.close()
            try:
                extra = host.read()
                fail(steps[-1][0], "an unexpected message after the last line", None, extra)
            except (EOFError, queue.Empty):
                pass
    finally:
        host.kill()


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
    replay(path)


def test_there_are_transcripts() -> None:
    assert len(list(TRANSCRIPTS.glob("*.jsonl"))) >= 20
