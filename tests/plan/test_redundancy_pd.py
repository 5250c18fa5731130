"""Redundancy with prefill/decode pools (constraints/redundancy.py): a request needs a prefill AND a decode
replica of one PD group, so a pool counts as spare only with its partner stage, and a pool's surplus over
its partner stage absorbs failures. Brute-force oracle on tiny PD instances: every replica vector, every
failure of r replicas (whole-node replicas: a node failure is a replica failure), the survivors must serve
the demand: co-located + Σ_g min(prefill_g, decode_g) ≥ D."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from constraints import redundancy
from planner.catalog import Catalog
from planner.optimize.build import build_problem
from planner.optimize.solver import make_solver, solve_context, solve_status
from planner.plan import plan
from planner.problem import spare
from planner.problem.context import BuildContext, build_context
from planner.scenario import parse_scenario
from planner.scenario_base import Redundancy
from tests.plan.helpers import scenario, table

ROOT = Path(__file__).resolve().parents[2]

POOLS = [  # (role, PD group's weight format, GPU, requests/s per TP8 replica)
    ("colocated", "bf16", "h100_sxm", 0.8),
    ("prefill", "bf16", "a100_sxm_80gb", 4.0),
    ("decode", "bf16", "a100_sxm_80gb", 2.0),
    ("prefill", "int4", "h100_sxm", 6.0),
    ("decode", "int4", "h100_sxm", 3.0),  # a big decode pool: spare only next to the int4 prefill pool
]
"""Two PD groups (bf16, int4) and a co-located deployment, every replica one whole 8-GPU node."""

MAX_REPLICAS = 8
"""The oracle enumerates 0..MAX_REPLICAS replicas per candidate (beyond every optimum below)."""


def _context(
    catalog: Catalog,
    demand: float,
    rule: dict[str, Any],
    pools: list[tuple[str, str, str, float]],
    sites: list[str] | None = None,
) -> BuildContext:
    """The built MILP of ``pools`` (at ``sites[i]`` when given, else all at us_east)."""
    extra = {"sites": [{"name": s} for s in sorted(set(sites))]} if sites else {}
    scen = scenario(requests_per_s=demand, **extra)
    update: dict[str, Any] = {"redundancy": Redundancy(**rule)}
    if sites:
        update["sites"] = sorted(set(sites))
    scen = scen.model_copy(update={"workloads": [scen.workloads[0].model_copy(update=update)]})
    cands = [{"gpu": gpu, "tp": 8, "cap": cap, "quantization": q} for _, q, gpu, cap in pools]
    for c, site in zip(cands, sites or [], strict=False):
        c["site"] = site
    tab = table(catalog, scen, cands, [{"cand": i, "cap": c["cap"]} for i, c in enumerate(cands)])
    tab.candidates["role"] = [role for role, *_ in pools]
    tab.candidates["kv_bytes_per_request"] = 1e6  # 1 MB per request over 1 TB/s: the KV link never binds
    tab.candidates["kv_link_gb_per_s"] = 1e3
    return build_context(catalog, scen, tab, prune=False)


def _replica_usd(ctx: BuildContext, pools: list[tuple[str, str, str, float]]) -> list[float]:
    """Horizon rent of one TP8 replica of each pool: the cheapest option's price of 8 GPUs."""
    price: dict[str, float] = {}
    for opt in ctx.supply:
        price[opt.gpu] = min(price.get(opt.gpu, float("inf")), opt.usd_per_unit_month * 8 / opt.unit_gpus)
    return [price[gpu] for _, _, gpu, _ in pools]


def _serves(pools: list[tuple[str, str, str, float]], counts: tuple[int, ...]) -> float:
    """Requests/s the replicas ``counts`` serve: co-located + Σ_g min(prefill_g, decode_g)."""
    stage: dict[tuple[str, str], float] = {}
    for (role, q, _, cap), n in zip(pools, counts, strict=True):
        stage[(role, q)] = stage.get((role, q), 0.0) + cap * n
    groups = {q for role, q in stage if role != "colocated"}
    matched = sum(min(stage.get(("prefill", q), 0.0), stage.get(("decode", q), 0.0)) for q in groups)
    return sum(v for (role, _), v in stage.items() if role == "colocated") + matched


def _survives(
    pools: list[tuple[str, str, str, float]], counts: tuple[int, ...], demand: float, r: int
) -> bool:
    """Every loss of r replicas (any candidates, repeats allowed) leaves ≥ demand served."""
    for down in itertools.combinations_with_replacement(range(len(pools)), r):
        left = list(counts)
        for k in down:
            left[k] = max(0, left[k] - 1)
        if _serves(pools, tuple(left)) < demand - 1e-9:
            return False
    return True


