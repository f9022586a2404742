"""Replays conformance transcripts and recordings against a vmhost binary.

::

    python3 -m vmhost.replay [--bin PATH] [--offline] [--secrets FILE] [--update] [--trust-args] FILE...

Each FILE is a transcript in the format of ``protocol/conformance/README.md``: the hand-written
conformance transcripts, and the recordings ``vmhost --record FILE`` makes. The host is started
with the transcript's ``args`` (``--offline``: its ``offlineArgs``, which serve the recorded
backend exchanges instead of a backend), every ``send`` is written and every ``expect`` matched
against what the host writes. Each file is reported as ``PASS`` or ``FAIL`` with the first
mismatch: the line, the JSON path, what was expected and what came. The exit status is 0 when
every file passed, 1 when one failed, 2 for a usage error or a file that cannot be read.

A transcript may come from anyone (a CI replays recordings it did not make), so its options are
checked before a host is started (:func:`checked_arguments`): only options that cannot write a
file, open a directory or reach an address are passed, and ``--backend`` only as ``embedded`` or
``recorded:`` a file beside the transcript. Anything else is refused (:class:`Refused`, exit status
2) unless ``--trust-args`` says the caller vouches for the file. Secrets are only ever sent to a
host started so.

Secrets (``"$secret:NAME"`` / ``"$secret:NAME:N"`` placeholders) are taken from a JSON file given
with ``--secrets`` (``{"NAME": "value"}``), else from the environment variable
``VMHOST_SECRET_<NAME>`` (upper case).

``--update`` replays each file and rewrites its expectations from what the host writes now (after
an intended change), keeping every step that still matches, and prints the diff. A step may be laid
out over several lines (:func:`step_spans` reads it, :func:`step_text` writes it), so that the diff
of a long expectation is the lines of the values that changed.

The matching rules (:func:`match`) and the send substitution (:func:`substitute`) are the ones
every replayer shares; ``protocol/conformance/matching.json`` holds cases both the Python and the
Node client check them against.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, List, Mapping, NoReturn, Optional, Sequence, Tuple

from ._binary import find_binary
from .errors import HostExited
from .host import Host

__all__ = [
    "Mismatch", "Secrets", "Failure", "Transcript", "match", "substitute", "resolved", "same_json",
    "replay", "update", "main", "READ_LIMIT", "Refused", "checked_arguments", "ALLOWED_FLAGS", "ALLOWED_OPTIONS",
    "step_text", "step_spans", "read_steps", "WIDTH",
]

READ_LIMIT = 10.0  # seconds: only turns a missing message into a failure; nothing waits on time
EXIT_LIMIT = 5.0
SECRET = "$secret:"
_SYNC = "vmhost-replay-sync-"
_NOTHING = object()


class Mismatch(Exception):
    """What differs (or what is wrong with the transcript), naming the JSON path."""


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- the layout of a step --------------------------------------------------------------------------

WIDTH = 160  # characters (code points): a step longer than this is laid out over several lines
_INDENT = "  "


def step_text(step: Dict[str, Any]) -> str:
    """The text of *step* as a recording writes it (protocol/conformance/README.md, "Layout"):
    one line when it fits in :data:`WIDTH` characters; else, for a ``send`` or an ``expect`` of an
    object or array, its first line ``{"expect":{`` (the members before the last one written
    there too) and then one member or element per line, indented, each on one line when it fits
    in :data:`WIDTH` (its indentation not counted) and laid out the same way when not, the
    closing brackets on lines of their own. So a changed value changes the lines that hold it, not
    the whole step. The host (``--record``) and the Node replayer write the same text
    (``protocol/conformance/layout.json``), so an update of an unchanged recording changes nothing."""
    text = dumps(step)
    if len(text) <= WIDTH or not step:
        return text
    *head, (key, value) = step.items()
    if key not in ("send", "expect") or not isinstance(value, (dict, list)) or not value:
        return text
    return "{" + "".join(f"{dumps(name)}:{dumps(item)}," for name, item in head) + f"{dumps(key)}:" \
        + _block(value, 0) + "}"


def _block(value: Any, depth: int) -> str:
    """A non-empty object or array that does not fit on its line: the opening bracket where it
    stands, then one member or element per line at *depth* + 1, the closing bracket at *depth*."""
    pad = _INDENT * (depth + 1)
    rows = []
    entries = value.items() if isinstance(value, dict) else ((None, item) for item in value)
    for name, item in entries:
        lead = "" if name is None else dumps(name) + ":"
        compact = dumps(item)
        if len(lead) + len(compact) <= WIDTH or not isinstance(item, (dict, list)) or not item:
            rows.append(pad + lead + compact)
        else:
            rows.append(pad + lead + _block(item, depth + 1))
    brackets = "{}" if isinstance(value, dict) else "[]"
    return brackets[0] + "\n" + ",\n".join(rows) + "\n" + _INDENT * depth + brackets[1]


def step_spans(lines: Sequence[str]) -> List[Tuple[int, int]]:
    """Where the steps of a transcript's *lines* stand: ``(first, last)`` line numbers (from 1).
    A step starts at a line whose first character is ``{``; the lines after it up to the next
    such line are its own (a step laid out by :func:`step_text`), blank lines at its end left out.
    A non-blank line before the first step is a step of its own (and no JSON, which the reader
    reports)."""
    spans: List[Tuple[int, int]] = []
    first = last = 0
    for number, line in enumerate(lines, start=1):
        if line.startswith("{") or (not spans and not first and line.strip()):
            if first:
                spans.append((first, last))
            first = last = number
        elif first and line.strip():
            last = number
    if first:
        spans.append((first, last))
    return spans


# -- secrets -------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"^\$secret:([A-Za-z0-9_]+)(?::([0-9]+))?$")


class Secrets:
    """The values of the secrets a transcript names: from a mapping (a ``--secrets`` file), else
    from ``VMHOST_SECRET_<NAME>`` in *environ*."""

    def __init__(self, values: Optional[Mapping[str, str]] = None,
                 environ: Optional[Mapping[str, str]] = None) -> None:
        self.values = dict(values or {})
        self.environ = os.environ if environ is None else environ

    @classmethod
    def from_file(cls, path: Optional[str], environ: Optional[Mapping[str, str]] = None) -> "Secrets":
        if path is None:
            return cls(environ=environ)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ValueError(f"{path}: expected a JSON object of strings {{\"NAME\": \"value\"}}")
        return cls(data, environ)

    def get(self, name: str) -> Optional[str]:
        if name in self.values:
            return self.values[name]
        return self.environ.get("VMHOST_SECRET_" + name.upper())

    @staticmethod
    def parse(text: str) -> Optional[Tuple[str, Optional[int]]]:
        """``("password", 6)`` for ``"$secret:password:6"``; None for anything else."""
        found = _PLACEHOLDER.match(text)
        if not found:
            return None
        return found.group(1), int(found.group(2)) if found.group(2) is not None else None

    def value_of(self, placeholder: str, required: bool) -> Optional[str]:
        """The text *placeholder* stands for; None when the secret is not given and not
        *required*. Raises :class:`Mismatch` when it is malformed, or required and missing."""
        parsed = Secrets.parse(placeholder)
        if parsed is None:
            raise Mismatch(f"malformed secret placeholder {placeholder!r} (expected $secret:NAME or $secret:NAME:N)")
        name, length = parsed
        value = self.get(name)
        if value is None:
            if required:
                raise Mismatch(f"the transcript needs the secret {name!r}: set VMHOST_SECRET_{name.upper()} "
                               f"or give it in a --secrets file")
            return None
        if length is None:
            return value
        if len(value) < length:
            raise Mismatch(f"the secret {name!r} has {len(value)} characters; the transcript uses its first {length}")
        return value[:length]


_NO_SECRETS = Secrets({}, {})


# -- matching ------------------------------------------------------------------------------------

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


def is_plain_text(pattern: Any) -> bool:
    return isinstance(pattern, str) and pattern != "$any" and \
        not pattern.startswith(("$capture:", "$ref:", SECRET))


def is_literal(pattern: Any) -> bool:
    return isinstance(pattern, dict) and len(pattern) == 1 and "$literal" in pattern


def match(expected: Any, actual: Any, captures: Dict[str, Any], path: str = "$",
          secrets: Secrets = _NO_SECRETS, exact_texts: bool = False) -> None:
    """Raise :class:`Mismatch` naming the first difference; fill *captures*. With *exact_texts*,
    an error's ``message`` must be the transcript's text exactly (a check that a transcript shows
    this host's own texts; other hosts' texts may differ)."""
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
        if expected.startswith(SECRET):
            try:
                value = secrets.value_of(expected, required=False)
            except Mismatch as error:
                raise Mismatch(f"{path}: {error}") from None
            parsed = Secrets.parse(expected)
            length = parsed[1] if parsed else None
            if not isinstance(actual, str):
                raise Mismatch(f"{path}: expected the secret {expected}, got {dumps(actual)}")
            if value is None:
                if length is not None and len(actual) != length:
                    raise Mismatch(f"{path}: expected the secret {expected} ({length} characters), "
                                   f"got a text of {len(actual)}")
                return
            if actual != value:
                raise Mismatch(f"{path}: expected the secret {expected}, got another text")
            return
    if is_literal(expected):
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
            match(value, actual[key], captures, f"{path}.{key}", secrets, exact_texts)
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
            match(e, a, captures, f"{path}[{index}]", secrets, exact_texts)
        return
    if not same_json(expected, actual):
        raise Mismatch(f"{path}: expected {dumps(expected)}, got {dumps(actual)}")


def substitute(value: Any, captures: Dict[str, Any], secrets: Secrets = _NO_SECRETS) -> Any:
    """A message to send: every ``"$ref:NAME"`` replaced by the captured value, every
    ``"$secret:…"`` by the secret's text, ``{"$literal": v}`` by *v* as it is."""
    if isinstance(value, str):
        if value.startswith("$ref:"):
            name = value[len("$ref:"):]
            if name not in captures:
                raise Mismatch(f"send uses ${name}, which was never captured")
            return captures[name]
        if value.startswith(SECRET):
            return secrets.value_of(value, required=True)
        return value
    if is_literal(value):
        return value["$literal"]
    if isinstance(value, dict):
        return {k: substitute(v, captures, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, captures, secrets) for v in value]
    return value


def resolved(pattern: Any, captures: Dict[str, Any], secrets: Secrets = _NO_SECRETS) -> Any:
    """The pattern with captured names shown by value and given secrets masked, for a report."""
    if isinstance(pattern, str):
        for prefix in ("$ref:", "$capture:"):
            if pattern.startswith(prefix) and pattern[len(prefix):] in captures:
                return captures[pattern[len(prefix):]]
        return pattern
    if is_literal(pattern):
        return pattern["$literal"]
    if isinstance(pattern, dict):
        return {k: resolved(v, captures, secrets) for k, v in pattern.items()}
    if isinstance(pattern, list):
        return [resolved(v, captures, secrets) for v in pattern]
    return pattern


def masked(value: Any, secrets: Secrets, names: Iterable[str]) -> Any:
    """*value* with the given secrets' texts shown as ``"$secret:NAME"``, for a report."""
    texts = [(name, secrets.get(name)) for name in names]
    texts = [(name, text) for name, text in texts if text]

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            for name, text in texts:
                if text and text in item:
                    item = item.replace(text, f"$secret:{name}")
            return item
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v) for v in item]
        return item

    return walk(value)


def is_exchange(step: Dict[str, Any]) -> bool:
    """Whether *step* is an exchange the app made with its server (``backend``, the reference app's;
    ``http``, any app's HTTP client): no step of the client's; a replay with ``--offline`` serves
    them again, and a replay that records anew replaces them."""
    return "backend" in step or "http" in step


# -- the options a transcript may start a host with ----------------------------------------------

#: Flags a replayer passes by default (protocol/conformance/README.md, "Replaying a file you did not
#: write"): none writes a file, opens a directory or reaches an address.
ALLOWED_FLAGS = frozenset({"test-controls"})
#: Options with a value a replayer passes by default; ``--backend`` only as ``embedded`` or
#: ``recorded:FILE`` with FILE beside the transcript (:func:`checked_arguments`).
ALLOWED_OPTIONS = frozenset({"clock", "framing", "log-level", "max-message-bytes", "backend", "demo-products",
                             "timeout-ms", "max-response-bytes", "http-replay", "http-replay-ignore"})


class Refused(ValueError):
    """A transcript asks for options a replayer does not pass by default; the message says which
    and why. ``--trust-args`` (``trust_args=True``) passes them."""


def _without_backend(arguments: List[Any]) -> List[Any]:
    """*arguments* without ``--backend VALUE`` / ``--backend=VALUE``."""
    kept: List[Any] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "--backend":
            if index < len(arguments) and not (isinstance(arguments[index], str) and arguments[index].startswith("--")):
                index += 1
        elif not (isinstance(argument, str) and argument.startswith("--backend=")):
            kept.append(argument)
    return kept


def checked_arguments(arguments: Sequence[Any], transcript: "os.PathLike[str] | str",
                      backend_url: Optional[str] = None) -> List[str]:
    """*arguments* (a transcript's ``args`` or ``offlineArgs``, ``$transcript`` substituted) if a
    replayer may start a host with them, with a recorded backend's file given by its real path;
    else raises :class:`Refused`.

    The options are read as the host reads them (``--name value``, ``--name=value``; a value is
    the next argument unless that starts with ``--``), so that what is checked is what the host
    sees. Allowed: :data:`ALLOWED_FLAGS`, :data:`ALLOWED_OPTIONS`; ``--backend`` is ``embedded`` or
    ``recorded:FILE``, FILE a regular file in the transcript's folder (a relative FILE is taken
    from that folder; no ``..``, no link leading out of it), or *backend_url*, the address the
    caller gave (``--backend-url``)."""
    folder = Path(os.path.realpath(Path(transcript).parent))
    checked: List[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if not isinstance(argument, str):
            raise Refused(f"the option {dumps(argument)} is not a string")
        if not argument.startswith("--") or len(argument) <= 2:
            raise Refused(f"{argument!r} is no option a replay passes (expected --NAME)")
        name, equals, inline = argument[2:].partition("=")
        if name in ALLOWED_FLAGS:
            if equals:
                raise Refused(f"--{name} takes no value")
            checked.append("--" + name)
            continue
        if name not in ALLOWED_OPTIONS:
            raise Refused(f"--{name} is not among the options a replay passes by default "
                          f"({', '.join('--' + o for o in sorted(ALLOWED_FLAGS | ALLOWED_OPTIONS))}); "
                          f"replay with --trust-args if you trust this transcript")
        if equals:
            value = inline
        elif index < len(arguments) and isinstance(arguments[index], str) \
                and not (arguments[index].startswith("--") and len(arguments[index]) > 2):
            value = arguments[index]
            index += 1
        else:
            raise Refused(f"--{name} has no value")
        if name == "backend" and not (backend_url is not None and value == backend_url):
            value = _allowed_backend(value, folder)
        if name == "http-replay":
            value = _beside(f"--http-replay {value!r}", value, folder)
        checked += ["--" + name, value]
    return checked


def _allowed_backend(value: str, folder: Path) -> str:
    if value == "embedded":
        return value
    if not value.startswith("recorded:"):
        raise Refused(f"--backend {value!r}: a replay uses only the embedded backend or recorded:FILE beside the "
                      f"transcript (an address would receive what the replay sends, secrets included); "
                      f"replay with --trust-args if you trust this transcript")
    return "recorded:" + _beside(f"--backend {value!r}", value[len("recorded:"):], folder)


def _beside(option: str, given: str, folder: Path) -> str:
    """The real path of *given*, a recording (a recorded backend, ``--http-replay``'s file) that
    must be a regular file in the transcript's *folder*; else :class:`Refused` naming *option*."""
    if not given or ".." in Path(given).parts:
        raise Refused(f"{option}: the recording must be a file beside the transcript")
    real = Path(os.path.realpath(folder / given))
    if real.parent != folder:
        raise Refused(f"{option}: the recording must be a file beside the transcript "
                      f"(this one is {real}, outside {folder})")
    try:
        regular = stat.S_ISREG(os.stat(real).st_mode)
    except OSError as error:
        raise Refused(f"{option}: {error.strerror}") from None
    if not regular:
        raise Refused(f"{option}: not a regular file")
    return str(real)


# -- transcripts ---------------------------------------------------------------------------------

SYSTEM_CLOCK_COMMENT = "Recorded on the system clock"
MAX_FOLDED = 64  # notifications of one subscription merged at most, either side


def is_changed(message: Any) -> bool:
    """Whether *message* (or a pattern of one) is a ``vm.changed`` notification."""
    return isinstance(message, dict) and message.get("method") == "vm.changed" and "id" not in message \
        and isinstance(message.get("params"), dict)


def fold_changes(expected: Sequence[Any], actual: Sequence[Any], before: Mapping[str, Any],
                 captures: Dict[str, Any], secrets: Secrets = _NO_SECRETS) -> None:
    """Raise :class:`Mismatch` unless the ``vm.changed`` patterns *expected* and the notifications
    *actual*, all of one subscription, end in the same state from *before* (the values the
    subscription showed until then).

    The allowance of a recording made on the system clock (protocol/conformance/README.md,
    Recordings): where time decided, one turn's changes may have been written in two notifications
    or two turns' in one. Merged in order (a later value replaces an earlier one, list edits follow
    each other), with every member left at the value it had before dropped, both sides must match
    as one notification would."""
    def merged(messages: Sequence[Any]) -> Dict[str, Any]:
        values: Dict[str, Any] = {}
        splices: Dict[str, List[Any]] = {}
        for message in messages:
            params = message["params"]
            for name, value in (params.get("values") or {}).items():
                values[name] = value
                splices.pop(name, None)  # a whole value replaces the edits before it
            for name, edits in (params.get("splices") or {}).items():
                splices.setdefault(name, []).extend(edits)
        values = {name: value for name, value in values.items()
                  if not (name in before and name not in splices and same_json(before[name], value))}
        return {"values": values, **({"splices": splices} if splices else {})}

    match(merged(expected), merged(actual), captures, "$.params (merged)", secrets)


MAX_DEPTH = 256  # levels of nesting in one line of a transcript (a step's object counting as one)
MAX_LINE = 64 * 1024 * 1024  # characters in one step of a transcript (all its lines)


def _depth(value: Any) -> int:
    """How deeply *value* nests (a scalar: 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        stack.extend((child, level + 1) for child in item)
    return deepest


def _check_step(step: Any, where: str) -> None:
    """Raises ValueError naming *where* unless *step* is a step a replayer can run (the File
    format of protocol/conformance/README.md), not nested deeper than :data:`MAX_DEPTH`."""
    if not isinstance(step, dict):
        raise ValueError(f"{where}: a step is a JSON object, got {dumps(step)[:200]}")
    if _depth(step) > MAX_DEPTH:
        raise ValueError(f"{where}: nested deeper than {MAX_DEPTH} levels")
    if "sendRaw" in step and not isinstance(step["sendRaw"], str):
        raise ValueError(f"{where}: sendRaw: expected a string")
    if "exit" in step and (not isinstance(step["exit"], int) or isinstance(step["exit"], bool)):
        raise ValueError(f"{where}: exit: expected an integer status")
    if "comment" in step and not isinstance(step["comment"], str):
        raise ValueError(f"{where}: comment: expected a string")
    if "user" in step and (not isinstance(step["user"], str) or "send" not in step):
        raise ValueError(f"{where}: user: the marker of a user's send, expected a string beside a send")


@dataclass
class Transcript:
    """A transcript file: its lines as text, its steps parsed (line number, step)."""
    path: Path
    lines: List[str]
    steps: List[Tuple[int, Dict[str, Any]]]
    #: The last line of each step, by its first (a step laid out over several lines, :func:`step_text`).
    ends: Dict[int, int] = field(default_factory=dict)

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "Transcript":
        path = Path(path)
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ValueError(f"{path}: not a regular file")
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        steps: List[Tuple[int, Dict[str, Any]]] = []
        spans = step_spans(lines)
        for number, last in spans:
            line = "\n".join(lines[number - 1:last])
            if len(line) > MAX_LINE:
                raise ValueError(f"{path}:{number}: a step of {len(line)} characters (a replay reads at most {MAX_LINE})")
            try:
                step = json.loads(line)
            except RecursionError:
                raise ValueError(f"{path}:{number}: nested deeper than {MAX_DEPTH} levels") from None
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number + error.lineno - 1}: not JSON: {error}") from None
            except ValueError as error:
                raise ValueError(f"{path}:{number}: not JSON: {error}") from None
            _check_step(step, f"{path}:{number}")
            steps.append((number, step))
        if not steps or not isinstance(steps[0][1].get("args"), list):
            raise ValueError(f"{path}:1: the first line must be {{\"args\": [...]}}")
        return cls(path, lines, steps, dict(spans))

    @classmethod
    def of_steps(cls, name: str, steps: List[Tuple[int, Dict[str, Any]]]) -> "Transcript":
        """A transcript that is no file of its own (an example in a document): *name* is what a
        failure reports, with the line numbers of *steps*."""
        for line, step in steps:
            _check_step(step, f"{name}:{line}")
        if not steps or not isinstance(steps[0][1].get("args"), list):
            line = steps[0][0] if steps else 1
            raise ValueError(f"{name}:{line}: the first line must be {{\"args\": [...]}}")
        return cls(Path(name), [], steps)

    @property
    def recorded_on_system_clock(self) -> bool:
        """Whether this is a recording made on the system clock (its comment says so): replayed
        with one allowance, :func:`fold_changes`."""
        return any(str(step.get("comment", "")).startswith(SYSTEM_CLOCK_COMMENT) for _, step in self.steps)

    def arguments(self, offline: bool, trust: bool = False, backend_url: Optional[str] = None) -> List[str]:
        """The options to start the host with: ``args``, or with *offline* ``offlineArgs``
        (``$transcript``: this file's path). Unless *trust*, only options a replayer passes by
        default (:func:`checked_arguments`; else :class:`Refused`, naming the file).
        *backend_url* (online only): the backend the caller points the replay at, in place of
        the transcript's ``--backend``."""
        first = self.steps[0][1]
        if not offline:
            given = list(first["args"])
            if backend_url is not None:
                given = _without_backend(given) + ["--backend", backend_url]
        elif not isinstance(first.get("offlineArgs"), list):
            raise ValueError(f"{self.path}:1: no offlineArgs: the transcript has no recorded backend "
                             f"exchanges to replay without a backend")
        else:
            here = str(self.path.resolve())
            given = [a.replace("$transcript", here) if isinstance(a, str) else a for a in first["offlineArgs"]]
        if trust:
            return [str(a) for a in given]
        try:
            return checked_arguments(given, self.path, None if offline else backend_url)
        except Refused as refused:
            raise Refused(f"{self.path}:{self.steps[0][0]}: not replayed: {refused}") from None

    def secret_names(self) -> List[str]:
        names: List[str] = []

        def walk(item: Any) -> None:
            if isinstance(item, str):
                parsed = Secrets.parse(item)
                if parsed and parsed[0] not in names:
                    names.append(parsed[0])
            elif isinstance(item, dict):
                for value in item.values():
                    walk(value)
            elif isinstance(item, list):
                for value in item:
                    walk(value)

        for _, step in self.steps:
            walk(step.get("send"))
            walk(step.get("expect"))
        return names


def read_steps(path: "os.PathLike[str] | str") -> List[Dict[str, Any]]:
    """The steps of the transcript or recording at *path*, in order: each on one line or laid out
    over several (:func:`step_spans`), checked as a replay checks them. What a test reads a
    recording with."""
    return [step for _, step in Transcript.load(path).steps]


SHOWN = 300  # characters of a message a failure shows (--full: all)


@dataclass
class Failure:
    """The first thing that went wrong in a replay."""
    path: Path
    line: int
    why: str
    expected: Any = _NOTHING
    actual: Any = _NOTHING
    stderr: str = ""

    #: The step the failure followed: the last line that sent something before it, as
    #: ``line N: {"send": …}`` (shortened), or "".
    step: str = ""
    #: A suggestion for the reader (``--offline`` for a recording whose backend is not there).
    hint: str = ""

    def report(self, full: bool = False) -> str:
        """The failure for a reader: the line, what differs at which JSON path, the step it
        followed, what was expected and what came (each cut to :data:`SHOWN` characters unless
        *full*), their diff and the end of the host's stderr."""
        def shown(value: Any) -> str:
            text = dumps(value)
            if full or len(text) <= SHOWN:
                return text
            return f"{text[:SHOWN]}… ({len(text)} characters; --full shows them all)"

        text = f"FAIL {self.path}:{self.line}: {self.why}"
        if self.step:
            text += f"\n  after:    {self.step}"
        if self.expected is not _NOTHING:
            text += f"\n  expected: {shown(self.expected)}"
        if self.actual is not _NOTHING:
            text += f"\n  got:      {shown(self.actual)}"
        if self.expected is not _NOTHING and self.actual is not _NOTHING:
            diff = difflib.unified_diff(
                json.dumps(self.expected, ensure_ascii=False, indent=1).splitlines(),
                json.dumps(self.actual, ensure_ascii=False, indent=1).splitlines(),
                "expected", "got", lineterm="", n=2)
            text += "\n  diff:\n    " + "\n    ".join(diff)
        if self.stderr.strip():
            text += "\n  host stderr:\n    " + "\n    ".join(self.stderr.strip().splitlines()[-20:])
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class _Stop(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.why)
        self.failure = failure


Observer = Callable[[str, Any], None]


class _Run:
    """One host process replaying one transcript."""

    def __init__(self, transcript: Transcript, binary: Optional[str], offline: bool, secrets: Secrets,
                 read_limit: float, extra_args: Sequence[str] = (), exact_texts: bool = False,
                 observe: Optional[Observer] = None, library: Optional[str] = None, trust: bool = False,
                 backend_url: Optional[str] = None) -> None:
        # First: a transcript's options are checked before anything starts (Refused).
        arguments = [*transcript.arguments(offline, trust, backend_url), *extra_args]
        self.transcript = transcript
        self.exact_texts = exact_texts
        self.observe = observe
        self.secrets = secrets
        self.names = transcript.secret_names()
        self.read_limit = read_limit
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        if library is not None:
            # In this process, through the C ABI (protocol/embedding.md); a refused option is a
            # failure of the first line, as a process's exit 64 would be.
            try:
                self.host = Host.embedded(*arguments, library=library or None, stderr=self.stderr, raw=True)
            except HostExited as error:
                raise _Stop(Failure(transcript.path, transcript.steps[0][0], str(error))) from error
        else:
            self.host = Host.spawn(*arguments, binary=find_binary(binary), stderr=self.stderr, raw=True)
        self.captures: Dict[str, Any] = {}
        self.closed = False
        self.exited = False
        # What each subscription shows: its values as subscribed, with every vm.changed applied.
        self.shown: Dict[str, Dict[str, Any]] = {}

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")[-4000:]

    def fail(self, line: int, why: str, expected: Any = _NOTHING, actual: Any = _NOTHING) -> NoReturn:
        if expected is not _NOTHING:
            expected = masked(expected, self.secrets, self.names)
        if actual is not _NOTHING:
            actual = masked(actual, self.secrets, self.names)
        raise _Stop(Failure(self.transcript.path, line, masked(why, self.secrets, self.names),
                            expected, actual, masked(self.stderr_text(), self.secrets, self.names),
                            self.step_before(line)))

    def step_before(self, line: int) -> str:
        """``line N: {"send": …}``: the last line at or before *line* that sent something, as the
        transcript has it (placeholders, not secrets), shortened."""
        sent = [(number, step) for number, step in self.transcript.steps
                if number <= line and ("send" in step or "sendRaw" in step or "close" in step)]
        if not sent:
            return ""
        number, step = sent[-1]
        text = dumps(step)
        return f"line {number}: {text if len(text) <= 200 else text[:200] + '…'}"

    def send(self, line: int, message: Any) -> None:
        try:
            sent = substitute(message, self.captures, self.secrets)
        except Mismatch as error:
            self.fail(line, str(error))
        if self.observe is not None:
            self.observe("in", sent)
        self.write(line, dumps(sent) + "\n")

    def write(self, line: int, text: str) -> None:
        try:
            self.host.send_raw(text)
        except OSError as error:
            self.fail(line, f"the host's input is closed ({error})")

    def close(self) -> None:
        self.host.close_input()
        self.closed = True

    def next(self, line: int, expected: Any = _NOTHING) -> Any:
        try:
            message = self.host.next_message(self.read_limit)
        except TimeoutError:
            self.fail(line, f"no message within {self.read_limit}s", expected)
        except EOFError:
            self.fail(line, "the host closed its output", expected)
        if self.observe is not None:
            self.observe("out", message)
        return message

    def expect(self, line: int, pattern: Any) -> Any:
        actual = self.next(line, pattern)
        problem = None
        try:
            match(pattern, actual, self.captures, "$", self.secrets, self.exact_texts)
        except Mismatch as error:
            problem = str(error)
        if problem is not None:  # outside the except: no chained traceback in the report
            self.fail(line, problem, resolved(pattern, self.captures, self.secrets), actual)
        self.track(actual)
        return actual

    def track(self, message: Any) -> None:
        """Keeps what each subscription shows, from a message the replay accepted."""
        if not isinstance(message, dict):
            return
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("subscription"), str) \
                and isinstance(result.get("values"), dict):
            self.shown[result["subscription"]] = dict(result["values"])
        elif is_changed(message) and isinstance(message["params"].get("subscription"), str):
            values = message["params"].get("values") or {}
            self.shown.setdefault(message["params"]["subscription"], {}).update(values)

    def expect_changes(self, steps: List[Tuple[int, Dict[str, Any]]], index: int) -> int:
        """The ``vm.changed`` expected at ``steps[index]``, on a recording made on the system clock:
        matched as :meth:`expect` does, else folded with the notifications of the same subscription
        that follow it on either side (:func:`fold_changes`). Returns the index of the last step
        taken."""
        line, step = steps[index]
        pattern = step["expect"]
        actual = self.next(line, pattern)
        problem = None
        try:
            match(pattern, actual, dict(self.captures), "$", self.secrets, self.exact_texts)
        except Mismatch as error:
            problem = str(error)
        if problem is None:
            match(pattern, actual, self.captures, "$", self.secrets, self.exact_texts)
            self.track(actual)
            return index
        expected_at = resolved(pattern, self.captures, self.secrets)
        subscription = actual["params"].get("subscription") if is_changed(actual) else None
        if subscription is None or expected_at.get("params", {}).get("subscription") != subscription:
            self.fail(line, problem, expected_at, actual)
        before = self.shown.get(subscription, {})
        patterns, messages, last = [pattern], [actual], index
        while len(patterns) + len(messages) <= 2 * MAX_FOLDED:
            captures = dict(self.captures)
            try:
                fold_changes(patterns, messages, before, captures, self.secrets)
            except Mismatch:
                pass
            else:
                self.captures = captures
                for message in messages:
                    self.track(message)
                return last
            # The recording's next changes of this subscription first (comments and backend lines
            # are no steps), then the host's.
            following = last + 1
            while following < len(steps) and ("comment" in steps[following][1] or is_exchange(steps[following][1])):
                following += 1
            if following < len(steps) and is_changed(steps[following][1].get("expect")) and \
                    resolved(steps[following][1]["expect"], self.captures, self.secrets)["params"].get("subscription") \
                    == subscription:
                patterns.append(steps[following][1]["expect"])
                last = following
                continue
            more = self.next(line, pattern)
            if not (is_changed(more) and more["params"].get("subscription") == subscription):
                break
            messages.append(more)
        self.fail(line, problem + " (recorded on the system clock: nor do the changes of this subscription that "
                  "follow, merged, end in the same state)", expected_at, actual)

    def end_of_output(self, line: int, why: str) -> None:
        try:
            extra = self.host.next_message(self.read_limit)
        except EOFError:
            return
        except TimeoutError:
            self.fail(line, f"the host's output did not end within {self.read_limit}s")
        self.fail(line, why, actual=extra)

    def wait(self, line: int, status: int, after: str) -> None:
        try:
            got = self.host.wait(EXIT_LIMIT)
        except subprocess.TimeoutExpired:
            self.fail(line, f"the host did not exit within {EXIT_LIMIT}s{after}")
        if got != status:
            self.fail(line, f"exit status {got}{after}, expected {status}")

    def stop(self) -> None:
        self.host.kill()
        self.stderr.close()


def replay(path: "os.PathLike[str] | str | Transcript", binary: Optional[str] = None, offline: bool = False,
           secrets: Optional[Secrets] = None, read_limit: float = READ_LIMIT, exact_texts: bool = False,
           observe: Optional[Observer] = None, library: Optional[str] = None,
           trust_args: bool = False, backend_url: Optional[str] = None) -> Optional[Failure]:
    """Replays the transcript at *path* (or a :class:`Transcript`); returns its first failure, or
    None when it passed. *exact_texts*: see :func:`match`. *observe*, if given, is called with
    ``("in", message)`` for every message sent and ``("out", message)`` for every message read.
    *library*: replay in this process through the C ABI, with ``Host.embedded`` on that library
    (``""``: the one ``Host.embedded`` finds) instead of a process of *binary*. The transcript's
    options are checked first (:func:`checked_arguments`): one a replayer does not pass by default
    raises :class:`Refused` and starts nothing, unless *trust_args*. *backend_url*: replayed
    online against this backend, in place of the transcript's ``--backend``. A failure of a
    recording replayed online that has its backend's answers suggests ``--offline``."""
    transcript = path if isinstance(path, Transcript) else Transcript.load(path)
    try:
        run = _Run(transcript, binary, offline, secrets or Secrets(), read_limit,
                   exact_texts=exact_texts, observe=observe, library=library, trust=trust_args,
                   backend_url=backend_url)
    except _Stop as stop:
        return stop.failure
    steps = transcript.steps
    folding = transcript.recorded_on_system_clock
    try:
        index = 0
        while index + 1 < len(steps):
            index += 1
            number, step = steps[index]
            if "comment" in step or is_exchange(step):
                continue
            if "send" in step:
                run.send(number, step["send"])
            elif "sendRaw" in step:
                run.write(number, step["sendRaw"])
            elif "expect" in step and folding and is_changed(step["expect"]):
                index = run.expect_changes(steps, index)
            elif "expect" in step:
                run.expect(number, step["expect"])
            elif "close" in step:
                run.close()
            elif "exit" in step:
                run.end_of_output(number, "a message came instead of the end of output")
                run.wait(number, step["exit"], "")
                run.exited = True
            else:
                run.fail(number, f"unknown step {dumps(step)}")
        last = steps[-1][0]
        if not run.closed:
            run.close()  # end of transcript: close stdin; no message may be left unexpected
        if not run.exited:
            run.end_of_output(last, "an unexpected message after the last line")
            run.wait(last, 0, " after the end of input (SPEC §7 expects 0)")
        return None
    except _Stop as stop:
        if not offline and "offlineArgs" in steps[0][1]:
            stop.failure.hint = ("this recording holds its backend's answers: if its backend is not there (or not "
                                 "as it was), replay it with --offline" +
                                 ("" if backend_url else ", or point it at another with --backend-url URL"))
        return stop.failure
    finally:
        run.stop()


# -- updating ------------------------------------------------------------------------------------

def _generalized(actual: Any, captures: Dict[str, Any], secret_texts: List[Tuple[str, str]]) -> Any:
    """An expectation written from *actual* by the rules of a recording: subscription handles as
    captures and references, ``serverInfo.version`` and a ``vm.create`` result's lists as
    ``"$any"``, known secrets as placeholders, pattern-like texts as literals."""
    handles = {value: name for name, value in captures.items() if isinstance(value, str)}

    def text(value: str) -> Any:
        for placeholder, secret in secret_texts:
            if value == secret:
                return placeholder
        if value == "$any" or value.startswith(("$capture:", "$ref:", SECRET)):
            return {"$literal": value}
        return value

    def plain(value: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            out = {k: plain(v) for k, v in value.items()}
            if value.get("...") is True or is_literal(value):
                return {"$literal": value}
            return out
        return value

    def result(value: Any) -> Any:
        if not isinstance(value, dict):
            return plain(value)
        out = {k: plain(v) for k, v in value.items()}
        if set(value) == {"subscription", "values"} and isinstance(value["subscription"], str):
            handle = value["subscription"]
            name = handles.get(handle)
            if name is None:
                ok = re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", handle) and handle not in captures
                name = handle if ok else f"subscription{len(captures) + 1}"
                handles[handle] = name
            out["subscription"] = "$capture:" + name
        info = value.get("serverInfo")
        if isinstance(info, dict) and "version" in info:
            out["serverInfo"] = {**plain(info), "version": "$any"}
        if {"vm", "kind", "inputs", "outputs"} <= set(value):
            out["inputs"] = out["outputs"] = "$any"
        return out

    def message(value: Any) -> Any:
        if isinstance(value, list):
            return [message(v) for v in value]
        if not isinstance(value, dict):
            return plain(value)
        out = {}
        for key, item in value.items():
            if key == "result" and "id" in value:
                out[key] = result(item)
            elif key == "params" and value.get("method") in ("vm.changed", "vm.event") and isinstance(item, dict):
                params = {k: plain(v) for k, v in item.items()}
                handle = item.get("subscription")
                if isinstance(handle, str) and handle in handles:
                    params["subscription"] = "$ref:" + handles[handle]
                out[key] = params
            else:
                out[key] = plain(item)
        return out

    return message(actual)


def _secret_texts(transcript: Transcript, secrets: Secrets) -> List[Tuple[str, str]]:
    """Every placeholder the transcript uses whose secret is given, with its text (3 or more
    characters), longest first."""
    found: Dict[str, str] = {}
    for line in transcript.lines:
        for placeholder in re.findall(r"\$secret:[A-Za-z0-9_]+(?::[0-9]+)?", line):
            try:
                value = secrets.value_of(placeholder, required=False)
            except Mismatch:
                continue
            if value is not None and len(value) >= 3:
                found[placeholder] = value
    return sorted(found.items(), key=lambda item: -len(item[1]))


@dataclass
class Updated:
    """The outcome of :func:`update`: the new text, and the failure that stopped it, if any."""
    path: Path
    old: str
    new: str
    failure: Optional[Failure] = None

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.old.splitlines(keepends=True), self.new.splitlines(keepends=True),
            f"{self.path} (before)", f"{self.path} (updated)", n=2))


@dataclass
class _Item:
    text: str
    step: Optional[Dict[str, Any]] = None
    kind: str = "other"  # "expect", "send", "backend", "other"; "part": a later line of a step, in its item


def update(path: "os.PathLike[str] | str", binary: Optional[str] = None, offline: bool = False,
           secrets: Optional[Secrets] = None, read_limit: float = READ_LIMIT, trust_args: bool = False,
           backend_url: Optional[str] = None) -> Updated:
    """Replays *path* and returns its text with the expectations the host meets now.

    Every send is written as in :func:`replay`, once the replies the recorded client had before
    it came (a reply that does not come fails the update: the session cannot be kept); then a
    ``ping`` whose reply marks the end of what the earlier sends caused (SPEC §4: the host writes
    everything a message caused before it reads the next one) collects the messages written; sends
    with no expectation between them are collected together. On the system clock a send also waits
    for as many messages as the recording had before it (a timer's ticks). Each is matched
    against the expectation in its place: a line that still matches is kept as it is, any other is
    written from the message (:func:`_generalized`); expectations left over are dropped. Replayed
    online, a recording's backend exchanges are recorded anew (``--record``) and replace the old
    ones.
    """
    secrets = secrets or Secrets()
    transcript = Transcript.load(path)
    transcript.arguments(offline, trust_args, backend_url)  # Refused before anything is made
    old = transcript.path.read_text(encoding="utf-8")
    has_backend = "offlineArgs" in transcript.steps[0][1] or any(is_exchange(step) for _, step in transcript.steps)
    record: Optional[Path] = None
    extra: List[str] = []
    if has_backend and not offline:
        handle, name = tempfile.mkstemp(suffix=".jsonl")
        os.close(handle)
        record = Path(name)
        extra = ["--record", str(record)]
    try:
        run = _Run(transcript, binary, offline, secrets, read_limit, extra, trust=trust_args, backend_url=backend_url)
    except BaseException:
        if record is not None:
            record.unlink(missing_ok=True)
        raise
    texts = _secret_texts(transcript, secrets)
    by_line = {number: step for number, step in transcript.steps}
    items: List[_Item] = []
    inside = 0  # the last line of the step being read: its other lines are in its item
    for number, text in enumerate(transcript.lines, start=1):
        if number <= inside:
            items.append(_Item("", None, "part"))
            continue
        step = by_line.get(number)
        kind = "other"
        if step is not None:
            kind = "expect" if "expect" in step else "backend" if is_exchange(step) else \
                "send" if "send" in step or "sendRaw" in step else "other"
            inside = transcript.ends.get(number, number)
            text = "\n".join(transcript.lines[number - 1:inside])
        items.append(_Item(text, step, kind))
    # What the recorded client had seen before each line: the replies it had (by id, counted, for
    # ids used twice) and how many messages. A send is written once the same replies came.
    replied_before: Dict[int, Dict[str, int]] = {}
    expected_before: Dict[int, int] = {}
    replied: Dict[str, int] = {}
    expected = 0
    for number, item in enumerate(items, start=1):
        replied_before[number] = dict(replied)
        expected_before[number] = expected
        if item.kind == "expect" and item.step is not None:
            expected += 1
            for key in _reply_ids(item.step["expect"]):
                replied[key] = replied.get(key, 0) + 1
    replied_before[len(items) + 1] = dict(replied)
    expected_before[len(items) + 1] = expected
    timed = transcript.recorded_on_system_clock
    seen_replies: Dict[str, int] = {}
    seen_count = 0
    out: List[_Item] = []
    pending: List[_Item] = []
    sync_count = 0
    paused = False
    raw_open = False  # a sendRaw left a frame unfinished: no ping may follow it
    failure: Optional[Failure] = None

    def settle(messages: List[Any]) -> None:
        """Rewrites the pending lines' expectations from *messages*, in order: the n-th message
        takes the place of the n-th expectation; messages beyond them follow the last one."""
        nonlocal pending
        rebuilt: List[_Item] = []
        queue = list(messages)
        after_last = 0
        for item in pending:
            if item.kind != "expect":
                rebuilt.append(item)
                continue
            if not queue:
                continue  # expected no more: dropped
            actual = queue.pop(0)
            kept = dict(run.captures)
            try:
                assert item.step is not None
                match(item.step["expect"], actual, kept, "$", secrets)
                run.captures = kept
                rebuilt.append(item)
            except Mismatch:
                rebuilt.append(fresh(actual))
            after_last = len(rebuilt)
        if queue:
            at = after_last if after_last else len(rebuilt)
            rebuilt[at:at] = [fresh(more) for more in queue]
        out.extend(rebuilt)
        pending = []

    def fresh(actual: Any) -> _Item:
        pattern = _generalized(actual, run.captures, texts)
        match(pattern, actual, run.captures, "$", secrets)
        return _Item(step_text({"expect": pattern}), {"expect": pattern}, "expect")

    def note(message: Any) -> Any:
        nonlocal seen_count
        seen_count += 1
        for key in _reply_ids(message):
            seen_replies[key] = seen_replies.get(key, 0) + 1
        return message

    def collect(line: int, until_end: bool, before: Optional[int] = None) -> List[Any]:
        """The messages the host writes now: to the end of its output, or, before the step at
        line *before*, until the replies the recorded client had then came (a send waits for
        them, as it did), then everything those messages caused (a ``ping``'s reply follows it,
        SPEC §4); on the system clock, also until as many messages came as the recording had
        there (a timer's ticks), for at most the read limit."""
        messages: List[Any] = []
        nonlocal sync_count
        if until_end:
            while True:
                try:
                    messages.append(note(run.host.next_message(read_limit)))
                except EOFError:
                    return messages
                except TimeoutError:
                    run.fail(line, f"the host's output did not end within {read_limit}s")
        at = line if before is None else before
        for key, count in replied_before.get(at, {}).items():
            while seen_replies.get(key, 0) < count:
                try:
                    messages.append(note(run.host.next_message(read_limit)))
                except (TimeoutError, EOFError) as error:
                    ended = "the host closed its output" if isinstance(error, EOFError) else f"none came within {read_limit}s"
                    run.fail(at, f"cannot keep the session: the recording had the reply to the request with id {key} "
                                 f"before this line, and {ended}; not updated (a request the host no longer answers "
                                 f"there needs the transcript edited by hand)")
        sync_count += 1
        marker = f"{_SYNC}{sync_count}"
        run.write(line, dumps({"jsonrpc": "2.0", "id": marker, "method": "ping"}) + "\n")
        while True:
            message = run.next(line)
            if isinstance(message, dict) and message.get("id") == marker and "method" not in message:
                break
            messages.append(note(message))
        if timed:
            while seen_count < expected_before.get(at, 0):
                try:
                    messages.append(note(run.host.next_message(read_limit)))
                except (TimeoutError, EOFError):
                    break  # fewer now than then: what came is what the host writes
        return messages

    def sync(line: int) -> None:
        if run.exited:
            return
        if run.closed:
            settle(collect(line, until_end=True))
        elif not paused and not raw_open and any(item.kind == "expect" for item in pending):
            # Sends written one after the other with no expectation between them (a client that
            # wrote ahead) stay together: what they caused is collected after the last of them.
            settle(collect(line, until_end=False, before=line))

    try:
        for number, item in enumerate(items, start=1):
            step = item.step
            if item.kind == "part":
                continue
            if step is None or "args" in step and number == transcript.steps[0][0] \
                    or item.kind in ("backend",) or "comment" in step:
                pending.append(item)
                continue
            if "expect" in step:
                pending.append(item)
                continue
            sync(number)
            pending.append(item)
            if "send" in step:
                run.send(number, step["send"])
                methods = [m.get("method") for m in (step["send"] if isinstance(step["send"], list) else [step["send"]])
                           if isinstance(m, dict)]
                if "control.output.pause" in methods:
                    paused = True
                if "control.output.resume" in methods:
                    paused = False
                if "exit" in methods:
                    settle(collect(number, until_end=True))
                    run.exited = True
            elif "sendRaw" in step:
                run.write(number, step["sendRaw"])
                raw_open = not str(step["sendRaw"]).endswith("\n")
            elif "close" in step:
                run.close()
            elif "exit" in step:
                run.wait(number, step["exit"], "")
                run.exited = True
            else:
                run.fail(number, f"unknown step {dumps(step)}")
        last = len(items)
        if not run.exited:
            if not run.closed:
                if not run.exited and not paused and not raw_open and any(item.kind == "expect" for item in pending):
                    settle(collect(last, until_end=False, before=last + 1))
                run.close()
                after = collect(last, until_end=True)
                if after:
                    pending.append(_Item(dumps({"close": True}), {"close": True}, "other"))
                    settle(after)
            else:
                settle(collect(last, until_end=True))
            status = run.host.wait(EXIT_LIMIT)
            if status != 0:
                run.fail(last, f"exit status {status} after the end of input (SPEC §7 expects 0)")
        out.extend(pending)
        pending = []
    except _Stop as stop:
        failure = stop.failure
        out.extend(pending)
    finally:
        run.stop()
    if record is not None:
        try:
            if failure is None:
                out = _with_backend_lines(out, record)
        finally:
            record.unlink(missing_ok=True)
    new = "".join(item.text + "\n" for item in out)
    return Updated(transcript.path, old, new, failure)


def _reply_ids(message: Any) -> List[str]:
    """The ids a response (or a batch's array of them, or a pattern of either) answers, as JSON
    text; the replayer's own pings left out."""
    found: List[str] = []
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and "id" in item and "method" not in item and ("result" in item or "error" in item):
            if not str(item["id"]).startswith(_SYNC):
                found.append(dumps(item["id"]))
    return found


def _with_backend_lines(items: List["_Item"], recording: Path) -> List["_Item"]:
    """*items* with the backend lines of *recording* (made by the host while the update ran) in
    place of the old ones, each after the send it followed there (sync pings not counted)."""
    after_send: Dict[int, List[str]] = {}
    sends = 0
    lines = recording.read_text(encoding="utf-8").splitlines()
    for first, last in step_spans(lines):
        line = "\n".join(lines[first - 1:last])
        try:
            step = json.loads(line)
        except ValueError:
            continue
        if not isinstance(step, dict):
            continue
        if "send" in step or "sendRaw" in step:
            message = step.get("send")
            if isinstance(message, dict) and str(message.get("id", "")).startswith(_SYNC):
                continue
            sends += 1
        elif is_exchange(step):
            after_send.setdefault(sends, []).append(line)
    result: List[_Item] = []
    sends = 0
    for item in items:
        if item.kind == "backend":
            continue
        if sends == 0 and item.kind == "send":
            for line in after_send.pop(0, []):
                result.append(_Item(line, None, "backend"))
        result.append(item)
        if item.kind == "send":
            sends += 1
            for line in after_send.pop(sends, []):
                result.append(_Item(line, None, "backend"))
    for key in sorted(after_send):
        for line in after_send[key]:
            result.append(_Item(line, None, "backend"))
    return result


# -- the command line ----------------------------------------------------------------------------

def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m vmhost.replay",
        description="Replays vmhost transcripts (protocol/conformance/README.md) and recordings "
                    "(vmhost --record FILE) against the binary; reports each file as PASS or FAIL "
                    "with its first mismatch.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="a transcript (.jsonl)")
    parser.add_argument("--bin", dest="binary", metavar="PATH",
                        help="the vmhost binary (default: $VMHOST_BIN, the checkout's build, PATH)")
    parser.add_argument("--offline", action="store_true",
                        help="start the host with the transcript's offlineArgs: the recorded backend "
                             "exchanges answer instead of a backend")
    parser.add_argument("--library", metavar="PATH",
                        help="replay in this process through the C ABI (protocol/embedding.md), on this "
                             "library of it (e.g. .build/debug/libvmhost-embedded.so), instead of the binary")
    parser.add_argument("--secrets", metavar="FILE",
                        help="a JSON object {\"NAME\": \"value\"} of the secrets the transcripts name "
                             "(default: VMHOST_SECRET_<NAME> from the environment)")
    parser.add_argument("--update", action="store_true",
                        help="rewrite the expectations from what the host writes now and show the diff")
    parser.add_argument("--backend-url", metavar="URL",
                        help="replay online against this backend (http:// or https://) in place of the one the "
                             "transcript names (a recording made against a server elsewhere)")
    parser.add_argument("--full", action="store_true",
                        help="show the whole expected and received messages of a failure (default: their first "
                             f"{SHOWN} characters, and the diff)")
    parser.add_argument("--trust-args", action="store_true",
                        help="start the host with whatever options the transcripts name (--trace, --record, "
                             "--state-dir, a backend URL, ...); by default only options that cannot write a file, "
                             "open a directory or reach an address are passed, and a transcript asking for "
                             "others is refused (exit status 2)")
    parser.add_argument("--read-limit", type=float, default=READ_LIMIT, metavar="SECONDS",
                        help=f"how long a missing message is waited for before it fails (default {READ_LIMIT})")
    options = parser.parse_args(argv)
    if options.backend_url is not None and not options.backend_url.startswith(("http://", "https://")):
        parser.error(f"--backend-url: expected an http:// or https:// URL, got {options.backend_url!r}")
    try:
        secrets = Secrets.from_file(options.secrets)
        binary = find_binary(options.binary)
    except (OSError, ValueError) as error:
        print(f"vmhost.replay: {error}", file=sys.stderr)
        return 2
    failed = 0
    unusable = 0
    for name in options.files:
        try:
            if options.update:
                updated = update(name, binary, options.offline, secrets, options.read_limit,
                                 trust_args=options.trust_args, backend_url=options.backend_url)
                if updated.failure is not None:
                    print(updated.failure.report(options.full))
                    print(f"NOT UPDATED {name}")
                    failed += 1
                elif updated.changed:
                    Path(name).write_text(updated.new, encoding="utf-8")
                    sys.stdout.write(updated.diff())
                    print(f"UPDATED {name}")
                else:
                    print(f"UNCHANGED {name}")
                continue
            failure = replay(name, binary, options.offline, secrets, options.read_limit, library=options.library,
                             trust_args=options.trust_args, backend_url=options.backend_url)
        except Refused as error:
            print(f"REFUSED {error}")
            unusable += 1
            continue
        except (OSError, ValueError) as error:
            print(f"ERROR {name}: {error}")
            unusable += 1
            continue
        except RecursionError:
            print(f"ERROR {name}: nested too deeply to replay")
            unusable += 1
            continue
        if failure is None:
            print(f"PASS {name}")
        else:
            print(failure.report(options.full))
            failed += 1
    total = len(options.files)
    print(f"{total - failed - unusable} of {total} passed" + (" (updated)" if options.update else ""))
    if unusable:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
