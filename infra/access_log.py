"""The access log: one line per call served, on the logger `shikoku.access`.

A line says the method, the status code and our reason, how long the call took, the calling
application's API key id, the game, table or tournament the request names, and the trace id
when the call is traced. It writes ids only: never a key, a token or a request's other
contents. Health checks are left out (load balancers make them every few seconds).
`SHIKOKU_ACCESS_LOG=0` turns the lines off.
"""

from __future__ import annotations

import logging

from infra.calls import Call
from infra.logs import trace_ids

LOGGER = "shikoku.access"
#: Request fields an access line shows when the request has them (ids, not contents).
ID_FIELDS = ("game_id", "table_id", "tournament_id")
QUIET = ("/grpc.health.v1.",)


class AccessLog:
    def __init__(self, logger: logging.Logger | None = None) -> None:
        self._log = logger or logging.getLogger(LOGGER)

    def started(self, call: Call) -> None:
        pass

    def ended(self, call: Call) -> None:
        if not self._log.isEnabledFor(logging.INFO) or call.method.startswith(QUIET):
            return
        fields: dict[str, str | float] = {
            "method": call.method,
            "code": call.code,
            "reason": call.reason,
            "duration_ms": round(call.seconds * 1000, 3),
        }
        if call.api_key_id:
            fields["api_key_id"] = call.api_key_id
        if call.request is not None:
            for name in ID_FIELDS:
                if value := getattr(call.request, name, ""):
                    fields[name] = str(value)
        if (ids := trace_ids()) is not None:
            fields["trace_id"], fields["span_id"] = ids
        # The record made as Logger.info would, less its look for the caller's source line.
        message = f"{call.method.lstrip('/')} {call.code} {call.seconds * 1000:.1f} ms"
        record = self._log.makeRecord(
            self._log.name, logging.INFO, __file__, 0, message, (), None, extra={"fields": fields}
        )
        self._log.handle(record)
