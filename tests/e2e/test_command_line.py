"""The `shikoku` command's manners, as real processes: `--redis-url` honoured over $REDIS_URL;
an unreachable Redis or gateway is one line on stderr and a non-zero exit, never a traceback;
long work shows plain progress lines when stderr is not a terminal (and a bar when it is);
`make run`'s banner gives the REDIS_URL to copy and the board page's address with its key."""

from __future__ import annotations

import json
import os
import pty
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from shikoku_dev.redis_server import free_port
from shikoku_sdk import Client, RandomPlayer, seat_table
from tests.e2e.api import System
from tests.e2e.launch import _own_database
from tests.shared import SITE_GAMES
from tools.sitelog.export_format import effective_actions, load

pytestmark = pytest.mark.e2e
SHIKOKU = str(Path(sys.executable).parent / "shikoku")
SITE_GAME = SITE_GAMES / "314.json"
PROGRESS = re.compile(r"^shikoku (import|export): (\d+)/(\d+) (actions|events) \((\d+)%\)$")


def closed_redis() -> str:
    """A Redis URL nobody answers at (a free port)."""
    return f"redis://127.0.0.1:{free_port()}/0"


def env(**settings: str) -> dict[str, str]:
    """This environment on free service ports, with `settings`; REDIS_URL only if given."""
    base = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    for name in ("GATEWAY", "LOBBY", "RULES", "ROUTES", "WEB"):
        base[f"SHIKOKU_{name}_ADDR"] = f"127.0.0.1:{free_port()}"
    base["SHIKOKU_INTERNAL_TOKEN"] = "command-line-tests"
    return {**base, **settings}


def shikoku(
    *args: str, environment: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SHIKOKU, *args],
        env=environment or env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The only line the command wrote (stderr), after checking it failed and said no more."""
    assert done.returncode != 0, done
    assert done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


# -- Redis ------------------------------------------------------------------------------------

REDIS_COMMANDS = [
    ("api-key", "create", "an application"),
    ("api-key", "list"),
    ("api-key", "revoke", "k-000000000000"),
    ("run",),
    ("serve", "rules"),
    ("serve", "lobby"),
    ("serve", "gateway"),
]


@pytest.mark.parametrize("command", REDIS_COMMANDS, ids=" ".join)
def test_an_unreachable_redis_url_is_one_line_and_a_failure(
    command: Sequence[str], redis_url: str
) -> None:
    """$REDIS_URL names a Redis that answers, --redis-url one that does not: the command must
    use the flag's, so it fails (were the flag ignored, it would succeed or start serving)."""
    unreachable = closed_redis()
    done = shikoku(*command, "--redis-url", unreachable, environment=env(REDIS_URL=redis_url))
    line = one_line(done)
    assert f"cannot reach Redis at {unreachable}" in line
    assert line.startswith(("shikoku api-key:", "shikoku run:", f"{command[-1]}:"))


def test_an_unreachable_cluster_is_one_line_too() -> None:
    url = f"redis+cluster://127.0.0.1:{free_port()}"
    line = one_line(shikoku("api-key", "list", "--redis-url", url))
    assert line.startswith(f"shikoku api-key: cannot reach Redis at {url}")


def test_without_redis_url_the_environment_names_redis() -> None:
    unreachable = closed_redis()
    line = one_line(shikoku("api-key", "list", environment=env(REDIS_URL=unreachable)))
    assert f"cannot reach Redis at {unreachable}" in line


def test_redis_url_is_honoured_over_the_environment(redis_url: str) -> None:
    own = _own_database(redis_url)
    broken = env(REDIS_URL=closed_redis())
    created = shikoku("api-key", "create", "flag test", "--redis-url", own, environment=broken)
    assert created.returncode == 0, created.stderr
    key_id = created.stdout.split()[0]
    listed = shikoku("api-key", "list", "--redis-url", own, environment=broken)
    assert listed.returncode == 0, listed.stderr
    assert f"{key_id}\tflag test\tactive" in listed.stdout
    revoked = shikoku("api-key", "revoke", key_id, "--redis-url", own, environment=broken)
    assert revoked.returncode == 0, revoked.stderr
    listed = shikoku("api-key", "list", "--redis-url", own, environment=broken)
    assert f"{key_id}\tflag test\trevoked" in listed.stdout


# -- shikoku run's banner ---------------------------------------------------------------------


@dataclass
class Running:
    process: subprocess.Popen[str]
    lines: list[str]
    env: dict[str, str]

    def line(self, pattern: str) -> re.Match[str]:
        found = [m for line in self.lines if (m := re.fullmatch(pattern, line))]
        assert len(found) == 1, (pattern, self.lines)
        return found[0]


@pytest.fixture
def running() -> Iterator[list[Running]]:
    """`shikoku run` processes the test starts with `run_system`; stopped after it."""
    started: list[Running] = []
    yield started
    for system in started:
        system.process.send_signal(signal.SIGINT)
        assert system.process.wait(timeout=30) == 0


