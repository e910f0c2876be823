"""The 18xx.games site's engine (Ruby) as a subprocess: where it is, and one export replayed on
it by `site_states.rb`, with the site's state after every action."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("site_states.rb")
RUN_SECONDS = 600


class EngineMissing(RuntimeError):
    """Ruby or the engine's checkout is not where the environment says."""


@dataclass(frozen=True, slots=True)
class SiteEngine:
    """`SITE_ENGINE`: a checkout of tobymao/18xx (its lib/engine); `REQUIRE_ALL`: one of
    jarmo/require_all (the one gem the engine needs); `RUBY`: the interpreter. The defaults
    are checkouts beside this repository, in ../site-engine/."""

    ruby: str
    engine: Path
    require_all: Path

    @classmethod
    def from_env(cls) -> SiteEngine:
        beside = REPO.parent / "site-engine"
        return cls(
            ruby=os.environ.get("RUBY", "ruby"),
            engine=Path(os.environ.get("SITE_ENGINE", beside / "18xx")),
            require_all=Path(os.environ.get("REQUIRE_ALL", beside / "require_all")),
        )

    def check(self) -> None:
        """Raises EngineMissing with what to do when something is not there."""
        if shutil.which(self.ruby) is None:
            raise EngineMissing(f"no Ruby interpreter {self.ruby!r} (set RUBY, or install ruby)")
        if not (self.engine / "lib" / "engine.rb").is_file():
            raise EngineMissing(
                f"no 18xx.games engine at {self.engine} (lib/engine.rb): set SITE_ENGINE to a "
                "checkout of tobymao/18xx (docs/crosscheck.md)"
            )
        if not (self.require_all / "lib" / "require_all.rb").is_file():
            raise EngineMissing(
                f"no require_all at {self.require_all} (lib/require_all.rb): set REQUIRE_ALL to "
                "a checkout of jarmo/require_all (docs/crosscheck.md)"
            )

    def revision(self) -> str:
        """The engine's commit, if its checkout says (a REVISION file or git)."""
        stamp = self.engine / "REVISION"
        if stamp.is_file():
            return stamp.read_text().strip()
        done = subprocess.run(
            ["git", "-C", str(self.engine), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    def replay(self, export: Path, states: Path) -> SiteRun:
        """Replays `export` on the site's engine, writing its per-action states to `states`."""
        command = [
            self.ruby,
            "-I",
            str(self.engine / "lib"),
            "-I",
            str(self.require_all / "lib"),
            str(SCRIPT),
            str(export),
            str(states),
        ]
        env = {**os.environ, "ENGINE_LOG_LEVEL": "4"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=RUN_SECONDS)
        if done.returncode != 0:
            raise RuntimeError(f"site_states.rb failed on {export}: {done.stderr[-2000:]}")
        return SiteRun.from_document(json.loads(done.stdout))


@dataclass(frozen=True, slots=True)
class SiteRun:
    """What the site's engine made of an export: `accepted` when it took every action as it
    is; otherwise the first action it refused and why. `result`: net worths by player id."""

    accepted: bool
    actions: int
    finished: bool
    end_reason: str
    result: dict[str, int]
    refused_action: int | None = None
    refused: dict[str, Any] | None = None
    exception: str = ""

    @classmethod
    def from_document(cls, raw: dict[str, Any]) -> SiteRun:
        refused = raw.get("refused") or None
        return cls(
            accepted=bool(raw["accepted"]),
            actions=int(raw["actions"]),
            finished=bool(raw["finished"]),
            end_reason=str(raw.get("game_end_reason") or ""),
            result={str(k): int(v) for k, v in (raw.get("result") or {}).items()},
            refused_action=int(refused["action_id"]) if refused else None,
            refused=refused["action"] if refused else None,
            exception=str(refused["exception"]) if refused else "",
        )

    def as_document(self) -> dict[str, Any]:
        """The form `site_states.rb` prints (and the recordings keep)."""
        refused = None
        if self.refused_action is not None:
            refused = {
                "action_id": self.refused_action,
                "action": self.refused,
                "exception": self.exception,
            }
        return {
            "accepted": self.accepted,
            "refused": refused,
            "actions": self.actions,
            "finished": self.finished,
            "game_end_reason": self.end_reason or None,
            "result": self.result,
        }
