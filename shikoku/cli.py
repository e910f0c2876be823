"""The `shikoku` command: one entry point for every command-line job."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path

SERVE_MODULES = {
    "rules": "services.rules.server",
    "routes": "services.routes.server",
    "lobby": "services.lobby.server",
    "gateway": "gateway.server",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shikoku", description="Shikoku 1889 game server")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="start Redis and all four services on loopback")
    run.add_argument(
        "--durable",
        action="store_true",
        help="embedded Redis fsyncs every write to an append-only file before acknowledging it",
    )
    run.add_argument("--data-dir", type=Path, help="where the embedded Redis keeps its files")

    serve = commands.add_parser("serve", help="run one service in the foreground")
    serve.add_argument("service", choices=sorted(SERVE_MODULES))

    args = parser.parse_args(argv)
    if args.command == "run":
        from shikoku.supervisor import run as run_all

        return run_all(durable=args.durable, data_dir=args.data_dir)
    if args.command == "serve":
        module = importlib.import_module(SERVE_MODULES[args.service])
        asyncio.run(module.main())
        return 0
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