def run_system(started: list[Running], *args: str, environment: dict[str, str]) -> Running:
    process = subprocess.Popen(
        [SHIKOKU, "run", *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    system = Running(process, [], environment)
    started.append(system)
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 60
    while not system.lines or not system.lines[-1].startswith("all services running"):
        try:
            system.lines.append(lines.get(timeout=max(deadline - time.monotonic(), 0.01)))
        except queue.Empty:
            pytest.fail("shikoku run did not start: " + "\n".join(system.lines))
    return system


def test_make_runs_banner_gives_the_redis_url_and_the_pages_with_their_key(
    running: list[Running],
) -> None:
    system = run_system(running, environment=env())
    redis_url = system.line(r"REDIS_URL=(redis://127\.0\.0\.1:\d+/0)").group(1)
    key = system.line(r"development API key: (k-\S+)").group(1)
    web = system.env["SHIKOKU_WEB_ADDR"]
    page = system.line(rf"browser: (http://{re.escape(web)}/\?api_key=(\S+))")
    assert page.group(2) == key  # the page reads its key from ?api_key= (app.js)

    # What the lines say works: the URL is this system's Redis (its key is there), the page
    # answers at the address, and the key is one the gateway accepts.
    listed = shikoku("api-key", "list", "--redis-url", redis_url)
    assert listed.returncode == 0, listed.stderr
    assert f"{key.split('.')[0]}\tdevelopment\tactive" in listed.stdout
    with urllib.request.urlopen(page.group(1), timeout=10) as answer:
        assert answer.status == 200
        assert 'name="api_key"' in answer.read().decode()
    console = system.line(rf"host console: (http://{re.escape(web)}/host\?api_key=(\S+))")
    assert console.group(2) == key
    with urllib.request.urlopen(console.group(1), timeout=10) as answer:
        assert answer.status == 200
        assert "host console" in answer.read().decode()
    with Client(system.env["SHIKOKU_GATEWAY_ADDR"], api_key=key) as client:
        assert client.create_table(2).table.table_id


def test_run_uses_the_redis_its_flag_names(running: list[Running], redis_url: str) -> None:
    own = _own_database(redis_url)
    system = run_system(running, "--redis-url", own, environment=env())
    assert not any(line.startswith(("REDIS_URL=", "development API key")) for line in system.lines)
    web = system.env["SHIKOKU_WEB_ADDR"]
    system.line(rf"browser: http://{re.escape(web)}/")  # no key of ours on a Redis of theirs
    created = shikoku("api-key", "create", "run flag test", "--redis-url", own)
    assert created.returncode == 0, created.stderr
    key = created.stdout.splitlines()[-1]
    # The gateway checks keys in the Redis the flag named: this key, issued there, is accepted.
    with Client(system.env["SHIKOKU_GATEWAY_ADDR"], api_key=key) as client:
        assert client.create_table(2).table.table_id


# -- the gateway ------------------------------------------------------------------------------


def test_an_unreachable_gateway_is_one_line_and_a_failure() -> None:
    gateway = f"127.0.0.1:{free_port()}"
    commands = [
        ["export", "t-nothing", "--gateway", gateway, "--api-key", "k-x.y"],
        ["import", str(SITE_GAME), "--gateway", gateway, "--api-key", "k-x.y"],
    ]
    processes = [
        subprocess.Popen([SHIKOKU, *c], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    for command, process in zip(commands, processes, strict=True):
        out, err = process.communicate(timeout=60)
        line = one_line(subprocess.CompletedProcess(command, process.returncode, out, err))
        assert line == f"shikoku {command[0]}: no gateway answers at {gateway}"


def test_a_refused_import_is_one_line(system: System) -> None:
    done = shikoku("import", str(SITE_GAME), "--gateway", system.gateway, "--api-key", "k-x.y")
    assert one_line(done) == "shikoku import: INVALID_API_KEY: the API key is not valid"


# -- progress ---------------------------------------------------------------------------------


def progress_lines(stderr: str) -> list[tuple[int, int]]:
    """Every line of `stderr` as a progress line's (done, total); fails on any other."""
    assert "\r" not in stderr and "\x1b" not in stderr, repr(stderr[-500:])
    counts = []
    for line in stderr.splitlines():
        found = PROGRESS.match(line)
        assert found, line
        done, total, share = int(found[2]), int(found[3]), int(found[5])
        assert share == 100 * done // total
        counts.append((done, total))
    return counts


def test_an_import_off_a_terminal_shows_progress_as_occasional_plain_lines(
    system: System,
) -> None:
    actions = len(effective_actions(load(SITE_GAME).actions))
    begun = time.monotonic()
    done = shikoku(
        "import",
        str(SITE_GAME),
        "--gateway",
        system.gateway,
        "--api-key",
        system.api_key,
        timeout=300,
    )
    seconds = time.monotonic() - begun
    assert done.returncode == 0, done.stderr
    counts = progress_lines(done.stderr)
    assert counts[-1] == (actions, actions)
    assert [n for n, _ in counts] == sorted(n for n, _ in counts)
    # Occasional: one every 5 s and the last, not one per action.
    assert len(counts) <= seconds / 5 + 2 < actions
    assert "actions replayed" in done.stdout  # the report stays on stdout


@pytest.fixture(scope="module")
def played(system: System) -> str:
    """A game of a few dozen actions."""
    with Client(system.gateway, api_key=system.api_key) as client:
        table = seat_table(client, 3)
        player = RandomPlayer(table.game_id, table.seats, seed=5)
        for _ in range(40):
            assert player.step()
    return table.game_id


def test_an_export_off_a_terminal_keeps_stdout_for_the_export(system: System, played: str) -> None:
    done = shikoku("export", played, "--gateway", system.gateway, "--api-key", system.api_key)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["id"] == played and len(document["actions"]) >= 40
    done_count, total = progress_lines(done.stderr)[-1]
    assert done_count == total > 40  # events, more than the actions


def test_an_export_on_a_terminal_draws_a_bar(system: System, played: str, tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    out = tmp_path / "export.json"
    command = [SHIKOKU, "export", played, "--gateway", system.gateway, "--api-key"]
    process = subprocess.Popen(
        [*command, system.api_key, "-o", str(out)], stderr=follower, stdout=follower
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end closed: the process is done
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0
    text = drawn.decode(errors="replace")
    assert "━" in text and "shikoku export" in text  # rich's bar, redrawn in place
    assert not any(PROGRESS.match(line.strip()) for line in text.splitlines())
    assert json.loads(out.read_text())["id"] == played
