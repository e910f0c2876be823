"""`shikoku tournament` and `shikoku bot` before they reach a server: the players' CSV file and the
clock flag read or refused, the status of a table, and every refusal one line on stderr with
its exit status (2: a file or flag it cannot use, or no gateway at the address), run as real
processes. Against a real system: tests/e2e/test_tournament_day.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shikoku.v1 import lobby_pb2
from shikoku_dev.redis_server import free_port
from tools.bot_command import read_players_json
from tools.tournament_input import Entrant, InputError, parse_clock, read_players
from tools.tournament_status import STALLED_AFTER_MS, table_document

SHIKOKU = str(Path(sys.executable).parent / "shikoku")


def players_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "players.csv"
    path.write_text(text)
    return path


def one_line(*args: str) -> str:
    """The only line a failing `shikoku` command wrote (stderr), after checking its exit
    status is 2 and it wrote nothing else."""
    done = subprocess.run([SHIKOKU, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.rstrip("\n")


# -- the players' file ------------------------------------------------------------------------


def test_a_players_file_with_webhooks(tmp_path: Path) -> None:
    path = players_file(
        tmp_path,
        "name,webhook,webhook_format\n"
        "Alice,https://hooks.example/a,slack\n"
        '"Bob, Jr.",,\n'
        "Carol,https://hooks.example/c,\n"
        "Dave,https://hooks.example/d,Discord\n",
    )
    assert read_players(path) == [
        Entrant("Alice", "https://hooks.example/a", lobby_pb2.NOTIFICATION_FORMAT_SLACK),
        Entrant("Bob, Jr."),
        Entrant("Carol", "https://hooks.example/c", lobby_pb2.NOTIFICATION_FORMAT_GENERIC),
        Entrant("Dave", "https://hooks.example/d", lobby_pb2.NOTIFICATION_FORMAT_DISCORD),
    ]


def test_only_names_and_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "players.csv"
    path.write_bytes("\ufeffname\nÅsa\n  Bo  \n".encode())
    assert read_players(path) == [Entrant("Åsa"), Entrant("Bo")]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("player,webhook\nAlice,\n", "the header has no 'name' column"),
        ("name,email\nAlice,a@example.com\n", "unknown column 'email'"),
        ("name\n", "no players"),
        ("", "the header has no 'name' column"),
        ("name\nAlice\n\nAlice\n", "line 4: 'Alice' is named twice"),
        ("name,webhook\nAlice,https://x.example,extra\n", "line 2: more fields than the header"),
        ("name,webhook\n,https://x.example\n", "line 2: the name is empty"),
        ("name\n" + "x" * 41 + "\n", "line 2: the name is longer than 40 characters"),
        ("name,webhook,webhook_format\nA,https://x.example,teams\n", "unknown webhook_format"),
        ("name,webhook_format\nA,slack\n", "line 2: a webhook_format without a webhook"),
    ],
)
def test_a_players_file_it_cannot_use_is_refused(tmp_path: Path, text: str, says: str) -> None:
    path = players_file(tmp_path, text)
    with pytest.raises(InputError) as refused:
        read_players(path)
    assert str(refused.value).startswith(str(path))
    assert says in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_missing_players_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.csv: cannot read it: No such file"):
        read_players(tmp_path / "missing.csv")


# -- the clock flag ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "bank", "increment", "policy"),
    [
        ("600", 600, 0, lobby_pb2.CLOCK_POLICY_FLAG),
        ("90m+30s:forfeit", 5400, 30, lobby_pb2.CLOCK_POLICY_FORFEIT),
        ("1h+20", 3600, 20, lobby_pb2.CLOCK_POLICY_FLAG),
        ("45s:flag", 45, 0, lobby_pb2.CLOCK_POLICY_FLAG),
        ("2h+1m", 7200, 60, lobby_pb2.CLOCK_POLICY_FLAG),
    ],
)
def test_the_clock_flag(
    flag: str, bank: int, increment: int, policy: lobby_pb2.ClockPolicy.ValueType
) -> None:
    assert parse_clock(flag) == lobby_pb2.ClockOptions(
        bank_seconds=bank, increment_seconds=increment, policy=policy
    )


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        ("ten minutes", "expected BANK[+INC][:flag|forfeit]"),
        ("10m+", "expected BANK[+INC][:flag|forfeit]"),
        ("+30", "expected BANK[+INC][:flag|forfeit]"),
        ("10d", "expected BANK[+INC][:flag|forfeit]"),
        ("10m:resign", "the policy is flag or forfeit, not 'resign'"),
        ("0+30", "the bank must be more than 0 seconds"),
        ("9999999h", "more than 2147483647 seconds"),
    ],
)
def test_a_clock_flag_it_cannot_read_is_refused(flag: str, says: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_clock(flag)
    assert str(refused.value).startswith(f"--clock {flag!r}: ")
    assert says in str(refused.value)


# -- the bot's players file -------------------------------------------------------------------


def created(tmp_path: Path) -> Path:
    path = tmp_path / "players.json"
    players = [
        {"name": name, "player_id": f"p-{n}", "credential": f"c-{n}"}
        for n, name in enumerate(("Alice", "Bob", "Carol"))
    ]
    path.write_text(json.dumps({"tournament_id": "tn-1", "host_token": "h", "players": players}))
    return path


def test_the_bot_reads_what_create_printed_and_only_whom_it_is_told(tmp_path: Path) -> None:
    path = created(tmp_path)
    everyone = read_players_json(path)
    assert everyone.tournament_id == "tn-1"
    assert [p.name for p in everyone.players] == ["Alice", "Bob", "Carol"]
    some = read_players_json(path, ["Carol", "Alice"])
    assert [(p.name, p.player_id, p.credential) for p in some.players] == [
        ("Alice", "p-0", "c-0"),
        ("Carol", "p-2", "c-2"),
    ]
    with pytest.raises(InputError, match="--only: 'Zed' is not a player of"):
        read_players_json(path, ["Alice", "Zed"])
    (tmp_path / "bad.json").write_text('{"players": []}')
    with pytest.raises(InputError, match="not what `shikoku tournament create --json` prints"):
        read_players_json(tmp_path / "bad.json")


# -- a table's status -------------------------------------------------------------------------


def test_a_tables_status_counts_its_clocks_down_and_marks_it_stalled() -> None:
    now = 10_000_000
    entry = lobby_pb2.TournamentTable(table_id="t-1", player_ids=["p-a", "p-b"])
    table = lobby_pb2.Table(
        table_id="t-1",
        game_id="t-1",
        status=lobby_pb2.TABLE_STATUS_STARTED,
        seats=[
            lobby_pb2.Seat(
                number=1,
                player_name="A",
                taken=True,
                clock=lobby_pb2.SeatClock(
                    remaining_ms=60_000, used_ms=5_000, running=True, as_of_ms=now - 20_000
                ),
            ),
            lobby_pb2.Seat(
                number=2,
                player_name="B",
                taken=True,
                ran_out="flagged",
                clock=lobby_pb2.SeatClock(remaining_ms=0, used_ms=90_000, as_of_ms=now - 20_000),
            ),
        ],
        game=lobby_pb2.GameSummary(
            version=42,
            round="operating_round",
            round_number=2,
            operating="AR",
            phase="3",
            acting_seats=[1],
            moved_at_ms=now - STALLED_AFTER_MS,
        ),
    )
    row = table_document(entry, table, now)
    assert row["whose_turn"] == ["A"] and row["game_round"] == "operating_round"
    assert row["seats"][0] == {
        "seat": 1,
        "player_id": "p-a",
        "name": "A",
        "clock": {"remaining_ms": 40_000, "used_ms": 25_000, "running": True},
        "ran_out": "",
    }
    assert row["seats"][1]["clock"] == {"remaining_ms": 0, "used_ms": 90_000, "running": False}
    assert row["seats"][1]["ran_out"] == "flagged"
    assert row["stalled"] and not row["finished"] and row["status"] == "started"
    assert not table_document(entry, table, now - 1)["stalled"]  # moved just under the limit
    table.game.finished = True
    assert not table_document(entry, table, now)["stalled"]  # a finished game never stalls
    assert table_document(entry, table, now)["finished"]


def test_a_table_not_yet_told_of() -> None:
    row = table_document(lobby_pb2.TournamentTable(table_id="t-2"), None, 0)
    assert row["table_id"] == "t-2" and row["seats"] == [] and not row["finished"]


def test_a_recorded_result_finishes_a_table_before_its_last_change_is_heard() -> None:
    entry = lobby_pb2.TournamentTable(table_id="t-3", end_reason="bank")
    playing = lobby_pb2.Table(
        table_id="t-3",
        status=lobby_pb2.TABLE_STATUS_STARTED,
        game=lobby_pb2.GameSummary(acting_seats=[2], moved_at_ms=1),
    )
    row = table_document(entry, playing, STALLED_AFTER_MS + 1)
    assert row["finished"] and row["end_reason"] == "bank" and not row["stalled"]


# -- one-line refusals, as processes ----------------------------------------------------------


def test_a_missing_players_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nobody.csv"
    line = one_line(
        "tournament", "create", "Cup", "--players", str(missing), "--table-size", "4",
        "--rounds", "2",
    )  # fmt: skip
    assert (
        line == f"shikoku tournament create: {missing}: cannot read it: No such file or directory"
    )


def test_a_bad_column_and_a_bad_clock_are_one_line(tmp_path: Path) -> None:
    path = players_file(tmp_path, "name,mail\nAlice,a@example.com\n")
    base = ("tournament", "create", "Cup", "--table-size", "4", "--rounds", "1")
    line = one_line(*base, "--players", str(path))
    assert line.startswith(f"shikoku tournament create: {path}: unknown column 'mail'")
    good = players_file(tmp_path, "name\nAlice\nBob\n")
    line = one_line(*base, "--players", str(good), "--clock", "soon")
    assert line.startswith("shikoku tournament create: --clock 'soon': expected BANK")


def test_every_command_says_in_one_line_that_no_gateway_answers(tmp_path: Path) -> None:
    gateway = f"127.0.0.1:{free_port()}"
    players = players_file(tmp_path, "name\nAlice\nBob\n")
    bot_players = created(tmp_path)
    commands = [
        ("tournament create", ["Cup", "--players", str(players), "--table-size", "2",
                               "--rounds", "1"]),
        ("tournament start-round", ["tn-1", "--host-token", "h"]),
        ("tournament status", ["tn-1", "--json"]),
        ("tournament status", ["tn-1", "--watch"]),
        ("tournament standings", ["tn-1", "--csv"]),
        ("bot", ["--players-json", str(bot_players)]),
    ]  # fmt: skip
    processes = [
        subprocess.Popen(
            [SHIKOKU, *name.split(), *args, "--gateway", gateway, "--api-key", "k-x.y"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, args in commands
    ]
    for (name, _), process in zip(commands, processes, strict=True):
        out, err = process.communicate(timeout=60)
        assert (process.returncode, out) == (2, ""), err
        assert err == f"shikoku {name}: no gateway answers at {gateway}\n"


def test_the_bot_refuses_a_strategy_it_does_not_have(tmp_path: Path) -> None:
    line = one_line("bot", "--players-json", str(created(tmp_path)), "--strategy", "greedy")
    assert line == "shikoku bot: --strategy 'greedy': one of random, heuristic"
