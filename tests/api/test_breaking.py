"""No breaking change to the public API (package shikoku.v1) since its last release.

protos/releases/shikoku.v1.json is the released surface, written by tools.api_surface from
the generated code; the current generated code must still offer all of it, unchanged. Additions
are fine. A deliberate break is a release decision: write a new baseline with `make api-release`
(better: leave v1 alone and start shikoku.v2)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from tools.api_surface import FieldSurface, Surface, surface, to_json, v1_files

pytestmark = pytest.mark.client

BASELINE = Path(__file__).resolve().parents[2] / "protos" / "releases" / "shikoku.v1.json"


def breaking_changes(old: Surface, new: Surface) -> list[str]:
    """What `new` breaks of `old`, one line per change; empty when `new` only adds."""
    changes: list[str] = []
    if new["package"] != old["package"]:
        changes.append(f"package: {old['package']} became {new['package']}")

    for name, service in old["services"].items():
        now_service = new["services"].get(name)
        if now_service is None:
            changes.append(f"service {name}: removed (or renamed)")
            continue
        if now_service["file"] != service["file"]:
            changes.append(f"service {name}: moved from {service['file']} to {now_service['file']}")
        for rpc_name, rpc in service["rpcs"].items():
            now_rpc = now_service["rpcs"].get(rpc_name)
            if now_rpc is None:
                changes.append(f"rpc {name}.{rpc_name}: removed (or renamed)")
                continue
            for key in ("input_type", "output_type", "client_streaming", "server_streaming"):
                before, after = rpc[key], now_rpc[key]
                if before != after:
                    changes.append(f"rpc {name}.{rpc_name}: {key} changed from {before} to {after}")

    for name, enum in old["enums"].items():
        now_enum = new["enums"].get(name)
        if now_enum is None:
            changes.append(f"enum {name}: removed (or renamed)")
            continue
        if now_enum["file"] != enum["file"]:
            changes.append(f"enum {name}: moved from {enum['file']} to {now_enum['file']}")
        for value, number in enum["values"].items():
            element = f"enum value {name}.{value} (= {number})"
            if value in now_enum["values"]:
                if now_enum["values"][value] != number:
                    changes.append(f"{element}: renumbered to {now_enum['values'][value]}")
                continue
            renamed = [v for v, n in now_enum["values"].items() if n == number]
            if renamed:
                changes.append(f"{element}: renamed to {' / '.join(renamed)}")
            else:
                changes.append(f"{element}: removed")

    for name, message in old["messages"].items():
        now_message = new["messages"].get(name)
        if now_message is None:
            changes.append(f"message {name}: removed (or renamed)")
            continue
        if now_message["file"] != message["file"]:
            changes.append(f"message {name}: moved from {message['file']} to {now_message['file']}")
        by_number = {field["number"]: field for field in now_message["fields"]}
        by_name = {field["name"]: field for field in now_message["fields"]}
        for field in message["fields"]:
            changes += _field_changes(f"{name}.{field['name']}", field, by_number, by_name)
    return changes


def _field_changes(
    name: str,
    field: FieldSurface,
    by_number: dict[int, FieldSurface],
    by_name: dict[str, FieldSurface],
) -> list[str]:
    element = f"field {name} (= {field['number']})"
    now = by_number.get(field["number"])
    if now is None:
        moved = by_name.get(field["name"])
        if moved is not None:
            return [f"{element}: renumbered to {moved['number']}"]
        return [f"{element}: removed (or renamed and renumbered)"]
    changes: list[str] = []
    if now["name"] != field["name"]:
        changes.append(f"{element}: its number is now field `{now['name']}` (renamed or reused)")
    if _type(now) != _type(field):
        changes.append(f"{element}: type changed from {_type(field)} to {_type(now)}")
    if now["label"] != field["label"]:
        changes.append(f"{element}: label changed from {field['label']} to {now['label']}")
    if now.get("proto3_optional", False) != field.get("proto3_optional", False):
        changes.append(f"{element}: presence changed (the `optional` keyword added or removed)")
    if now.get("oneof") != field.get("oneof"):
        before, after = field.get("oneof", "no oneof"), now.get("oneof", "no oneof")
        changes.append(f"{element}: moved from {before} to {after}")
    return changes


def _type(field: FieldSurface) -> str:
    return " ".join(filter(None, (field["type"], field.get("type_name"))))


def released() -> Surface:
    return cast(Surface, json.loads(BASELINE.read_text()))


def test_the_api_breaks_nothing_of_the_last_release() -> None:
    changes = breaking_changes(released(), surface(v1_files()))
    if changes:
        lines = "\n".join(f"  {change}" for change in changes)
        pytest.fail(
            f"{len(changes)} breaking change(s) to shikoku.v1 since {BASELINE.name}:\n{lines}\n"
            "Restore them. (A deliberate break is a release decision: `make api-release`.)",
            pytrace=False,
        )


def test_the_baseline_is_as_api_surface_writes_it() -> None:
    """Written by `make api-release`, not by hand (a hand edit could hide a break)."""
    text = BASELINE.read_text()
    assert to_json(released()) == text, f"{BASELINE} is not as `make api-release` writes it"
    assert released()["package"] == "shikoku.v1"


def test_the_surface_is_plain_json() -> None:
    current = surface(v1_files())
    assert json.loads(to_json(current)) == current


# The comparison itself, on hand-built surfaces.


def _base() -> Surface:
    game = "shikoku/v1/game.proto"
    return {
        "package": "shikoku.v1",
        "services": {
            "shikoku.v1.GameService": {
                "file": game,
                "rpcs": {
                    "GetState": {
                        "input_type": "shikoku.v1.GetStateRequest",
                        "output_type": "shikoku.v1.GameState",
                        "client_streaming": False,
                        "server_streaming": False,
                    }
                },
            }
        },
        "messages": {
            "shikoku.v1.GetStateRequest": {
                "file": game,
                "fields": [
                    {"number": 1, "name": "game_id", "type": "string", "label": "optional"},
                    {"number": 2, "name": "version", "type": "int64", "label": "optional"},
                ],
            },
            "shikoku.v1.GameState": {
                "file": game,
                "fields": [
                    {"number": 1, "name": "game_id", "type": "string", "label": "optional"},
                    {"number": 3, "name": "acting_seats", "type": "int32", "label": "repeated"},
                    {
                        "number": 4,
                        "name": "kind",
                        "type": "enum",
                        "label": "optional",
                        "type_name": "shikoku.v1.DividendKind",
                        "oneof": "detail",
                    },
                ],
            },
        },
        "enums": {
            "shikoku.v1.DividendKind": {
                "file": game,
                "values": {"DIVIDEND_KIND_UNSPECIFIED": 0, "DIVIDEND_KIND_PAYOUT": 1},
            }
        },
    }


Change = Callable[[Surface], None]


def _fields(api: Surface, message: str = "shikoku.v1.GetStateRequest") -> list[FieldSurface]:
    return api["messages"][message]["fields"]


def _add_field(api: Surface) -> None:
    _fields(api).append({"number": 3, "name": "at", "type": "int64", "label": "optional"})


def _add_everything_else(api: Surface) -> None:
    api["services"]["shikoku.v1.LobbyService"] = {"file": "shikoku/v1/lobby.proto", "rpcs": {}}
    rpcs = api["services"]["shikoku.v1.GameService"]["rpcs"]
    rpcs["Watch"] = {**rpcs["GetState"], "server_streaming": True}
    api["messages"]["shikoku.v1.Heartbeat"] = {"file": "shikoku/v1/game.proto", "fields": []}
    api["enums"]["shikoku.v1.DividendKind"]["values"]["DIVIDEND_KIND_WITHHOLD"] = 2


def _remove_field(api: Surface) -> None:
    del _fields(api)[1]


def _renumber_field(api: Surface) -> None:
    _fields(api)[1]["number"] = 5


def _rename_field(api: Surface) -> None:
    _fields(api)[1]["name"] = "at_version"


def _reuse_number_with_another_type(api: Surface) -> None:
    _fields(api)[1]["type"] = "string"


def _retype_message_field(api: Surface) -> None:
    _fields(api, "shikoku.v1.GameState")[2]["type_name"] = "shikoku.v1.ShareSource"


def _make_repeated(api: Surface) -> None:
    _fields(api)[0]["label"] = "repeated"


def _make_explicitly_optional(api: Surface) -> None:
    _fields(api)[1]["proto3_optional"] = True


def _take_out_of_oneof(api: Surface) -> None:
    del _fields(api, "shikoku.v1.GameState")[2]["oneof"]


def _remove_message(api: Surface) -> None:
    del api["messages"]["shikoku.v1.GetStateRequest"]


def _move_message(api: Surface) -> None:
    api["messages"]["shikoku.v1.GameState"]["file"] = "shikoku/v1/state.proto"


def _remove_enum_value(api: Surface) -> None:
    del api["enums"]["shikoku.v1.DividendKind"]["values"]["DIVIDEND_KIND_PAYOUT"]


def _rename_enum_value(api: Surface) -> None:
    values = api["enums"]["shikoku.v1.DividendKind"]["values"]
    values["DIVIDEND_KIND_PAY_OUT"] = values.pop("DIVIDEND_KIND_PAYOUT")


def _renumber_enum_value(api: Surface) -> None:
    api["enums"]["shikoku.v1.DividendKind"]["values"]["DIVIDEND_KIND_PAYOUT"] = 3


def _remove_enum(api: Surface) -> None:
    del api["enums"]["shikoku.v1.DividendKind"]


def _remove_rpc(api: Surface) -> None:
    del api["services"]["shikoku.v1.GameService"]["rpcs"]["GetState"]


def _stream_rpc(api: Surface) -> None:
    api["services"]["shikoku.v1.GameService"]["rpcs"]["GetState"]["server_streaming"] = True


def _change_rpc_output(api: Surface) -> None:
    rpc = api["services"]["shikoku.v1.GameService"]["rpcs"]["GetState"]
    rpc["output_type"] = "shikoku.v1.GetStateResponse"


def _remove_service(api: Surface) -> None:
    del api["services"]["shikoku.v1.GameService"]


@pytest.mark.parametrize("change", [_add_field, _add_everything_else])
def test_additions_break_nothing(change: Change) -> None:
    new = copy.deepcopy(_base())
    change(new)
    assert new != _base()
    assert breaking_changes(_base(), new) == []


BREAKS: list[tuple[Change, str]] = [
    (_remove_field, "field shikoku.v1.GetStateRequest.version (= 2): removed"),
    (_renumber_field, "field shikoku.v1.GetStateRequest.version (= 2): renumbered to 5"),
    (_rename_field, "version (= 2): its number is now field `at_version`"),
    (_reuse_number_with_another_type, "version (= 2): type changed from int64 to string"),
    (_retype_message_field, "from enum shikoku.v1.DividendKind to enum shikoku.v1.ShareSource"),
    (_make_repeated, "game_id (= 1): label changed from optional to repeated"),
    (_make_explicitly_optional, "version (= 2): presence changed"),
    (_take_out_of_oneof, "kind (= 4): moved from detail to no oneof"),
    (_remove_message, "message shikoku.v1.GetStateRequest: removed"),
    (_move_message, "message shikoku.v1.GameState: moved from shikoku/v1/game.proto to"),
    (_remove_enum_value, "enum value shikoku.v1.DividendKind.DIVIDEND_KIND_PAYOUT (= 1): removed"),
    (_rename_enum_value, "DIVIDEND_KIND_PAYOUT (= 1): renamed to DIVIDEND_KIND_PAY_OUT"),
    (_renumber_enum_value, "DIVIDEND_KIND_PAYOUT (= 1): renumbered to 3"),
    (_remove_enum, "enum shikoku.v1.DividendKind: removed"),
    (_remove_rpc, "rpc shikoku.v1.GameService.GetState: removed"),
    (_stream_rpc, "GetState: server_streaming changed from False to True"),
    (_change_rpc_output, "GetState: output_type changed from shikoku.v1.GameState to"),
    (_remove_service, "service shikoku.v1.GameService: removed"),
]


@pytest.mark.parametrize(("change", "expected"), BREAKS, ids=[c.__name__ for c, _ in BREAKS])
def test_breaks_are_caught(change: Change, expected: str) -> None:
    new = copy.deepcopy(_base())
    change(new)
    changes = breaking_changes(_base(), new)
    assert len(changes) == 1 and expected in changes[0], changes
