"""The state's own `replace` does what `dataclasses.replace` does, for every state value."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest

from services.rules.domain import state as st
from services.rules.domain.state import replace

VALUES: list[Any] = [
    st.Player(seat=1, name="p1", cash=30, shares=MappingProxyType({"AR": 2})),
    st.Corporation(id="AR", par=90, position=(0, 3), trains=("2",)),
    st.ClosedAuction(company="SMR", order=(1, 2), bids=((1, 30), (2, 35)), turn=1),
    st.PrivateAuction(offer=("TR",), prices=MappingProxyType({"TR": 20}), bids=st.EMPTY, turn=0),
    st.StockRound(number=2, turn=1, actions=("sell",)),
    st.OperatingRound(number=1, of=2, current="AR", step=st.Step.TOKEN),
    st.GameResult(reason="bank", net_worths=((1, 900),)),
    st.GameState(title="1889", bank=7000, phase="3", round=st.StockRound(number=1, turn=0)),
]


def _kinds() -> list[type]:
    return [
        kind
        for kind in vars(st).values()
        if isinstance(kind, type)
        and dataclasses.is_dataclass(kind)
        and kind.__module__ == st.__name__
    ]


def test_every_state_value_has_only_the_generated_init() -> None:
    for kind in _kinds():
        params = kind.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, kind
        assert not hasattr(kind, "__post_init__"), kind
        assert all(f.init for f in dataclasses.fields(kind)), kind
    assert {type(value) for value in VALUES} == set(_kinds())


@pytest.mark.parametrize("value", VALUES, ids=lambda value: type(value).__name__)
def test_replace_matches_dataclasses_replace(value: Any) -> None:
    before = dataclasses.replace(value)
    for field in dataclasses.fields(value):
        other = (getattr(value, field.name),)  # a value of another type is copied as it is
        ours = replace(value, **{field.name: other})
        assert ours == dataclasses.replace(value, **{field.name: other})
        assert getattr(ours, field.name) is other
        assert type(ours) is type(value)
    assert replace(value) == value
    assert value == before
    with pytest.raises(TypeError):
        replace(value, no_such_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(value).__setattr__(dataclasses.fields(value)[0].name, 1)
