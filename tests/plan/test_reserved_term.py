"""A reservation is paid for its whole term, also the months after the horizon.

Reservations are committed at the start of a term window (months 0, 12, 24, … for reserved_1y); when the
horizon ends inside a window, the units reserved there are billed up to the window's end
(planner.problem.cost_terms.term_tail): the MILP objective and the plan's cost ledger read the same months.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from planner.catalog import Catalog
from planner.ledgers.economics import discount_factor, term_tail_months
from planner.optimize.solver import solve_context
from planner.plan import plan
from planner.problem.context import build_context
from planner.problem.cost_terms import fixed_plan_usd
from planner.problem.supply import SupplyKind
from planner.readout.read import cost_ledger, schedule
from planner.scenario import parse_scenario
from tests.plan.helpers import scenario, table
from tests.report.conftest import ROOT

RATE = 0.1
"""Cost of capital of the synthetic plans, per year (so the months after the horizon are discounted)."""


def test_term_tail_months() -> None:
    assert term_tail_months(6, 12) == list(range(6, 12))
    assert term_tail_months(12, 12) == [] and term_tail_months(36, 12) == []
    assert term_tail_months(18, 12) == list(range(18, 24))
    assert term_tail_months(13, 36) == list(range(13, 36))


def _synthetic(catalog: Catalog, demand: list[float]) -> Any:
    """One b200 TP8 candidate (1 req/s per replica) renting on-demand or reserved_1y whole nodes."""
    scen = scenario(
        requests_per_s=demand,
        horizon_months=len(demand),
        rental_kinds=["on_demand", "reserved_1y"],
        economics={"cost_of_capital_frac_per_year": RATE},
    )
    tab = table(catalog, scen, [{"gpu": "b200", "tp": 8, "cap": 1.0}], [{"cand": 0, "cap": 1.0}])
    return build_context(catalog, scen, tab, prune=False)


def _hand_optimum_usd(demand: list[float], on_demand_usd: float, reserved_usd: float) -> float:
    """Enumerate the reserved nodes of every 12-month window: each is paid for 12 months (the window's,
    after the horizon too), the nodes missing in a month are rented on demand; every month at present value."""
    d = [discount_factor(m, cost_of_capital_frac_per_year=RATE) for m in range(12 * math.ceil(len(demand) / 12))]
    need = [math.ceil(x - 1e-9) for x in demand]
    windows = range(math.ceil(len(demand) / 12))
    best = math.inf
    for reserved in itertools.product(*(range(max(need) + 1) for _ in windows)):
        usd = sum(r * reserved_usd * sum(d[12 * k : 12 * k + 12]) for k, r in enumerate(reserved))
        usd += sum(d[m] * on_demand_usd * max(0, n - reserved[m // 12]) for m, n in enumerate(need))
        best = min(best, usd)
    return best


@pytest.mark.parametrize(
    ("demand", "months_paid_after"),
    [
        ([2, 2, 3, 3, 2, 2, 2], 0),  # 7 months: a 12-month reservation does not pay
        ([2, 2, 3, 3, 2, 2, 2, 2, 2, 2, 2], 1),  # 11 months: it does, paid one month after the horizon
        ([2] * 12 + [3, 3, 1, 1, 1, 1], 0),  # 18 months: reserve 2 in the first window only
        ([1] * 12 + [3] * 11, 1),  # 23 months: reserve 1, then 3 in the second window
        # months 18-23 have month 0's demand: a reservation of months 12-23 is still one decision
        ([1] * 12 + [3] * 6 + [1] * 6, 0),
    ],
)
def test_reserved_plan_matches_hand_arithmetic_and_the_ledger(
    catalog: Catalog, demand: list[float], months_paid_after: int
) -> None:
    ctx = _synthetic(catalog, demand)
    price = {o.kind: o.usd_per_unit_month for o in ctx.supply if o.unit_gpus == 8}
    on_demand, reserved = price[SupplyKind.RENT_ON_DEMAND], price[SupplyKind.RENT_RESERVED_1Y]
    assert reserved < on_demand  # b200: reserving is cheaper per month, so only the term decides
    sol = solve_context(ctx)
    assert sol.status == "optimal"
    cost = sol.objective_usd - sol.costs_usd["tie_break"]
    assert cost == pytest.approx(_hand_optimum_usd(demand, on_demand, reserved), rel=1e-9)
    ledger = cost_ledger(ctx, sol, schedule(ctx, sol))
    assert ledger.total_usd == pytest.approx(cost, rel=1e-9)  # ledger == objective
    assert fixed_plan_usd(ctx, sol.values) == pytest.approx(cost, rel=1e-9)  # compare's price lines
    tail = [line for line in ledger.lines if line.month >= len(demand)]
    assert all(line.kind == "rent" and "reserved" in line.supply_id for line in tail)
    assert ledger.cash_months == len(demand) + months_paid_after
    assert len(ledger.cash_flow_usd_per_month) == ledger.cash_months
    assert sum(ledger.cash_flow_usd_per_month) == pytest.approx(sum(line.usd for line in ledger.lines), rel=1e-12)


def _repro_data(horizon_months: int) -> Any:
    """examples/chat_70b_cloud on b200 only, 60 req/s, renting on-demand or reserved for 1 year."""
    import yaml

    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    data.update(horizon_months=horizon_months, rental_kinds=["on_demand", "reserved_1y"])
    data["hardware"]["gpus"] = ["b200"]
    data["workloads"][0]["requests_per_s"] = 60
    return data


def _repro(horizon_months: int) -> Any:
    return parse_scenario(_repro_data(horizon_months))


@pytest.mark.parametrize(("horizon_months", "reserved_months"), [(6, 0), (12, 12), (18, 12)])
def test_a_short_horizon_rents_on_demand(catalog: Catalog, horizon_months: int, reserved_months: int) -> None:
    result = plan(catalog, _repro(horizon_months), with_alternatives=False)
    assert result.ledger is not None
    # 6 months: a year's reservation ($27,648 × 12) costs more than 6 months on demand ($30,240 × 6); 18 months:
    # reserve the first year, rent the last 6 months on demand
    reserved = [line for line in result.supply if line.rental_kind == "reserved_1y"]
    assert sum(sum(line.units_per_month) for line in reserved) == reserved_months
    assert all(line.units_per_month[:12] == [1] * 12 for line in reserved)
    assert result.ledger.total_usd == pytest.approx(
        sum(line.usd_per_unit_month * sum(line.units_per_month) for line in result.supply), rel=1e-9
    )


def test_reserved_breakeven_counts_the_months_paid_after_the_horizon(catalog: Catalog) -> None:
    from planner.compare_breakeven import reserved_breakeven

    site = catalog.sites["us_east"]
    whole, _ = reserved_breakeven(catalog, "b200", site)
    assert whole is not None and whole < 1
    assert reserved_breakeven(catalog, "b200", site, horizon_months=24)[0] == pytest.approx(whole, rel=1e-12)
    late, flip = reserved_breakeven(catalog, "b200", site, horizon_months=23)  # 24 months paid for 23
    assert late == pytest.approx(whole * 24 / 23, rel=1e-12) and flip is not None and "pays 24 months" in flip["sentence"]
    short, flip = reserved_breakeven(catalog, "b200", site, horizon_months=6)  # 12 months paid for 6: never
    assert short is None and flip is not None and flip["factor"] == pytest.approx(2 * whole, rel=1e-12)


def test_cash_flows_past_the_horizon_line_up_in_the_crossover() -> None:
    from planner.readout.ledger import CashLine, CostLedger, crossover_month

    buying = CostLedger(3, (CashLine(0, "capex", "b", "buy", 100.0, 100.0),), 1.0)
    # a reservation billed for month 3, after the 3-month horizon
    renting = CostLedger(3, tuple(CashLine(m, "rent", "r", "rent", 40.0, 40.0) for m in range(4)), 1.0)
    assert (buying.cash_months, renting.cash_months) == (3, 4)
    assert renting.cash_flow_usd_per_month == [40.0] * 4 and renting.cost_usd_per_month == pytest.approx(160 / 3)
    assert crossover_month(buying, renting) == 2  # cumulative 100 vs 40, 80, 120
    late = CostLedger(3, (CashLine(0, "capex", "b", "buy", 150.0, 150.0),), 1.0)
    assert crossover_month(late, renting) == 3  # only in the month paid after the horizon: 150 ≤ 160


def test_plan_cli_says_what_is_paid_after_the_horizon(tmp_path: Any) -> None:
    import yaml
    from typer.testing import CliRunner

    from planner.cli.main import app

    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(_repro_data(23)))
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives"])
    assert res.exit_code == 0, res.output
    # 8 reserved b200 GPUs: 24 months of $27,648 paid for a 23-month horizon
    assert "reserved terms run 1 month past the horizon: $27,648 (nominal)" in res.output


def test_the_total_budget_counts_the_months_paid_after_the_horizon(catalog: Catalog) -> None:
    # 23 months: reserving costs $27,648 × 24 + the small instance $4,888.80 × 23 = $775,994.40; without the
    # month paid after the horizon it would be $748,346.40, all on demand $807,962.40
    data = _repro_data(23)
    data["budget"] = {"total_usd": 775_000}
    assert plan(catalog, parse_scenario(data), with_alternatives=False).status == "infeasible"
    data["budget"] = {"total_usd": 776_000}
    result = plan(catalog, parse_scenario(data), with_alternatives=False)
    assert result.total_cost_usd == pytest.approx(775_994.4, rel=1e-9)
