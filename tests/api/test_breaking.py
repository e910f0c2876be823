"""No breaking change to the public API (package shikoku.v1) since its last release.

protos/releases/shikoku.v1.image.json is the released API: the buf image (descriptors, without
comments) that `make api-release` writes, a release decision. `make lint` runs `buf breaking
--against` it with the rules buf.yaml chooses. These tests hold that setup to what it must
catch: every kind of break, made to a copy of protos/, is reported with its rule, additions are
not, and the record is what `make api-release` writes, of shikoku.v1 alone."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, json_format

from tests.api.protos import PACKAGE_DIRECTORY, PROTOS, REPO, tool

RELEASE = PROTOS / "releases" / "shikoku.v1.image.json"
GAME = f"{PACKAGE_DIRECTORY}/game.proto"
ROUTES = f"{PACKAGE_DIRECTORY}/routes.proto"
# No other proto imports this one, so its package can change and everything still compiles.
LOBBY = f"{PACKAGE_DIRECTORY}/lobby.proto"

# An edit of the copy of protos/: (file, what it does to the file's text).
Edit = tuple[str, Callable[[str], str]]


def breaking(tmp_path: Path, *edits: Edit) -> set[str]:
    """The rules `buf breaking` reports against the release for protos/ with `edits` made."""
    shutil.copytree(PROTOS, tmp_path / "protos", ignore=shutil.ignore_patterns("releases"))
    shutil.copy(REPO / "buf.yaml", tmp_path / "buf.yaml")
    for name, edit in edits:
        path = tmp_path / "protos" / name
        before = path.read_text() if path.exists() else ""
        after = edit(before)
        assert after != before, f"the edit changed nothing in {name}"
        path.write_text(after)
    checked = subprocess.run(
        [tool("buf"), "breaking", "--against", str(RELEASE), "--error-format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode in (0, 100), checked.stderr  # 100: breaking changes found
    rules = {json.loads(line)["type"] for line in checked.stdout.splitlines()}
    assert (checked.returncode == 100) == bool(rules), checked.stdout + checked.stderr
    return rules


def _block(header: str) -> re.Pattern[str]:
    """A top-level definition: from `message Foo {` to its closing brace at column 0."""
    return re.compile(rf"^{re.escape(header)} \{{\n.*?^\}}\n", re.M | re.S)


def in_block(header: str, old: str, new: str) -> Callable[[str], str]:
    """Replaces `old`, once, in the top-level definition `header` (`message GetStateRequest`)."""

    def edit(text: str) -> str:
        found = _block(header).search(text)
        assert found, f"no {header} {{...}}"
        block = found.group()
        assert block.count(old) == 1, f"{old!r} is not once in {header}"
        return text[: found.start()] + block.replace(old, new) + text[found.end() :]

    return edit


def without_block(header: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        found = _block(header).search(text)
        assert found, f"no {header} {{...}}"
        return text[: found.start()] + text[found.end() :]

    return edit


def renamed(old: str, new: str) -> Callable[[str], str]:
    return lambda text: re.sub(rf"\b{re.escape(old)}\b", new, text)


def replaced(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert text.count(old) == 1, f"{old!r} is not once in the file"
        return text.replace(old, new)

    return edit


def appended(addition: str) -> Callable[[str], str]:
    return lambda text: text + addition


def _out_of_oneof(text: str) -> str:
    """Command.pass_turn taken out of the oneof `action`, keeping its number."""
    text = in_block("message Command", "    Pass pass_turn = 3;\n", "")(text)
    return in_block("message Command", "\n}\n", "\n  Pass pass_turn = 3;\n}\n")(text)


STRUCT = 'import "google/protobuf/struct.proto";'
PASS_FILE = 'syntax = "proto3";\n\npackage shikoku.v1;\n\n// Moved.\nmessage Pass {}\n'

BREAKS: dict[str, tuple[list[Edit], set[str]]] = {
    "field removed": (
        [(GAME, in_block("message GetStateRequest", "int64 version = 2;", ""))],
        {"FIELD_NO_DELETE"},
    ),
    "field renumbered": (
        [(GAME, in_block("message GetStateRequest", "version = 2;", "version = 9;"))],
        {"FIELD_NO_DELETE"},
    ),
    "field renamed": (
        [(GAME, in_block("message GetStateRequest", " version = 2;", " at_version = 2;"))],
        {"FIELD_SAME_NAME", "FIELD_SAME_JSON_NAME"},
    ),
    "field retyped": (
        [(GAME, in_block("message GetStateRequest", "int64 version", "string version"))],
        {"FIELD_SAME_TYPE"},
    ),
    "enum field given another enum": (
        [(GAME, in_block("message PayDividends", "DividendKind kind", "ShareSource kind"))],
        {"FIELD_SAME_TYPE"},
    ),
    "field made repeated": (
        [(GAME, in_block("message GetStateRequest", "string game_id", "repeated string game_id"))],
        {"FIELD_SAME_CARDINALITY"},
    ),
    "field given explicit presence": (
        [(GAME, in_block("message GetStateRequest", "int64 version", "optional int64 version"))],
        {"FIELD_SAME_CARDINALITY"},
    ),
    "field taken out of its oneof": ([(GAME, _out_of_oneof)], {"FIELD_SAME_ONEOF"}),
    "message renamed": (
        [(GAME, renamed("Pass", "PassTurn"))],
        {"MESSAGE_NO_DELETE", "FIELD_SAME_TYPE"},
    ),
    "message moved to another file": (
        [
            (GAME, replaced("message Pass {}\n", "")),
            (GAME, replaced(STRUCT, f'import "{PACKAGE_DIRECTORY}/moved.proto";\n{STRUCT}')),
            (f"{PACKAGE_DIRECTORY}/moved.proto", appended(PASS_FILE)),
        ],
        {"MESSAGE_NO_DELETE"},
    ),
    "enum value removed": (
        [(GAME, in_block("enum DividendKind", "DIVIDEND_KIND_PAYOUT = 1;", ""))],
        {"ENUM_VALUE_NO_DELETE"},
    ),
    "enum value renamed": (
        [(GAME, in_block("enum DividendKind", "DIVIDEND_KIND_PAYOUT", "DIVIDEND_KIND_PAY_OUT"))],
        {"ENUM_VALUE_SAME_NAME"},
    ),
    "enum value renumbered": (
        [
            (
                GAME,
                in_block(
                    "enum DividendKind", "DIVIDEND_KIND_PAYOUT = 1", "DIVIDEND_KIND_PAYOUT = 3"
                ),
            )
        ],
        {"ENUM_VALUE_NO_DELETE"},
    ),
    "enum renamed": (
        [(GAME, renamed("DividendKind", "PayoutKind"))],
        {"ENUM_NO_DELETE", "FIELD_SAME_TYPE"},
    ),
    "rpc removed": (
        [(GAME, in_block("service GameService", "rpc GetState(", "// rpc GetState("))],
        {"RPC_NO_DELETE"},
    ),
    "rpc made streaming": (
        [
            (
                GAME,
                in_block(
                    "service GameService", "returns (GameState)", "returns (stream GameState)"
                ),
            )
        ],
        {"RPC_SAME_SERVER_STREAMING"},
    ),
    "rpc given another response": (
        [(GAME, in_block("service GameService", "returns (GameState)", "returns (GameEvent)"))],
        {"RPC_SAME_RESPONSE_TYPE"},
    ),
    "service removed": ([(ROUTES, without_block("service RoutesService"))], {"SERVICE_NO_DELETE"}),
    "package changed": (
        [(LOBBY, replaced("package shikoku.v1;", "package shikoku.v2;"))],
        {"FILE_SAME_PACKAGE"},
    ),
}


def test_protos_as_they_stand_break_nothing_of_the_release(tmp_path: Path) -> None:
    assert breaking(tmp_path) == set()


@pytest.mark.parametrize("change", list(BREAKS))
def test_buf_reports_each_kind_of_break(tmp_path: Path, change: str) -> None:
    edits, rules = BREAKS[change]
    assert breaking(tmp_path, *edits) == rules


def test_additions_break_nothing(tmp_path: Path) -> None:
    edits: list[Edit] = [
        (
            GAME,
            in_block("message GetStateRequest", "\n}\n", "\n  // New.\n  int64 at_ms = 9;\n}\n"),
        ),
        (
            GAME,
            in_block("enum DividendKind", "\n}\n", "\n  // New.\n  DIVIDEND_KIND_HALF = 3;\n}\n"),
        ),
        (
            GAME,
            in_block(
                "service GameService",
                "\n}\n",
                "\n  // New.\n  rpc Peek(PeekRequest) returns (GameState);\n}\n",
            ),
        ),
        (GAME, appended("\n// New.\nmessage PeekRequest {}\n")),
        (f"{PACKAGE_DIRECTORY}/new.proto", appended(PASS_FILE.replace("Pass", "Fresh"))),
    ]
    assert breaking(tmp_path, *edits) == set()


def test_the_release_is_as_api_release_writes_it() -> None:
    """A buf image of shikoku.v1 and what it imports, without source info, as JSON indented by
    one (`make api-release`; a hand edit could hide a break)."""
    text = RELEASE.read_text()
    image = json.loads(text)
    assert text == json.dumps(image, indent=1) + "\n"
    release = descriptor_pb2.FileDescriptorSet()
    json_format.ParseDict(image, release, ignore_unknown_fields=True)  # bufExtension: buf's own
    names = [file.name for file in release.file]
    assert [n for n in names if not n.startswith("google/protobuf/")] == sorted(
        n for n in names if n.startswith(f"{PACKAGE_DIRECTORY}/")
    )
    assert {n for n in names if n.startswith(f"{PACKAGE_DIRECTORY}/")} >= {GAME, ROUTES}
    assert not any(file.HasField("source_code_info") for file in release.file)
