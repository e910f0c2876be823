"""What a webhook is sent (pure): one notification in the target's format, and its signature.

The formats are lobby.proto's NotificationFormat: `generic` a JSON object signed with
`X-Shikoku-Signature: sha256=<hex>` (HMAC-SHA256 of the body under the target's secret),
`slack` {"text": ...} and `discord` {"content": ...}, their incoming webhooks' shapes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

SIGNATURE_HEADER = "X-Shikoku-Signature"
EVENTS = ("your_turn", "game_started", "round_started", "game_ended")


@dataclass(frozen=True, slots=True)
class Notification:
    """One notification to one player; `notification_id` is the same on every retry (and on
    every notifier that works it out again from the same turn change)."""

    notification_id: str
    event: str
    player_id: str
    table_id: str
    game_id: str
    version: int
    tournament_id: str = ""
    round: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Notification:
        return cls(**json.loads(text))


def notification_id(game_id: str, version: int, event: str, player_id: str) -> str:
    """Stable: what happened (the event at the summary's version), to whom."""
    digest = hashlib.sha256(f"{game_id}\n{version}\n{event}\n{player_id}".encode()).hexdigest()
    return f"n-{digest[:32]}"


def board_link(public_url: str, game_id: str) -> str:
    """The board page of the game on the public web entrypoint."""
    return f"{public_url.rstrip('/')}/?{urlencode({'game': game_id})}"


def sentence(notification: Notification) -> str:
    """The notification in words, for chat webhooks."""
    game = notification.game_id
    match notification.event:
        case "your_turn":
            return f"It is your turn in {game}."
        case "game_started":
            return f"Your game {game} has started."
        case "round_started":
            return f"Round {notification.round} has started: your table's game is {game}."
        case _:
            return f"Your game {game} has ended."


def message(
    notification: Notification, format_: str, secret: str, public_url: str
) -> tuple[bytes, dict[str, str]]:
    """The body and the headers of the request that carries `notification`."""
    link = board_link(public_url, notification.game_id)
    document: dict[str, Any]
    if format_ == "slack":
        document = {"text": f"{sentence(notification)} <{link}|Open the board>"}
    elif format_ == "discord":
        document = {"content": f"{sentence(notification)} {link}"}
    else:
        document = {
            "event": notification.event,
            "notification_id": notification.notification_id,
            "player_id": notification.player_id,
            "table_id": notification.table_id,
            "game_id": notification.game_id,
            "version": notification.version,
            "link": link,
        }
        if notification.tournament_id:
            document |= {"tournament_id": notification.tournament_id, "round": notification.round}
    body = json.dumps(document, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json"}
    if format_ == "generic" and secret:
        headers[SIGNATURE_HEADER] = signature(secret, body)
    return body, headers


def signature(secret: str, body: bytes) -> str:
    """The header's value: `sha256=` and the HMAC-SHA256 of `body` keyed by `secret` as the
    receiver was given it (its characters' bytes, as GitHub's and Slack's signatures are)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
