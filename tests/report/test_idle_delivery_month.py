"""The paid-but-idle GPUs count a bought node in the month the ledger starts paying its running cost: delivered
in the last month of a period, it is paid and idle there and serves from the next period."""

from __future__ import annotations

from pathlib import Path

from planner.catalog import default_catalog
from planner.plan import plan
from planner.report.workbook_idle import idle_gpus
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_a_node_delivered_mid_period_is_paid_idle_until_it_serves() -> None:
    # buy_vs_rent: one 8-GPU H100 node ordered in month 0, delivered in month 2 (2-month lead time), serving
    # from quarter 1 (month 3); its running cost is booked from month 2
    catalog = default_catalog()
    result = plan(catalog, load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog), with_alternatives=False)
    node = next(s for s in result.supply if s.kind == "buy")
    assert node.units_per_month[:4] == [0, 0, 1, 1] and node.units_per_period[:2] == [0, 1]
    rows = idle_gpus(result)
    assert rows[0] == ["h100_sxm", "dc1", 0, "2", 8, 0, 8]  # month 2 only: months 0-1 pay nothing at dc1
    assert all(row[2] != 1 for row in rows if row[1] == "dc1")  # quarter 1 runs 4 TP2 replicas on its 8 GPUs
