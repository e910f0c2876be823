"""Issue 25's acceptance test: a 12-player, 2-round tournament of 4-player tables run with the
`shikoku` command alone, as real processes against `shikoku run`: `tournament create` from a
CSV file, `shikoku bot` playing every seat, `start-round` sent twice each round answering one
round, `status --json` showing every table finished, `standings --csv` with 12 rows."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shikoku.v1 import lobby_pb2
from shikoku_sdk import Client
from tests.e2e.api import System

pytestmark = pytest.mark.e2e
SHIKOKU = str(Path(sys.executable).parent / "shikoku")
PLAYERS = 12
ROUNDS = 2
ROUND_SECONDS = 240  # three random games at once, to their ends
# A public address the webhook guard accepts without a name to resolve; nothing is sent to it,
# since no round of that tournament starts.
PUBLIC_WEBHOOK = "https://192.0.32.10/hooks/shikoku"


def shikoku(system: System, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A `shikoku` command on the system's gateway, named as a host's shell names it: by
    $SHIKOKU_GATEWAY_ADDR and $SHIKOKU_API_KEY."""
    return subprocess.run(
        [SHIKOKU, *args],
        env=_environment(system),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _environment(system: System) -> dict[str, str]:
    return dict(
        os.environ,
        SHIKOKU_GATEWAY_ADDR=system.gateway,
        SHIKOKU_API_KEY=system.api_key,
        PYTHONFAULTHANDLER="1",
    )


def answer(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wait_for_round(system: System, tournament_id: str, bot: subprocess.Popen[str]) -> Any:
    """`status --json` until the round's results are recorded; the last status."""
    deadline = time.monotonic() + ROUND_SECONDS
    while time.monotonic() < deadline:
        status = answer(shikoku(system, "tournament", "status", tournament_id, "--json"))
        if status["round_finished"]:
            return status
        assert bot.poll() is None, bot.communicate()
        time.sleep(1)
    raise AssertionError(f"the round did not finish: {status}")


def test_a_tournament_day_from_the_command_line(system: System, tmp_path: Path) -> None:
    names = [f"Player {n}" for n in range(1, PLAYERS + 1)]
    players_csv = tmp_path / "players.csv"
    players_csv.write_text("name\n" + "".join(f"{name}\n" for name in names))
    created = answer(
        shikoku(
            system,
            "tournament",
            "create",
            "Shikoku Day",
            "--players",
            str(players_csv),
            "--table-size",
            "4",
            "--rounds",
            str(ROUNDS),
            "--clock",
            "2h+30s:flag",
            "--json",
        )
    )
    assert set(created) == {"tournament_id", "host_token", "players"}
    assert [p["name"] for p in created["players"]] == names
    assert all(p["player_id"] and p["credential"] for p in created["players"])
    tournament_id, host_token = created["tournament_id"], created["host_token"]
    by_id = {p["player_id"]: p["name"] for p in created["players"]}
    players_json = tmp_path / "players.json"
    players_json.write_text(json.dumps(created))

    bot, watch = (
        subprocess.Popen(
            [SHIKOKU, *command],
            env=_environment(system),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in (
            ("bot", "--players-json", str(players_json)),
            ("tournament", "status", tournament_id, "--watch"),
        )
    )
    try:
        for number in range(1, ROUNDS + 1):
            start = ("tournament", "start-round", tournament_id, "--host-token", host_token)
            first = answer(shikoku(system, *start, "--json"))
            again = answer(shikoku(system, *start, "--json"))
            assert again == first  # the same round, never a second one
            assert first["round"] == number and len(first["tables"]) == PLAYERS // 4
            seated = [seat for table in first["tables"] for seat in table["seats"]]
            assert sorted(seat["player_id"] for seat in seated) == sorted(by_id)
            assert all(by_id[seat["player_id"]] == seat["name"] for seat in seated)
            assert all(table["game_id"] for table in first["tables"])

            status = wait_for_round(system, tournament_id, bot)
            assert status["round"] == number and status["round_count"] == ROUNDS
            assert [t["table_id"] for t in status["tables"]] == [
                t["table_id"] for t in first["tables"]
            ]
            assert all(t["finished"] and t["end_reason"] for t in status["tables"])
            assert not any(t["stalled"] for t in status["tables"])
            clocks = [seat["clock"] for t in status["tables"] for seat in t["seats"]]
            assert all(clock is not None and not clock["running"] for clock in clocks)
        out, err = bot.communicate(timeout=60)  # it stops once the tournament has finished
        assert bot.returncode == 0, err
        assert f"tournament {tournament_id} finished after {ROUNDS} rounds" in out
        # The live table stops too, and (not on a terminal) shows its last state once.
        shown, err = watch.communicate(timeout=60)
        assert watch.returncode == 0, err
        assert f"round {ROUNDS} of {ROUNDS} — finished" in shown
        assert all(table["table_id"] in shown for table in first["tables"])
        assert shown.count("finished (") == len(first["tables"])
    finally:
        for process in (bot, watch):
            if process.poll() is None:
                process.kill()
                process.wait()

    final = answer(shikoku(system, "tournament", "status", tournament_id, "--json"))
    assert final["finished"] and final["round"] == ROUNDS
    assert all(table["finished"] for table in final["tables"])
    standings = shikoku(system, "tournament", "standings", tournament_id, "--csv")
    assert standings.returncode == 0, standings.stderr
    rows = list(csv.DictReader(io.StringIO(standings.stdout)))
    assert len(rows) == PLAYERS
    assert {row["player_id"] for row in rows} == set(by_id)
    assert all(int(row["games"]) == ROUNDS for row in rows)

    over = shikoku(system, "tournament", "start-round", tournament_id, "--host-token", host_token)
    assert over.returncode == 1 and over.stdout == ""
    assert over.stderr.startswith("shikoku tournament start-round: TOURNAMENT_OVER: ")
    assert len(over.stderr.splitlines()) == 1


def test_a_refused_call_is_one_line(system: System) -> None:
    done = shikoku(system, "tournament", "status", "tn-nothing")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("shikoku tournament status: TOURNAMENT_NOT_FOUND: ")
    assert len(done.stderr.splitlines()) == 1
    host = shikoku(system, "tournament", "start-round", "tn-nothing", "--host-token", "nope")
    assert host.returncode == 1 and len(host.stderr.splitlines()) == 1, host.stderr
    assert "Traceback" not in host.stderr


def test_create_sets_the_webhooks_the_players_file_names(system: System, tmp_path: Path) -> None:
    players_csv = tmp_path / "players.csv"
    players_csv.write_text(
        "name,webhook,webhook_format\n"
        f"Alice,{PUBLIC_WEBHOOK}/a,slack\n"
        "Bob,,\n"
        f"Carol,{PUBLIC_WEBHOOK}/c,\n"
    )
    base = ("tournament", "create", "Hooks", "--table-size", "3", "--rounds", "1")
    created = answer(shikoku(system, *base, "--players", str(players_csv), "--json"))
    with Client(system.gateway, created["host_token"], api_key=system.api_key) as host:
        health = host.notification_health(created["tournament_id"])
    names = {p["player_id"]: p["name"] for p in created["players"]}
    assert {names[h.player_id]: (h.display_name, h.has_target, h.format) for h in health} == {
        "Alice": ("Alice", True, lobby_pb2.NOTIFICATION_FORMAT_SLACK),
        "Bob": ("Bob", False, lobby_pb2.NOTIFICATION_FORMAT_UNSPECIFIED),
        "Carol": ("Carol", True, lobby_pb2.NOTIFICATION_FORMAT_GENERIC),
    }

    # The guard refuses a webhook into this machine (loopback is not allowed here): the command
    # says whose it is in one line and creates no tournament.
    forbidden = tmp_path / "forbidden.csv"
    forbidden.write_text("name,webhook\nAlice,\nMallory,https://127.0.0.1:8443/hook\n")
    done = shikoku(system, *base, "--players", str(forbidden), "--json")
    assert done.returncode == 1 and done.stdout == "", done
    assert done.stderr.startswith("shikoku tournament create: FORBIDDEN_WEBHOOK_ADDRESS: ")
    assert "the webhook of 'Mallory'" in done.stderr and len(done.stderr.splitlines()) == 1


def test_two_bots_share_the_tables_each_playing_only_its_own_players(
    system: System, tmp_path: Path
) -> None:
    """Each table has a seat of each bot: a bot whose seats wait hands the game back and takes
    it up again when the stream says the table moved."""
    players_csv = tmp_path / "players.csv"
    players_csv.write_text("name\nAiko\nBashir\nChen\nDara\n")
    base = ("tournament", "create", "Pairs", "--table-size", "2", "--rounds", "1")
    created = answer(shikoku(system, *base, "--players", str(players_csv), "--json"))
    players_json = tmp_path / "players.json"
    players_json.write_text(json.dumps(created))
    tournament_id = created["tournament_id"]
    start = ("tournament", "start-round", tournament_id, "--host-token", created["host_token"])
    seating = answer(shikoku(system, *start, "--json"))
    seats = [[seat["name"] for seat in table["seats"]] for table in seating["tables"]]
    halves = [",".join(table[0] for table in seats), ",".join(table[1] for table in seats)]
    bots = [
        subprocess.Popen(
            [SHIKOKU, "bot", "--players-json", str(players_json), "--only", half],
            env=_environment(system),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for half in halves
    ]
    try:
        for bot in bots:
            out, err = bot.communicate(timeout=ROUND_SECONDS)
            assert (bot.returncode, err) == (0, ""), err
            assert out.startswith(f"playing 2 players in {tournament_id}\n")
            assert f"tournament {tournament_id} finished after 1 rounds" in out
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
    final = answer(shikoku(system, "tournament", "status", tournament_id, "--json"))
    assert final["finished"] and all(table["finished"] for table in final["tables"])


def test_ctrl_c_stops_the_bot_and_the_live_status_in_one_line(
    system: System, tmp_path: Path
) -> None:
    players_csv = tmp_path / "players.csv"
    players_csv.write_text("name\nAiko\nBashir\n")
    base = ("tournament", "create", "Short", "--table-size", "2", "--rounds", "1")
    created = answer(shikoku(system, *base, "--players", str(players_csv), "--json"))
    players_json = tmp_path / "players.json"
    players_json.write_text(json.dumps(created))

    bot = subprocess.Popen(
        [SHIKOKU, "bot", "--players-json", str(players_json)],
        env=_environment(system),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_at_a_terminal,
    )
    assert bot.stdout is not None
    assert bot.stdout.readline().startswith("playing 2 players")  # under way
    assert interrupted(bot) == (130, "shikoku bot: stopped\n")

    # The live table, on a terminal, is drawn before the first change; Ctrl-C ends it.
    screen, terminal = pty.openpty()
    status = subprocess.Popen(
        [SHIKOKU, "tournament", "status", created["tournament_id"], "--watch"],
        env=_environment(system),
        stdout=terminal,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_at_a_terminal,
    )
    os.close(terminal)
    try:
        drawn = b""
        while b"Short (" not in drawn:
            assert select.select([screen], [], [], 30)[0], drawn
            drawn += os.read(screen, 4096)
        assert interrupted(status) == (130, "shikoku tournament status: stopped\n")
    finally:
        os.close(screen)


def as_at_a_terminal() -> None:
    """In the child before it runs: Ctrl-C as a terminal delivers it. A command started in the
    background of a non-interactive shell (as a CI runner may start the tests) inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt for it: Ctrl-C would never reach."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Ctrl-C: the exit status and what it wrote on stderr. A process still running 30 s
    after it is fails the test with its signal dispositions and (PYTHONFAULTHANDLER, set by
    `_environment`) every thread's stack, for whoever must find why."""
    try:
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            status = Path(f"/proc/{process.pid}/status").read_text()
            masks = [line for line in status.splitlines() if line.startswith("Sig")]
            process.send_signal(signal.SIGABRT)
            _, err = process.communicate(timeout=10)
            pytest.fail(f"still running 30 s after SIGINT; {masks}; its stacks:\n{err}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err
