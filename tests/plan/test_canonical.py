"""Equal-cost plans made canonical (planner.optimize.canonical): with the solved supply held, the replicas
are re-chosen by the tie-break alone — the same cost, never a larger tie-break, never more GPUs deployed in
a period; a single-period or not-proven plan is left as solved."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize import solve
from planner.optimize.build import TIE_BREAK
from planner.optimize.canonical import canonical
from planner.optimize.solver import Solution
from planner.problem.context import BuildContext, build_context
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _solved(catalog: Catalog, example: str) -> tuple[Solution, BuildContext]:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    return solve(build_context(catalog, scenario, candidates_for(catalog, scenario)), "highs", None)


def _gpus_per_period(ctx: BuildContext, values: dict[tuple[int, int, int], float]) -> dict[int, float]:
    gpus = ctx.cands["gpus"].to_dict()
    out: dict[int, float] = {}
    for (cand, _point, t), reps in values.items():
        out[t] = out.get(t, 0.0) + gpus[cand] * round(reps)
    return out


def test_buy_vs_rent_is_made_canonical(catalog: Catalog) -> None:
    """buy_vs_rent (12 quarters): same cost and supply, a smaller tie-break; the solve's quarter 8 (an H200
    decode pool of one replica and two prefill replicas beside six co-located ones) becomes nine co-located
    replicas on the same rented GPUs. The tie-break ranks replicas (by GPUs per replica, tier, id), it does
    not count GPUs: quarter 6 deploys 16 of the paid GPUs instead of 14 (co-located 4 + 4 instead of 1
    co-located, 2 decode and 4 prefill replicas), at the same cost."""
    sol, ctx = _solved(catalog, "buy_vs_rent")
    raw = dataclasses.replace(sol, values={f: dict(v) for f, v in sol.values.items()})
    made = canonical(ctx, sol)
    assert made is not sol and made.status == "optimal"
    assert made.cost_usd == pytest.approx(raw.cost_usd, rel=1e-12)
    for family in ("units", "bought"):
        assert {k: round(v) for k, v in made.values[family].items()} == {k: round(v) for k, v in raw.values[family].items()}
    assert made.costs_usd[TIE_BREAK] < raw.costs_usd[TIE_BREAK]
    before, after = _gpus_per_period(ctx, raw.values["n_rep"]), _gpus_per_period(ctx, made.values["n_rep"])
    assert (before[6], after[6]) == (14.0, 16.0)
    assert all(after[t] == before[t] for t in before if t != 6)
    def used(values: dict[tuple[int, int, int], float]) -> set[tuple[str, str]]:
        roles, gpus = ctx.cands["role"].to_dict(), ctx.cands["gpu"].to_dict()
        return {(str(roles[c]), str(gpus[c])) for (c, _j, t), r in values.items() if t == 8 and round(r)}

    assert used(raw.values["n_rep"]) == {("colocated", "h100_sxm"), ("colocated", "h200_sxm"), ("decode", "h200_sxm"),
                                         ("prefill", "h100_sxm"), ("prefill", "h200_sxm")}
    assert used(made.values["n_rep"]) == {("colocated", "h100_sxm"), ("colocated", "h200_sxm")}
    assert canonical(ctx, made).values["n_rep"] == made.values["n_rep"]  # a fixed point


def test_single_period_and_unproven_plans_are_left_as_solved(catalog: Catalog) -> None:
    sol, ctx = _solved(catalog, "chat_70b_cloud")
    assert len(ctx.periods) == 1 and canonical(ctx, sol) is sol
    sol, ctx = _solved(catalog, "buy_vs_rent")
    feasible = dataclasses.replace(sol, status="feasible")
    assert canonical(ctx, feasible) is feasible
