"""One focused test per constraint family on a tiny synthetic table; a registry test keeps them honest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import constraints
from planner.candidates import CandidateTable, build_candidates
from planner.catalog import Catalog
from planner.optimize.solver import solve_context
from planner.problem.context import build_context
from planner.problem.supply import SupplyKind
from planner.problem.variables import create_variables
from planner.scenario import load_scenario
from tests.plan.helpers import scenario, table

TESTED = {
    "workload_cost_floor",
    "instance_packing",
    "commitments",
    "budget_max",
    "demand_coverage",
    "slo_operating_point",
    "memory_fit",
    "node_packing",
    "gpu_supply",
    "site_capacity",
    "placement_rtt",
    "quantization_policy",
    "price_tiers",
    "spot_share",
    "pd_flow",
    "redundancy",
    "gpu_floor",
}


def test_every_family_has_a_focused_test() -> None:
    assert {family.name for family in constraints.FAMILIES} == TESTED
    assert all(family.role in constraints.ROLES for family in constraints.FAMILIES)


def test_forbid_families_key_their_rows_by_the_candidate_they_forbid(catalog: Catalog) -> None:
    """The decomposition probes the ``forbid`` role for excluded candidates: their rows' keys start with
    the candidate id, and they only ever force replicas or flow to zero."""
    scen = scenario(requests_per_s=1.0)
    l4 = catalog.gpu("l4")
    cands = [
        {"gpu": "l4", "cap": 5.0, "network_ms": 5000.0},  # placement_rtt
        {"gpu": "h100_sxm", "tp": 12, "gpus": 12, "cap": 10.0},  # node_packing
        {"gpu": "l4", "cap": 10.0},  # memory_fit (its point does not fit)
        {"gpu": "l4", "cap": 1.0},  # allowed
    ]
    points = [
        {"cand": 0, "cap": 5.0},
        {"cand": 1, "cap": 10.0},
        {"cand": 2, "cap": 10.0, "memory_per_gpu_gb": l4.memory_gb + 1},
        {"cand": 3, "cap": 1.0},
    ]
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    create_variables(ctx)
    for family in constraints.families_with("forbid"):
        family.add(ctx)
    keys = [key for _family, key in ctx.rows.values()]
    assert {int(key[0]) for key in keys} == {0, 1, 2}
    assert all(c.constant == 0 and c.sense == -1 for c in ctx.row_constraints.values())  # expr <= 0


def _replicas(sol, cand: int) -> int:  # type: ignore[no-untyped-def]
    return round(sum(v for (k, _j, _t), v in sol.values["n_rep"].items() if k == cand))


def test_demand_coverage_serves_the_demand(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=5.0)
    tab = table(catalog, scen, [{"gpu": "l4", "cap": 1.0}], [{"cand": 0, "cap": 1.0}])
    sol = solve_context(build_context(catalog, scen, tab, prune=False))
    assert _replicas(sol, 0) == 5
    assert sum(sol.values["flow"].values()) == pytest.approx(5.0)


def test_slo_operating_point_uses_one_point_per_candidate(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=3.0)
    # two points: 1.0 req/s and 2.0 req/s; the selector allows one of them only, so 2 replicas at 2.0
    tab = table(
        catalog,
        scen,
        [{"gpu": "l4", "cap": 2.0}],
        [{"cand": 0, "cap": 1.0, "batch": 4}, {"cand": 0, "cap": 2.0, "batch": 8}],
    )
    ctx = build_context(catalog, scen, tab, prune=False)
    sol = solve_context(ctx)
    chosen = {j for (k, j), v in sol.values["y"].items() if v > 0.5}
    assert len(chosen) == 1
    assert _replicas(sol, 0) == 2


def test_gpu_floor_rounds_up_the_gpus_a_workload_needs(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=4.5)
    # 1-GPU replicas of 1 req/s and 2-GPU replicas of 2.5 req/s: at best 0.8 GPU per req/s, 3.6 GPUs -> 4
    cands = [{"gpu": "l4", "cap": 1.0}, {"gpu": "l4", "tp": 2, "gpus": 2, "cap": 2.5}]
    points = [{"cand": 0, "cap": 1.0}, {"cand": 1, "cap": 2.5}]
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    sol = solve_context(ctx)
    t = ctx.periods[0]
    floors = {key: -ctx.row_constraints[name].constant for name, (fam, key) in ctx.rows.items() if fam == "gpu_floor"}
    assert floors == {("w", t): 4, ("supply", t): 4}
    assert _replicas(sol, 0) + 2 * _replicas(sol, 1) >= 4
    assert _replicas(sol, 0) + 2.5 * _replicas(sol, 1) >= 4.5


def test_memory_fit_forbids_points_that_do_not_fit(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=2.0)
    l4 = catalog.gpu("l4")
    cands = [{"gpu": "l4", "cap": 10.0}, {"gpu": "l4", "cap": 1.0}]
    points = [{"cand": 0, "cap": 10.0, "memory_per_gpu_gb": l4.memory_gb + 1}, {"cand": 1, "cap": 1.0}]
    sol = solve_context(build_context(catalog, scen, table(catalog, scen, cands, points), prune=False))
    assert _replicas(sol, 0) == 0 and _replicas(sol, 1) == 2


def test_node_packing_forbids_groups_that_straddle_nodes(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=2.0)
    node = catalog.gpu("h100_sxm").gpus_per_node
    cands = [{"gpu": "h100_sxm", "tp": 12, "gpus": 12, "cap": 10.0}, {"gpu": "h100_sxm", "tp": 1, "cap": 1.0}]
    assert node < 12 and 12 % node != 0
    points = [{"cand": 0, "cap": 10.0}, {"cand": 1, "cap": 1.0}]
    sol = solve_context(build_context(catalog, scen, table(catalog, scen, cands, points), prune=False))
    assert _replicas(sol, 0) == 0 and _replicas(sol, 1) == 2


def test_a_group_that_does_not_divide_the_node_is_charged_its_footprint(catalog: Catalog) -> None:
    """TP3 on 8-GPU nodes: two replicas per node (footprint 8/⌊8/3⌋ = 4 GPUs), so 5 replicas need 3 nodes
    (counting 15 GPUs would claim 2)."""
    scen = scenario(requests_per_s=5.0, rent_providers=["hyperstack"])  # whole 8-GPU nodes
    cands = [{"gpu": "h100_sxm", "tp": 3, "gpus": 3, "cap": 1.0}]
    sol = solve_context(build_context(catalog, scen, table(catalog, scen, cands, [{"cand": 0, "cap": 1.0}]), prune=False))
    assert _replicas(sol, 0) == 5
    assert sum(sol.values["units"].values()) == pytest.approx(3.0)


def test_gpu_supply_rents_whole_nodes(catalog: Catalog) -> None:
    # hyperstack quotes H100 without instance sizes: whole nodes only (Runpod would rent 3 × 1-GPU instances)
    scen = scenario(requests_per_s=3.0, rent_providers=["hyperstack"])
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 1.0}], [{"cand": 0, "cap": 1.0}])
    ctx = build_context(catalog, scen, tab, prune=False)
    sol = solve_context(ctx)
    node = catalog.gpu("h100_sxm").gpus_per_node
    units = sum(sol.values["units"].values())
    assert units == pytest.approx(1.0)  # 3 GPUs used → one whole 8-GPU node
    assert ctx.supply[0].unit_gpus == node


def test_site_capacity_limits_gpus(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=3.0, sites=[{"name": "us_east", "max_gpus": 8}])
    cands = [{"gpu": "h100_sxm", "cap": 0.25}]
    points = [{"cand": 0, "cap": 0.25}]
    sol = solve_context(build_context(catalog, scen, table(catalog, scen, cands, points), prune=False))
    assert sol.status == "infeasible"  # 12 H100 needed = two 8-GPU nodes, but the site allows 8 GPUs
    scen2 = scenario(requests_per_s=3.0, sites=[{"name": "us_east", "max_gpus": 16}])
    sol2 = solve_context(build_context(catalog, scen2, table(catalog, scen2, cands, points), prune=False))
    assert sol2.status == "optimal"


def test_placement_rtt_excludes_sites_and_slow_networks(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=1.0)
    cands = [
        {"gpu": "l4", "cap": 5.0, "network_ms": 5000.0},
        {"gpu": "l4", "cap": 1.0, "site": "us_west"},
        {"gpu": "l4", "cap": 0.5},
    ]
    points = [{"cand": 0, "cap": 5.0}, {"cand": 1, "cap": 1.0}, {"cand": 2, "cap": 0.5}]
    sol = solve_context(build_context(catalog, scen, table(catalog, scen, cands, points), prune=False))
    assert _replicas(sol, 0) == 0 and _replicas(sol, 1) == 0 and _replicas(sol, 2) == 2


def test_quantization_policy_excludes_disallowed_formats(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=1.0)
    cands = [{"gpu": "l4", "cap": 5.0, "quantization": "int4", "quality_tier": 2}, {"gpu": "l4", "cap": 1.0}]
    scen = scen.model_copy(
        update={"workloads": [scen.workloads[0].model_copy(update={"quantizations": ["bf16"]})]}
    )
    points = [{"cand": 0, "cap": 5.0}, {"cand": 1, "cap": 1.0}]
    sol = solve_context(build_context(catalog, scen, table(catalog, scen, cands, points), prune=False))
    assert _replicas(sol, 0) == 0 and _replicas(sol, 1) == 1


def test_commitments_hold_reserved_units_over_the_term(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=[1.0, 3.0], rental_kinds=["reserved_1y"], horizon_months=2)
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    ctx = build_context(catalog, scen, tab, prune=False)
    sol = solve_context(ctx)
    units = [round(v) for (i, t), v in sorted(sol.values["units"].items())]
    assert units[0] == units[1] == 2  # 12 GPUs in month 2 → two nodes held for both months of the term


def test_budget_max_caps_opex(catalog: Catalog) -> None:
    node_month = None
    scen = scenario(requests_per_s=3.0)
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    ctx = build_context(catalog, scen, tab, prune=False)
    node_month = ctx.supply[0].usd_per_unit_month
    tight = scenario(requests_per_s=3.0, budget={"opex_usd_per_month": 1.5 * node_month})
    sol = solve_context(
        build_context(
            catalog,
            tight,
            table(catalog, tight, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}]),
            prune=False,
        )
    )
    assert sol.status == "infeasible"  # needs two nodes, the budget pays for one and a half


def test_price_tiers_discount_gpus_beyond_each_threshold(catalog: Catalog) -> None:
    # 5 req/s at 0.25 req/s per 1-GPU replica → 20 GPUs → 3 eight-GPU H100 nodes = 24 GPUs rented
    tiers = [{"min_gpus": 8, "discount_frac": 0.25}, {"min_gpus": 16, "discount_frac": 0.5}]
    runs = {}
    for name, econ in (("list", {}), ("tiered", {"rent_volume_tiers": tiers})):
        scen = scenario(requests_per_s=5.0, economics=econ, rent_providers=["hyperstack"])  # whole nodes
        tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
        ctx = build_context(catalog, scen, tab, prune=False)
        runs[name] = (ctx, solve_context(ctx))
    ctx, listed = runs["list"]
    gpu_month = ctx.supply[0].usd_per_unit_month / 8
    assert listed.costs_usd["rent"] == pytest.approx(24 * gpu_month)
    _ctx, tiered = runs["tiered"]
    # 8 GPUs at the quote, 8 at 75 %, 8 at 50 % (segments fill in order although later ones are cheaper)
    assert tiered.costs_usd["rent"] == pytest.approx((8 + 6 + 4) * gpu_month)
    assert sum(round(v) for v in tiered.values["tier_on"].values()) == 2


def test_price_tiers_enter_the_opex_budget(catalog: Catalog) -> None:
    tiers = [{"min_gpus": 8, "discount_frac": 0.5}]
    probe = scenario(requests_per_s=3.0, rent_providers=["hyperstack"])  # whole nodes
    tab = table(catalog, probe, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    node_month = build_context(catalog, probe, tab, prune=False).supply[0].usd_per_unit_month
    # two nodes at list price cost 2 node-months; with 50 % off the second node they fit in 1.6
    scen = scenario(
        requests_per_s=3.0,
        economics={"rent_volume_tiers": tiers},
        budget={"opex_usd_per_month": 1.6 * node_month},
        rent_providers=["hyperstack"],
    )
    tab = table(catalog, scen, [{"gpu": "h100_sxm", "cap": 0.25}], [{"cand": 0, "cap": 0.25}])
    sol = solve_context(build_context(catalog, scen, tab, prune=False))
    assert sol.status == "optimal"
    assert sol.costs_usd["rent"] == pytest.approx(1.5 * node_month)


def test_spot_share_caps_the_spot_gpus_and_raises_cost_only_where_it_binds(catalog: Catalog) -> None:
    """chat_70b_cloud with spot allowed: spot is cheapest, so the plan puts most serving GPUs on spot;
    max_spot_frac 0.25 holds spot's usable GPUs to ≤ 25 % of the serving GPUs in every slice and costs more;
    max_spot_frac 1 (the default) adds no row and gives the same plan as before."""
    stated = load_scenario(Path(__file__).resolve().parents[2] / "examples/chat_70b_cloud/scenario.yaml", catalog)
    # providers that rent whole nodes only (Runpod's per-card instances would undercut spot nodes here)
    whole_nodes = sorted({p.provider for p in catalog.prices if not p.gpus_per_instance})
    spot_ok = stated.model_copy(update={"rental_kinds": ["on_demand", "spot"], "rent_providers": whole_nodes})
    tab = build_candidates(catalog, spot_ok)

    def run(frac: float) -> tuple[Any, Any]:
        econ = spot_ok.economics.model_copy(update={"max_spot_frac": frac})
        ctx = build_context(catalog, spot_ok.model_copy(update={"economics": econ}), tab)
        return ctx, solve_context(ctx)

    free_ctx, free = run(1.0)
    capped_ctx, capped = run(0.25)
    assert not [n for n in free_ctx.rows if n.startswith("spot_share")]
    assert free.status == capped.status == "optimal"
    spot = [i for i, o in enumerate(capped_ctx.supply) if o.kind is SupplyKind.RENT_SPOT]
    gpus_of = {int(k): int(g) for k, g in capped_ctx.cands["gpus"].items()}

    def spot_share(ctx: Any, sol: Any, t: int) -> float:
        on_spot = sum(
            ctx.supply[i].effective_gpus_frac * ctx.supply[i].unit_gpus * sol.values["units"][(i, t)] for i in spot
        )
        serving = sum(gpus_of[k] * reps for (k, _j, tt), reps in sol.values["n_rep"].items() if tt == t)
        return float(on_spot / serving)

    assert max(spot_share(free_ctx, free, t) for t in free_ctx.periods) > 0.25  # the cap binds
    assert all(spot_share(capped_ctx, capped, t) <= 0.25 + 1e-9 for t in capped_ctx.periods)
    assert capped.cost_usd > free.cost_usd


def _pd_table(catalog: Catalog, scen: Any, prefill_link_gb_per_s: float) -> Any:
    """A prefill pool (3 req/s per replica) and a decode pool (2 req/s) of one PD group, V_KV = 1 GB."""
    tab = table(catalog, scen, [{"gpu": "l4", "cap": 3.0}, {"gpu": "l4", "cap": 2.0}], [
        {"cand": 0, "cap": 3.0}, {"cand": 1, "cap": 2.0}
    ])
    cands = tab.candidates.assign(
        role=["prefill", "decode"], kv_bytes_per_request=[1e9, 1e9], kv_link_gb_per_s=[prefill_link_gb_per_s, 50.0]
    )
    return CandidateTable(candidates=cands, points=tab.points, sites=tab.sites)


@pytest.mark.parametrize(("link", "prefill_replicas"), [(50.0, 2), (1.0, 6)])
def test_pd_flow_matches_the_pools_and_the_kv_link(catalog: Catalog, link: float, prefill_replicas: int) -> None:
    """6 req/s served disaggregated: Σ prefill flows = Σ decode flows = pd_flow = 6; replicas 2 prefill
    (3 req/s each) and 3 decode (2 req/s each) — or 6 prefill when each sends KV at only 1 GB/s of 1 GB."""
    scen = scenario(requests_per_s=6.0)
    sol = solve_context(build_context(catalog, scen, _pd_table(catalog, scen, link), prune=False))
    assert sum(sol.values["pd_flow"].values()) == pytest.approx(6.0)
    assert sol.values["flow"][(0, 0)] == pytest.approx(6.0) and sol.values["flow"][(1, 0)] == pytest.approx(6.0)
    assert (_replicas(sol, 0), _replicas(sol, 1)) == (prefill_replicas, 3)
