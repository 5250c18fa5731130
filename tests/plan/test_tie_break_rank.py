"""The tie-break's candidate rank (planner.problem.cost_terms.tie_break_rank): (GPUs, quality tier, id), with the
co-located candidates of one workload on one GPU type and site with equal GPUs and tier trading their slots by
(TPOT, TTFT) at the capacity point, so that between equal-cost plans on the same GPUs the one with more latency
headroom is preferred, and no other preference moves."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.problem.context import build_context
from planner.problem.cost_terms import (
    TIE_BREAK_USD,
    capacity_point_latency_ms,
    rank_within,
    tie_break_rank,
    tie_break_weights_usd,
)
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _cands(rows: list[tuple[str, str, str, float, int]]) -> pd.DataFrame:
    """(role, gpu, site, gpus, quality tier) per candidate, ids 0, 1, …, one workload."""
    return pd.DataFrame(
        [
            {"cand": i, "workload": "chat", "role": r, "gpu": g, "site": s, "gpus": n, "quality_tier": q}
            for i, (r, g, s, n, q) in enumerate(rows)
        ]
    )


def _points(rows: list[tuple[int, float, float, float]]) -> pd.DataFrame:
    """(cand, TPOT ms, TTFT ms, requests/s) per operating point, point ids 0, 1, …"""
    return pd.DataFrame(
        [
            {"cand": c, "point": j, "tpot_ms": tpot, "ttft_ms": ttft, "capacity_requests_per_s": cap}
            for j, (c, tpot, ttft, cap) in enumerate(rows)
        ]
    )


def _old_rank(cands: pd.DataFrame) -> dict[int, int]:
    ranked = cands.sort_values(["gpus", "quality_tier", "cand"]).index
    return {int(c): r for r, c in enumerate(ranked)}


def test_lower_latency_at_capacity_takes_the_earlier_slot_of_its_class() -> None:
    # 0, 2: one class (H100 at us_east, 4 GPUs, tier 1); 1: another GPU type between them by id
    cands = _cands(
        [
            ("colocated", "h100_sxm", "us_east", 4.0, 1),
            ("colocated", "mi300x", "us_east", 4.0, 1),
            ("colocated", "h100_sxm", "us_east", 4.0, 1),
            ("colocated", "h100_sxm", "us_east", 2.0, 1),
        ]
    )
    points = _points(
        [
            (0, 20.0, 200.0, 1.0),  # 0 at a light load: 20 ms
            (0, 25.7, 481.0, 9.4),  # 0 at its capacity point: 25.7 ms
            (1, 16.0, 230.0, 9.6),
            (2, 19.6, 437.0, 7.8),  # 2 at its capacity point: 19.6 ms
            (3, 43.5, 830.0, 5.4),
        ]
    )
    latency = capacity_point_latency_ms(cands, points)
    assert latency["tpot_ms"].tolist() == pytest.approx([25.7, 16.0, 19.6, 43.5])
    assert _old_rank(cands) == {3: 0, 0: 1, 1: 2, 2: 3}
    # 0 and 2 swap slots 1 and 3; the 2-GPU candidate and the other GPU type keep theirs
    assert tie_break_rank(cands, points) == {3: 0, 2: 1, 1: 2, 0: 3}


def test_latencies_within_a_hundredth_of_a_ms_fall_to_ttft_then_id() -> None:
    cands = _cands([("colocated", "h100_sxm", "us_east", 2.0, 0)] * 3)
    points = _points([(0, 30.004, 300.0, 5.0), (1, 29.996, 300.0, 5.0), (2, 30.001, 250.0, 5.0)])
    # TPOT rounds to 30.00 ms for all three: the lower TTFT first (2), then id (0 before 1)
    assert tie_break_rank(cands, points) == {2: 0, 0: 1, 1: 2}


def test_other_workloads_sites_roles_and_tiers_keep_their_slots() -> None:
    cands = _cands(
        [
            ("colocated", "h100_sxm", "us_east", 2.0, 0),
            ("colocated", "h100_sxm", "us_west", 2.0, 0),  # other site: not interchangeable
            ("colocated", "h100_sxm", "us_east", 2.0, 1),  # other quality tier
            ("prefill", "h100_sxm", "us_east", 2.0, 0),  # pools: a request's latency is its pair's
            ("decode", "h100_sxm", "us_east", 2.0, 0),
        ]
    )
    points = _points(
        [
            (0, 40.0, 400.0, 5.0),
            (1, 20.0, 300.0, 5.0),
            (2, 10.0, 200.0, 5.0),
            (3, 0.0, 100.0, 5.0),
            (4, 5.0, 0.0, 5.0),
        ]
    )
    assert tie_break_rank(cands, points) == _old_rank(cands)
    # one class but for the workload: each candidate alone in its class (latency is ranked against one SLO)
    other = cands.assign(workload=["a", "b", "c", "d", "e"], site="us_east", quality_tier=0, role="colocated")
    assert tie_break_rank(other, points) == _old_rank(other)
    assert tie_break_rank(other.assign(workload="a"), points) == {3: 0, 4: 1, 2: 2, 1: 3, 0: 4}


def test_weights_stay_within_one_and_two_tie_break_units() -> None:
    cands = _cands(
        [("colocated", "h100_sxm", "us_east", 2.0, 0), ("colocated", "h100_sxm", "us_east", 2.0, 0)]
    )
    points = _points([(0, 40.0, 400.0, 5.0), (1, 20.0, 300.0, 5.0)])
    weights = tie_break_weights_usd(cands, points, [0, 1], {0: 3.0, 1: 9.0})
    assert weights == {
        (1, 1, 0): TIE_BREAK_USD * 3.0,
        (1, 1, 1): TIE_BREAK_USD * 9.0,
        (0, 0, 0): TIE_BREAK_USD * 3.0 * 1.5,
        (0, 0, 1): TIE_BREAK_USD * 9.0 * 1.5,
    }


def test_a_real_table_ranks_a_permutation_within_classes(catalog: Catalog) -> None:
    """examples/chat_p99_redundant: on a 4-GPU H100 instance at us_east, FP8 TP4×PP1 (19.6 ms TPOT at its capacity
    point) now ranks before FP8 TP2×PP2 (25.7 ms); every class holds the slots it held."""
    scenario = load_scenario(ROOT / "examples" / "chat_p99_redundant" / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    cands = table.candidates[table.candidates["feasible"]]
    points = table.points
    rank, old = tie_break_rank(cands, points), _old_rank(cands)
    assert sorted(rank.values()) == list(range(len(cands)))
    classes = ["workload", "role", "gpu", "site", "gpus", "quality_tier"]
    for _, members in cands.groupby(classes):
        ids = [int(c) for c in members.index]
        assert sorted(rank[c] for c in ids) == sorted(old[c] for c in ids)
    keyed = cands[cands["role"] == "colocated"].set_index(["quantization", "gpu", "tp", "pp", "site"])
    tp2pp2 = int(keyed.loc[("fp8", "h100_sxm", 2, 2, "us_east"), "cand"])
    tp4pp1 = int(keyed.loc[("fp8", "h100_sxm", 4, 1, "us_east"), "cand"])
    assert old[tp2pp2] < old[tp4pp1] and rank[tp4pp1] < rank[tp2pp2]


@pytest.mark.parametrize("example", ["mixed_fleet", "pd_card8", "chat_p99_redundant", "small_models_shared"])
def test_a_gpu_types_or_sites_rank_is_drawn_from_the_whole_tables(catalog: Catalog, example: str) -> None:
    """rank_within: the ranks of one GPU type's (site's) candidates, as its own table ranks them, are the order of
    their ranks in the whole table (the restricted models' tie-break, planner.optimize.restricted_model)."""
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    ctx = build_context(catalog, scenario, candidates_for(catalog, scenario))
    whole = tie_break_rank(ctx.cands, ctx.points)
    checked = 0
    for column in ("gpu", "site"):
        for value in sorted(set(ctx.cands[column])):
            cands = ctx.cands[ctx.cands[column] == value]
            points = ctx.points[ctx.points["cand"].isin(cands.index)]
            assert rank_within(whole, cands.index) == tie_break_rank(cands, points)
            checked += 1
    assert checked >= 3
