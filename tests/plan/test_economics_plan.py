"""Buy vs rent in the MILP: bought nodes persist, budgets bind monotonically, compare reports flip points."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.compare import compare
from planner.plan import plan
from planner.readout import PlanResult
from planner.scenario import Budget, Scenario, load_scenario
from tests.plan.helpers import PEAK_PROFILE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scenario(catalog: Catalog):  # type: ignore[no-untyped-def]
    return load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)


_PLANS: dict[str, PlanResult] = {}


def _plan(catalog: Catalog, scenario: Scenario) -> PlanResult:
    """``plan`` without alternatives, solved once per distinct scenario in this module (several tests
    read the same buy_vs_rent plans; each solve is deterministic)."""
    key = scenario.model_dump_json()
    if key not in _PLANS:
        _PLANS[key] = plan(catalog, scenario, with_alternatives=False)
    return _PLANS[key]


def test_hybrid_buys_base_load_and_rents_the_rest(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    data = _plan(catalog, scenario).to_json()
    assert data["status"] == "optimal" and data["capex_usd"] > 0
    bought = [row["bought_gpus"] for row in data["schedule"]]
    lead = max(s["available_from_month"] for s in data["supply"] if s["kind"] == "buy")
    for row, gpus in zip(data["schedule"], bought, strict=True):
        if row["start_month"] < lead:
            assert not gpus  # nothing is usable before delivery
    delivered = [g for row, g in zip(data["schedule"], bought, strict=True) if row["start_month"] >= lead]
    assert all(g == delivered[0] for g in delivered)  # bought capacity persists
    # horizon cost = capex − residual + running + rent (cash flow sums to the total)
    assert sum(data["cash_flow_usd_per_month"]) == pytest.approx(data["total_cost_usd"], rel=1e-6)
    assert data["cost_usd_per_million_output_tokens"] > 0


def test_rent_only_costs_more_than_hybrid(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    rent = _plan(catalog, scenario.model_copy(update={"procurement": ["rent"]}))
    hybrid = _plan(catalog, scenario)
    assert hybrid.total_cost_usd <= rent.total_cost_usd + 1e-6


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_higher_rent_never_increases_rented_gpus(catalog: Catalog, scenario, scale: float) -> None:  # type: ignore[no-untyped-def]
    def rented(factor: float) -> int:
        econ = scenario.economics.model_copy(update={"rent_price_scale": factor})
        result = _plan(catalog, scenario.model_copy(update={"economics": econ}))
        return sum(sum(row["rented_gpus"].values()) for row in result.to_json()["schedule"])

    assert rented(scale * 1.5) <= rented(scale)


def test_larger_budget_never_serves_less(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    served = []
    for opex in (20_000.0, 40_000.0, 80_000.0):
        sc = scenario.model_copy(
            update={
                "objective": "max_throughput",
                "budget": Budget(opex_usd_per_month=opex),
                "procurement": ["rent"],
                "horizon_months": 3,
                "period_months": 3,
            }
        )
        result = plan(catalog, sc, with_alternatives=False)
        served.append(result.served_scale or 0.0)
        assert result.to_json()["opex_usd_per_month"] <= opex * (1 + 1e-6)
    assert served[0] <= served[1] <= served[2] and served[2] > served[0]


def test_compare_reports_options_and_flip_points(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    data = compare(catalog, scenario).to_json()
    names = [o["name"] for o in data["options"]]
    assert names == ["buy_only", "rent_only", "hybrid"]
    assert data["recommendation"] == "hybrid"
    assert data["flip_points"] and all("sentence" in f for f in data["flip_points"])


def test_inventory_is_used_at_sunk_cost(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    from planner.scenario import InventoryItem

    sc = scenario.model_copy(
        update={
            "procurement": ["rent"],
            "inventory": [InventoryItem(gpu="h100_sxm", count=8, site="dc1")],
            "horizon_months": 3,
            "period_months": 3,
        }
    )
    data = plan(catalog, sc, with_alternatives=False).to_json()
    owned = [s for s in data["supply"] if s["kind"] == "owned"]
    assert owned and 0 < owned[0]["gpus"] <= 8  # powered on only as far as needed
    # sunk cost: only power, colocation and ops per GPU-month, far below a month of rent
    from planner.costs import rent_quote
    from planner.units import HOURS_PER_MONTH

    sites = [catalog.sites[s] for w in sc.workloads for s in (w.sites or []) if s in catalog.sites]
    quotes = [rent_quote(catalog, catalog.gpu("h100_sxm"), site, "on_demand") for site in sites]
    cheapest = min(q.usd_per_gpu_hour for q in quotes if q is not None) * HOURS_PER_MONTH
    assert owned[0]["usd_per_unit_month"] < cheapest


def _step_scenario(scenario, **economics: float):  # type: ignore[no-untyped-def]
    """Demand steps up from 10 to 30 req/s at month 12 (quarterly periods, 36 months); rent (at 3× the
    catalog price, so that buying wins for long stretches) covers the delivery lead time."""
    workload = scenario.workloads[0].model_copy(
        update={"requests_per_s": [10.0] * 4 + [30.0] * 8, "growth_frac_per_month": 0.0}
    )
    return scenario.model_copy(
        update={
            "workloads": [workload],
            "economics": scenario.economics.model_copy(update=economics),
        }
    )


def test_purchases_are_timed_for_a_demand_step(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    result = plan(catalog, _step_scenario(scenario, rent_price_scale=3.0), with_alternatives=False)
    data = result.to_json()
    assert data["status"] == "optimal"
    orders = {row["start_month"]: sum(row["ordered_gpus"].values()) for row in data["schedule"]}
    ordered_at = sorted(m for m, gpus in orders.items() if gpus)
    # lead time 2 months: the second order goes out at month 9 so it is delivered before the step at 12
    assert ordered_at == [0, 9]
    fleet = [sum(row["bought_gpus"].values()) for row in data["schedule"]]
    assert fleet[4] > fleet[1] > 0 and fleet[3] == fleet[1]
    flow = data["cash_flow_usd_per_month"]
    later = sum(s["capex_usd"] for s in data["supply"] if s["purchase_month"] == 9)
    assert later > 0 and flow[9] >= later
    assert sum(flow) == pytest.approx(data["total_cost_usd"], rel=1e-6)
    # ordering everything at month 0 (one window only) can only cost more
    upfront = plan(
        catalog, _step_scenario(scenario, rent_price_scale=3.0, purchase_every_months=36), with_alternatives=False
    )
    assert upfront.total_cost_usd > result.total_cost_usd
    assert {s["purchase_month"] for s in upfront.to_json()["supply"] if s["kind"] == "buy"} == {0}


def whole_node_providers(catalog: Catalog) -> list[str]:
    """Providers with a price row that rents whole nodes (no ``gpus_per_instance``)."""
    return sorted({p.provider for p in catalog.prices if not p.gpus_per_instance})


def _profile_scenario(scenario, profile, **update):  # type: ignore[no-untyped-def]
    workload = scenario.workloads[0].model_copy(
        update={"requests_per_s": 30.0, "growth_frac_per_month": 0.0, "hourly_profile_frac": profile}
    )
    return scenario.model_copy(update={"workloads": [workload], **update})


def test_hourly_profile_rents_only_the_hours_it_needs(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    short = {
        "horizon_months": 12,
        "period_months": 12,
        "procurement": ["rent"],
        "rent_providers": whole_node_providers(catalog),  # the node arithmetic below needs whole nodes
    }
    flat = plan(catalog, _profile_scenario(scenario, None, **short), with_alternatives=False)
    always_peak = plan(catalog, _profile_scenario(scenario, [1.0] * 24, **short), with_alternatives=False)
    shaped = plan(catalog, _profile_scenario(scenario, PEAK_PROFILE, **short), with_alternatives=False)
    assert always_peak.total_cost_usd == pytest.approx(flat.total_cost_usd, rel=1e-9)
    data = shaped.to_json()
    blocks = data["schedule"][0]["hour_blocks"]
    assert [b["hours_per_day"] for b in blocks] == [8.0, 16.0]
    assert blocks[0]["served_requests_per_s"]["chat"] == pytest.approx(30.0)
    assert blocks[1]["served_requests_per_s"]["chat"] == pytest.approx(9.0)
    # on-demand nodes are billed by the hour: peak nodes × 8/24 + off-peak nodes × 16/24 of the flat bill
    nodes = [sum(b["rented_gpus"].values()) / 8 for b in blocks]
    flat_nodes = flat.to_json()["supply"][0]["units"]
    expected = flat.total_cost_usd / flat_nodes * (nodes[0] * 8 / 24 + nodes[1] * 16 / 24)
    assert shaped.total_cost_usd == pytest.approx(expected, rel=1e-6)
    assert nodes[1] < nodes[0]
    # the opex budget counts on-demand nodes for the hours they run: the shaped bill per month fits
    budget = Budget(opex_usd_per_month=shaped.total_cost_usd / 12 * (1 + 1e-6))
    capped = plan(
        catalog, _profile_scenario(scenario, PEAK_PROFILE, budget=budget, **short), with_alternatives=False
    )
    assert capped.status == "optimal"
    assert capped.total_cost_usd == pytest.approx(shaped.total_cost_usd, rel=1e-6)
    # the daily mean served rate is what tokens are counted on
    assert data["schedule"][0]["served_requests_per_s"]["chat"] == pytest.approx((30 * 8 + 9 * 16) / 24)


def test_hourly_profile_buys_the_base_and_rents_the_peaks(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    econ = scenario.economics.model_copy(update={"rent_price_scale": 1.5})
    sc = _profile_scenario(scenario, PEAK_PROFILE, horizon_months=36, period_months=3, economics=econ)
    data = plan(catalog, sc, with_alternatives=False).to_json()
    assert data["status"] == "optimal"
    after_delivery = data["schedule"][2]
    peak, off_peak = after_delivery["hour_blocks"]
    assert after_delivery["bought_gpus"] and peak["rented_gpus"] and not off_peak["rented_gpus"]


def test_demand_flip_point_is_found_by_bisection(
    catalog: Catalog, scenario, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    import planner.compare as cmp

    assert cmp.scaled_demand(scenario, 0.5).workloads[0].requests_per_s == pytest.approx(10.0)
    steps = scenario.model_copy(
        update={"workloads": [scenario.workloads[0].model_copy(update={"requests_per_s": [2.0, 4.0]})]}
    )
    assert cmp.scaled_demand(steps, 3.0).workloads[0].requests_per_s == [6.0, 12.0]
    # the bisection converges on the demand level where the decision changes (here: buying pays above 30 %
    # of the stated demand), and the sentence says which side wins
    peak = scenario.workloads[0].requests_per_s
    stated = peak if isinstance(peak, float) else max(peak)

    def decision(_catalog: Catalog, sc, _solver: str) -> str:  # type: ignore[no-untyped-def]
        rate = sc.workloads[0].requests_per_s
        return "buy" if (rate if isinstance(rate, float) else max(rate)) >= 0.3 * stated else "rent_only"

    monkeypatch.setattr(cmp, "_recommend", decision)
    flip = cmp._flip(catalog, scenario, "highs", "demand_scale", "buy")
    assert flip is not None and flip["factor"] == pytest.approx(0.3, rel=0.05)
    assert flip["sentence"].startswith("buying wins if demand stays above 0.3")
    # six steps over 1/16×-4× leave a bracket 64^(1/64) wide around the flip, and the sentence states it
    low, high = (float(x) for x in flip["sentence"].split("(between ")[1].split(")")[0].replace("×", "").split(" and "))
    assert low <= 0.3 <= high and high / low == pytest.approx(64 ** (1 / 64), rel=0.02)


def test_buy_vs_rent_has_no_demand_flip_with_whole_nodes_on_both_sides(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    """Rented (from providers that rent whole nodes only) and bought capacity both come in whole 8-GPU nodes
    here, so the demand level does not change which one is cheaper per node: buying wins from 1/16× to 4× the
    stated demand, and compare says so. (With Runpod's per-card instances renting wins below ≈ 0.37×.)"""
    from planner.compare import _flip

    whole = scenario.model_copy(update={"rent_providers": whole_node_providers(catalog)})
    assert _flip(catalog, whole, "highs", "demand_scale", "buy") is None


def test_reserved_breakeven_uses_the_quotes_the_planner_pays(catalog: Catalog) -> None:
    from planner.compare_breakeven import reserved_breakeven

    # H100 at us_east: the cheapest on-demand ($1.90) undercuts the reserved estimate ($2.40)
    frac, flip = reserved_breakeven(catalog, "h100_sxm", catalog.sites["us_east"])
    assert frac is None and flip is not None and "never pays" in flip["sentence"]
    assert flip["factor"] == pytest.approx(2.4 / 1.9)


def test_rent_is_discounted_like_purchases(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    short = {
        "horizon_months": 12,
        "period_months": 12,
        "procurement": ["rent"],
        "rent_providers": whole_node_providers(catalog),  # the node arithmetic below needs whole nodes
    }
    flat = plan(catalog, _profile_scenario(scenario, None, **short), with_alternatives=False)
    econ = scenario.economics.model_copy(update={"cost_of_capital_frac_per_year": 0.1})
    pv = plan(catalog, _profile_scenario(scenario, None, economics=econ, **short), with_alternatives=False)
    factor = sum(1.1 ** (-m / 12) for m in range(12)) / 12
    assert pv.total_cost_usd == pytest.approx(flat.total_cost_usd * factor, rel=1e-9)


def test_rent_providers_restrict_the_quotes(catalog: Catalog, scenario) -> None:  # type: ignore[no-untyped-def]
    from planner.errors import ScenarioError
    from planner.scenario import parse_scenario, validate_against_catalog

    rent = {"procurement": ["rent"], "horizon_months": 3, "period_months": 3}
    cheapest = plan(catalog, scenario.model_copy(update=rent), with_alternatives=False).to_json()
    aws = plan(
        catalog, scenario.model_copy(update={**rent, "rent_providers": ["aws"]}), with_alternatives=False
    ).to_json()
    assert all(s["source"].startswith("aws ") for s in aws["supply"])
    assert aws["total_cost_usd"] > cheapest["total_cost_usd"]
    bad = parse_scenario({**scenario.model_dump(mode="json"), "rent_providers": ["awss"]})
    with pytest.raises(ScenarioError, match="rent_providers\\[0\\]: unknown provider 'awss' — did you mean aws"):
        validate_against_catalog(bad, catalog, "s.yaml")


def test_demand_flip_sentence_quotes_the_peak_with_growth(catalog: Catalog) -> None:
    """examples/buy_vs_rent grows 20 req/s by 3 %/month over 12 quarters, so its peak is 20·1.03^35 = 56.28
    req/s (the last period's peak month, month 35); a flip at 0.5× the stated level is 28.1 req/s at peak (the
    sentence said 10 req/s: 0.5 × the month-0 rate)."""
    from planner.compare import flip_sentence

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "examples/buy_vs_rent/scenario.yaml", catalog)
    sentence = flip_sentence(scenario, "demand_scale", 0.5, "rent_only", "hybrid", "now")
    assert f"chat {0.5 * 20 * 1.03 ** 35:.3g} req/s at peak" in sentence


def test_growth_is_served_at_each_periods_peak_and_counted_at_its_mean(catalog: Catalog) -> None:
    """examples/buy_vs_rent (20 req/s, 3 %/month, quarters): each quarter serves its last, largest month
    (the first quarter 20·1.03², the last 20·1.03^35 — planning for the first month left months 2-3 of every
    quarter 3 % and 6 % short), and the output tokens served are every month's own: Σ_m 20·1.03^m · 300
    tokens · 30 days."""
    from planner.units import HOURS_PER_MONTH

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "examples/buy_vs_rent/scenario.yaml", catalog)
    data = plan(catalog, scenario, with_alternatives=False).to_json()
    served = [entry["served_requests_per_s"]["chat"] for entry in data["schedule"]]
    assert served == pytest.approx([20 * 1.03 ** (3 * q + 2) for q in range(12)], rel=1e-6)
    tokens = sum(20 * 1.03**m for m in range(36)) * 300 * HOURS_PER_MONTH * 3600
    assert data["output_tokens_served"] == pytest.approx(tokens, rel=1e-9)
