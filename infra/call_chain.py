"""Every layer our gRPC servers put around a call, as one interceptor: the call observed (its
`Call` made and handed to the observers: metrics, the access log), its request decoded and
checked (`infra.requests.decoded`), its admissions run (the deployment token, rate limits,
access), and whatever it fails with turned into its status (`infra.interceptors.end_call`).

One layer rather than one interceptor each, because grpc.aio runs every interceptor's
`intercept_service` on every call and each rebuilt the method's handler there: five or six
handler rebuilds and as many nested coroutines a call, for what is known once per method. Here
a method's wrapped handler is built on its first call and kept, and a call runs one coroutine
of ours around the servicer's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any

import grpc

from infra import calls
from infra.calls import Call, Observer
from infra.grpc_errors import reason_in
from infra.grpc_types import Context
from infra.interceptors import Behaviour, Continuation, end_call, rewrap, streamed
from infra.requests import Decode, decoded

#: Marks the behaviours a chain made: a chain inside another would hand it the request's bytes
#: undecoded (the inner one decodes), so it is refused when the server is first called.
CHAINED = "_shikoku_call_chain"


def outcome(context: Context, error: BaseException | None) -> tuple[str, str]:
    """The status code's name and our reason with which the call ended."""
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        return "CANCELLED", ""
    code = context.code()
    if code is None or code == grpc.StatusCode.OK:
        # An exception that is no abort: gRPC answers it with UNKNOWN.
        return ("UNKNOWN", "") if error is not None else (calls.OK, "")
    name = code.name if isinstance(code, grpc.StatusCode) else str(code)
    return name, reason_in(context.trailing_metadata())


class _Observed:
    """The call made current and handed to the observers as it starts, and again as it ends,
    with how it ended (whatever it raised: a refusal's abort, a cancellation)."""

    __slots__ = ("_call", "_context", "_observers")

    def __init__(self, observers: tuple[Observer, ...], call: Call, context: Context) -> None:
        self._observers, self._call, self._context = observers, calls.begin(call), context
        for observer in observers:
            observer.started(call)

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._call.end(*outcome(self._context, error))
        for observer in self._observers:
            observer.ended(self._call)


class Admission(grpc.aio.ServerInterceptor):
    """A check a call must pass before its handler runs: `admit` runs in the call's own task,
    where the request and the peer are known, and refuses by raising Rejected. Methods under
    `free_prefixes` (health checks and reflection, unless a subclass says otherwise) are
    always let through. A process's server runs its admissions in its `CallChain`; one may
    also serve as an interceptor of its own (a chain of just itself)."""

    free_prefixes: tuple[str, ...] = ("/grpc.health.v1.", "/grpc.reflection.")
    _alone: CallChain | None = None

    async def admit(self, method: str, request: Any, context: Context) -> None:
        raise NotImplementedError

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        if self._alone is None:
            self._alone = CallChain(admissions=[self])
        return await self._alone.intercept_service(continuation, details)


class CallChain(grpc.aio.ServerInterceptor):
    """The observers see every call, first and last; then the request is decoded (methods that
    take one message; gRPC would end an undecodable one as UNKNOWN before any interceptor ran,
    so the chain takes the bytes and decodes them itself); then each admission that does not
    let the method through free (`Admission.free_prefixes`) admits it, in order; then the
    servicer. A refusal anywhere ends the call with its status."""

    def __init__(
        self, observers: Sequence[Observer] = (), admissions: Sequence[Admission] = ()
    ) -> None:
        self._observers = tuple(observers)
        self._admissions = tuple(admissions)
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler[Any, Any], Any]] = {}

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(details)
        if handler is None:
            return handler
        method = details.method
        known = self._wrapped.get(method)
        if known is not None and known[0] is handler:
            wrapped: grpc.RpcMethodHandler[Any, Any] = known[1]
            return wrapped
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any]
    ) -> grpc.RpcMethodHandler[Any, Any]:
        behaviours = (handler.unary_unary, handler.unary_stream, handler.stream_unary)
        if any(getattr(b, CHAINED, False) for b in (*behaviours, handler.stream_stream)):
            raise TypeError(f"{method}: a server has one CallChain (its layers in one list)")
        admissions = tuple(a for a in self._admissions if not method.startswith(a.free_prefixes))
        observers = self._observers
        one_message = handler.unary_unary is not None or handler.unary_stream is not None
        decode: Decode | None = handler.request_deserializer if one_message else None

        async def admitted(raw: Any, context: Context) -> Any:
            request = raw
            if decode is not None:
                request = decoded(raw, decode)
                calls.note_request(request)
            for admission in admissions:
                await admission.admit(method, request, context)
            return request

        def unary(behaviour: Behaviour) -> Behaviour:
            async def call(raw: Any, context: Context) -> Any:
                with _Observed(observers, Call(method), context):
                    try:
                        return await behaviour(await admitted(raw, context), context)
                    except Exception as failure:
                        await end_call(failure, context)

            setattr(call, CHAINED, True)
            return call

        def streaming(behaviour: Behaviour) -> Behaviour:
            async def call(raw: Any, context: Context) -> AsyncIterator[Any]:
                with _Observed(observers, Call(method, streaming=True), context):
                    try:
                        request = await admitted(raw, context)
                        async for item in streamed(behaviour, request, context):
                            yield item
                    except Exception as failure:
                        await end_call(failure, context)

            setattr(call, CHAINED, True)
            return call

        return rewrap(handler, unary, streaming, decodes=decode is not None)


class FailuresAsStatus(CallChain):
    """The chain with no observer and no admission: requests decoded and checked, failures
    turned into statuses (for servers that need nothing more, such as tests' own)."""
