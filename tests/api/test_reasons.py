"""The catalogue of reason codes (protos/shikoku/v1/reasons.proto) is the only list of them: the
services raise nothing else, everything made from it is current, and it lists nothing that no
code raises."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.auth import RULES as ACCESS_RULES
from kernel.reasons import REASON_CODES
from kernel.rejection import Rejected, reason_code
from services.routes.engine.rules import Reason as RouteViolation
from shikoku_sdk.reasons import FAMILY, Reason
from tools import reasons

ROOT = Path(__file__).parents[2]
#: The code that refuses calls: the services, the gateway and what they share, the local engine.
SERVER_CODE = ("services", "gateway", "infra", "kernel", "shikoku_engine", "tools")
#: What builds a refusal, and which of its arguments is the reason.
REFUSALS = {"Rejected": 0, "_refuse": 0, "refusal": 1, "Rejection": 0, "reject": 0}
#: What carries a reason as its keyword `reason`.
DETAILS = {"ErrorInfo", "FieldViolation"}


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for root in SERVER_CODE:
        for path in sorted((ROOT / root).rglob("*.py")):
            if path.name != "reasons.py":
                yield path, ast.parse(path.read_text(), str(path))


def _called(node: ast.Call) -> str:
    if isinstance(node.func, ast.Name):
        return node.func.id
    return node.func.attr if isinstance(node.func, ast.Attribute) else ""


def _constants(tree: ast.Module) -> dict[str, object]:
    """The module's constants by name (`INVALID_WEBHOOK_URL: Final = "..."`)."""
    found: dict[str, object] = {}
    for node in tree.body:
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


def raised_reasons() -> dict[str, list[str]]:
    """Every reason a refusal is built with in the server's code, where it is given as a string
    or a module's constant, with the places."""
    found: dict[str, list[str]] = {}
    for path, tree in _modules():
        constants = _constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called = _called(node)
            if called in REFUSALS and len(node.args) > REFUSALS[called]:
                first = node.args[REFUSALS[called]]
            elif called in DETAILS:
                keyword = [k.value for k in node.keywords if k.arg == "reason"]
                if not keyword:
                    continue
                first = keyword[0]
            else:
                continue
            reason = None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                reason = first.value
            elif isinstance(first, ast.Name) and isinstance(constants.get(first.id), str):
                reason = str(constants[first.id])
            if reason is not None:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.setdefault(reason, []).append(where)
    return found


def test_the_server_raises_only_reasons_of_the_catalogue() -> None:
    raised = raised_reasons()
    assert len(raised) > 150, "the scan no longer finds the refusals"
    unknown = {reason: places for reason, places in raised.items() if reason not in REASON_CODES}
    assert not unknown, f"reasons not in protos/shikoku/v1/reasons.proto: {unknown}"


def test_reasons_made_at_run_time_are_checked() -> None:
    assert reason_code("ROUTE_TRACK_REUSED") == "ROUTE_TRACK_REUSED"
    with pytest.raises(ValueError, match="not a reason"):
        reason_code("ROUTE_NO_SUCH_RULE")
    for violation in RouteViolation:
        reason_code(f"ROUTE_{violation.value}")


def _fields_required() -> set[str]:
    """The fields whose absence is refused with MISSING_<field>, a reason made at run time: the
    resources the gateway's access rules require, and the fields the rules' wire checks with
    `_required(value, field)`."""
    fields = {
        rule.resource for rule in ACCESS_RULES.values() if rule.resource and not rule.optional
    }
    wire = ast.parse((ROOT / "services" / "rules" / "wire.py").read_text())
    (checker,) = [
        node for node in wire.body if isinstance(node, ast.FunctionDef) and node.name == "_required"
    ]
    default = checker.args.defaults[-1]
    for node in ast.walk(wire):
        if isinstance(node, ast.Call) and _called(node) == "_required":
            named = node.args[1] if len(node.args) > 1 else default
            assert isinstance(named, ast.Constant) and isinstance(named.value, str)
            fields.add(named.value)
    return fields


def test_the_catalogue_lists_only_reasons_some_code_raises() -> None:
    strings: set[str] = set()
    for _path, tree in _modules():
        strings |= {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
    made = {f"ROUTE_{violation.value}" for violation in RouteViolation}
    made |= {f"MISSING_{field.upper()}" for field in _fields_required()}
    assert sorted(REASON_CODES - strings - made) == []


def test_everything_made_from_the_catalogue_is_current() -> None:
    stale = [str(path.relative_to(ROOT)) for path in reasons.stale()]
    assert stale == [], f"stale: {stale}; run python -m tools.reasons"


def test_the_sdk_enum_and_families_cover_the_catalogue() -> None:
    assert {reason.value for reason in Reason} == REASON_CODES
    assert set(FAMILY) == set(Reason)
    entries = {entry.code: entry for entry in reasons.catalogue()}
    assert entries["NOT_YOUR_TURN"].family == "RULES"
    assert entries["NOT_YOUR_TURN"].status == "FAILED_PRECONDITION"
    assert all(entry.meaning for entry in entries.values()), "a reason without its comment"


def test_a_refusal_keeps_its_reason() -> None:
    refusal = Rejected("NOT_YOUR_TURN", "not yet")
    assert refusal.reason == Reason.NOT_YOUR_TURN
