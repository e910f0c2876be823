"""Slow and idle clients, in a process of their own, for the tests of the web entrypoint and the
gateway against them: thousands of raw sockets that connect and then send nothing, half a
request, or one whole request and nothing after, each from one of many loopback addresses
(all of 127.0.0.0/8 is this machine on Linux).

    python -m tests.e2e.slow_clients HOST:PORT COUNT --kinds idle,half --first-source 127.1.0.1

It reports what it holds on stdout, one JSON line every REPORT_SECONDS
(`{"held": N, "opened": N, "closed": N, "failed": N}`: open now, opened in all, closed by the
server, refused at connect), and with `--keep` opens a new connection for every one the server
closes. It stops at SIGTERM or when its stdin closes. The tests use it through `SlowClients`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

from infra.open_files import raise_open_files_limit

REPORT_SECONDS = 0.2
#: Connections being opened at once: a listen queue overflowing would hold up the fresh client's
#: own connection for a SYN retransmission (a second), which is no test of the server.
OPENING_AT_ONCE = 128

#: What each kind sends once connected, then nothing more.
KINDS: dict[str, bytes] = {
    "idle": b"",  # a connection and nothing
    "half": b"GET /healthz HTTP/1.1\r\nHost: slow.example\r\n",  # a request line and one header
    "keepalive": b"GET /healthz HTTP/1.1\r\nHost: slow.example\r\n\r\n",  # answered, then idle
    # An HTTP/2 client preface and empty SETTINGS: a gRPC connection with no call.
    "preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00",
}


def slow_clients_count(default: int) -> int:
    """How many slow clients a test holds: SHIKOKU_SLOW_CLIENTS (`make soak`), or `default`."""
    return int(os.environ.get("SHIKOKU_SLOW_CLIENTS", default))


def sources(first: str, count: int, per_source: int) -> list[str]:
    """A source address for each of `count` connections, `per_source` on each, from `first` on
    (skipping addresses ending in .0 and .255)."""
    addresses: list[str] = []
    address = ipaddress.IPv4Address(first)
    while len(addresses) < count:
        if str(address).split(".")[-1] not in ("0", "255"):
            addresses.extend([str(address)] * min(per_source, count - len(addresses)))
        address += 1
    return addresses


@dataclass
class Tally:
    held: int = 0
    opened: int = 0
    closed: int = 0
    failed: int = 0


async def _hold(
    host: str,
    port: int,
    source: str,
    sent: bytes,
    keep: bool,
    tally: Tally,
    gate: asyncio.Semaphore,
) -> None:
    while True:
        async with gate:
            try:
                reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
            except OSError:
                tally.failed += 1
                if not keep:
                    return
                await asyncio.sleep(0.5)
                continue
            tally.opened += 1
            tally.held += 1
            if sent:
                writer.write(sent)
        try:
            while await reader.read(65536):
                pass  # an answer (keepalive, preface) is read and dropped; EOF ends it
        except OSError:
            pass
        tally.held -= 1
        tally.closed += 1
        writer.close()
        if not keep:
            return


async def _attack(arguments: argparse.Namespace) -> None:
    raise_open_files_limit()
    host, _, port = arguments.target.rpartition(":")
    kinds = [KINDS[kind] for kind in arguments.kinds.split(",")]
    tally = Tally()
    gate = asyncio.Semaphore(OPENING_AT_ONCE)
    addresses = sources(arguments.first_source, arguments.count, arguments.per_source)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not os.read(0, 1) else None)
    holders = [
        asyncio.create_task(_hold(host, int(port), source, sent, arguments.keep, tally, gate))
        for source, sent in zip(addresses, itertools.cycle(kinds), strict=False)
    ]
    while not stop.is_set():
        print(json.dumps(tally.__dict__), flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), REPORT_SECONDS)
    for holder in holders:
        holder.cancel()
    await asyncio.gather(*holders, return_exceptions=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.slow_clients")
    parser.add_argument("target", help="HOST:PORT")
    parser.add_argument("count", type=int)
    parser.add_argument("--kinds", default="idle,half", help=f"of {', '.join(KINDS)}")
    parser.add_argument("--first-source", default="127.1.0.1")
    parser.add_argument("--per-source", type=int, default=50)
    parser.add_argument("--keep", action="store_true", help="reopen what the server closes")
    asyncio.run(_attack(parser.parse_args(argv)))


class SlowClients:
    """`python -m tests.e2e.slow_clients` for the block's duration, its last report at hand."""

    def __init__(
        self,
        target: str,
        count: int,
        kinds: Sequence[str] = ("idle", "half"),
        first_source: str = "127.1.0.1",
        per_source: int = 50,
        keep: bool = False,
    ) -> None:
        self.count = count
        command = [
            sys.executable,
            "-m",
            "tests.e2e.slow_clients",
            target,
            str(count),
            "--kinds",
            ",".join(kinds),
            "--first-source",
            first_source,
            "--per-source",
            str(per_source),
        ]
        self._process = subprocess.Popen(
            [*command, *(["--keep"] if keep else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._reports: queue.Queue[Tally] = queue.Queue()
        self.last = Tally()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._reports.put(Tally(**json.loads(line)))

    def report(self) -> Tally:
        """The latest report (waiting for one more at most a report's interval)."""
        with contextlib.suppress(queue.Empty):
            self.last = self._reports.get(timeout=REPORT_SECONDS * 5)
        while not self._reports.empty():
            self.last = self._reports.get_nowait()
        return self.last

    def wait(self, held: int, timeout: float) -> Tally:
        """Until `held` connections are open at once, or `timeout` seconds have passed: the
        latest report (the caller checks what it holds)."""
        deadline = time.monotonic() + timeout
        while (report := self.report()).held < held and time.monotonic() < deadline:
            assert self._process.poll() is None, "the slow clients' process ended"
        return report

    def wait_closed(self, closed: int, timeout: float) -> Tally:
        """Until the server has closed `closed` of them; fails after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while (report := self.report()).closed < closed:
            assert time.monotonic() < deadline, f"only {report} closed after {timeout} s"
        return report

    def __enter__(self) -> SlowClients:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


if __name__ == "__main__":
    main()
