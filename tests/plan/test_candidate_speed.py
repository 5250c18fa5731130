"""Candidate evaluation shortcuts give the table the long way gives, bit for bit: rows with the same numbers
solved once (planner.candidate_rows.same_value_rows), the zero-load round kept across the loads of a bisection
(planner/performance/step_memo.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from planner import candidate_rows, candidates_pd
from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.performance import optimizations, step_memo
from planner.performance.bisection import BISECTION_ITERATIONS
from planner.performance.load import capacity_at_slo, serve_at_load
from planner.performance.mixed_step import MixedStep
from planner.scenario import Scenario, parse_scenario


def _scenario() -> Scenario:
    """bf16 and fp16 (the same bytes and efficiencies: rows with the same numbers), PD pools, a p90 TTFT."""
    return parse_scenario({
        "name": "same-values",
        "horizon_months": 12,
        "workloads": [{
            "name": "chat", "models": ["llama_3_1_8b"], "quantizations": ["bf16", "fp16", "fp8"],
            "requests_per_s": 4, "input_tokens": 1200, "output_tokens": 250, "disaggregation": "auto",
            "slo": {"ttft_ms": 1500, "tpot_ms": 40, "ttft_percentile": 90}, "sites": ["us_east"],
        }],
        "hardware": {"gpus": ["h100_sxm", "l40s", "a100_sxm_80gb"], "tp": [1, 2], "pp": [1, 2]},
    })


def _every_row(columns: Any) -> tuple[np.ndarray, np.ndarray]:
    n = len(next(c for c in columns if c is not None))
    return np.arange(n), np.arange(n)


def test_rows_with_the_same_numbers_are_solved_once(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    merged: list[tuple[int, int]] = []
    same_value_rows = candidate_rows.same_value_rows

    def recording(columns: Any) -> tuple[np.ndarray, np.ndarray]:
        first, where = same_value_rows(columns)
        merged.append((len(where), len(first)))
        return first, where

    monkeypatch.setattr(candidate_rows, "same_value_rows", recording)
    monkeypatch.setattr(candidates_pd, "same_value_rows", recording)
    scenario = _scenario()
    shared = build_candidates(catalog, scenario)
    # co-located, prefill and decode rows: bf16 and fp16 rows (each with both KV formats) hold the same numbers
    assert len(merged) == 3 and all(k < n for n, k in merged)
    monkeypatch.setattr(candidate_rows, "same_value_rows", _every_row)
    monkeypatch.setattr(candidates_pd, "same_value_rows", _every_row)
    every = build_candidates(catalog, scenario)
    pd.testing.assert_frame_equal(shared.candidates, every.candidates, check_exact=True)
    pd.testing.assert_frame_equal(shared.points, every.points, check_exact=True)
    c = shared.candidates
    same = c[c["quantization"].isin(["bf16", "fp16"]) & c["feasible"]]
    assert set(same["quantization"]) == {"bf16", "fp16"} and len(shared.points) > 50


def test_same_value_rows_tells_rows_apart_by_their_bytes() -> None:
    a = np.array([1.0, 2.0, 1.0, 0.0, -0.0, np.nan, np.nan])
    b = np.array([[5.0], [5.0], [5.0], [1.0], [1.0], [3.0], [3.0]])
    first, where = candidate_rows.same_value_rows([a, b, None])
    assert first.tolist() == [0, 1, 3, 4, 5]  # 0.0 and -0.0 are kept apart; the same NaN is the same row
    assert where.tolist() == [0, 1, 0, 2, 3, 4, 4]


def test_the_zero_load_round_is_evaluated_once_per_table(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.candidates import _evaluate, _perf_configs

    scenario = _scenario()
    gpus = [catalog.accelerators[g] for g in ("h100_sxm", "l40s")]
    runnable = [c for c in _perf_configs(catalog, scenario, gpus) if c.terms is not None]
    terms, fit = _evaluate(scenario, runnable)["terms"], _evaluate(scenario, runnable)["fit_batch"]
    n = len(runnable)
    args: dict[str, Any] = {
        "input_tokens": np.full((n, 1), 1200.0), "output_tokens": np.full((n, 1), 250.0),
        "max_batch": np.maximum(fit, 1)[:, None], "network_s": np.full((n, 1), 0.05),
    }
    zero_rounds: list[int] = []
    round_s = optimizations.round_s

    def counting(*a: Any, **k: Any) -> Any:
        if np.all(np.asarray(k["decode_batch"]) == 0.0) and np.all(np.asarray(k["prefill_tokens"]) == 0.0):
            zero_rounds.append(1)
        return round_s(*a, **k)

    monkeypatch.setattr(step_memo, "round_s", counting)
    kept = capacity_at_slo(terms, slo_ttft_s=1.5, slo_tpot_s=0.04, **args)
    assert len(zero_rounds) == 1  # every load of the bisection on one table
    at = serve_at_load(terms, requests_per_s=kept * 0.5, **{k: v for k, v in args.items()})
    monkeypatch.setattr(step_memo, "KEPT", 0)  # nothing kept: every load evaluates its own
    monkeypatch.setattr(step_memo._LOCAL, "kept", [], raising=False)
    assert np.array_equal(capacity_at_slo(terms, slo_ttft_s=1.5, slo_tpot_s=0.04, **args), kept)
    # one per load of the bisection: a halving, then rounds of at most 4 bits (multisection), and the last check
    assert len(zero_rounds) - 1 >= 2 + (BISECTION_ITERATIONS - 1 + 3) // 4
    again = serve_at_load(terms, requests_per_s=kept * 0.5, **args)
    for name in ("ttft_s", "tpot_s", "running_batch"):
        assert np.array_equal(getattr(at, name), getattr(again, name), equal_nan=True)
    assert np.count_nonzero(kept > 0) > 5


def test_loads_that_cannot_be_stable_stop_early_with_the_same_capacities(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a bisection decides, the fixed point gives up a load as soon as its low end already breaks the
    batch limit, the chunk budget or ρ < 1 (planner.performance.load.fixed_point_s ``give_up``): fewer step
    evaluations, the same table."""
    from planner.performance import load, pools

    steps: list[int] = []
    round_of = MixedStep.__call__

    def counting(self: MixedStep, **k: Any) -> Any:
        steps.append(int(np.broadcast(*(np.asarray(v) for v in k.values())).size))
        return round_of(self, **k)

    monkeypatch.setattr(MixedStep, "__call__", counting)
    scenario = _scenario()
    early = build_candidates(catalog, scenario)
    with_give_up = sum(steps)
    steps.clear()
    monkeypatch.setattr(load, "deciding", lambda: False)
    monkeypatch.setattr(pools, "deciding", lambda: False)
    every = build_candidates(catalog, scenario)
    pd.testing.assert_frame_equal(early.candidates, every.candidates, check_exact=True)
    pd.testing.assert_frame_equal(early.points, every.points, check_exact=True)
    assert with_give_up < 0.95 * sum(steps)


