"""The development launchers (shikoku_dev, devtools/pyproject.toml) are not in an install of the
server's wheel (the container image): the commands that start them say so in one line."""

from __future__ import annotations

RUN_NEEDS_A_CHECKOUT = (
    "shikoku run is a development launcher, not part of this install: run it from a source "
    "checkout (`make run`)"
)
OWN_SYSTEM_NEEDS_A_CHECKOUT = (
    "shikoku import: --own-system starts the development launchers, not part of this install: "
    "run it from a source checkout, or replay with --in-process or through a gateway (--gateway)"
)


def launchers_missing(error: ModuleNotFoundError) -> bool:
    """Whether `error` says the launchers are not installed (rather than broken: then their own
    traceback says why)."""
    return (error.name or "").partition(".")[0] == "shikoku_dev"
