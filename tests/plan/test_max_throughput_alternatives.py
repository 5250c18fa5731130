"""Alternatives of a max_throughput plan: each GPU type's / site's best is the most it serves, then the least
cost serving that; they rank on the served fraction first, and one that serves less never replaces the plan
(it did: pd_card8 reported the $429 A100-only plan, serving 1.55 req/s, as the 4.50 req/s answer)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner import forked
from planner.catalog import Catalog
from planner.optimize import alternatives as alt_module
from planner.optimize.alternative_record import Alternative, rank
from planner.optimize.served_scale import HOLD_REL, serves_better, serves_less
from planner.plan import plan
from planner.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]
CARD8 = ROOT / "examples/pd_card8/scenario.yaml"
DEMAND_RPS = 3.5  # pd_card8's stated requests_per_s


def _only(catalog: Catalog, gpu: str) -> Scenario:
    """pd_card8 with only ``gpu``'s inventory and candidates (an independent plan of the GPU alternative)."""
    data = yaml.safe_load(CARD8.read_text())
    data["inventory"] = [line for line in data["inventory"] if line["gpu"] == gpu]
    data["hardware"]["gpus"] = [gpu]
    return Scenario.model_validate(data, context={"catalog": catalog})


@pytest.mark.parametrize("workers", ["1", "2"])
def test_card8_alternatives_do_not_replace_the_plan(
    catalog: Catalog, workers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With alternatives (serially and in forked workers) the plan is the one without them: 4 A100 prefill +
    4 H20 decode, $857.23, serving 1.2402 × 3.5 req/s; each one-GPU alternative serves less and says so."""
    monkeypatch.setenv(forked.WORKERS_ENV, workers)
    monkeypatch.setattr(alt_module, "FORK_MIN_SOLVE_S", 0.0)  # pd_card8 solves in < 0.1 s
    scenario = load_scenario(CARD8, catalog)
    bare = plan(catalog, scenario, with_alternatives=False).to_json()
    full = plan(catalog, scenario).to_json()
    assert full["total_cost_usd"] == pytest.approx(857.23264, rel=1e-9) == bare["total_cost_usd"]
    assert full["served_scale"] == pytest.approx(1.2401627, rel=1e-6) == bare["served_scale"]
    served_rps = full["served_requests_per_s"]["total"]
    assert served_rps == pytest.approx(full["served_scale"] * DEMAND_RPS, rel=1e-3)
    assert sorted(d["gpu"] for d in full["deployments"]) == ["a100_sxm_80gb", "h20"]
    by = {(a["kind"], a.get("gpu") or a.get("site")): a for a in full["alternatives"]}
    for gpu in ("a100_sxm_80gb", "h20"):
        alt = by[("gpu", gpu)]
        assert alt["served_scale"] < 0.5 < full["served_scale"]
        assert alt["lost_because"].startswith(f"serves {alt['served_scale']:.3g}× the stated demand, the plan 1.24×")
        assert alt["cost_delta_usd"] == pytest.approx(-428.61632, rel=1e-6)  # half the inventory's running cost
    assert by[("site", "dc1")]["lost_because"] == "chosen"
    assert by[("site", "dc1")]["served_scale"] == pytest.approx(full["served_scale"], rel=1e-6)


@pytest.mark.parametrize("gpu", ["a100_sxm_80gb", "h20"])
def test_a_gpu_alternative_is_that_gpus_own_max_throughput_plan(catalog: Catalog, gpu: str) -> None:
    """The GPU alternative's served fraction and cost are those of planning the scenario with that GPU alone."""
    full = plan(catalog, load_scenario(CARD8, catalog)).to_json()
    alt = next(a for a in full["alternatives"] if a.get("gpu") == gpu)
    alone = plan(catalog, _only(catalog, gpu), with_alternatives=False).to_json()
    assert alt["served_scale"] == pytest.approx(alone["served_scale"], rel=1e-6)
    assert alt["total_cost_usd"] == pytest.approx(alone["total_cost_usd"], rel=1e-6)  # HiGHS primal tolerance


def test_serves_better_is_lexicographic() -> None:
    """More of the demand wins whatever it costs; as much (within SAME_SCALE_REL) wins only when cheaper;
    without a served fraction (min cost) the cost alone decides."""
    assert serves_better(1.30, 900.0, 1.28, 100.0)
    assert not serves_better(0.44, 10.0, 1.28, 857.0)
    assert serves_better(1.28 * (1 - HOLD_REL), 800.0, 1.28, 857.0)  # held second stage: the same fraction
    assert not serves_better(1.28, 857.0, 1.28, 857.0)
    assert not serves_better(None, 10.0, 1.28, 857.0)
    assert serves_better(None, 10.0, None, 857.0) and not serves_better(None, 900.0, None, 857.0)
    assert serves_less(0.44, 1.28) and not serves_less(1.28 * (1 - HOLD_REL), 1.28) and not serves_less(None, 1.28)


def test_rank_under_max_throughput() -> None:
    """Serving less is why an alternative lost, even when it costs less; at the same fraction, cost decides."""
    items = [
        Alternative("gpu", "a", "optimal", "", total_cost_usd=400.0, served_scale=0.5),
        Alternative("gpu", "b", "optimal", "", total_cost_usd=1000.0, served_scale=1.0),
        Alternative("site", "s", "optimal", "", total_cost_usd=800.0, served_scale=1.0),
    ]
    ranked = rank(items, 800.0, {"gpu": {"a", "b"}, "site": {"s"}}, served_scale=1.0)
    assert ranked[0].lost_because == "serves 0.5× the stated demand, the plan 1× (objective: max throughput)"
    assert ranked[0].cost_delta_usd == -400.0
    assert ranked[1].lost_because == "costs $200 more over the horizon (objective: max throughput, then min cost)"
    assert ranked[2].lost_because == "chosen" and ranked[2].cost_delta_usd == 0.0
    assert rank(items[1:2], 800.0, {})[0].lost_because == "costs $200 more over the horizon (objective: min cost)"


def test_card8_workbook_lists_each_alternatives_served_fraction(catalog: Catalog) -> None:
    """The Alternatives sheet of a max_throughput plan ends with the served fraction of each alternative."""
    from planner.report.workbook import build_workbook

    result = plan(catalog, load_scenario(CARD8, catalog))
    ws = build_workbook(result)["Alternatives"]
    header = [c.value for c in ws[1]]
    assert header[-1] == "Served (x stated demand)"
    served = {row[1]: row[-1] for row in ws.iter_rows(min_row=2, values_only=True)}
    assert served["a100_sxm_80gb"] == pytest.approx(0.43882, rel=1e-4)
    assert served["dc1"] == pytest.approx(result.served_scale, rel=1e-6)
