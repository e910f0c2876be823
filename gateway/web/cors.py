"""Cross-origin access: which web origins may call the bridge from a page of theirs."""

from __future__ import annotations

import os
from dataclasses import dataclass

ALLOW_HEADERS = "authorization, x-api-key, content-type"
EXPOSE_HEADERS = "retry-after"
PREFLIGHT_MAX_AGE_SECONDS = 600


@dataclass(frozen=True)
class Cors:
    origins: frozenset[str]  # "*": any origin

    @classmethod
    def from_env(cls) -> Cors:
        raw = os.environ.get("SHIKOKU_WEB_ORIGINS", "*")
        return cls(frozenset(o.strip().rstrip("/") for o in raw.split(",") if o.strip()))

    def headers(self, origin: str | None) -> list[tuple[str, str]]:
        """For every response: whether the page at `origin` may read it."""
        if "*" in self.origins:
            allowed = "*"
        elif origin is not None and origin in self.origins:
            allowed = origin
        else:
            return [("Vary", "Origin")] if self.origins else []
        headers = [
            ("Access-Control-Allow-Origin", allowed),
            ("Access-Control-Expose-Headers", EXPOSE_HEADERS),
        ]
        return headers if allowed == "*" else [*headers, ("Vary", "Origin")]

    def preflight(self, origin: str | None, methods: str) -> list[tuple[str, str]]:
        """For an OPTIONS preflight: what a cross-origin call may send."""
        headers = self.headers(origin)
        if not any(name == "Access-Control-Allow-Origin" for name, _ in headers):
            return headers
        return [
            *headers,
            ("Access-Control-Allow-Methods", methods),
            ("Access-Control-Allow-Headers", ALLOW_HEADERS),
            ("Access-Control-Max-Age", str(PREFLIGHT_MAX_AGE_SECONDS)),
        ]
