"""No negative figure in a plan's readout: the solver's flows can be -1e-13, and examples/buy_vs_rent's
h100_sxm prefill pool read served_requests_per_s -6.75e-14 at the peak."""

from __future__ import annotations

from pathlib import Path

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_served_requests_are_never_negative(catalog: Catalog) -> None:
    result = plan(catalog, load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog), with_alternatives=False)
    for d in result.deployments:
        assert d.served_requests_per_s >= 0.0, d
        assert min(d.served_requests_per_s_per_period) >= 0.0, d
