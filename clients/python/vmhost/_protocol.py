"""The protocol steps both hosts share: building messages, settling a reply's future, routing a
notification to its view-model. The sync host (``host.py``) and the asyncio host (``aio.py``) differ
only in how they lock, wait and schedule; everything said on the wire is written here once."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ._proxy import ViewModelBase
from .errors import RPCError


def message(method: str, params: Any = None, request_id: Optional[int] = None) -> Dict[str, Any]:
    """A JSON-RPC 2.0 request (with an id) or notification (without)."""
    result: Dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        result["id"] = request_id
    result["method"] = method
    if params is not None:
        result["params"] = params
    return result


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
