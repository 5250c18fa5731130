"""A sweep of a max_throughput scenario shows its answer, the traffic served, in every output (the row, the
terminal table and the Sweep sheet): pd_card8 serves 4.34 req/s disaggregated and 2.97 co-located at the
same $857, which a cost-only row could not tell apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.readout.sweep import SweepRow
from planner.report.sweep_workbook import SERVED_HEADERS, build_sweep_workbook
from planner.scenario import load_scenario, parse_scenario
from planner.sweep import LocalEngine, parse_axis, plan_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[2]
CARD8 = ROOT / "examples" / "pd_card8" / "scenario.yaml"
VARY = "workloads.design_case.disaggregation=off,auto"


def test_rows_carry_the_served_traffic_of_their_plan(catalog: Catalog) -> None:
    sweep = plan_sweep(load_scenario(CARD8, catalog), catalog, [parse_axis(VARY)], "grid", path=str(CARD8))
    result = run_sweep(catalog, sweep, LocalEngine(1))
    served = {r.values["workloads.design_case.disaggregation"]: r.served_requests_per_s for r in result.rows}
    assert served["off"] == pytest.approx(2.972, abs=1e-3)
    assert served["auto"] == pytest.approx(4.341, abs=1e-3)
    for variant, row in zip(sweep.variants, result.rows, strict=True):
        direct = plan(catalog, parse_scenario(sweep.variant_data(variant)), with_alternatives=False).to_json()
        assert row.served_scale == direct["served_scale"]
        assert row.served_requests_per_s == direct["served_requests_per_s"]["total"]
        assert row.total_cost_usd == pytest.approx(857.23264, rel=1e-9)
    ws = build_sweep_workbook(result)["Sweep"]
    header = [c.value for c in ws[3]]
    assert header[-2:] == list(SERVED_HEADERS)
    cells = [r[-2] for r in ws.iter_rows(min_row=4, max_row=5, values_only=True)]
    assert cells == [served["off"], served["auto"]]


def test_min_cost_rows_and_old_resume_files_have_no_served_fields() -> None:
    """A row written before these fields existed (a resume file) reads back with None."""
    row = SweepRow.from_json({"index": 0, "key": "k", "values": {}, "status": "optimal", "total_cost_usd": 1.0})
    assert row.served_scale is None and row.served_requests_per_s is None


def test_the_terminal_table_shows_served_requests_per_s() -> None:
    res = CliRunner().invoke(app, ["sweep", str(CARD8), "--vary", VARY, "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "served req/s" in res.output
    assert "2.97 (0.849×)" in res.output and "4.34 (1.24×)" in res.output
