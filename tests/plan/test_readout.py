"""The readout: typed deployments per period, supply lines, and the one cost ledger every output reads.

The ledger is checked against the MILP it reads (its present values add up to the objective without its
tie-break), against the hand formulas it replaces (tiered rent, the bought node's cash flow) and against
the plan's own schedule (no deployment uses more GPUs in a period than the supply has there)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.ledgers.economics import tiered_rent_usd_per_month
from planner.optimize import solve
from planner.plan import plan
from planner.problem.context import build_context
from planner.readout.deployments import deployments
from planner.readout.read import cost_ledger, schedule, supply_lines
from planner.scenario import load_scenario, merged_sites
from tests.plan.helpers import PEAK_PROFILE, scenario, table

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*/scenario.yaml"))


def _read(catalog: Catalog, scen, tab=None):  # type: ignore[no-untyped-def]
    """Solve and read back: (solution, ledger, supply lines, deployments, schedule)."""
    tab = tab if tab is not None else build_candidates(catalog, scen)
    sol, ctx = solve(build_context(catalog, scen, tab), "highs", None)
    entries = schedule(ctx, sol)
    ledger = cost_ledger(ctx, sol, entries)
    supply = supply_lines(ctx, sol, ledger)
    return sol, ledger, supply, deployments(ctx, sol, supply), entries


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_the_ledger_adds_up_to_the_objective(catalog: Catalog, path: Path) -> None:
    scen = load_scenario(path, catalog)
    sol, ledger, supply, deps, entries = _read(catalog, scen)
    assert ledger.total_usd == pytest.approx(sol.cost_usd, rel=1e-9)
    assert sum(s.cost_usd_per_month for s in supply) * scen.horizon_months == pytest.approx(ledger.total_usd, rel=1e-9)
    assert sum(d.cost_usd_per_month for d in deps) == pytest.approx(ledger.cost_usd_per_month, rel=1e-9)
    if scen.economics.cost_of_capital_frac_per_year == 0:
        assert sum(ledger.cash_flow_usd_per_month) == pytest.approx(ledger.total_usd, rel=1e-9)
    # resale is credited in the horizon's last month, capex in the order month, nothing outside the horizon
    assert all(line.month == scen.horizon_months - 1 for line in ledger.lines if line.kind == "resale")
    assert all(0 <= line.month < scen.horizon_months for line in ledger.lines)
    assert ledger.cost_usd_per_million_output_tokens == pytest.approx(
        ledger.total_usd / ledger.output_tokens * 1e6
    )
    # deployments carry one replica count per period and the site's kind as placement
    sites = merged_sites(catalog, scen)
    for d in deps:
        assert len(d.replicas_per_period) == scen.periods == len(d.served_requests_per_s_per_period)
        assert d.placement == sites[d.site].kind
        assert d.replicas in d.replicas_per_period
    # in every period the deployments use no more GPUs at a (gpu, site) than the supply has there
    for entry in entries:
        held = defaultdict(int)
        for bucket in (entry.bought_gpus, entry.rented_gpus, entry.owned_gpus):
            for key, gpus in bucket.items():
                held[key] += gpus
        used = defaultdict(int)
        for d in deps:
            used[f"{d.gpu}@{d.site}"] += d.replicas_per_period[entry.period] * d.gpus // d.replicas
        assert all(used[key] <= held[key] for key in used), (entry.period, dict(used), dict(held))


def test_buy_vs_rent_reads_per_period_and_places_the_data_center(catalog: Catalog) -> None:
    scen = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    result = plan(catalog, scen, with_alternatives=False)
    dc = [d for d in result.deployments if d.site == "dc1"]
    assert dc and all(d.placement == "datacenter" for d in dc)
    bought = sum(s.gpus for s in result.supply if s.kind == "buy")
    for t in range(scen.periods):
        assert sum(d.replicas_per_period[t] * d.tp * d.pp for d in dc) <= bought
    ledger = result.ledger
    assert ledger is not None
    # opex is the recurring cash, capex and resale are not in it
    recurring = sum(line.usd for line in ledger.lines if line.kind in ("rent", "running", "discount"))
    assert ledger.opex_usd_per_month == pytest.approx(recurring / scen.horizon_months)
    assert ledger.capex_usd == pytest.approx(sum(s.capex_usd for s in result.supply))
    assert ledger.opex_usd_per_month < ledger.cost_usd_per_month


def test_ledger_discount_lines_are_the_tiered_rent(catalog: Catalog) -> None:
    tiers = [{"min_gpus": 8, "discount_frac": 0.25}, {"min_gpus": 16, "discount_frac": 0.5}]
    scen = scenario(requests_per_s=5.0, economics={"rent_volume_tiers": tiers})
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    _sol, ledger, supply, _deps, _entries = _read(catalog, scen, tab)
    (line,) = supply
    net = sum(x.usd for x in ledger.lines if x.month == 0)
    pairs = [(t.min_gpus, t.discount_frac) for t in scen.economics.rent_volume_tiers]
    assert net == pytest.approx(tiered_rent_usd_per_month(line.gpus, line.usd_per_unit_month / 8, pairs))
    assert {x.kind for x in ledger.lines} == {"rent", "discount"}
    assert line.volume_discount_usd == pytest.approx(line.gpus * line.usd_per_unit_month / 8 - net)


def test_ledger_bills_hour_blocks_by_their_share_of_the_day(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=3.0, rent_providers=["hyperstack"])  # whole nodes only
    scen = scen.model_copy(
        update={"workloads": [scen.workloads[0].model_copy(update={"hourly_profile_frac": PEAK_PROFILE})]}
    )
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    _sol, ledger, supply, deps, entries = _read(catalog, scen, tab)
    (line,) = supply
    peak_nodes, off_nodes = (sum(b.rented_gpus.values()) / 8 for b in entries[0].hour_blocks)
    assert (peak_nodes, off_nodes) == (2, 1)  # 12 GPUs at the peak, 3.6 → 4 off-peak
    assert ledger.total_usd == pytest.approx(line.usd_per_unit_month * (2 * 8 / 24 + 1 * 16 / 24))
    assert deps[0].replicas_per_period == [12]


def test_cost_of_capital_discounts_the_ledger_not_the_cash(catalog: Catalog) -> None:
    scen = scenario(
        requests_per_s=3.0, horizon_months=12, economics={"cost_of_capital_frac_per_year": 0.1}
    )
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    sol, ledger, _supply, _deps, _entries = _read(catalog, scen, tab)
    nominal = sum(ledger.cash_flow_usd_per_month)
    assert ledger.total_usd == pytest.approx(sol.cost_usd, rel=1e-9)
    assert ledger.total_usd == pytest.approx(nominal * sum(1.1 ** (-m / 12) for m in range(12)) / 12, rel=1e-9)
