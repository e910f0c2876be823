"""A service's announcement to its launcher ("rules listening on ...") is one write, so that no
log line written meanwhile by another thread into the same pipe can land inside it."""

from __future__ import annotations

import io

import pytest

from infra.logs import announce


class Writes(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


def test_an_announcement_is_a_single_write(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Writes()
    monkeypatch.setattr("sys.stdout", out)
    announce("gateway listening on 127.0.0.1:50051")
    assert out.calls == ["gateway listening on 127.0.0.1:50051\n"]
