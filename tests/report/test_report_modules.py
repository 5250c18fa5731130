"""planner/report reads the readout and never recomputes a price: it imports planner.readout (and the shared
error types and planner.units: unit constants and figure wording, no prices), its own modules, the standard library, openpyxl and matplotlib — not the optimizer, the plan
orchestration or compare; and no module of it grows past 400 lines."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "planner" / "report"
MODULES = sorted(REPORT.glob("*.py"))
MAX_LINES = 400
ALLOWED_PLANNER = ("planner.readout", "planner.report", "planner.errors", "planner.units")
ALLOWED_THIRD_PARTY = ("openpyxl", "matplotlib")


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
    return out


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_report_imports_only_the_readout(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        if top == "planner":
            assert name.startswith(ALLOWED_PLANNER), f"{path.name} imports {name}"
        else:
            assert top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY, f"{path.name} imports {name}"


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_report_modules_stay_small(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES
