"""The examples are clients of the SDK alone: none imports the server's code (services,
gateway, infra, tools, the internal protos), so each runs where only the SDK's wheel is
installed; and the README's example is examples/quickstart.py, word for word."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
SERVER = ("services", "gateway", "infra", "tools", "shikoku.internal")


def imported(source: str) -> set[str]:
    """Every module an `import` or `from … import` names (relative imports as ".name")."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def from_the_server(module: str) -> bool:
    return any(module == package or module.startswith(f"{package}.") for package in SERVER)


def test_the_check_sees_imports_of_the_server() -> None:
    source = "import infra.config\nfrom gateway import auth\nfrom shikoku.internal.v1 import x"
    assert [m for m in sorted(imported(source)) if from_the_server(m)] == [
        "gateway",
        "infra.config",
        "shikoku.internal.v1",
    ]
    assert not from_the_server("shikoku.v1") and not from_the_server("toolsy")


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_no_example_imports_server_code(example: Path) -> None:
    modules = imported(example.read_text())
    assert not [m for m in modules if from_the_server(m) or m.startswith(".")]
    assert "examples" not in {m.split(".")[0] for m in modules}  # standalone scripts


def test_the_readme_example_is_the_quickstart() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## For client developers", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    quickstart = (ROOT / "examples/quickstart.py").read_text()
    assert block == quickstart
    assert len(quickstart.splitlines()) <= 15
