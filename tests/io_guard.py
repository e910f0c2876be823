"""What keeps a `pure` test pure: while one runs, opening a socket (connect or bind, which every
Redis client, HTTP client and server does), creating a gRPC channel or server, or starting a
process (subprocess, fork, spawn, multiprocessing) raises `PureTestDidIO`, and the test fails
even if the code under test caught that error."""

from __future__ import annotations

import _posixsubprocess
import multiprocessing.process
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import grpc.aio
import pytest


class PureTestDidIOError(RuntimeError):
    """A `pure` test (or the code it runs) tried to open a socket or start a process."""


# (owner, attribute, what it does): each replaced for the length of a pure test's setup and call.
GUARDED: tuple[tuple[Any, str, str], ...] = (
    (socket.socket, "connect", "connected a socket"),
    (socket.socket, "connect_ex", "connected a socket"),
    (socket.socket, "bind", "bound a socket"),
    (grpc, "insecure_channel", "opened a gRPC channel"),
    (grpc, "secure_channel", "opened a gRPC channel"),
    (grpc, "server", "created a gRPC server"),
    (grpc.aio, "insecure_channel", "opened a gRPC channel"),
    (grpc.aio, "secure_channel", "opened a gRPC channel"),
    (grpc.aio, "server", "created a gRPC server"),
    (subprocess.Popen, "_execute_child", "started a process"),
    (_posixsubprocess, "fork_exec", "started a process"),
    (multiprocessing.process.BaseProcess, "start", "started a process"),
    (os, "fork", "forked"),
    (os, "forkpty", "forked"),
    (os, "posix_spawn", "started a process"),
    (os, "posix_spawnp", "started a process"),
    (os, "system", "started a process"),
)


@contextmanager
def refusing_io(what: str) -> Iterator[list[str]]:
    """Every attempt at I/O of the kinds in GUARDED, by this thread or one started inside the
    block, raises PureTestDidIOError and is listed in what the block yields. Threads already
    running (another test's server, say) are left alone."""
    bystanders = set(threading.enumerate()) - {threading.current_thread()}
    attempts: list[str] = []

    def refusing(original: Callable[..., Any], did: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() in bystanders:
                return original(*args, **kwargs)
            attempts.append(did)
            raise PureTestDidIOError(f"{what} {did}")

        return refuse

    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in GUARDED]
    try:
        for (owner, name, original), (_, _, did) in zip(saved, GUARDED, strict=True):
            setattr(owner, name, refusing(original, did))
        yield attempts
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@contextmanager
def io_guard(item: pytest.Item) -> Iterator[None]:
    """refusing_io around a pure test's phase; the test fails on any attempt, caught or not."""
    with refusing_io(f"pure test {item.nodeid}") as attempts:
        yield
    if attempts:
        pytest.fail(
            f"pure test {item.nodeid} {', '.join(sorted(set(attempts)))}: a pure test may open "
            "no socket and start no process (give it a fixture of that kind, or mark its "
            "module `io`)",
            pytrace=False,
        )
