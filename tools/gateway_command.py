"""How the commands that call the gateway (`shikoku tournament …`, `shikoku bot`) end: their
work's exit status, or one line on stderr and the status that says why.

0: done; 1: the server refused a call (its reason and message are the line); 2: the command
could not start (a file or flag it cannot use, no gateway at the address); 130: Ctrl-C.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import grpc

from shikoku_sdk.channel import keyed_channel
from shikoku_sdk.errors import ShikokuError
from tools.tournament_input import InputError

CONNECT_SECONDS = 5.0
REFUSED, CANNOT_START, INTERRUPTED = 1, 2, 130


class NoGateway(Exception):
    """Nothing accepts a connection at the gateway's address."""


def run_against_gateway(label: str, gateway: str, work: Callable[[], int]) -> int:
    """Runs `work` (which reads its files and flags, then calls `require_gateway`); turns what
    stops it into one line prefixed with `label` (e.g. "shikoku tournament create") and an
    exit status."""
    try:
        return work()
    except NoGateway:
        print(f"{label}: no gateway answers at {gateway}", file=sys.stderr)
        return CANNOT_START
    except InputError as error:
        print(f"{label}: {error}", file=sys.stderr)
        return CANNOT_START
    except ShikokuError as error:
        print(f"{label}: {refusal(error, gateway)}", file=sys.stderr)
        return REFUSED
    except KeyboardInterrupt:
        print(f"{label}: stopped", file=sys.stderr)
        return INTERRUPTED


def refusal(error: ShikokuError, gateway: str) -> str:
    """A refused call in words: its reason and message, or that the gateway went away."""
    if error.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) and not (
        error.reason
    ):
        return f"lost the gateway at {gateway}: {error.message}"
    return f"{error.reason or error.code.name}: {error.message}"


def require_gateway(gateway: str, api_key: str | None) -> None:
    """Raises NoGateway unless the gateway accepts a connection within CONNECT_SECONDS."""
    with keyed_channel(gateway, api_key) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=CONNECT_SECONDS)
        except grpc.FutureTimeoutError:
            raise NoGateway(gateway) from None
