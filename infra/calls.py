"""The call being served, as the process's observers see it: its method, how long it took, how
it ended (status code and our reason), and what it was about (the request once decoded, the
application that made it).

One `Call` is made per call by the outermost layer (`infra.call_chain` for gRPC, the web
entrypoint's Connect interceptor) and handed to every `Observer` (metrics, the access log,
the trace) when it starts and when it ends. Layers beneath fill it in as they learn things, in
the call's own task: the request decoder notes the request, the gateway's key check the API
key's id.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

OK = "OK"


@dataclass(slots=True)
class Call:
    """`method` as gRPC names it, `/shikoku.v1.GameService/SubmitCommand`."""

    method: str
    streaming: bool = False
    started: float = field(default_factory=time.perf_counter)
    #: The decoded request message, once it is known (None if it never decoded).
    request: Any = None
    #: The calling application's API key id (never the key), once it is known.
    api_key_id: str = ""
    #: The status code's name (OK, NOT_FOUND, ...) and our reason code (NOT_YOUR_TURN, ...).
    code: str = OK
    reason: str = ""
    seconds: float = 0.0

    @property
    def service(self) -> str:
        return self.method.lstrip("/").partition("/")[0]

    @property
    def name(self) -> str:
        """The method's own name, `SubmitCommand`."""
        return self.method.rpartition("/")[2]

    def end(self, code: str, reason: str = "") -> None:
        self.code, self.reason = code, reason
        self.seconds = time.perf_counter() - self.started


class Observer(Protocol):
    def started(self, call: Call) -> None: ...

    def ended(self, call: Call) -> None: ...


_current: ContextVar[Call | None] = ContextVar("call", default=None)


def begin(call: Call) -> Call:
    """Makes `call` the current one of this task (each call is served in a task of its own)."""
    _current.set(call)
    return call


def current() -> Call | None:
    return _current.get()


def note_request(request: Any) -> None:
    if (call := _current.get()) is not None:
        call.request = request


def note_api_key(key_id: str) -> None:
    if (call := _current.get()) is not None:
        call.api_key_id = key_id
