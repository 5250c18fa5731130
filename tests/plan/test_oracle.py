"""Brute-force oracle: on seeded small instances the MILP optimum equals exhaustive enumeration."""

from __future__ import annotations

import functools
import itertools
import math
import random

import pytest

from planner.catalog import Catalog
from planner.optimize.solver import solve_context
from planner.problem.context import build_context
from tests.plan.helpers import scenario, table

GPUS = ["h100_sxm", "l40s", "l4", "a100_sxm_80gb"]


def _fits(groups: list[int], pools: list[tuple[int, int]]) -> bool:
    """Whether replica groups (GPUs each) fit pools of (capacity GPUs, largest group one instance holds):
    largest group first into the fitting pool with the smallest instances (nested eligibility)."""
    room = [[cap, host] for cap, host in sorted(pools, key=lambda p: p[1])]
    for g in sorted(groups, reverse=True):
        pool = next((r for r in room if r[1] >= g and r[0] >= g), None)
        if pool is None:
            return False
        pool[0] -= g
    return True


@functools.cache
def _cheapest_units(options: tuple[tuple[int, int, float], ...], groups: tuple[int, ...]) -> float:
    """Cheapest units of rent options (unit GPUs, largest instance, USD per unit) holding ``groups``."""
    total = sum(groups)
    best = math.inf
    for units in itertools.product(*(range(math.ceil(total / u) + 1) for u, _h, _p in options)):
        cost = sum(n * usd for n, (_u, _h, usd) in zip(units, options, strict=True))
        if cost < best and _fits(list(groups), [(n * u, h) for n, (u, h, _p) in zip(units, options, strict=True)]):
            best = cost
    return best


def brute_force(ctx, demand: float) -> float:  # type: ignore[no-untyped-def]
    """Enumerate one point and a replica count per candidate; price the groups of each (gpu, site) by
    enumerating the units of every rent option there (instances of 1/2/4 GPUs and whole nodes)."""
    options: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
    for opt in ctx.supply:
        host = max(opt.unit_gpus, opt.max_instance_gpus)
        options.setdefault((opt.gpu, opt.site), []).append((opt.unit_gpus, host, opt.usd_per_unit_month))
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
        used: dict[tuple[str, str], list[int]] = {}
        for (k, _), (_, n) in zip(choices, combo, strict=True):
            key = (str(ctx.cands.at[k, "gpu"]), str(ctx.cands.at[k, "site"]))
            used.setdefault(key, []).extend([int(ctx.cands.at[k, "gpus"])] * n)
        cost = sum(_cheapest_units(tuple(options[key]), tuple(sorted(g))) for key, g in used.items())
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
