"""Announcements between processes on Redis pub/sub channels: what one process changed, so
that others drop what they remember of it at once (a revoked API key, a table whose seats or
state changed). Plain PUBLISH, which a Redis Cluster passes to every node.

An announcement can be missed (no subscription at that moment, a connection that died
quietly), so a follower treats every (re)subscription as "something may have been missed" and
keeps a backstop of its own: what it remembers also lapses by time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

#: How long a follower waits for an announcement before it pings Redis, and for the ping's
#: answer (a connection that died quietly is given up within twice this); and how long it
#: waits before subscribing again.
QUIET_SECONDS = 5.0
RESUBSCRIBE_SECONDS = 0.5

#: The lobby announces here the id of a table whose log grew (a seat taken, left or replaced,
#: the table started or ended) and of a player whose credential was revoked: what a gateway
#: granted on it may no longer hold.
GRANTS_CHANGED = "{grants}:changed"


class Listener(Protocol):
    """What a follower tells: each announcement heard, and each (re)subscription, after
    which anything announced while there was none is lost. `following` is kept true while a
    subscription is in place."""

    following: bool

    def heard(self, message: str) -> None: ...

    def missed(self) -> None: ...


async def announce(redis: Redis | RedisCluster, channel: str, message: str) -> None:
    """Publishes `message`; should that fail, followers lose it, and their backstop holds."""
    try:
        await redis.publish(channel, message)
    except (RedisError, OSError) as error:
        log.warning("could not announce %s on %s: %r", message, channel, error)


async def follow(
    redis: Redis | RedisCluster,
    channel: str,
    listener: Listener,
    what: str,
    quiet_seconds: float = QUIET_SECONDS,
) -> None:
    """Tells `listener` what is announced on `channel` for as long as it runs (until
    cancelled). When Redis fails, or leaves a ping unanswered for `quiet_seconds`, it
    subscribes again every RESUBSCRIBE_SECONDS, on a Redis Cluster through each node in turn.
    `what` names the announcements in the log."""
    lost = False
    for attempt in itertools.count():
        pubsub: PubSub | None = None
        try:
            pubsub = _pubsub(redis, attempt)
            await pubsub.subscribe(channel)
            pinged = False
            while True:
                message = await pubsub.get_message(timeout=quiet_seconds)
                if message is None and pinged:
                    raise ConnectionError(f"no answer to a ping in {quiet_seconds:g} s")
                pinged = message is None
                if message is None:
                    await pubsub.ping()  # answered by a "pong" message
                elif message["type"] == "subscribe":
                    listener.missed()
                    listener.following = True
                    if lost:
                        lost = False
                        log.warning("following %s again", what)
                elif message["type"] == "message":
                    listener.heard(_text(message["data"]))
        except Exception as error:  # whatever it is, following must go on
            if not lost:
                lost = True
                log.warning("lost %s; subscribing again: %r", what, error)
        finally:
            listener.following = False
            if pubsub is not None:
                await _close(pubsub)
        await asyncio.sleep(RESUBSCRIBE_SECONDS)


def _pubsub(redis: Redis | RedisCluster, attempt: int) -> PubSub:
    """A subscription of its own: first where the client routes the channel, then (on a
    cluster, after a failure) through each node in turn, as PUBLISH reaches every node."""
    if isinstance(redis, RedisCluster) and attempt and (nodes := redis.get_nodes()):
        return redis.pubsub(node=nodes[attempt % len(nodes)])
    return redis.pubsub()


def _text(data: Any) -> str:
    return data.decode() if isinstance(data, bytes) else str(data)


async def _close(pubsub: PubSub) -> None:
    with contextlib.suppress(Exception):  # a connection already lost has nothing to close
        await pubsub.aclose()  # type: ignore[no-untyped-call]
