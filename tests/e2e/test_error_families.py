"""The SDK raises each refusal as the class of its reason's family, with `.reason` a `Reason`."""

from __future__ import annotations

import grpc
import pytest

from shikoku_dev.supervisor import System
from shikoku_sdk import (
    PASS,
    AccessError,
    Client,
    LobbyError,
    Reason,
    RuleError,
    ShikokuError,
    seat_table,
)

pytestmark = pytest.mark.e2e


def test_a_refusal_is_raised_as_its_family_with_its_reason(system: System) -> None:
    with Client(system.gateway, api_key=system.api_key) as client:
        table = seat_table(client, 3)
        before = client.state(table.game_id)
        idle = next(seat for seat in table.seats if seat not in before.acting_seats)
        with pytest.raises(RuleError) as out_of_turn:
            table.seats[idle].act(table.game_id, PASS)
        assert out_of_turn.value.reason is Reason.NOT_YOUR_TURN
        assert out_of_turn.value.code == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(LobbyError) as missing:
            client.get_table("t-nope")
        assert missing.value.reason is Reason.TABLE_NOT_FOUND
    with Client(system.gateway, api_key="not-a-key") as stranger:
        with pytest.raises(AccessError) as refused:
            stranger.get_table(table.table_id)
        assert refused.value.reason is Reason.INVALID_API_KEY
        assert isinstance(refused.value, ShikokuError)
