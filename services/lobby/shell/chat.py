"""A table's chat in Redis, kept with the table (its keys carry the table's hash tag, as
`table:{t-…}:events` does, so on a Redis Cluster they live in the table's slot), and the
watches that follow it.

- `table:{t}:chat` is the chat's log, a stream whose entry n is `n-0` (position n): each entry
  says that message `number` was said, or hidden;
- `table:{t}:chat:messages` holds each message as it now stands (a hidden one without its
  text), by number; its length is the chat's message count;
- `table:{t}:chat:recent` holds each author's last post times (for the rate limit);
- `table:{t}:chat:requests` maps the key of a post made under a request id to its message, so
  that a retry, or a copy sent at once, finds the message said instead of saying it again.

Every write is one script that first checks that the chat is as its caller read it (the same
message count, the same message), so the domain's decisions (services/lobby/domain/chat.py)
are made on what is current, and a refused post writes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from datetime import timedelta
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import RedisError

from infra.eventstore import EventStore
from kernel.rejection import Kind, Rejected
from services.lobby.domain import chat, tables
from services.lobby.shell.wire import chat_message_to_proto
from shikoku.v1 import lobby_pb2

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 10
READ_CHUNK = 200
BLOCK_MS = 5_000
FEED_RETRY_SECONDS = 1.0

# KEYS: log, messages, recent, requests. ARGV: expected count, request key ("" for none),
# message (JSON), author's seat, author's recent posts. Returns {1, number} when said,
# {2, number} when the request key had said it before, {0, count} when the count has moved.
_POST = """
if ARGV[2] ~= '' then
  local known = redis.call('HGET', KEYS[4], ARGV[2])
  if known then return {2, tonumber(known)} end
end
local count = redis.call('HLEN', KEYS[2])
if count ~= tonumber(ARGV[1]) then return {0, count} end
local number = count + 1
redis.call('HSET', KEYS[2], number, ARGV[3])
redis.call('XADD', KEYS[1], (redis.call('XLEN', KEYS[1]) + 1) .. '-0', 'number', number,
  'kind', 'said')
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[4], ARGV[2], number) end
return {1, number}
"""

# KEYS: log, messages. ARGV: number, the message as read (JSON), the message hidden (JSON).
# Returns 1 when hidden, 0 when the message is no longer as read.
_HIDE = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('XADD', KEYS[1], (redis.call('XLEN', KEYS[1]) + 1) .. '-0', 'number', ARGV[1],
  'kind', 'hidden')
return 1
"""


def log_key(table_id: str) -> str:
    return f"table:{{{table_id}}}:chat"


def _messages_key(table_id: str) -> str:
    return f"{log_key(table_id)}:messages"


def _recent_key(table_id: str) -> str:
    return f"{log_key(table_id)}:recent"


def _requests_key(table_id: str) -> str:
    return f"{log_key(table_id)}:requests"


def _encoded(message: chat.Message) -> str:
    return json.dumps(asdict(message), separators=(",", ":"), sort_keys=True)


def _decoded(raw: bytes) -> chat.Message:
    return chat.Message(**json.loads(raw))


def _times(raw: bytes | None) -> list[int]:
    return [int(t) for t in raw.decode().split(",")] if raw else []


CONTENDED = Rejected("CONTENDED", "the chat changed while saying this; try again", Kind.ABORTED)


