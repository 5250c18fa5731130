"""Brute-force oracle: on seeded small instances the MILP optimum equals exhaustive enumeration."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from planner.catalog import Catalog
from planner.optimize.solver import solve_context
from planner.problem.context import build_context
from tests.plan.helpers import scenario, table

GPUS = ["h100_sxm", "l40s", "l4", "a100_sxm_80gb"]


def brute_force(ctx, demand: float) -> float:  # type: ignore[no-untyped-def]
    """Enumerate one point and a replica count per candidate; price GPUs per (gpu, site) in whole units."""
    price = {}
    for opt in ctx.supply:
        key = (opt.gpu, opt.site)
        per_gpu = opt.usd_per_unit_month / opt.unit_gpus
        if key not in price or per_gpu < price[key][0] / price[key][1]:
            price[key] = (opt.usd_per_unit_month, opt.unit_gpus)
    choices = []
    for k in ctx.cands.index:
        pts = ctx.points_of(int(k))
        opts = [(0.0, 0)]
        for p in pts:
            upper = math.ceil(demand / p.capacity_requests_per_s)
            opts += [(p.capacity_requests_per_s * n, n) for n in range(1, upper + 1)]
        choices.append((k, opts))
    best = math.inf
    for combo in itertools.product(*(opts for _, opts in choices)):
        if sum(c for c, _ in combo) < demand - 1e-9:
            continue
        used: dict[tuple[str, str], int] = {}
        for (k, _), (_, n) in zip(choices, combo, strict=True):
            key = (str(ctx.cands.at[k, "gpu"]), str(ctx.cands.at[k, "site"]))
            used[key] = used.get(key, 0) + n * int(ctx.cands.at[k, "gpus"])
        cost = sum(price[key][0] * math.ceil(g / price[key][1]) for key, g in used.items())
        best = min(best, cost)
    return best


@pytest.mark.parametrize("seed", range(100))
def test_milp_matches_brute_force(catalog: Catalog, seed: int) -> None:
    rng = random.Random(seed)
    demand = round(rng.uniform(0.5, 6.0), 2)
    scen = scenario(requests_per_s=demand)
    n_cands = rng.randint(1, 3)
    cands, points = [], []
    for i in range(n_cands):
        gpu = rng.choice(GPUS)
        tp = rng.choice([1, 2])
        caps = sorted(round(rng.uniform(0.3, 3.0), 3) for _ in range(rng.randint(1, 2)))
        cands.append({"gpu": gpu, "tp": tp, "cap": caps[-1]})
        points += [{"cand": i, "cap": c, "batch": 4 * (j + 1)} for j, c in enumerate(caps)]
    tab = table(catalog, scen, cands, points)
    ctx = build_context(catalog, scen, tab, prune=False)
    sol = solve_context(ctx)
    expected = brute_force(ctx, demand)
    assert sol.status == "optimal"
    cost = sol.objective_usd - sol.costs_usd["tie_break"]
    assert cost == pytest.approx(expected, rel=1e-6), (seed, cands, points)


def test_pruning_keeps_the_optimum(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=4.0)
    cands = [
        {"gpu": "h100_sxm", "tp": 1, "cap": 2.0},
        {"gpu": "h100_sxm", "tp": 2, "cap": 1.5},
        {"gpu": "h100_sxm", "tp": 1, "cap": 1.0},
    ]
    points = [{"cand": 0, "cap": 2.0}, {"cand": 1, "cap": 1.5}, {"cand": 2, "cap": 1.0}]
    tab = table(catalog, scen, cands, points)
    pruned = build_context(catalog, scen, tab, prune=True)
    assert list(pruned.cands.index) == [0]  # TP2 with less capacity and the weaker TP1 are dominated
    full = solve_context(build_context(catalog, scen, tab, prune=False))
    assert solve_context(pruned).objective_usd == pytest.approx(full.objective_usd, rel=1e-6)


def test_site_pruning_keeps_the_optimum(catalog: Catalog) -> None:
    scen = scenario(requests_per_s=3.0)
    scen = scen.model_copy(
        update={"workloads": [scen.workloads[0].model_copy(update={"sites": ["us_east", "us_west"]})]}
    )
    cands = [{"gpu": "l4", "cap": 1.0, "site": "us_east"}, {"gpu": "l4", "cap": 1.0, "site": "us_west"}]
    points = [{"cand": 0, "cap": 1.0}, {"cand": 1, "cap": 1.0}]
    tab = table(catalog, scen, cands, points)
    pruned = build_context(catalog, scen, tab, prune=True)
    assert len(pruned.cands) == 1
    full = solve_context(build_context(catalog, scen, tab, prune=False))
    assert solve_context(pruned).objective_usd == pytest.approx(full.objective_usd, rel=1e-6)