def _oracle(
    pools: list[tuple[str, str, str, float]], usd: list[float], demand: float, r: int
) -> tuple[float, tuple[int, ...]]:
    best = (float("inf"), ())
    for counts in itertools.product(range(MAX_REPLICAS + 1), repeat=len(pools)):
        cost = sum(n * u for n, u in zip(counts, usd, strict=True))
        if cost < best[0] and _survives(pools, counts, demand, r):
            best = (cost, counts)
    return best


def _replicas(ctx: BuildContext, sol: Any) -> tuple[int, ...]:
    counts = [0] * len(ctx.cands)
    for (k, _j, _t), v in sol.values["n_rep"].items():
        counts[k] += round(v)
    return tuple(counts)


@pytest.mark.parametrize(
    ("demand", "domain", "spare"),
    [
        (1.0, "node", 1),
        (2.5, "node", 1),
        (4.0, "replica", 1),
        (6.0, "node", 1),
        (3.0, "replica", 2),
        (5.0, "replica", 2),
    ],
)
def test_pd_redundancy_matches_a_brute_force_oracle(
    catalog: Catalog, demand: float, domain: str, spare: int
) -> None:
    """The MILP's cheapest plan survives every failure of ``spare`` replicas, and costs what the cheapest
    surviving replica vector costs."""
    ctx = _context(catalog, demand, {"spare_replicas": spare, "failure_domain": domain}, POOLS)
    sol = solve_context(ctx)
    best, counts = _oracle(POOLS, _replica_usd(ctx, POOLS), demand, spare)
    assert sol.status == "optimal"
    got = _replicas(ctx, sol)
    assert _survives(POOLS, got, demand, spare), got
    assert sol.costs_usd["rent"] == pytest.approx(best, rel=1e-6), (got, counts)


@pytest.mark.parametrize(("demand", "domain"), [(2.5, "node"), (4.0, "replica")])
def test_pd_pools_are_spare_only_with_their_partner_stage(
    catalog: Catalog, demand: float, domain: str
) -> None:
    """The optimum keeps an int4 PD pair, cheaper than co-located spare alone (a pool's surplus over its
    partner stage is real spare); without the int4 prefill candidate the int4 decode pool serves nothing and
    is never bought, and the plan costs the oracle's dearer optimum."""
    rule = {"spare_replicas": 1, "failure_domain": domain}
    ctx = _context(catalog, demand, rule, POOLS)
    usd = _replica_usd(ctx, POOLS)
    best, counts = _oracle(POOLS, usd, demand, 1)
    assert counts[3] and counts[4] and best < _oracle(POOLS[:1], usd[:1], demand, 1)[0]
    assert _replicas(ctx, solve_context(ctx))[3:] == counts[3:]
    no_int4_prefill = POOLS[:3] + POOLS[4:]
    ctx = _context(catalog, demand, rule, no_int4_prefill)
    sol = solve_context(ctx)
    got = _replicas(ctx, sol)
    worse = _oracle(no_int4_prefill, usd[:3] + usd[4:], demand, 1)[0]
    assert got[3] == 0 and _survives(no_int4_prefill, got, demand, 1)
    assert sol.costs_usd["rent"] == pytest.approx(worse, rel=1e-6) and worse > best


def test_site_domain_counts_the_pd_pairs_left_at_the_other_site(catalog: Catalog) -> None:
    """Two sites, each with a co-located deployment and int4 prefill / decode pools (one PD group across
    sites): the cheapest plan whose survivors serve the demand with either site down (co-located + matched
    prefill / decode left), enumerated."""
    pools = [POOLS[0], POOLS[3], POOLS[4]] * 2
    sites = ["us_east"] * 3 + ["us_west"] * 3
    ctx = _context(catalog, 3.5, {"spare_replicas": 1, "failure_domain": "site"}, pools, sites)
    sol = solve_context(ctx)
    usd = _replica_usd(ctx, pools)
    best = float("inf")
    for counts in itertools.product(range(4), repeat=len(pools)):
        cost = sum(n * u for n, u in zip(counts, usd, strict=True))
        if cost < best and all(
            _serves(pools, counts[:3] + (0,) * 3 if down else (0,) * 3 + counts[3:]) >= 3.5 for down in (0, 1)
        ):
            best = cost
    got = _replicas(ctx, sol)
    assert sol.status == "optimal" and sol.costs_usd["rent"] == pytest.approx(best, rel=1e-6), got
    assert min(_serves(pools, got[:3] + (0,) * 3), _serves(pools, (0,) * 3 + got[3:])) >= 3.5


def _feasible(ctx: BuildContext) -> bool:
    _status, has, _ = solve_status(ctx.prob, make_solver("highs", time_limit_s=None))
    return has


