"""The protocol steps both hosts share: building messages, settling a reply's future, routing a
notification to its view-model. The sync host (``host.py``) and the asyncio host (``aio.py``) differ
only in how they lock, wait and schedule; everything said on the wire is written here once (the
state of a connection, its pending requests and subscriptions, is :class:`~vmhost._session.Session`)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Union

from .errors import RPCError

if TYPE_CHECKING:
    from ._proxy import ViewModelBase

log = logging.getLogger("vmhost")

Params = Union[Mapping[str, Any], List[Any], None]
OnResult = Callable[[Any], None]


def _same(result: Any) -> Any:
    return result


class Call(NamedTuple):
    """A request to start: *method* and *params*; *on_result* accepts its result on the reader,
    before any later message is dispatched (a subscription's first values, then its changes);
    *transform* makes the caller's value of it once the caller has the reply."""

    method: str
    params: Params = None
    on_result: Optional[OnResult] = None
    transform: Callable[[Any], Any] = _same


def message(method: str, params: Any = None, request_id: Optional[int] = None) -> Dict[str, Any]:
    """A JSON-RPC 2.0 request (with an id) or notification (without)."""
    result: Dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        result["id"] = request_id
    result["method"] = method
    if params is not None:
        result["params"] = params
    return result


def frame(message: Mapping[str, Any]) -> bytes:
    """*message* as one ndjson frame: compact UTF-8 JSON and a newline."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _Nothing:
    pass


NOTHING: Any = _Nothing()
"""What :func:`parse` returns for a blank or unparsable line (``None`` is the JSON ``null``)."""


def parse(line: bytes) -> Any:
    """The message in one line the host wrote, or :data:`NOTHING` (logged if unparsable)."""
    line = line.strip()
    if not line:
        return NOTHING
    try:
        return json.loads(line)
    except ValueError:
        log.warning("vmhost: unparsable frame of %d bytes", len(line))
        return NOTHING


def settle(future: Any, reply: Dict[str, Any], on_result: Optional[Callable[[Any], None]]) -> None:
    """Completes *future* (a ``concurrent.futures`` or ``asyncio`` future) from a response:
    the error as :class:`RPCError`, else the result after *on_result* accepted it."""
    if "error" in reply:
        future.set_exception(RPCError.from_error(reply["error"] or {}))
        return
    result = reply.get("result")
    if on_result is not None:
        try:
            on_result(result)
        except Exception as error:  # a reply that does not fit: report it to the caller
            future.set_exception(error)
            return
    future.set_result(result)


def apply_to(vm: Optional[ViewModelBase], method: str, params: Dict[str, Any]) -> None:
    """Applies a ``vm.changed`` or ``vm.event`` notification to the view-model it names."""
    if vm is None:
        return
    if method == "vm.changed":
        vm._apply_changed(params)
    elif method == "vm.event":
        vm._apply_event(params)


def command_value(result: Any) -> Any:
    """The ``value`` of a command's result (``{value?}``)."""
    return result.get("value") if isinstance(result, dict) else result


# -- the host's usual requests ---------------------------------------------------

def initialize(locale: Optional[str], params: Dict[str, Any]) -> Call:
    """``initialize`` with *params*, and ``locale`` when given."""
    if locale is not None:
        params["locale"] = locale
    return Call("initialize", params)


def describe(kind: Optional[str]) -> Call:
    """``host.describe`` of every kind, or of *kind*."""
    return Call("host.describe", {"kind": kind} if kind is not None else {})


def create(kind: str, args: Optional[Mapping[str, Any]], id: Optional[str]) -> Call:
    """``vm.create`` of *kind* with *args* and *id* when given; the result is its description."""
    params: Dict[str, Any] = {"kind": kind}
    if args is not None:
        params["args"] = args
    if id is not None:
        params["id"] = id
    return Call("vm.create", params)
