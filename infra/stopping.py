"""Waiting for the signal to stop a service process."""

from __future__ import annotations

import asyncio
import signal


async def stop_requested() -> None:
    """Returns once the process gets SIGTERM or SIGINT (Ctrl-C)."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
