"""Python client for vmhost: view-models served over JSON-RPC 2.0 on stdio.

::

    import vmhost

    with vmhost.Host.spawn() as host:
        products = host.create("ProductList")
        products.subscribe()
        products.refresh()
        print(len(products["items"]))
"""

from ._binary import find_binary
from ._proxy import MISSING, Member
from ._stderr import KEEP as KEEP_STDERR
from .aio import AsyncHost, AsyncPendingCommand, AsyncViewModel
from .errors import (
    CommandFailed,
    HostExited,
    HostShuttingDown,
    InputDisabled,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RequestCancelled,
    RPCError,
    UnknownMember,
    UnknownViewModel,
)
from .host import Host, PendingCommand, ViewModel

__all__ = [
    "Host", "ViewModel", "PendingCommand",
    "AsyncHost", "AsyncViewModel", "AsyncPendingCommand",
    "Member", "MISSING", "find_binary", "KEEP_STDERR",
    "RPCError", "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams",
    "InternalError", "RequestCancelled", "UnknownViewModel", "UnknownMember",
    "InputDisabled", "CommandFailed", "HostShuttingDown", "HostExited",
]

__version__ = "0.1.0"