def rate_limited(wait_ms: int) -> Rejected:
    return Rejected(
        "CHAT_RATE_LIMITED",
        f"at most {chat.RATE_COUNT} messages in {chat.RATE_WINDOW_MS // 1000} seconds; "
        f"wait {wait_ms / 1000:.1f} s",
        Kind.RESOURCE_EXHAUSTED,
        {"limit": chat.RATE_COUNT, "window_seconds": chat.RATE_WINDOW_MS // 1000},
        retry_after=timedelta(milliseconds=wait_ms),
    )


def now_ms() -> int:
    return int(time.time() * 1000)


class ChatLog:
    """The chats of tables, on `redis` (the games' event counts from its game store)."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._games = EventStore(redis, "game")
        self._post = redis.register_script(_POST)
        self._hide = redis.register_script(_HIDE)

    async def game_version(self, table: tables.Table) -> int:
        return await self._games.version(table.game_id) if table.started else 0

    async def post(
        self, table: tables.Table, author: chat.Author, text: str, request_key: str = ""
    ) -> chat.Message:
        """Says `text` for `author` (a rate-limited or full chat refuses and writes nothing);
        with `request_key`, a post already made under it is answered instead."""
        table_id = table.table_id
        keys = [log_key(table_id), _messages_key(table_id)]
        keys += [_recent_key(table_id), _requests_key(table_id)]
        game_version = await self.game_version(table)
        for _attempt in range(MAX_ATTEMPTS):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hlen(keys[1])
                pipe.hget(keys[2], str(author.seat))
                pipe.hget(keys[3], request_key or "-")
                count, recent_raw, known = await pipe.execute()
            if request_key and known is not None:
                return await self._said(table_id, int(known))
            chat.require_room(int(count))
            recent, now = _times(recent_raw), now_ms()
            if wait_ms := chat.rate_wait_ms(recent, now):
                raise rate_limited(wait_ms)
            message = chat.said(author, text, int(count) + 1, now, game_version)
            kept = ",".join(str(t) for t in chat.remembered_posts(recent, now))
            outcome, number = cast(
                list[int],
                await self._post(
                    keys=keys,
                    args=[count, request_key, _encoded(message), author.seat, kept],
                ),
            )
            if outcome == 1:
                return message
            if outcome == 2:
                return await self._said(table_id, int(number))
        raise CONTENDED

    async def hide(self, table_id: str, number: int) -> chat.Message:
        """Hides message `number` (hiding a hidden one again changes nothing)."""
        keys = [log_key(table_id), _messages_key(table_id)]
        for _attempt in range(MAX_ATTEMPTS):
            raw = cast(bytes | None, await self._redis.hget(keys[1], str(number)))
            if raw is None:
                raise Rejected(
                    "MESSAGE_NOT_FOUND",
                    f"this table has no message {number}",
                    Kind.NOT_FOUND,
                    {"number": number},
                )
            current = _decoded(raw)
            if current.hidden:
                return current
            hidden = chat.hidden(current)
            if await self._hide(keys=keys, args=[number, raw, _encoded(hidden)]):
                return hidden
        raise CONTENDED

    async def read(self, table_id: str, first: int, count: int) -> list[tuple[int, chat.Message]]:
        """Up to `count` items of the log from position `first`: (position, the message as it
        now stands)."""
        entries = cast(
            list[tuple[bytes, dict[bytes, bytes]]],
            await self._redis.xrange(log_key(table_id), f"{max(first, 1)}-0", "+", count=count),
        )
        if not entries:
            return []
        numbers = [fields[b"number"] for _entry_id, fields in entries]
        found = cast(list[bytes | None], await self._redis.hmget(_messages_key(table_id), numbers))
        return [
            (int(entry_id.split(b"-")[0]), _decoded(raw))
            for (entry_id, _fields), raw in zip(entries, found, strict=True)
            if raw is not None
        ]

    async def _said(self, table_id: str, number: int) -> chat.Message:
        raw = cast(bytes | None, await self._redis.hget(_messages_key(table_id), str(number)))
        assert raw is not None, "a message said is never removed"
        return _decoded(raw)


class ChatFeed:
    """One reader per watched table's chat log in this process (a blocking XREAD of its one
    key), waking that table's watchers here whenever it grows; the watchers read the log
    themselves, so a wake-up that comes late or twice loses or repeats nothing."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._woken: dict[str, set[asyncio.Event]] = {}
        self._readers: dict[str, asyncio.Task[None]] = {}

    @contextlib.contextmanager
    def woken(self, table_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever the table's chat log may have grown (once at the start, when
        the reader knows where the log ends)."""
        wake = asyncio.Event()
        if table_id not in self._woken:
            self._woken[table_id] = set()
            self._readers[table_id] = asyncio.create_task(self._read(table_id))
        self._woken[table_id].add(wake)
        try:
            yield wake
        finally:
            self._woken[table_id].discard(wake)
            if not self._woken[table_id]:
                del self._woken[table_id]
                reader = self._readers.pop(table_id, None)
                if reader is not None:
                    reader.cancel()

    async def close(self) -> None:
        """Ends every reader (the lobby stopping): a watch still open wakes no more."""
        readers, self._readers = list(self._readers.values()), {}
        for reader in readers:
            reader.cancel()
        for reader in readers:
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _read(self, table_id: str) -> None:
        key, last = log_key(table_id), ""
        while True:
            try:
                if not last:
                    last = f"{await self._redis.xlen(key)}-0"
                    self._wake(table_id)
                reply = cast(
                    list[tuple[bytes, list[tuple[bytes, Any]]]],
                    await self._redis.xread({key: last}, block=BLOCK_MS, count=READ_CHUNK),
                )
            except RedisError as error:
                _raise_if_cancelled()  # redis-py may turn a cancellation into a RedisError
                log.warning("chat feed of %s: %s", table_id, error)
                last = ""
                await asyncio.sleep(FEED_RETRY_SECONDS)
                continue
            _raise_if_cancelled()  # or swallow it and answer as if nothing had happened
            for _stream, entries in reply:
                if entries:
                    last = entries[-1][0].decode()
                    self._wake(table_id)

    def _wake(self, table_id: str) -> None:
        for wake in self._woken.get(table_id, ()):
            wake.set()


def _raise_if_cancelled() -> None:
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def watch(
    chat_log: ChatLog, feed: ChatFeed, table_id: str, from_position: int, quiet_seconds: float
) -> AsyncIterator[lobby_pb2.WatchChatResponse]:
    """The table's chat log from `from_position` on, then live, forever; a heartbeat after
    `quiet_seconds` with nothing to send."""
    position = max(from_position, 1)
    loop = asyncio.get_running_loop()
    with feed.woken(table_id) as wake:
        said_at = loop.time()
        while True:
            wake.clear()
            items = await chat_log.read(table_id, position, READ_CHUNK)
            for item_position, message in items:
                position = item_position + 1
                yield lobby_pb2.WatchChatResponse(
                    message=chat_message_to_proto(message), position=item_position
                )
            if items:
                said_at = loop.time()
                if len(items) == READ_CHUNK:
                    continue
            elif loop.time() - said_at >= quiet_seconds:
                said_at = loop.time()
                yield lobby_pb2.WatchChatResponse(position=position - 1, heartbeat=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), quiet_seconds - (loop.time() - said_at))