@pytest.mark.parametrize("domain", ["node", "replica"])
def test_rows_accept_exactly_the_surviving_replica_vectors(catalog: Catalog, domain: str) -> None:
    """One spare: with the valid inequalities (5)–(7) and without them, the rows accept a replica vector
    exactly when every single failure leaves the demand served (the oracle), over every vector of a small
    PD instance (a co-located deployment, an int4 PD pair, and a bf16 decode pool without its prefill)."""
    pools = [POOLS[0], POOLS[3], POOLS[4], POOLS[2]]
    rule = {"spare_replicas": 1, "failure_domain": domain}
    built = {}
    for valid in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            if not valid:  # no least loss: rows (5), (6) and (7) are left out
                for module in (redundancy, spare):
                    patch.setattr(module, "least_lost_requests_per_s", lambda *_: 0.0)
            ctx = _context(catalog, 2.5, rule, pools)
            build_problem(ctx)
        rows = {key[1] for fam, key in ctx.rows.values() if fam == "redundancy"}
        assert ({"least_lost", "lost_by_flow", "lost_by_stage", "stage_lost"} <= rows) == valid
        built[valid] = ctx
    t = built[True].periods[0]
    accepted = 0
    for counts in itertools.product(range(4), range(3), range(3), range(2)):
        for ctx in built.values():
            for k, n in enumerate(counts):
                var = ctx.variables["n_rep"][(k, k, t)]
                var.lowBound = var.upBound = n
        survives = _survives(pools, counts, 2.5, 1)
        assert _feasible(built[True]) == survives == _feasible(built[False]), counts
        accepted += survives
    assert 0 < accepted < 4 * 3 * 3 * 2


def test_max_throughput_serves_what_survives_one_replica_down(catalog: Catalog) -> None:
    """The card-8 inventory (4 × A100 + 4 × H20, max throughput) with one spare replica: the plan serves
    what is left after the worst single-replica failure — here one H20 decode replica of the 4:4 PD pair,
    3.255 req/s = 3/4 of 4.34 without the rule (one A100 prefill down leaves 3.32; with the roofline max the
    A100 was the worst, 3.32 of 4.43) — and every single failure leaves at least the served rate."""
    data = yaml.safe_load((ROOT / "examples/pd_card8/scenario.yaml").read_text())
    data["workloads"][0]["redundancy"] = {"spare_replicas": 1, "failure_domain": "replica"}
    result = plan(catalog, parse_scenario(data), with_alternatives=False).to_json()
    served = result["served_requests_per_s"]["design_case"]
    deps = result["deployments"]
    stage = {
        role: sum(d["capacity_requests_per_s"] for d in deps if d["role"] in (role, "colocated"))
        for role in ("prefill", "decode")
    }
    worst = min(
        stage[role] - d["capacity_requests_per_s"] / d["replicas"]
        for d in deps
        for role in ("prefill", "decode")
        if d["role"] in (role, "colocated")
    )
    assert {(d["role"], d["gpu"], d["replicas"]) for d in deps} == {
        ("prefill", "a100_sxm_80gb", 4),
        ("decode", "h20", 4),
    }
    assert served == pytest.approx(worst, rel=1e-6) and served == pytest.approx(3.255, abs=0.001)


def test_random_pd_instances_match_the_oracle(catalog: Catalog) -> None:
    """20 seeded random instances (a co-located deployment and up to two PD groups with random capacities
    on H100 / A100 nodes, r = 1 or 2, replica or node domain): the plan survives every failure of r replicas
    and costs what the cheapest surviving replica vector costs."""
    rng = random.Random(7)
    gpus = ["h100_sxm", "a100_sxm_80gb"]
    for _ in range(20):
        pools = [("colocated", "bf16", rng.choice(gpus), round(rng.uniform(0.5, 3.0), 2))]
        pools += [
            (role, q, rng.choice(gpus), round(rng.uniform(0.5, 6.0), 2))
            for q in ("bf16", "int4")
            for role in ("prefill", "decode")
            if rng.random() < 0.8
        ]
        r, domain, demand = (
            rng.choice([1, 1, 2]),
            rng.choice(["node", "replica"]),
            round(rng.uniform(0.5, 5.0), 2),
        )
        ctx = _context(catalog, demand, {"spare_replicas": r, "failure_domain": domain}, pools)
        sol = solve_context(ctx)
        got = _replicas(ctx, sol)
        best, counts = _oracle(pools, _replica_usd(ctx, pools), demand, r)
        assert _survives(pools, got, demand, r), (pools, got)
        assert sol.costs_usd["rent"] == pytest.approx(best, rel=1e-6), (pools, r, domain, demand, got, counts)
