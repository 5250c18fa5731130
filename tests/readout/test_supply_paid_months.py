"""A bought node's units per month are the nodes paid for, as the ledger books them: from the delivery month,
where its running cost starts (planner.ledgers.economics.bought_unit_cash_flow_usd), though it serves from
the first period that starts after it. `SupplyLine.units_per_month` counted units in use, so in buy_vs_rent
(3-month periods, delivery in month 2) the JSON said 0 nodes in month 2 while the ledger paid $1,501 of running
for one; the workbook's Units column (the ledger's months) and the JSON disagreed."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.readout import PlanResult
from planner.report.cost_streams import cost_streams
from planner.scenario import load_scenario
from tests.report.conftest import ROOT


@pytest.fixture(scope="module")
def buy_vs_rent(catalog: Catalog) -> PlanResult:
    path = ROOT / "examples/buy_vs_rent/scenario.yaml"
    return plan(catalog, load_scenario(path, catalog), with_alternatives=False)


def test_bought_node_is_paid_from_its_delivery_month(buy_vs_rent: PlanResult) -> None:
    result = buy_vs_rent
    assert result.ledger is not None and result.scenario.period_months == 3
    node = next(s for s in result.supply if s.procurement == "buy")
    assert (node.purchase_month, node.delivery_month, node.units) == (0, 2, 1)
    # paid (running) from month 2; in use from period 1 = month 3
    assert node.units_per_month == [0, 0] + [1] * 34
    assert node.units_per_period[:2] == [0, 1]
    running = [line for line in result.ledger.lines if line.supply_id == node.id and line.kind == "running"]
    assert [line.month for line in running] == list(range(2, 36))
    assert running[0].usd == pytest.approx(
        node.usd_per_unit_month
    ) and node.usd_per_unit_month == pytest.approx(1_501, abs=1)
    # units paid × the monthly running price is the ledger's running cost, month by month
    by_month = {line.month: line.usd for line in running}
    for month, units in enumerate(node.units_per_month):
        assert units * node.usd_per_unit_month == pytest.approx(by_month.get(month, 0.0), rel=1e-12)


def test_every_line_units_times_price_is_its_recurring_ledger(buy_vs_rent: PlanResult) -> None:
    """Rent and running alike: the units per month are what the ledger bills, and the workbook's Units columns
    are those units (its cost columns still reproduce the ledger)."""
    result = buy_vs_rent
    assert result.ledger is not None
    model = cost_streams(result)
    assert model.all_live and all(s.reproduced() for s in model.streams if s.live)
    for row in model.supplies:
        s = row.line
        recurring = sum(
            line.usd
            for line in result.ledger.lines
            if line.supply_id == s.id and line.kind in ("rent", "running")
        )
        assert sum(s.units_per_month) * s.usd_per_unit_month == pytest.approx(recurring, rel=1e-12)
        assert row.units_by_month[: len(s.units_per_month)] == s.units_per_month
