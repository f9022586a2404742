"""What the synchronous and asyncio view-model proxies share: names, the mirror, callbacks."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence

from ._protocol import Call, command_value
from .errors import UnknownInputError, UnknownOutputError

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["ViewModelBase", "Member", "MISSING"]

log = logging.getLogger("vmhost")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Marks a ``vm.send`` without a value (distinct from sending ``None``, which is JSON null)."""

EventCallback = Callable[[Any], Any]
ChangeCallback = Callable[[Dict[str, Any]], Any]


class Member:
    """One input or output as described by ``vm.create`` / ``host.describe``."""

    __slots__ = ("name", "kind", "schema", "policy")

    def __init__(self, description: Mapping[str, Any]) -> None:
        self.name: str = description["name"]
        self.kind: str = description.get("kind", "")
        self.schema: Any = description.get("value", description.get("schema"))
        self.policy: Optional[str] = description.get("policy")

    def __repr__(self) -> str:
        policy = f", policy={self.policy!r}" if self.policy else ""
        return f"Member({self.name!r}, kind={self.kind!r}{policy})"


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


class ViewModelBase:
    """State and bookkeeping shared by :class:`~vmhost.ViewModel` and
    :class:`~vmhost.AsyncViewModel`: the requests they make (as :class:`~vmhost._protocol.Call`,
    which each starts and waits for in its own way) and the mirror. Notifications are applied by
    the host's reader."""

    def __init__(self, session: Session, description: Mapping[str, Any]) -> None:
        self._session = session
        self._handle: str = description["vm"]
        self._kind: str = description.get("kind", "")
        self._inputs: Dict[str, Member] = {d["name"]: Member(d) for d in description.get("inputs", [])}
        self._outputs: Dict[str, Member] = {d["name"]: Member(d) for d in description.get("outputs", [])}
        self._lock = threading.RLock()
        self._values: Dict[str, Any] = {}
        self._subscription: Optional[str] = None
        self._event_callbacks: Dict[str, List[EventCallback]] = {}
        self._change_callbacks: List[ChangeCallback] = []
        self._disposed = False

    # -- description ---------------------------------------------------------

    @property
    def handle(self) -> str:
        """The host's handle for this view-model (``vm1``, or the ``id`` given to ``create``)."""
        return self._handle

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def inputs(self) -> Mapping[str, Member]:
        return dict(self._inputs)

    @property
    def outputs(self) -> Mapping[str, Member]:
        return dict(self._outputs)

    @property
    def subscription(self) -> Optional[str]:
        """The subscription id, or ``None`` before :meth:`subscribe`."""
        return self._subscription

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._kind} {self._handle!r}>"

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._inputs))

    # -- name checks ---------------------------------------------------------

    def _check_input(self, name: str) -> Member:
        member = self._inputs.get(name)
        if member is None:
            raise UnknownInputError(
                -32002,
                f"{self._kind} {self._handle!r} has no input {name!r} "
                f"(inputs: {', '.join(self._inputs) or 'none'})",
                {"vm": self._handle, "input": name},
            )
        return member

    def _check_output(self, name: str, kinds: Optional[str] = None) -> Member:
        member = self._outputs.get(name)
        if member is None or (kinds is not None and member.kind != kinds):
            valid = [n for n, m in self._outputs.items() if kinds is None or m.kind == kinds]
            what = "output" if kinds is None else kinds
            plural = {"output": "outputs", "property": "properties", "event": "events"}.get(what, what)
            reason = (f"is {_article(member.kind)} {member.kind}, not {_article(str(kinds))} {kinds}"
                      if member is not None else "does not exist")
            raise UnknownOutputError(
                -32002,
                f"{self._kind} {self._handle!r}: {what} {name!r} {reason} "
                f"({plural}: {', '.join(valid) or 'none'})",
                {"vm": self._handle, "output": name},
            )
        return member

    def _check_outputs(self, outputs: Optional[List[str]]) -> Optional[List[str]]:
        if outputs is None:
            return None
        if isinstance(outputs, str):
            outputs = [outputs]
        for name in outputs:
            self._check_output(name)
        return list(outputs)

    # -- the requests --------------------------------------------------------

    def _send_call(self, input: str, value: Any) -> Call:
        """``vm.send`` of *input* (with *value* unless ``MISSING``); its value is the command's."""
        self._check_input(input)
        params: Dict[str, Any] = {"vm": self._handle, "input": input}
        if value is not MISSING:
            params["value"] = value
        return Call("vm.send", params, transform=command_value)

    def _get_call(self, outputs: Sequence[str]) -> Call:
        """``vm.get`` of *outputs* (every property if none); its value is the values."""
        params: Dict[str, Any] = {"vm": self._handle}
        if outputs:
            params["outputs"] = self._check_outputs(list(outputs))
        return Call("vm.get", params, transform=lambda result: result["values"])

    def _subscribe_call(self, outputs: Optional[List[str]], diff: bool) -> Call:
        """``vm.subscribe``: its result fills the mirror and routes the subscription's
        notifications here on the reader, before any later notification; its value is the mirror."""
        if self._subscription is not None:
            raise RuntimeError(f"{self._handle} is already subscribed ({self._subscription}); "
                               "call unsubscribe() first")
        params: Dict[str, Any] = {"vm": self._handle, "diff": diff}
        names = self._check_outputs(outputs)
        if names is not None:
            params["outputs"] = names

        def on_result(result: Any) -> None:  # on the reader, before any later notification
            self._subscribed(result["subscription"], result.get("values") or {})
            self._session.register(result["subscription"], self)

        return Call("vm.subscribe", params, on_result=on_result, transform=lambda _: self.values)

    def _unsubscribe_call(self) -> Optional[Call]:
        """Stops mirroring at once (the mirror keeps its last values) and returns the
        ``vm.unsubscribe`` that ends the subscription at the host; ``None`` if not subscribed."""
        subscription = self._subscription
        if subscription is None:
            return None
        self._session.unregister(subscription)
        self._unsubscribed()
        return Call("vm.unsubscribe", {"subscription": subscription})

    def _dispose_call(self) -> Optional[Call]:
        """``vm.dispose``, after whose reply the proxy is disposed and unsubscribed; ``None`` if it
        already is."""
        if self._disposed:
            return None

        def disposed(result: Any) -> None:  # in the caller, once the host disposed of it
            self._disposed = True
            self._session.unregister(self._subscription)
            self._unsubscribed()

        return Call("vm.dispose", {"vm": self._handle}, transform=disposed)

    # -- the mirror ----------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        """The mirrored value of a subscribed property."""
        self._check_output(name, "property")
        with self._lock:
            try:
                return self._values[name]
            except KeyError:
                raise LookupError(
                    f"{name!r} is not mirrored: call subscribe() first (or get() to read it once)"
                ) from None

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._values

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._values))

    @property
    def values(self) -> Dict[str, Any]:
        """A snapshot of the mirror: every subscribed property and its current value."""
        with self._lock:
            return dict(self._values)

    # -- callbacks -----------------------------------------------------------

    def on(self, event: str, callback: EventCallback) -> Callable[[], None]:
        """Call ``callback(value)`` for each ``event`` (e.g. ``"error"``, ``"navigate"``).

        Events arrive through the subscription, so call :meth:`subscribe` too. Callbacks run on
        the host's reader (a thread, or the event loop for :class:`~vmhost.AsyncHost`) and must
        not block it. Returns a function that removes the callback.
        """
        self._check_output(event, "event")
        with self._lock:
            self._event_callbacks.setdefault(event, []).append(callback)

        def remove() -> None:
            with self._lock:
                callbacks = self._event_callbacks.get(event, [])
                if callback in callbacks:
                    callbacks.remove(callback)

        return remove

    def on_change(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call ``callback({name: new value})`` after each ``vm.changed`` is applied to the mirror."""
        with self._lock:
            self._change_callbacks.append(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._change_callbacks:
                    self._change_callbacks.remove(callback)

        return remove

    # -- applying notifications (called by the host's reader) -----------------

    def _subscribed(self, subscription: str, values: Mapping[str, Any]) -> None:
        with self._lock:
            self._subscription = subscription
            self._values.update(values)

    def _unsubscribed(self) -> None:
        with self._lock:
            self._subscription = None

    def _apply_changed(self, params: Mapping[str, Any]) -> None:
        changed: Dict[str, Any] = {}
        with self._lock:
            for name, value in (params.get("values") or {}).items():
                self._values[name] = value
                changed[name] = value
            for name, splices in (params.get("splices") or {}).items():
                items = list(self._values.get(name) or [])
                for splice in splices:
                    index = int(splice.get("index", 0))
                    remove = int(splice.get("remove", 0))
                    items[index:index + remove] = list(splice.get("insert") or [])
                self._values[name] = items
                changed[name] = items
            callbacks = list(self._change_callbacks)
        for callback in callbacks:
            self._invoke(callback, changed)

    def _apply_event(self, params: Mapping[str, Any]) -> None:
        with self._lock:
            callbacks = list(self._event_callbacks.get(params.get("name", ""), []))
        for callback in callbacks:
            self._invoke(callback, params.get("value"))

    def _invoke(self, callback: Callable[[Any], Any], argument: Any) -> None:
        try:
            self._session.consume(callback(argument))
        except Exception:
            log.exception("vmhost: callback %r of %s raised", callback, self._handle)
