"""Plans and comparisons of every example, solved once per test session and shared by the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.compare import compare
from planner.plan import plan
from planner.readout import PlanResult
from planner.readout.comparison import Comparison
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*/scenario.yaml"))
EXAMPLE_NAMES = [p.parent.name for p in EXAMPLES]


@pytest.fixture(scope="session")
def example_plans(catalog: Catalog) -> dict[str, PlanResult]:
    """``planner plan`` of every example (with alternatives, as the CLI)."""
    return {p.parent.name: plan(catalog, load_scenario(p, catalog)) for p in EXAMPLES}


@pytest.fixture(scope="session")
def example_comparisons(catalog: Catalog) -> dict[str, Comparison]:
    """``planner compare --no-flip-points`` of every example."""
    return {p.parent.name: compare(catalog, load_scenario(p, catalog), flip_points=False) for p in EXAMPLES}
