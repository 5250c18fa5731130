"""The house rules that keep the code livable (issue 11): small modules, one printing layer.

The import layering itself is checked by import-linter (`make lint` → `lint-imports`, contracts in
pyproject.toml)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
"""No module of planner/ outside ledgers/ and cli/ is longer than this."""
MAX_PLAN_LINES = 200
"""planner/plan.py is orchestration only."""
PRINTING_CALLS = {"print", "echo", "secho"}


def _modules(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (ROOT / root).rglob("*.py"))


@pytest.mark.parametrize(
    "path",
    [p for p in _modules("planner") if not {"ledgers", "cli"} & set(p.relative_to(ROOT / "planner").parts[:-1])],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    limit = MAX_PLAN_LINES if path == ROOT / "planner/plan.py" else MAX_MODULE_LINES
    assert lines <= limit, f"{path.relative_to(ROOT)} has {lines} lines (limit {limit}): split it by concern"


def _prints(tree: ast.AST) -> list[int]:
    """Lines that print: print(), typer.echo/secho, or any use of rich's Console."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if name in PRINTING_CALLS:
                out.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and node.module == "rich.console":
            out.append(node.lineno)
    return sorted(out)


@pytest.mark.parametrize(
    "path",
    [p for p in _modules("planner", "constraints") if "cli" not in p.relative_to(ROOT).parts],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_only_the_cli_prints(path: Path) -> None:
    lines = _prints(ast.parse(path.read_text()))
    assert not lines, f"{path.relative_to(ROOT)} prints at lines {lines}: return data, let planner/cli print it"


def test_the_print_check_finds_prints() -> None:
    assert _prints(ast.parse("import typer\nprint(1)\ntyper.echo('x')\nfrom rich.console import Console\n")) == [
        2,
        3,
        4,
    ]
