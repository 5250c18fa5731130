"""Candidate evaluation solved once per distinct row and per deployment (planner/candidate_rows.py,
planner/candidate_terms.py) gives the table that solving every row gives, bit for bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from planner import candidate_rows, candidate_terms, candidates_colocated, candidates_pd
from planner.candidates import CandidateTable, build_candidates
from planner.catalog import Catalog
from planner.performance.bisection import BISECTION_ITERATIONS, CAPACITY_REL_TOL, largest_ok_load
from planner.scenario import Scenario, load_scenario

CHAT = Path("examples/chat_70b_cloud/scenario.yaml")
"""Two cloud sites with the same RTT and uplink, PD pools, rows that do not fit: 612 evaluated rows, 306 distinct."""
KEY = ["role", "model", "quantization", "kv_dtype", "gpu", "tp", "pp", "ep", "site", "share_frac", "prefix_cache",
       "speculative"]


def _every_row(keys: Any) -> tuple[np.ndarray, np.ndarray]:
    """distinct_rows that calls every row distinct (each row solved on its own, as before)."""
    return np.arange(len(keys)), np.arange(len(keys))


def test_distinct_rows_give_the_table_of_every_row(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = load_scenario(CHAT, catalog)
    solved: list[tuple[int, int]] = []

    def recording(keys: Any) -> tuple[np.ndarray, np.ndarray]:
        first, where = candidate_rows.distinct_rows(keys)
        solved.append((len(keys), len(first)))
        return first, where

    monkeypatch.setattr(candidates_colocated, "distinct_rows", recording)
    monkeypatch.setattr(candidates_pd, "distinct_rows", recording)
    shared = build_candidates(catalog, scenario)
    # co-located: 340 rows (a 2-bit multisection) of which 170 distinct (4 bits unless schedule_size says 340)
    assert solved[0] == (340, 170)
    assert sum(n for n, _ in solved) == 612 and sum(k for _, k in solved) == 306
    monkeypatch.setattr(candidates_colocated, "distinct_rows", _every_row)
    monkeypatch.setattr(candidates_pd, "distinct_rows", _every_row)
    every = build_candidates(catalog, scenario)
    pd.testing.assert_frame_equal(shared.candidates, every.candidates, check_exact=True)
    pd.testing.assert_frame_equal(shared.points, every.points, check_exact=True)
    assert shared.candidates["feasible"].sum() > 100 and len(shared.points) > 500


def test_schedule_size_keeps_the_whole_tables_bisection() -> None:
    """Rows solved apart from their table, with the table's size as ``schedule_size``, get the table's numbers;
    on their own (another multisection schedule) they may not: the rounding of the bracket differs."""
    rng = np.random.default_rng(7)
    hi = rng.uniform(1.0, 50.0, size=(300, 1))
    limit = hi * rng.uniform(0.05, 0.95, size=(300, 1))
    rows = np.arange(0, 300, 30)

    def ok_of(lim: np.ndarray) -> Any:
        return lambda lam: lam <= lim

    table = largest_ok_load(ok_of(limit), hi)
    apart = largest_ok_load(ok_of(limit[rows]), hi[rows], schedule_size=300)
    assert np.array_equal(apart, table[rows])
    assert np.all((table <= limit) & (table >= limit - hi * CAPACITY_REL_TOL))  # the stated precision
    alone = largest_ok_load(ok_of(limit[rows]), hi[rows])  # 10 rows: 4 bits a round instead of 2
    assert not np.array_equal(alone, table[rows])
    assert np.all(np.abs(alone - table[rows]) <= hi[rows] * 2.0**-BISECTION_ITERATIONS)  # one grid step apart at most


def _copy_of(scenario: Scenario) -> Scenario:
    """The scenario with a second workload: the first one under another name, TPOT SLO and demand."""
    w = scenario.workloads[0]
    copy = w.model_copy(update={"name": f"{w.name}_copy", "slo": w.slo.model_copy(update={"tpot_ms": 1.3 * w.slo.tpot_ms}),
                                "requests_per_s": 2.0})
    return scenario.model_copy(update={"workloads": [*scenario.workloads, copy]})


def _rows_of(table: CandidateTable, workload: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A workload's candidates and points, candidate ids renumbered in KEY order."""
    c = table.candidates[table.candidates["workload"] == workload]
    assert not c.duplicated(KEY).any()
    rank = {int(k): i for i, k in enumerate(c.sort_values(KEY)["cand"])}
    c = c.assign(cand=c["cand"].map(rank)).sort_values("cand").reset_index(drop=True)
    p = table.points[table.points["cand"].isin(rank)]
    p = p.assign(cand=p["cand"].map(rank)).sort_values(["cand", "capacity_requests_per_s"], kind="stable")
    return c, p.reset_index(drop=True)


