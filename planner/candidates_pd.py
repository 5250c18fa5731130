"""Prefill-only and decode-only candidates of prefill/decode disaggregation (card 8) for the candidate table.

For every runnable co-located candidate (workload, model, formats, GPU, TP, site) of a workload with
``disaggregation: auto|on`` two more rows are added with ``role`` prefill and decode: the same deployment
used as a prefill pool replica or as a decode pool replica. Each is its own supply-consuming candidate
(own GPU type, TP, replicas and site), so the MILP can put prefill on one GPU type and decode on another
and choose the P:D ratio (constraints/pd_flow.py couples them).

Bounds on the table: PD rows are made for PP1 deployments only (a pool replica grows by TP and by replicas),
and only where the KV cache can leave the replica over a scale-out link (the GPU has one and the site has a
scale-out fabric). ``disaggregation: on`` removes the co-located rows (reason kept in the table).

Per replica (planner/performance/pools.py):
- prefill: capacity = the largest prompts/s with TTFT = queueing + chunk steps + T/2 + RTT + upload +
  KV handoff ≤ SLO; TPOT columns are 0 (not its stage);
- decode: capacity = the largest requests/s with TPOT ≤ SLO and B = λ·G·T within memory; TTFT columns 0;
- both capped at the replica's KV link, B_k / V_KV (pools.link_capped_requests_per_s);
- ``sync_ratio`` of the pool's own step (prefill step of the prompts it runs at once / decode step at its
  batch, planner/performance/sync.py), points above ``max_sync_ratio`` dropped like co-located ones;
- ``kv_bytes_per_request`` V_KV (memory ledger, the prompt's KV) and ``kv_link_gb_per_s`` B_k, the replica's
  scale-out bandwidth (its tp·ep GPUs × per-GPU link, per direction) that bounds the KV traffic in the MILP.
The KV handoff always uses the scale-out link (a prefill and a decode replica of the same GPU type sharing a
node over NVLink are not modelled: conservative).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner import performance as perf
from planner.candidate_columns import CandidateRows
from planner.candidate_rows import (
    ZERO_LOAD_REQUESTS_PER_S,
    distinct_rows,
    kept_fractions,
    picks_of,
    point_columns,
    same_value_rows,
    spread,
    value_columns,
)
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.performance.load import bare_tpot_s
from planner.performance.pools import (
    decode_at_load,
    decode_capacity_at_slo,
    handoff_s,
    kv_bytes_per_request,
    link_capped_requests_per_s,
    prefill_at_load,
    prefill_capacity_at_slo,
)
from planner.performance.stack import take_terms
from planner.scenario import Scenario
from planner.units import BYTES_PER_GB, BYTES_PER_GIB

PD_ROLES = ("prefill", "decode")
LOAD_FRACTIONS = (0.125, 0.25, 0.5, 1.0)
"""Operating points per candidate (every role, planner.candidates too): these fractions of its capacity at the
SLO (× max_utilization_frac)."""

Pending = tuple[int, Any, Site]
"""(candidate id = its row in planner.candidate_columns.CandidateRows, its planner.candidates._Config, site)."""


def kv_link(catalog: Catalog, gpu: Accelerator, tp: int) -> tuple[float, float]:
    """The KV handoff path of one request: (the scale-out bandwidth per direction of the tp GPUs that hold
    its KV, GB/s; the link's start-up latency, µs). A replica of ``ep`` attention data-parallel ranks has
    ``ep`` such paths (:func:`replica_kv_link_gb_per_s`)."""
    link = catalog.interconnect(str(gpu.scale_out))
    return tp * link.gb_per_s_per_direction, link.latency_us


def request_kv_handoff(
    catalog: Catalog, terms: perf.DeploymentTerms, *, gpu: Accelerator, tp: int, input_tokens: float
) -> tuple[float, float, float]:
    """One request's KV handoff from a prefill to a decode replica, scalar (the table's rows compute it
    column-wise): (its prompt's KV bytes, its path's GB/s per direction, :func:`kv_link`; the handoff time, s)."""
    gb_per_s, latency_us = kv_link(catalog, gpu, tp)
    kv_bytes = float(kv_bytes_per_request(terms, input_tokens=input_tokens))
    return kv_bytes, gb_per_s, float(handoff_s(kv_bytes, link_gb_per_s=gb_per_s, latency_us=latency_us))


def replica_kv_link_gb_per_s(path_gb_per_s: Any, ep: Any) -> Any:
    """B_k, a replica's scale-out bandwidth per direction for KV, GB/s: its tp·ep GPUs' links, i.e. one
    request's path (:func:`kv_link`) × its ``ep`` attention data-parallel ranks."""
    return path_gb_per_s * ep


