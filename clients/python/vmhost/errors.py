"""Exceptions raised by the vmhost client.

Every error the host answers becomes an :class:`RPCError`; the JSON-RPC code
selects the subclass, so callers can catch exactly what they expect::

    try:
        vm.load_more()
    except vmhost.InputDisabled as e:
        print(e.reason)
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

__all__ = [
    "RPCError",
    "ParseError",
    "InvalidRequest",
    "MethodNotFound",
    "InvalidParams",
    "InternalError",
    "RequestCancelled",
    "UnknownViewModel",
    "UnknownMember",
    "InputDisabled",
    "CommandFailed",
    "HostShuttingDown",
    "HostExited",
]


class RPCError(Exception):
    """An error response from the host: ``code``, ``message`` and ``data``."""

    code: int

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r}, {self.data!r})"

    @classmethod
    def from_error(cls, error: Dict[str, Any]) -> "RPCError":
        """Build the most specific exception for a JSON-RPC error object."""
        code = error.get("code")
        message = str(error.get("message", ""))
        data = error.get("data")
        if not isinstance(code, int):
            return RPCError(-32603, message or "malformed error object", error)
        return _BY_CODE.get(code, RPCError)(code, message, data)


class ParseError(RPCError):
    """-32700: the host could not parse a frame."""


class InvalidRequest(RPCError):
    """-32600: the request was not a valid JSON-RPC request (or was too large)."""


class MethodNotFound(RPCError):
    """-32601: no such method (``control.*`` needs ``--test-controls``)."""


class InvalidParams(RPCError):
    """-32602: the message names the parameter and why it was refused."""


class InternalError(RPCError):
    """-32603: the host failed internally."""


class RequestCancelled(RPCError):
    """-32800: the request was cancelled (``$/cancelRequest``, dispose, a newer command, shutdown)."""


class UnknownViewModel(RPCError):
    """-32001: no view-model has that handle (``data: {vm}``)."""


class UnknownMember(RPCError):
    """-32002: no input or output has that name; the message lists the valid names."""


class InputDisabled(RPCError):
    """-32003: the input refused the send; ``reason`` says why."""

    @property
    def input(self) -> Optional[str]:
        return self.data.get("input") if isinstance(self.data, dict) else None

    @property
    def reason(self) -> Optional[str]:
        return self.data.get("reason") if isinstance(self.data, dict) else None


class CommandFailed(RPCError):
    """-32004: a command failed; ``error`` is the domain error ``{kind, code, message, detail, input}``.

    ``user_message`` is the text for the user (in the host's locale, ready to show); ``detail`` the
    text for developers (English, never quoting a response body)."""

    @property
    def error(self) -> Dict[str, Any]:
        return self.data if isinstance(self.data, dict) else {}

    @property
    def kind(self) -> Optional[str]:
        """``network``, ``timeout``, ``server``, ``business`` or ``decode``."""
        return self.error.get("kind")

    @property
    def user_message(self) -> str:
        """The domain error's ``message``: what the user reads."""
        text = self.error.get("message")
        return text if isinstance(text, str) else self.message

    @property
    def detail(self) -> str:
        """The domain error's ``detail``: what failed, for developers."""
        text = self.error.get("detail")
        return text if isinstance(text, str) else self.message

    @property
    def input(self) -> Optional[str]:
        """The command that failed."""
        return self.error.get("input")


class HostShuttingDown(RPCError):
    """-32005: the host is shutting down."""


class HostExited(ConnectionError):
    """The host process ended (or its stdout closed) before the request was answered."""


_BY_CODE: Dict[int, Type[RPCError]] = {
    -32700: ParseError,
    -32600: InvalidRequest,
    -32601: MethodNotFound,
    -32602: InvalidParams,
    -32603: InternalError,
    -32800: RequestCancelled,
    -32001: UnknownViewModel,
    -32002: UnknownMember,
    -32003: InputDisabled,
    -32004: CommandFailed,
    -32005: HostShuttingDown,
}


class UnknownInputError(UnknownMember, AttributeError):
    """A misspelt input, caught before anything is sent (also an ``AttributeError``)."""


class UnknownOutputError(UnknownMember, KeyError):
    """A misspelt output, caught before anything is sent (also a ``KeyError``)."""
