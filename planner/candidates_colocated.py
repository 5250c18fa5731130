"""The co-located rows of the candidate table (planner.candidates): their curves — floors, capacity at the
SLO, load-fraction operating points — computed at once over the distinct (configuration, network) pairs,
and the rows filled from them (sizing fields and the reason a row is not feasible)."""

from __future__ import annotations

from typing import Any

import numpy as np

from planner import performance as perf
from planner.candidate_columns import CandidateRows
from planner.candidate_rows import (
    Curves,
    colocated_curves,
    column_rows,
    distinct_rows,
    kept_fractions,
    picks_of,
    point_columns,
    workload_rows,
)
from planner.candidates_pd import LOAD_FRACTIONS, Pending
from planner.performance.stack import take_optimizations, take_terms
from planner.scenario import Scenario
from planner.units import BYTES_PER_GB, BYTES_PER_GIB


def percentile_column(pending: list[Pending], key: str) -> Any:
    """(N, 1) percentiles of ``key`` per row (nan = the mean), or None when every row uses the mean."""
    values = [getattr(cfg.workload.slo, key) for _, cfg, _ in pending]  # key: a field of SloPercentiles
    if all(v is None for v in values):
        return None
    return np.array([np.nan if v is None else float(v) for v in values])[:, None]


def colocated_curves_of(
    pending: list[Pending],
    net: np.ndarray,
    first: np.ndarray,
    scenario: Scenario,
    ev: dict[str, Any],
    idx: np.ndarray,
    schedule_size: int,
) -> Curves:
    """Floors, capacity at the SLO and load-fraction points of every pending co-located row's distinct
    (configuration, network seconds ``net`` (n, 1)) pair — ``first`` their first rows, :func:`distinct_pairs`
    —, ``idx`` each row's configuration in ``ev`` (planner.candidate_rows.colocated_curves; the numeric work
    of the rows). ``schedule_size``: the rows of the whole table for the bisections' schedule (``pending``'s, or
    more for a part of it: planner.candidates_split)."""
    workloads, w_of = workload_rows(pending)
    in_tok = np.array([w.input_tokens for w in workloads], dtype=float)[w_of][:, None]
    out_tok = np.array([w.output_tokens for w in workloads], dtype=float)[w_of][:, None]
    slo_ttft = np.array([w.slo.ttft_ms for w in workloads])[w_of][:, None] / 1e3
    slo_tpot = np.array([w.slo.tpot_ms for w in workloads])[w_of][:, None] / 1e3
    pct = {key: percentile_column(pending, key) for key in ("ttft_percentile", "tpot_percentile")}
    fit = ev["fit_batch"][idx].astype(int)
    return colocated_curves(
        take_terms(ev["terms"], idx[first]), take_optimizations(ev["opt"], idx[first]), input_tokens=in_tok[first],
        output_tokens=out_tok[first], max_batch=fit[first], network_s=net[first], slo_ttft_s=slo_ttft[first],
        slo_tpot_s=slo_tpot[first], percentiles={k: column_rows(v, first) for k, v in pct.items()},
        max_utilization_frac=scenario.max_utilization_frac, load_fractions=LOAD_FRACTIONS,
        workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB, schedule_size=schedule_size,
    )


def distinct_pairs(pending: list[Pending], net: np.ndarray) -> tuple[Any, Any]:
    """(first row of each distinct (configuration, network seconds) pair, each row's pair)."""
    return distinct_rows([(id(cfg), float(n)) for (_, cfg, _), n in zip(pending, net[:, 0], strict=True)])


def colocated_points(
    pending: list[Pending],
    net: np.ndarray,
    where: np.ndarray,
    scenario: Scenario,
    ev: dict[str, Any],
    idx: np.ndarray,
    table: CandidateRows,
    c: Curves,
) -> dict[str, np.ndarray]:
    """Fill every pending co-located row from its curves ``c`` (:func:`colocated_curves_of`; ``where``: each
    row's distinct pair, :func:`distinct_pairs`); its operating points (columns)."""
    fit = ev["fit_batch"][idx].astype(int)
    # the rows' numbers (the same values as float(x) · 1e3 etc. row by row), set column by column below
    weights_gb = (ev["weights_per_gpu_bytes"][idx] / BYTES_PER_GB).tolist()
    prefill_ms = (ev["prefill_s"][idx] * 1e3).tolist()
    network_ms = (net[:, 0] * 1e3).tolist()
    tpot_floor_ms = (c.lone_tpot_s[where, 0] * 1e3).tolist()
    serves = (c.capacity_requests_per_s[where, 0] > 0).tolist()
    kept, limits = kept_fractions(pending, c.sync_ratio[where], scenario.max_sync_ratio)
    best_batch = c.batch[where, kept.last].tolist()
    best_capacity = c.loads_requests_per_s[where, kept.last].tolist()
    # the rows' fields, column by column (the same values a row-by-row fill gives)
    rows = np.array([row for row, _, _ in pending], dtype=np.int64)
    col = table.columns
    fits = fit >= 1
    col["weights_per_gpu_gb"][rows] = weights_gb
    col["max_batch"][rows] = fit
    col["prefill_ms"][rows] = prefill_ms
    col["network_ms"][rows] = network_ms
    col["tpot_floor_ms"][rows[fits]] = np.asarray(tpot_floor_ms)[fits]
    for r in np.flatnonzero(~fits).tolist():
        cfg = pending[r][1]
        table.reason[rows[r]] = perf.no_fit_reason(cfg.terms, cfg.workload.engine)
    for r in np.flatnonzero(fits & ~np.asarray(serves, dtype=bool)).tolist():
        w = pending[r][1].workload
        if tpot_floor_ms[r] > w.slo.tpot_ms:
            table.reason[rows[r]] = f"TPOT floor {tpot_floor_ms[r]:.1f} ms above the SLO {w.slo.tpot_ms:g} ms"
        else:
            table.reason[rows[r]] = (
                f"TTFT floor {float(c.lone_ttft_s[where[r], 0]) * 1e3:.0f} ms (prefill + RTT + upload)"
                f" above the SLO {w.slo.ttft_ms:g} ms"
            )
    sized = fits & np.asarray(serves, dtype=bool)
    col["sync_ratio"][rows[sized]] = np.asarray(kept.sync_ratio, dtype=float)[sized]
    for r in np.flatnonzero(sized & ~kept.any).tolist():
        table.reason[rows[r]] = perf.sync_limit_reason(kept.sync_ratio[r], float(limits[r]))
    feasible = sized & kept.any
    col["best_batch"][rows[feasible]] = np.asarray(best_batch)[feasible]
    col["best_capacity_requests_per_s"][rows[feasible]] = np.asarray(best_capacity, dtype=float)[feasible]
    col["feasible"][rows[feasible]] = True
    return point_columns(
        picks_of(rows, feasible, kept, where), batch=c.batch, tpot_ms=c.tpot_s * 1e3,
        decode_step_ms=c.decode_step_s * 1e3, ttft_ms=c.ttft_s * 1e3,
        capacity_requests_per_s=c.loads_requests_per_s, memory_per_gpu_gb=c.memory_per_gpu_bytes / BYTES_PER_GB,
        sync_ratio=c.sync_ratio,
    )