def _pd_possible(catalog: Catalog, cfg: Any, site: Site) -> bool:
    # pools run the plain engine: optimization variants (prefix cache, speculative) stay co-located
    plain = not cfg.prefix_cache and not cfg.speculative and cfg.share_frac == 1.0
    return plain and cfg.pp == 1 and cfg.gpu.scale_out is not None and bool(site.has_scale_out_fabric)


def add_pd_rows(catalog: Catalog, pending: list[Pending], table: CandidateRows) -> tuple[
    list[Pending], list[Pending]
]:
    """Append prefill and decode rows to ``table`` for the pending co-located rows of PD workloads (module
    docstring).

    Returns (co-located rows still to evaluate, PD rows to evaluate); ``disaggregation: on`` takes the
    co-located rows out with their reason.
    """
    keep: list[Pending] = []
    pd_rows: list[Pending] = []
    copied: list[int] = []  # the pending row each pool row copies, and its role
    roles: list[str] = []
    n = len(table)
    for row, cfg, site in pending:
        mode = cfg.workload.disaggregation
        if mode == "on":
            table.reason[row] = "disaggregation: on (only separate prefill and decode pools serve this workload)"
        else:
            keep.append((row, cfg, site))
        if mode == "off" or not _pd_possible(catalog, cfg, site):
            continue
        for role in PD_ROLES:
            pd_rows.append((n + len(copied), cfg, site))
            copied.append(row)
            roles.append(role)
    table.copy_rows(copied, roles)
    return keep, pd_rows


def _column(values: list[float]) -> Any:
    return np.array(values, dtype=float)[:, None]


def _pool_key(cfg: Any, net_s: float, prefill: bool) -> tuple[Any, ...]:
    """What a pool row's numbers read: its deployment's terms (one object per deployment, shared by the
    workloads serving it: planner/candidate_terms.py; they fix the GPU and TP of the KV link), the workload's
    tokens (memory limit, KV handoff) and the SLO of its stage — TTFT and network for a prefill pool, TPOT for
    a decode pool. Workloads that differ only in the other stage's SLO (or in demand) share their pool rows."""
    w = cfg.workload
    shape = (id(cfg.terms), w.input_tokens, w.output_tokens)
    return (*shape, w.slo.ttft_ms, net_s) if prefill else (*shape, w.slo.tpot_ms)