def test_fixed_point_gives_up_only_where_asked_and_only_rising_elements() -> None:
    from planner.performance.load import fixed_point_s

    # f(T) = 1 + c·√T + a·T: roots ≈ 1.64, 5.83 and 102.0; none for a = 1.2; the last row starts above its
    # root (g(T₀) < 0), where the iterates may fall below the low end: never given up
    c = np.array([[0.5], [2.0], [10.0], [0.0], [0.5]])
    a = np.array([[0.0], [0.0], [0.0], [1.2], [0.0]])
    t0 = np.array([[1.0], [1.0], [1.0], [1.0], [30.0]])

    def f(t: Any) -> Any:
        return 1.0 + c * np.sqrt(t) + a * t

    t, converged = fixed_point_s(f, t0)
    assert converged.ravel().tolist()[:4] == [True, True, True, False]
    assert t[2, 0] == pytest.approx(51 + np.sqrt(2600), rel=1e-9)  # √T = 5 + √26
    lows: list[Any] = []

    def give_up(take: Any, lo: Any) -> Any:
        lows.append(lo)
        return lo > 20.0

    t2, converged2 = fixed_point_s(f, t0, give_up=give_up)
    assert converged2.ravel().tolist() == [True, True, False, False, bool(converged[4, 0])]
    for r in (0, 1, 4):
        assert t2[r, 0] == t[r, 0]  # the same bits
    assert 20.0 < t2[2, 0] < t[2, 0] and t2[3, 0] < t[3, 0]  # stopped on the way (the last at 1000 s otherwise)
    assert len(lows) >= 3 and all(lo.shape == (5, 1) for lo in lows)


def test_the_garbage_collector_waits_during_an_evaluation_and_is_restored() -> None:
    import gc

    from planner.gc_pause import gc_paused

    seen: list[bool] = []

    @gc_paused
    def inner() -> int:
        seen.append(gc.isenabled())
        return 7

    @gc_paused
    def outer() -> int:
        value = inner()
        seen.append(gc.isenabled())  # the inner call left it off
        return value

    assert gc.isenabled()
    assert outer() == 7 and seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        inner()
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()

    @gc_paused
    def failing() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        failing()
    assert gc.isenabled()
