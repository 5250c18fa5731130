"""The load curves of the candidate table, solved once per distinct row (planner.candidates).

A pending co-located candidate is a (configuration, site) pair. Its load curve — the floors at zero load,
the capacity at the SLO λ* (bisection), the operating points at max_utilization_frac·λ*·f — reads the
configuration's stacked terms and optimizations, its workload's tokens, SLOs and percentiles (fixed by the
configuration) and the site's network time (RTT + prompt upload), nothing else of the site. Sites with the
same RTT and uplink (the catalog's cloud regions) therefore give identical rows: :func:`distinct_rows`
keeps one per (configuration, network time), the curves are solved for those and copied to the others.

Rows that do not fit one sequence in memory (max batch < 1) are reported as such and read none of the
curve; only their zero-load floors are solved (the prefill/decode pools report them, candidates_pd.py).

Same numbers as solving every row: each function evaluated is element-wise over rows (a row's result does
not depend on which rows are solved with it); the one exception, the bisection's multisection schedule
(planner.performance.bisection.largest_ok_load picks its bits per round by array size), is given the size of
the whole table (``schedule_size``). tests/plan/test_candidate_rows.py compares the two on a table.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from planner import performance as perf
from planner.performance.load import bare_tpot_s, capacity_at_slo, serve_at_load
from planner.performance.optimizations import LoadOptimizations, optimized_memory_per_gpu_bytes
from planner.performance.stack import take_optimizations, take_terms

ZERO_LOAD_REQUESTS_PER_S = 1e-9
"""Load at which the floors (TPOT and TTFT of a lone request) are evaluated."""
POINT_COLUMNS = ["cand", "batch", "tpot_ms", "decode_step_ms", "ttft_ms", "capacity_requests_per_s",
                 "memory_per_gpu_gb", "sync_ratio"]
"""Columns of the points table (planner.candidates module docstring)."""


def distinct_rows(keys: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """(first, where): ``first`` the positions of the first row of each distinct key (in order), ``where[r]``
    the index in ``first`` of row r's key."""
    seen: dict[Hashable, int] = {}
    first: list[int] = []
    where = np.empty(len(keys), dtype=int)
    for r, key in enumerate(keys):
        k = seen.get(key)
        if k is None:
            k = seen[key] = len(first)
            first.append(r)
        where[r] = k
    return np.array(first, dtype=int), where


def value_columns(n: int, terms: perf.DeploymentTerms, opt: LoadOptimizations | None) -> list[np.ndarray]:
    """Every number a row of stacked ``terms`` and ``opt`` holds, as (n,) float columns (plain numbers broadcast)."""
    values = list(terms.as_dict().values())
    if opt is not None:
        values += [getattr(opt, f.name) for f in fields(LoadOptimizations) if f.name != "draft"]
        if opt.draft is not None:
            values += list(opt.draft.as_dict().values())
    return [np.broadcast_to(np.asarray(v, dtype=float).reshape(-1), (n,)) for v in values]