def _same_values(
    catalog: Catalog, pending: list[Pending], terms: perf.DeploymentTerms, first: np.ndarray, where: np.ndarray,
    net_s: Any, fit_batch: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """(first, where) of :func:`pd_operating_points` merged further over rows that hold the same numbers
    (planner.candidate_rows.same_value_rows: e.g. two formats with the same bytes and efficiencies)."""
    cfgs = [pending[i][1] for i in first]
    links = [(*kv_link(catalog, cfg.gpu, cfg.tp), cfg.ep) for cfg in cfgs]
    columns = [
        *value_columns(len(first), take_terms(terms, first), None),
        np.asarray(net_s, dtype=float).reshape(-1)[first],
        *(np.array(c, dtype=float) for c in zip(*links, strict=True)),
        *(np.array([getattr(cfg.workload, name) for cfg in cfgs], dtype=float)
          for name in ("input_tokens", "output_tokens")),
        *(np.array([getattr(cfg.workload.slo, name) for cfg in cfgs], dtype=float) for name in ("ttft_ms", "tpot_ms")),
        np.asarray(fit_batch).astype(int)[first].astype(float),
    ]
    same_first, same_where = same_value_rows(columns)
    return first[same_first], same_where[where]


def pd_operating_points(
    catalog: Catalog,
    pending: list[Pending],
    scenario: Scenario,
    *,
    terms: perf.DeploymentTerms,
    fit_batch: Any,
    net_s: Any,
    table: CandidateRows,
    role: str,
    schedule_size: int,
) -> dict[str, np.ndarray]:
    """Capacity at the SLO and the load-fraction points (columns) of PD rows of ONE role (the caller groups them); fills
    the rows like planner.candidates._operating_points. Each distinct row (:func:`_pool_key`) is solved once,
    and its capacity and points only where one sequence fits (planner/candidate_rows.py). ``schedule_size``: the
    rows of the role's whole table for the bisections' schedule (``pending``'s, or more for a part of it:
    planner.candidates_split)."""
    prefill = role == "prefill"
    first, where = distinct_rows(
        [_pool_key(cfg, float(x), prefill) for (_, cfg, _), x in zip(pending, np.ravel(net_s), strict=True)]
    )
    first, where = _same_values(catalog, pending, terms, first, where, net_s, fit_batch)
    distinct = [pending[i] for i in first]
    terms = take_terms(terms, first)
    links = [kv_link(catalog, cfg.gpu, cfg.tp) for _, cfg, _ in distinct]
    link_gb_per_s = _column([gb for gb, _ in links])
    latency_us = _column([us for _, us in links])
    replica_link = replica_kv_link_gb_per_s(link_gb_per_s, _column([cfg.ep for _, cfg, _ in distinct]))
    in_tok = _column([cfg.workload.input_tokens for _, cfg, _ in distinct])
    out_tok = _column([cfg.workload.output_tokens for _, cfg, _ in distinct])
    slo_ttft = _column([cfg.workload.slo.ttft_ms / 1e3 for _, cfg, _ in distinct])
    slo_tpot = _column([cfg.workload.slo.tpot_ms / 1e3 for _, cfg, _ in distinct])
    net = np.asarray(net_s, dtype=float)[first][:, None]
    fit = np.asarray(fit_batch).astype(int)[first]
    limit = np.maximum(fit, 1)[:, None].astype(float)
    kv = kv_bytes_per_request(terms, input_tokens=in_tok)
    hand = handoff_s(kv, link_gb_per_s=link_gb_per_s, latency_us=latency_us)
    fractions = scenario.max_utilization_frac * np.array(LOAD_FRACTIONS)[None, :]
    workspace = scenario.workspace_gib * BYTES_PER_GIB
    rows = np.flatnonzero(fit >= 1)  # the distinct rows whose capacity and points are solved
    t_fit, in_fit, lim_fit = take_terms(terms, rows), in_tok[rows], limit[rows]

    if prefill:
        cap = prefill_capacity_at_slo(
            t_fit, input_tokens=in_fit, max_batch=lim_fit, network_s=net[rows], handoff_s=hand[rows],
            slo_ttft_s=slo_ttft[rows], schedule_size=schedule_size,
        )
        cap = link_capped_requests_per_s(cap, kv_bytes=kv[rows], replica_link_gb_per_s=replica_link[rows])
        at = prefill_at_load(
            t_fit, requests_per_s=cap * fractions, input_tokens=in_fit, max_batch=lim_fit, network_s=net[rows],
            handoff_s=hand[rows],
        )
        lone = prefill_at_load(
            terms, requests_per_s=ZERO_LOAD_REQUESTS_PER_S, input_tokens=in_tok, max_batch=limit, network_s=net,
            handoff_s=hand,
        )
        batch = np.maximum(np.ceil(at.prefill_tokens_per_step / in_fit - 1e-9), 1.0)
        memory = perf.memory_per_gpu_bytes(t_fit, batch=batch, context_tokens=in_fit, workspace_bytes=workspace)
        bare = 0.0 * batch
        sync = perf.sync_ratio(perf.prefill_step(t_fit, prompt_tokens=in_fit, batch=batch))
    else:
        out_fit = out_tok[rows]
        cap = decode_capacity_at_slo(
            t_fit, input_tokens=in_fit, output_tokens=out_fit, max_batch=lim_fit, slo_tpot_s=slo_tpot[rows],
            schedule_size=schedule_size,
        )
        cap = link_capped_requests_per_s(cap, kv_bytes=kv[rows], replica_link_gb_per_s=replica_link[rows])
        at = decode_at_load(
            t_fit, requests_per_s=cap * fractions, input_tokens=in_fit, output_tokens=out_fit, max_batch=lim_fit
        )
        lone = decode_at_load(
            terms, requests_per_s=ZERO_LOAD_REQUESTS_PER_S, input_tokens=in_tok, output_tokens=out_tok,
            max_batch=limit,
        )
        batch = np.maximum(np.ceil(at.running_batch - 1e-9), 1.0)
        step = perf.decode_step(t_fit, batch=batch, context_tokens=perf.mean_decode_context_tokens(in_fit, out_fit))
        sync = perf.sync_ratio(step)
        # the reported decode step is the one co-located rows and the audit report (a pool's TPOT: no chunks)
        bare = bare_tpot_s(t_fit, at, input_tokens=in_fit, output_tokens=out_fit)
        memory = perf.memory_per_gpu_bytes(
            t_fit, batch=batch, context_tokens=in_fit + out_fit, workspace_bytes=workspace
        )
    weights = perf.weights_bytes_per_gpu(terms)
    n = len(distinct)
    cap, batch, bare, sync, memory = (spread(x, rows, n) for x in (cap, batch, bare, sync, memory))
    at_tpot, at_ttft = spread(at.tpot_s, rows, n), spread(at.ttft_s, rows, n)
    capacity = cap * fractions  # (n, J) requests/s of the operating points

    # per distinct row k: the numbers as Python lists (the same values as float(x) · 1e3 etc. row by row)
    weights_gb = (np.ravel(weights) / BYTES_PER_GB).tolist()
    fits, kv_bytes, link = fit.tolist(), kv[:, 0].tolist(), replica_link[:, 0].tolist()
    prefill_ms = (lone.prefill_latency_s[:, 0] * 1e3).tolist() if prefill else None
    network_ms = ((net[:, 0] + hand[:, 0]) * 1e3).tolist() if prefill else None
    tpot_floor_ms = None if prefill else (lone.tpot_s[:, 0] * 1e3).tolist()
    serves = (cap[:, 0] > 0).tolist()
    kept, limits = kept_fractions(pending, sync[where], scenario.max_sync_ratio)
    best_batch, best_capacity = batch[where, kept.last].tolist(), capacity[where, kept.last].tolist()
    # the rows' fields, column by column (the same values a row-by-row fill gives)
    cands = np.array([row for row, _, _ in pending], dtype=np.int64)
    col = table.columns
    zero = [0.0] * n
    col["weights_per_gpu_gb"][cands] = np.asarray(weights_gb)[where]
    col["max_batch"][cands] = np.asarray(fits, dtype=np.int64)[where]
    col["kv_bytes_per_request"][cands] = np.asarray(kv_bytes)[where]
    col["kv_link_gb_per_s"][cands] = np.asarray(link)[where]
    col["prefill_ms"][cands] = np.asarray(prefill_ms if prefill_ms is not None else zero)[where]
    col["network_ms"][cands] = np.asarray(network_ms if network_ms is not None else zero)[where]
    floor_ms = np.asarray(tpot_floor_ms if tpot_floor_ms is not None else zero)[where]
    col["tpot_floor_ms"][cands] = floor_ms
    fit_rows = (fit >= 1)[where]
    serve_rows = fit_rows & np.asarray(serves, dtype=bool)[where]
    for r in np.flatnonzero(~fit_rows).tolist():
        cfg = pending[r][1]
        table.reason[cands[r]] = perf.no_fit_reason(cfg.terms, cfg.workload.engine)
    for r in np.flatnonzero(fit_rows & ~serve_rows).tolist():
        w, k = pending[r][1].workload, where[r]
        table.reason[cands[r]] = (
            f"prefill pool: TTFT floor {float(lone.ttft_s[k, 0]) * 1e3:.0f} ms (prefill + KV handoff + RTT"
            f" + upload) above the SLO {w.slo.ttft_ms:g} ms"
            if prefill
            else f"decode pool: TPOT floor {floor_ms[r]:.1f} ms above the SLO {w.slo.tpot_ms:g} ms"
        )
    col["sync_ratio"][cands[serve_rows]] = np.asarray(kept.sync_ratio, dtype=float)[serve_rows]
    for r in np.flatnonzero(serve_rows & ~kept.any).tolist():
        table.reason[cands[r]] = perf.sync_limit_reason(
            kept.sync_ratio[r], float(limits[r]), step="prefill" if prefill else "decode"
        )
    feasible = serve_rows & kept.any
    col["best_batch"][cands[feasible]] = np.asarray(best_batch)[feasible]
    col["best_capacity_requests_per_s"][cands[feasible]] = np.asarray(best_capacity, dtype=float)[feasible]
    col["feasible"][cands[feasible]] = True
    return point_columns(
        picks_of(cands, feasible, kept, where), batch=batch, tpot_ms=0.0 if prefill else at_tpot * 1e3, decode_step_ms=bare * 1e3,
        ttft_ms=at_ttft * 1e3 if prefill else 0.0, capacity_requests_per_s=capacity,
        memory_per_gpu_gb=memory / BYTES_PER_GB, sync_ratio=sync,
    )
