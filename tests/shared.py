"""Where the shared folder (rules, real games) is: SHIKOKU_SHARED, else ../shared."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHIKOKU_SHARED", REPO.parent / "shared"))
SITE_GAMES = SHARED / "fixtures" / "18xx.games" / "1889"


def site_game_files() -> list[Path]:
    """Every shared 18xx.games export (not the states or routes side files)."""
    return sorted(p for p in SITE_GAMES.glob("*.json"))
