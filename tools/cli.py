"""The `shikoku` command: one entry point for every command-line job."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from pathlib import Path
from typing import Any

from infra.config import Addresses
from tools.launchers import RUN_NEEDS_A_CHECKOUT, launchers_missing

SERVE_MODULES = {
    "rules": "services.rules.shell.server",
    "routes": "services.routes.shell.server",
    "lobby": "services.lobby.shell.server",
    "gateway": "gateway.server",
    "web": "gateway.web.server",
    "notify": "services.notify.shell.server",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shikoku", description="Shikoku 1889 game server")
    commands = parser.add_subparsers(dest="command", required=True)
    # Every command that touches Redis takes it on its own command line too.
    redis = argparse.ArgumentParser(add_help=False)
    redis.add_argument(
        "--redis-url", help="the Redis to use, overriding $REDIS_URL (docs/operations.md)"
    )

    run = commands.add_parser(
        "run",
        parents=[redis],
        help="start Redis, the services and the web bridge on loopback (their own embedded "
        "Redis unless --redis-url or $REDIS_URL names one)",
    )
    run.add_argument(
        "--durable",
        action="store_true",
        help="embedded Redis fsyncs every write to an append-only file before acknowledging it",
    )
    run.add_argument("--data-dir", type=Path, help="where the embedded Redis keeps its files")
    run.add_argument(
        "--cluster",
        action="store_true",
        help="an embedded Redis Cluster (3 masters, 1 replica each) and 2 processes of each "
        "service, as hosts run it at scale",
    )
    run.add_argument(
        "--replicas",
        type=int,
        help="processes of each service but the web bridge (default: 2 with --cluster, else 1)",
    )

    serve = commands.add_parser("serve", parents=[redis], help="run one service in the foreground")
    serve.add_argument("service", choices=sorted(SERVE_MODULES))

    routes = commands.add_parser(
        "routes", help="the best routes of corporations at a board position (JSON file)"
    )
    routes.add_argument("position", type=Path, help="position file (see docs/routes.md)")
    routes.add_argument("--corporation", help="the corporation to run, e.g. AR")
    routes.add_argument("--all", action="store_true", help="every corporation with trains")
    routes.add_argument("--json", action="store_true", help="one JSON object per corporation")

    site = commands.add_parser(
        "import", help="replay an 18xx.games game export and compare the final scores"
    )
    site.add_argument("file", type=Path, help="the site's game export (JSON)")
    site.add_argument(
        "--gateway",
        default=Addresses.from_env().gateway,
        help="the gateway to play through (default: the one `make run` starts)",
    )
    where = site.add_mutually_exclusive_group()
    where.add_argument(
        "--in-process",
        action="store_const",
        dest="on",
        const="in-process",
        help="replay on the rules in this process: no services, no Redis (fast)",
    )
    where.add_argument(
        "--own-system",
        action="store_const",
        dest="on",
        const="own-system",
        help="start Redis and the services for this command alone, on free ports, and replay "
        "through their gateway",
    )
    site.add_argument("--json", action="store_true", help="print one JSON object instead")
    site.add_argument(
        "--states",
        type=Path,
        help="write our state after every site action here, one JSON line each, in the site's "
        "per-action state format (to diff against the site's)",
    )
    site.add_argument("--api-key", help="the API key to call with (default: $SHIKOKU_API_KEY)")

    selfplay = commands.add_parser(
        "selfplay",
        help="one whole game of bots (random or heuristic), exported in the 18xx.games format",
    )
    selfplay.add_argument("--players", type=int, required=True, help="how many bots (2 to 6)")
    selfplay.add_argument("--seed", type=int, required=True, help="the same seed, the same game")
    selfplay.add_argument(
        "--export", type=Path, required=True, help="write the game's export here (JSON)"
    )
    selfplay.add_argument(
        "--profile",
        choices=("rulebook", "18xx.games"),
        default="18xx.games",
        help="the rules profile the game is played under (default: 18xx.games)",
    )
    selfplay.add_argument(
        "--json",
        action="store_true",
        help="print a JSON summary: net worths by player, end reason, actions, profile",
    )
    selfplay.add_argument(
        "--bots",
        default="random",
        help="strategies in seat order, comma-separated (random, heuristic), or one for every "
        "seat (default: random)",
    )
    selfplay.add_argument(
        "--variant",
        choices=("beginner",),
        default="",
        help="beginner: the beginner game of rulebook 14.1 (privates dealt, no auction)",
    )

    out = commands.add_parser("export", help="a game of ours in the 18xx.games export format")
    out.add_argument("game_id")
    out.add_argument("--gateway", default=Addresses.from_env().gateway)
    out.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    out.add_argument("--api-key", help="the API key to call with (default: $SHIKOKU_API_KEY)")
    out.add_argument(
        "--messages",
        action="store_true",
        help="include the table's chat as the site's message actions (not hidden messages, "
        "nor the host's)",
    )

    health = commands.add_parser(
        "health",
        help="exit 0 if a service answers SERVING to the standard gRPC health check (or an "
        "http:// URL such as the web entrypoint's /healthz answers 200), else 1",
    )
    health.add_argument(
        "address",
        nargs="?",
        help="host:port, or http://host:port/healthz (default: the `shikoku serve` of this "
        "container, where it listens)",
    )
    health.add_argument(
        "--service", default="", help="the service name to ask about (default: the server)"
    )
    health.add_argument("--timeout", type=float, default=5.0, help="seconds (default: 5)")

    keys = commands.add_parser(
        "api-key", help="issue, list or revoke client applications' API keys (in REDIS_URL)"
    )
    key_actions = keys.add_subparsers(dest="action", required=True)
    create = key_actions.add_parser(
        "create", parents=[redis], help="a new key; prints its id and then the key"
    )
    create.add_argument("name", help="the client application it is for")
    create.add_argument(
        "--per-second", type=float, help="its callers' rate limit (default: the gateway's)"
    )
    create.add_argument("--burst", type=int, help="its callers' burst (default: the gateway's)")
    create.add_argument(
        "--hosts",
        action="store_true",
        help="its users may register as tournament hosts (a host runs tables and tournaments)",
    )
    key_actions.add_parser(
        "list", parents=[redis], help="every key's id, name and whether it is revoked"
    )
    revoke = key_actions.add_parser("revoke", parents=[redis], help="refuse the key from now on")
    revoke.add_argument("key_id")

    _add_tournament_commands(commands)

    args = parser.parse_args(argv)
    if getattr(args, "redis_url", None):
        # For this process and every one it starts (`run`'s services read it as theirs).
        os.environ["REDIS_URL"] = args.redis_url
    if args.command == "api-key":
        from gateway.api_keys import api_key_command
        from infra.process_settings import RedisSettings
        from infra.settings import from_environment

        argument = getattr(args, "name", "") or getattr(args, "key_id", "")
        limits = (getattr(args, "per_second", None), getattr(args, "burst", None))
        hosts = bool(getattr(args, "hosts", False))
        redis_url = from_environment(RedisSettings, "shikoku api-key").url
        return api_key_command(redis_url, args.action, argument, *limits, hosts)
    if args.command == "run":
        try:
            from shikoku_dev.supervisor import run as run_all
        except ModuleNotFoundError as missing:
            if not launchers_missing(missing):
                raise
            print(RUN_NEEDS_A_CHECKOUT, file=sys.stderr)
            return 2
        if "REDIS_URL" in os.environ and (unreachable := _redis_unreachable("shikoku run")):
            print(unreachable, file=sys.stderr)
            return 1
        replicas = args.replicas or (2 if args.cluster else 1)
        return run_all(args.durable, args.data_dir, args.cluster, replicas)
    if args.command == "routes":
        from tools.routes_command import main as routes_main

        return routes_main(args.position, args.corporation, args.all, args.json)
    if args.command == "import":
        from tools.sitelog.command import ReplayOn, import_game

        on = ReplayOn(args.on or ReplayOn.GATEWAY.value)
        return import_game(args.file, on, args.gateway, args.json, args.api_key, args.states)
    if args.command == "selfplay":
        from tools.selfplay import main as selfplay_main

        return selfplay_main(
            args.players, args.seed, args.export, args.profile, args.json, args.bots, args.variant
        )
    if args.command == "export":
        from tools.sitelog.command import export_game

        return export_game(args.game_id, args.gateway, args.output, args.api_key, args.messages)
    if args.command == "health":
        from tools.health import main as health_main

        return health_main(args.address, args.service, args.timeout)
    if args.command == "tournament":
        return _tournament(args)
    if args.command == "bot":
        from tools.bot_command import main as bot_main

        return bot_main(args.players_json, args.strategy, args.only, args.gateway, args.api_key)
    if args.command == "serve":
        module = importlib.import_module(SERVE_MODULES[args.service])
        asyncio.run(module.main())
        return 0
    parser.error(f"unknown command {args.command}")
    return 2


def _add_tournament_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """`shikoku tournament …` and `shikoku bot`, clients of the gateway (docs/tournaments.md)."""
    gateway = argparse.ArgumentParser(add_help=False)
    gateway.add_argument(
        "--gateway",
        default=Addresses.from_env().gateway,
        help="the gateway (default: $SHIKOKU_GATEWAY_ADDR, else 127.0.0.1:50051)",
    )
    gateway.add_argument("--api-key", help="the API key to call with (default: $SHIKOKU_API_KEY)")

    tournament = commands.add_parser("tournament", help="run a tournament: create, rounds, status")
    actions = tournament.add_subparsers(dest="action", required=True)
    create = actions.add_parser(
        "create",
        parents=[gateway],
        help="register the host and the players of a CSV file and create the tournament",
    )
    create.add_argument("name", help="the tournament's name")
    create.add_argument(
        "--players",
        type=Path,
        required=True,
        help="CSV with a header: name (required), webhook, webhook_format (generic|slack|discord)",
    )
    create.add_argument("--table-size", type=int, required=True, help="players per table (2-6)")
    create.add_argument("--rounds", type=int, required=True, help="how many rounds it plays")
    create.add_argument(
        "--clock",
        help="each seat's clock: BANK[+INC][:flag|forfeit], in seconds or with s, m or h "
        "(e.g. 90m+30s:forfeit; the policy defaults to flag)",
    )
    create.add_argument(
        "--profile",
        choices=("rulebook", "18xx.games"),
        help="the rules profile of its games (default: rulebook)",
    )
    create.add_argument(
        "--json",
        action="store_true",
        help="print {tournament_id, host_token, players: [{name, player_id, credential}]}",
    )

    start = actions.add_parser(
        "start-round",
        parents=[gateway],
        help="seat and start the next round (again while it plays: the same round)",
    )
    start.add_argument("tournament_id")
    start.add_argument("--host-token", required=True, help="the host token `create` printed")
    start.add_argument(
        "--json", action="store_true", help="print {round, tables: [{table_id, game_id, seats}]}"
    )

    status = actions.add_parser(
        "status", parents=[gateway], help="the current round's tables: turns, clocks, finished"
    )
    status.add_argument("tournament_id")
    status.add_argument("--json", action="store_true", help="print one JSON document")
    status.add_argument(
        "--watch", action="store_true", help="a live table, until the tournament has finished"
    )

    standings = actions.add_parser(
        "standings", parents=[gateway], help="the standings, one row a player"
    )
    standings.add_argument("tournament_id")
    standings.add_argument("--csv", action="store_true", help="the standings as CSV")

    bot = commands.add_parser(
        "bot",
        parents=[gateway],
        help="play every seat of a tournament's players, round after round, until it ends",
    )
    bot.add_argument(
        "--players-json",
        type=Path,
        required=True,
        help="what `shikoku tournament create --json` printed",
    )
    bot.add_argument("--strategy", default="random", help="how seats play (default: random)")
    bot.add_argument("--only", help="only these players of the file (NAME,NAME,...)")


def _tournament(args: argparse.Namespace) -> int:
    from tools import tournament_command as command

    where = (args.gateway, args.api_key)
    if args.action == "create":
        return command.create(
            args.name,
            args.players,
            args.table_size,
            args.rounds,
            args.clock,
            args.profile,
            args.json,
            *where,
        )
    if args.action == "start-round":
        return command.start_round(args.tournament_id, args.host_token, args.json, *where)
    if args.action == "status":
        return command.status(args.tournament_id, args.json, args.watch, *where)
    return command.standings(args.tournament_id, args.csv, *where)


def _redis_unreachable(who: str) -> str:
    """Why Redis (REDIS_URL) does not answer, in one line; empty when it does."""
    from infra.config import RedisUnreachable, connect_redis
    from infra.process_settings import RedisSettings
    from infra.settings import from_environment

    url = from_environment(RedisSettings, who).url

    async def ping() -> None:
        await (await connect_redis(who, url)).aclose()

    try:
        asyncio.run(ping())
    except RedisUnreachable as unreachable:
        return str(unreachable)
    return ""


if __name__ == "__main__":
    sys.exit(main())