def same_value_rows(columns: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`distinct_rows` of rows that hold the same bytes in every (n,) or (n, 1) column (None skipped):
    two such rows give the same numbers out of every element-wise function (module docstring)."""
    cols = [np.asarray(c, dtype=float).reshape(len(c), -1) for c in columns if c is not None]
    table = np.ascontiguousarray(np.hstack(cols))
    return distinct_rows([row.tobytes() for row in table])


def network_column(pending: Sequence[tuple[Any, Any, Any]], network_of: Callable[[Any, Any], float]) -> np.ndarray:
    """``network_of(workload, site)`` (planner.candidates.network_s) of every (row, config, site), evaluated once
    per workload and site."""
    done: dict[tuple[int, str], float] = {}
    out = []
    for _, cfg, site in pending:
        key = (id(cfg.workload), site.id)
        value = done.get(key)
        if value is None:
            value = done[key] = network_of(cfg.workload, site)
        out.append(value)
    return np.array(out)


def workload_rows(pending: Sequence[tuple[Any, Any, Any]]) -> tuple[list[Any], np.ndarray]:
    """(the distinct workloads of the (row, config, site) rows, each row's position among them)."""
    position: dict[int, int] = {}
    workloads: list[Any] = []
    w_of = np.empty(len(pending), dtype=np.int64)
    for r, (_, cfg, _) in enumerate(pending):
        k = position.get(id(cfg.workload))
        if k is None:
            k = position[id(cfg.workload)] = len(workloads)
            workloads.append(cfg.workload)
        w_of[r] = k
    return workloads, w_of


def spread(values: Any, rows: np.ndarray, n: int) -> np.ndarray:
    """An (n, …) float array holding ``values`` at ``rows`` and nan elsewhere."""
    values = np.asarray(values, dtype=float)
    out = np.full((n,) + values.shape[1:], np.nan)
    out[rows] = values
    return out


def column_rows(value: Any, rows: np.ndarray) -> Any:
    """Rows ``rows`` of an (N, …) column; None stays None."""
    return None if value is None else np.asarray(value)[rows]


@dataclass(frozen=True)
class Curves:
    """Load curves of co-located rows: (n, 1) floors and capacity, (n, J) operating points at the load
    fractions (s, requests/s, sequences, B; nan where not solved)."""

    lone_tpot_s: np.ndarray
    lone_ttft_s: np.ndarray
    capacity_requests_per_s: np.ndarray
    loads_requests_per_s: np.ndarray
    tpot_s: np.ndarray
    ttft_s: np.ndarray
    batch: np.ndarray
    decode_step_s: np.ndarray
    sync_ratio: np.ndarray
    memory_per_gpu_bytes: np.ndarray


def colocated_curves(
    terms: perf.DeploymentTerms,
    opt: LoadOptimizations | None,
    *,
    input_tokens: np.ndarray,
    output_tokens: np.ndarray,
    max_batch: np.ndarray,
    network_s: np.ndarray,
    slo_ttft_s: np.ndarray,
    slo_tpot_s: np.ndarray,
    percentiles: dict[str, Any],
    max_utilization_frac: float,
    load_fractions: Sequence[float],
    workspace_bytes: float,
    schedule_size: int,
) -> Curves:
    """Floors, capacity at the SLO and operating points (planner.candidates module docstring) of co-located
    rows: ``max_batch`` (n,) is the memory limit (rows below 1 get floors only); the operating points at
    max_utilization_frac·λ*·f for f in ``load_fractions``; ``schedule_size`` the whole table's row count
    (module docstring). Rows with the same values (:func:`same_value_rows`: configurations that differ only
    in labels, e.g. two formats with the same bytes and efficiencies) are solved once and copied."""
    columns = [*value_columns(len(max_batch), terms, opt), input_tokens, output_tokens, max_batch, network_s,
               slo_ttft_s, slo_tpot_s, *percentiles.values()]
    first, where = same_value_rows(columns)
    terms, opt = take_terms(terms, first), take_optimizations(opt, first)
    input_tokens, output_tokens, max_batch = input_tokens[first], output_tokens[first], max_batch[first]
    network_s, slo_ttft_s, slo_tpot_s = network_s[first], slo_ttft_s[first], slo_tpot_s[first]
    percentiles = {k: column_rows(v, first) for k, v in percentiles.items()}
    n = len(max_batch)
    limit = np.maximum(max_batch, 1)[:, None].astype(float)
    lone = serve_at_load(
        terms, requests_per_s=ZERO_LOAD_REQUESTS_PER_S, input_tokens=input_tokens,
        output_tokens=output_tokens, max_batch=limit, network_s=network_s, opt=opt,
    )
    rows = np.flatnonzero(max_batch >= 1)
    fit_terms, fit_opt = take_terms(terms, rows), take_optimizations(opt, rows)
    in_tok, out_tok, net, fit_limit = input_tokens[rows], output_tokens[rows], network_s[rows], limit[rows]
    pct = {key: column_rows(value, rows) for key, value in percentiles.items()}
    cap = capacity_at_slo(
        fit_terms, input_tokens=in_tok, output_tokens=out_tok, max_batch=fit_limit, network_s=net,
        slo_ttft_s=slo_ttft_s[rows], slo_tpot_s=slo_tpot_s[rows], opt=fit_opt, schedule_size=schedule_size, **pct,
    )
    loads = max_utilization_frac * cap * np.array(load_fractions)[None, :]
    at = serve_at_load(
        fit_terms, requests_per_s=loads, input_tokens=in_tok, output_tokens=out_tok, max_batch=fit_limit,
        network_s=net, opt=fit_opt, **pct,
    )
    batch = np.maximum(np.ceil(at.running_batch - 1e-9), 1.0)
    step = perf.decode_step(fit_terms, batch=batch, context_tokens=perf.mean_decode_context_tokens(in_tok, out_tok))
    memory = optimized_memory_per_gpu_bytes(
        fit_terms, fit_opt, batch=batch, context_tokens=in_tok + out_tok, workspace_bytes=workspace_bytes
    )
    bare = bare_tpot_s(fit_terms, at, input_tokens=in_tok, output_tokens=out_tok, opt=fit_opt)  # ≤ TPOT
    solved = {
        "lone_tpot_s": np.asarray(lone.tpot_s, dtype=float),
        "lone_ttft_s": np.asarray(lone.ttft_s, dtype=float),
        "capacity_requests_per_s": spread(cap, rows, n),
        "loads_requests_per_s": spread(loads, rows, n),
        "tpot_s": spread(at.tpot_s, rows, n),
        "ttft_s": spread(at.ttft_s, rows, n),
        "batch": spread(batch, rows, n),
        "decode_step_s": spread(bare, rows, n),
        "sync_ratio": spread(perf.sync_ratio(step), rows, n),
        "memory_per_gpu_bytes": spread(memory, rows, n),
    }
    return Curves(**{name: column[where] for name, column in solved.items()})


@dataclass(frozen=True)
class Kept:
    """The load fractions of each pending row whose sync ratio is within its limit (planner.candidates)."""

    mask: np.ndarray
    """(rows, J) kept."""
    any: np.ndarray
    last: np.ndarray
    """The last kept load fraction (J − 1 where none is)."""
    sync_ratio: list[float]
    """The sync ratio at the last kept fraction, or the least of the row where none is."""


def kept_fractions(pending: Sequence[tuple[Any, Any, Any]], sync: np.ndarray, default_limit: float) -> tuple[Kept, np.ndarray]:
    """(:class:`Kept`, limits) of the rows' (rows, J) sync ratios against their workload's ``max_sync_ratio``
    (``default_limit`` where it states none), within 1e-12."""
    limits = np.array([default_limit if cfg.workload.max_sync_ratio is None else cfg.workload.max_sync_ratio
                       for _, cfg, _ in pending], dtype=float)
    mask = sync <= limits[:, None] + 1e-12
    any_kept = np.asarray(mask.any(axis=1))
    last = sync.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
    at = np.where(any_kept, sync[np.arange(len(sync)), last], sync.min(axis=1)).tolist()
    return Kept(mask, any_kept, last, at), limits


def picks_of(
    cands: np.ndarray, feasible: np.ndarray, kept: Kept, where: np.ndarray
) -> list[tuple[int, int, int]]:
    """(candidate id, distinct row, load fraction) of every kept point of the feasible rows (candidate ids
    ``cands``), row by row."""
    rows, js = np.nonzero(feasible[:, None] & kept.mask)
    return list(zip(cands[rows].tolist(), where[rows].tolist(), js.tolist(), strict=True))


def point_columns(picks: list[tuple[int, int, int]], **values: Any) -> dict[str, np.ndarray]:
    """Columns of operating points, one per pick (candidate id, row k, load fraction j): ``cand``, then each
    of ``values`` (an (n, J) array, or a number for every point) at [k, j]; ``batch`` as integers."""
    pick = np.array(picks, dtype=np.int64).reshape(-1, 3)
    k, j = pick[:, 1], pick[:, 2]
    out = {"cand": pick[:, 0]}
    for name, value in values.items():
        column = np.asarray(value, dtype=float)
        out[name] = column[k, j] if column.ndim else np.full(len(pick), float(column))
    out["batch"] = out["batch"].astype(np.int64)
    return out


def points_frame(parts: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    """The points table of the column blocks ``parts`` (in order; :data:`POINT_COLUMNS`)."""
    parts = [p for p in parts if len(p["cand"])]
    if not parts:
        return pd.DataFrame([], columns=POINT_COLUMNS)
    return pd.DataFrame({name: np.concatenate([p[name] for p in parts]) for name in POINT_COLUMNS})