def test_a_workload_evaluates_the_same_beside_a_copy_of_itself(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy shares every deployment's terms (evaluated once, TermsMemo) and the prefill pools' load curves
    (planner.candidates_pd._pool_key), and leaves the workload's rows as
    they are alone — to the bisection's resolution: the copy doubles the table, and a table of another size
    may get another multisection schedule (planner.performance.bisection.largest_ok_load), so the last bits of a
    capacity can move."""
    calls: list[tuple[Any, ...]] = []
    evaluate = candidate_terms.TermsMemo._evaluate

    def counting(self: candidate_terms.TermsMemo, *args: Any) -> Any:
        calls.append(args)
        return evaluate(self, *args)

    monkeypatch.setattr(candidate_terms.TermsMemo, "_evaluate", counting)
    pools: list[tuple[int, int]] = []

    def recording(keys: Any) -> tuple[np.ndarray, np.ndarray]:
        first, where = candidate_rows.distinct_rows(keys)
        pools.append((len(keys), len(first)))
        return first, where

    monkeypatch.setattr(candidates_pd, "distinct_rows", recording)
    scenario = load_scenario(CHAT, catalog)
    alone = build_candidates(catalog, scenario)
    once = len(calls)
    calls.clear()
    both = build_candidates(catalog, _copy_of(scenario))
    assert len(calls) == once > 50
    # prefill pools (same TTFT SLO) are shared by the copy; decode pools (another TPOT SLO) are not
    (prefill, decode), (prefill2, decode2) = pools[:2], pools[2:]
    assert prefill2 == (2 * prefill[0], prefill[1]) and decode2 == (2 * decode[0], 2 * decode[1])
    name = scenario.workloads[0].name
    for a, b in zip(_rows_of(alone, name), _rows_of(both, name), strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)
    copy_rows, _ = _rows_of(both, f"{name}_copy")
    assert len(copy_rows) == len(alone.candidates)


def test_catalog_terms_are_kept_across_tables_of_one_catalog(catalog: Catalog) -> None:
    """A second table of the same catalog (another SLO: a new shape) reuses the deployments' terms objects; a
    table of another catalog object does not."""
    from planner.catalog import default_catalog

    scenario = load_scenario(CHAT, catalog)
    args = {"model_id": scenario.workloads[0].models[0], "gpu": catalog.accelerators["h100_sxm"],
            "quantization": "fp8", "kv_dtype": "fp8", "tp": 4, "pp": 1, "ep": 1, "engine": "vllm"}
    build_candidates(catalog, scenario)
    first, _ = candidate_terms.catalog_terms(catalog, **args)
    build_candidates(catalog, _copy_of(scenario))
    again, _ = candidate_terms.catalog_terms(catalog, **args)
    assert first is not None and again is first
    other = default_catalog.__wrapped__()  # a second load: equal records, another object
    assert other is not catalog
    fresh, _ = candidate_terms.catalog_terms(other, **args)
    assert fresh is not first and fresh == first
