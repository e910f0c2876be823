"""The gateway's access rules and API keys: every public method has a rule that names a real
request field, and keys are checked, remembered briefly and revocable (real Redis)."""

from __future__ import annotations

import pytest
import redis.asyncio

from gateway.api_keys import ApiKeys, api_key_from
from gateway.auth import RULES
from gateway.public_api import public_services
from gateway.rate_limit import Limits
from kernel.rejection import Rejected


def test_every_public_method_has_exactly_one_rule() -> None:
    methods = {
        f"/{service.full_name}/{method.name}": method
        for service in public_services()
        for method in service.methods
    }
    assert set(RULES) == set(methods)
    for name, rule in RULES.items():
        if rule.resource:
            fields = methods[name].input_type.fields_by_name
            assert rule.resource in fields, f"{name}: no field {rule.resource}"
            assert rule.permission is not None, f"{name} names a resource but checks nothing"


def test_the_key_is_read_from_its_metadata() -> None:
    assert api_key_from([("authorization", "Bearer x"), ("x-api-key", " k-1.s ")]) == "k-1.s"
    assert api_key_from([("X-Api-Key", "k-2.s")]) == "k-2.s"
    assert api_key_from(None) == ""


async def reason_of_check(keys: ApiKeys, key: str) -> str:
    with pytest.raises(Rejected) as refused:
        await keys.check(key)
    return refused.value.reason


async def test_issued_keys_are_checked_listed_and_revoked(
    redis_client: redis.asyncio.Redis,
) -> None:
    keys = ApiKeys(redis_client, remember_seconds=0)
    issued, key = await keys.issue("  Tabletop bot  ")
    assert issued.name == "Tabletop bot" and key.startswith(issued.key_id + ".")
    assert (await keys.check(key)).key_id == issued.key_id
    # Only the hash of the secret is stored.
    stored = await redis_client.hgetall(f"{{api-keys}}:key:{issued.key_id}")
    assert key.split(".", 1)[1].encode() not in stored.values()

    assert await reason_of_check(keys, "") == "MISSING_API_KEY"
    assert await reason_of_check(keys, key + "x") == "INVALID_API_KEY"
    assert await reason_of_check(keys, "k-000000000000.secret") == "INVALID_API_KEY"
    assert await reason_of_check(keys, "no separator") == "INVALID_API_KEY"

    other, _ = await keys.issue("Web client")
    await keys.revoke(issued.key_id)
    assert await reason_of_check(keys, key) == "API_KEY_REVOKED"
    listed = {found.key_id: found.revoked for found in await keys.all()}
    assert listed == {issued.key_id: True, other.key_id: False}
    with pytest.raises(Rejected, match="no API key"):
        await keys.revoke("k-nothing")
    with pytest.raises(Rejected):
        await keys.issue(" ")


async def test_a_checked_key_is_remembered_for_a_while(redis_client: redis.asyncio.Redis) -> None:
    keys = ApiKeys(redis_client, remember_seconds=60)
    issued, key = await keys.issue("bot")
    await keys.check(key)
    await ApiKeys(redis_client).revoke(issued.key_id)
    assert (await keys.check(key)).key_id == issued.key_id  # remembered: no Redis round trip
    assert await reason_of_check(ApiKeys(redis_client), key) == "API_KEY_REVOKED"


async def test_a_key_may_carry_rate_limits_of_its_own(redis_client: redis.asyncio.Redis) -> None:
    keys = ApiKeys(redis_client, remember_seconds=0)
    fast, fast_key = await keys.issue("fast bot", per_second=500, burst=1000)
    plain, plain_key = await keys.issue("web page")
    assert (await keys.check(fast_key)).per_second == 500
    assert (await keys.check(fast_key)).burst == 1000
    assert (await keys.check(plain_key)).per_second is None

    defaults = Limits(per_second=50, burst=100)
    assert defaults.for_application(await keys.known(fast_key)) == Limits(500, 1000)
    assert defaults.for_application(await keys.known(plain_key)) == defaults
    assert await keys.known("k-nothing.secret") is None  # unknown: the defaults apply
    await keys.revoke(plain.key_id)
    assert await keys.known(plain_key) is None
    only_rate, _ = await keys.issue("slow", per_second=1)
    assert defaults.for_application(only_rate) == Limits(1, 100)
    with pytest.raises(Rejected):
        await keys.issue("bad", burst=0)
    assert fast.per_second == 500
