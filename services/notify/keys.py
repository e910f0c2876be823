"""Where the notifications' records live in Redis. Each key carries the hash tag of what it
belongs to (a player, a game, a feed shard), so no operation spans slots of a cluster."""

from __future__ import annotations


def target_key(player_id: str) -> str:
    """Hash: url, format (generic|slack|discord), secret (hex; generic only)."""
    return f"notify:target:{{{player_id}}}"


def health_key(player_id: str) -> str:
    """Hash: delivered, failed_attempts, given_up, last_error, last_error_at_ms."""
    return f"notify:health:{{{player_id}}}"


def turns_key(shard: int) -> str:
    """Hash: game_id -> what the notifier last told of the game (services/notify/turns.py
    Told), beside the shard's feed, outbox and due set so that one script updates them all."""
    return f"notify:turns:{{{shard}}}"


def outbox_key(shard: int) -> str:
    """Hash: notification_id -> the notification (JSON), until delivered or given up."""
    return f"notify:outbox:{{{shard}}}"


def due_key(shard: int) -> str:
    """Sorted set: notification_id scored by when its next attempt is due (ms since epoch)."""
    return f"notify:due:{{{shard}}}"


# The two records the lobby and the rules service write for the notifier (issue 25's shared
# contract); the same strings as services/projections/game_summaries.py's helpers.
def feed_key(shard: int) -> str:
    """Stream: {game_id, version} after each summary the projector handled."""
    return f"summaries:feed:{{{shard}}}"


def game_players_key(game_id: str) -> str:
    """Hash: table_id, tournament_id, round, seat:<n> = player_id."""
    return f"game:{{{game_id}}}:players"
