"""Candidate table: every (workload, model, format, KV format, GPU, TP, PP, site) evaluated with the ledgers.

Two pandas DataFrames (columns carry units): ``candidates``, one row per candidate (infeasible ones kept):
    cand, workload, role (colocated | prefill | decode, candidates_pd.py), model, quantization, kv_dtype, gpu, tp,
    pp, ep (expert parallel, attention DP = EP; 1 for dense models), site, placement, gpus (tp·ep·pp·share_frac),
    share_frac (share of one GPU, planner.performance.sharing), quality_tier,
    weights_per_gpu_gb, max_batch, prefill_ms, network_ms, tpot_floor_ms, best_batch,
    best_capacity_requests_per_s, usd_per_hour (cheapest on-demand rent of its GPUs; NaN at edge/dc),
    feasible, reason, prefix_cache, speculative (the optimization variant; planner/candidate_optimizations.py),
    prefix_cache_why, speculative_why, chunk_tokens.

``points`` — one row per SLO-feasible operating point (cand, batch):
    cand, batch, tpot_ms (decode step + prefill interference), decode_step_ms (the bare decode step T(b)),
    ttft_ms (at the operating load), capacity_requests_per_s (one replica, with headroom), memory_per_gpu_gb,
    sync_ratio (exposed communication / decode step; points above max_sync_ratio are left out).

Per replica the engine scheduler (planner/performance/load.py, also behind ``planner predict
--requests-per-s``) gives TTFT/TPOT at an offered load; the capacity at the SLO λ* is the largest load
meeting both SLOs in memory (bisection); the operating points are max_utilization_frac·λ*·f for f in
LOAD_FRACTIONS, each with TTFT/TPOT/batch/memory at that load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from planner import performance as perf
from planner.candidate_columns import CandidateRows
from planner.candidate_optimizations import config_variants, stack_optimizations
from planner.candidate_rows import (
    colocated_curves,
    column_rows,
    distinct_rows,
    kept_fractions,
    network_column,
    picks_of,
    point_columns,
    points_frame,
    workload_rows,
)
from planner.candidate_terms import TermsMemo
from planner.candidates_pd import (
    LOAD_FRACTIONS,
    Pending,
    add_pd_rows,
    pd_operating_points,
)
from planner.candidates_shared import shared_configs
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.costs import rent_quote
from planner.gc_pause import gc_paused
from planner.performance.moe import layout_name, moe_layouts
from planner.performance.optimizations import (
    LoadOptimizations,
    optimized_max_batch,
)
from planner.performance.stack import stack_terms, take_optimizations, take_terms
from planner.scenario import Scenario, Workload, merged_sites
from planner.units import BYTES_PER_GB, BYTES_PER_GIB

PROMPT_BYTES_PER_TOKEN = 4.0
"""Upload size of a prompt: ≈ 4 bytes of UTF-8 text per token (English BPE average)."""


@dataclass(frozen=True)
class CandidateTable:
    """The evaluated candidates and their SLO-feasible operating points."""

    candidates: pd.DataFrame
    points: pd.DataFrame
    sites: dict[str, Site]

    @property
    def feasible(self) -> pd.DataFrame:
        """Rows of ``candidates`` with at least one SLO-feasible operating point."""
        return self.candidates[self.candidates["feasible"]]


def workload_sites(workload: Workload, sites: dict[str, Site]) -> list[Site]:
    """Sites a workload may use: the listed ones, else every cloud site."""
    if workload.sites is not None:
        return [sites[s] for s in workload.sites]
    return [s for s in sites.values() if s.kind == "cloud"]


def gpus_at_site(catalog: Catalog, scenario: Scenario, site: Site, gpus: list[Accelerator]) -> dict[str, str]:
    """GPU types usable at ``site`` → '' if usable, else the reason they are not."""
    owned = {i.gpu for i in scenario.inventory if i.site == site.id}
    out: dict[str, str] = {}
    for gpu in gpus:
        if gpu.id in owned:
            out[gpu.id] = ""
        elif site.kind == "edge":
            out[gpu.id] = (
                "" if site.devices.get(gpu.id, 0) > 0 else f"no {gpu.id} devices at edge site {site.id}"
            )
        elif site.gpus_available is not None and gpu.id not in site.gpus_available:
            out[gpu.id] = f"{gpu.id} not available at {site.id}"
        elif site.kind == "cloud":
            rentable = "rent" in scenario.procurement and any(
                rent_quote(catalog, gpu, site, kind, scenario.rent_providers) is not None for kind in scenario.rental_kinds
            )
            buyable = (
                "buy" in scenario.procurement and gpu.purchase is not None and gpu.placement == "datacenter"
            )
            out[gpu.id] = (
                ""
                if rentable or buyable
                else f"no {'/'.join(scenario.rental_kinds)} price for {gpu.id} at {site.id}"
            )
        else:  # own datacenter
            buyable = "buy" in scenario.procurement and gpu.purchase is not None
            out[gpu.id] = (
                "" if buyable else f"{gpu.id} at datacenter {site.id} needs procurement 'buy' or inventory"
            )
    return out


def batch_breakpoints(max_batch: int) -> list[int]:
    """Powers of two up to ``max_batch`` (and ``max_batch`` itself)."""
    points = [1]
    while points[-1] * 2 <= max_batch:
        points.append(points[-1] * 2)
    if points[-1] != max_batch:
        points.append(max_batch)
    return points


@dataclass
class _Config:
    workload: Workload
    model: str
    quantization: str
    kv_dtype: str
    gpu: Accelerator
    tp: int
    pp: int
    quality_tier: int
    reason: str
    terms: perf.DeploymentTerms | None
    prefix_cache: bool = False
    speculative: bool = False
    opt: LoadOptimizations | None = None
    why: dict[str, str] | None = None
    ep: int = 1
    share_frac: float = 1.0
    """Share of one GPU the replica holds (planner.performance.sharing); 1 = whole GPUs."""


def _perf_configs(catalog: Catalog, scenario: Scenario, gpus: list[Accelerator]) -> list[_Config]:
    configs: list[_Config] = []
    terms_of = TermsMemo(catalog, scenario.hardware.efficiency)
    for w in scenario.workloads:
        for model_id in w.models:
            model = catalog.models[model_id]
            for q in w.quantizations:
                fmt = catalog.formats[q]
                for kv in w.kv_dtypes:
                    kfmt = catalog.formats[kv]
                    for gpu in gpus:
                        for tp, ep in moe_layouts(model, scenario.hardware.tp, scenario.hardware.ep):
                            for pp in scenario.hardware.pp:
                                reason = ""
                                terms = None
                                tier = max(fmt.quality_tier, kfmt.quality_tier)
                                if tier > w.max_quality_tier:
                                    reason = f"format quality tier {tier} above the workload's max_quality_tier {w.max_quality_tier}"
                                else:
                                    terms, reason = terms_of(model_id=model_id, gpu=gpu, quantization=q, kv_dtype=kv,
                                                             tp=tp, pp=pp, ep=ep, engine=w.engine)
                                if terms is None:
                                    configs.append(_Config(w, model_id, q, kv, gpu, tp, pp, tier, reason, terms, ep=ep))
                                    continue
                                for v in config_variants(catalog, w, terms, model_id=model_id, gpu=gpu, fmt=fmt,
                                                         kfmt=kfmt, tp=tp, pp=pp):
                                    configs.append(_Config(w, model_id, q, kv, gpu, tp, pp, tier, reason, terms,
                                                           v.prefix_cache, v.speculative, v.opt, v.why, ep))
    return configs + shared_configs(catalog, scenario, configs)


def _evaluate(scenario: Scenario, configs: list[_Config]) -> dict[str, Any]:
    """Vectorized ledger evaluation of every runnable config: stacked terms, memory limit, lone prefill."""
    targets = [c.terms for c in configs if c.terms is not None]
    terms = stack_terms(targets)
    opt = stack_optimizations([c.opt or LoadOptimizations() for c in configs if c.terms is not None], targets,
                              stack_terms)
    p_tok = np.array([c.workload.input_tokens for c in configs if c.terms is not None], dtype=float)[:, None]
    g_tok = np.array([c.workload.output_tokens for c in configs if c.terms is not None], dtype=float)[:, None]
    workspace = scenario.workspace_gib * BYTES_PER_GIB
    fit_batch = optimized_max_batch(terms, opt, context_tokens=p_tok + g_tok, workspace_bytes=workspace)
    if opt is None:
        prefill = perf.prefill_step(terms, prompt_tokens=p_tok).total_s
    else:
        prefill = perf.prefill_step(terms, prompt_tokens=p_tok - opt.cached_tokens, cached_tokens=opt.cached_tokens).total_s
    return {
        "terms": terms,
        "opt": opt,
        "fit_batch": np.minimum(fit_batch[:, 0], scenario.max_batch),
        "prefill_s": prefill[:, 0],
        "weights_per_gpu_bytes": perf.weights_bytes_per_gpu(terms)[:, 0],
    }


@gc_paused
def build_candidates(catalog: Catalog, scenario: Scenario) -> CandidateTable:
    """Enumerate and evaluate every candidate of ``scenario`` (see the module docstring); the cyclic garbage
    collector waits until it is done (planner/gc_pause.py)."""
    sites = merged_sites(catalog, scenario)
    gpu_ids = scenario.hardware.gpus or list(catalog.accelerators)
    gpus = [catalog.accelerators[g] for g in gpu_ids]
    configs = _perf_configs(catalog, scenario, gpus)
    runnable = [c for c in configs if c.terms is not None]
    ev = _evaluate(scenario, runnable) if runnable else {}
    index_of = {id(c): i for i, c in enumerate(runnable)}

    table = CandidateRows(configs)
    pending: list[Pending] = []
    usable_cache: dict[tuple[str, str], str] = {}
    quote_cache: dict[tuple[str, str], float] = {}
    sites_of = {w.name: workload_sites(w, sites) for w in scenario.workloads}
    # the rows' own columns (planner/candidate_columns.py), one entry per (configuration, site)
    config_col: list[int] = []
    site_col: list[str] = []
    placement_col: list[str] = []
    usd_col: list[float] = []
    reason_col: list[str] = []
    for c_index, cfg in enumerate(configs):
        w = cfg.workload
        gpus_of_row = cfg.tp * cfg.ep * cfg.pp * cfg.share_frac
        for site in sites_of[w.name]:
            key = (site.id, cfg.gpu.id)
            if key not in usable_cache:
                usable_cache[key] = gpus_at_site(catalog, scenario, site, [cfg.gpu])[cfg.gpu.id]
                quote = rent_quote(catalog, cfg.gpu, site, "on_demand", scenario.rent_providers) if site.kind == "cloud" else None
                quote_cache[key] = quote.usd_per_gpu_hour if quote else np.nan
            reason = cfg.reason or usable_cache[key]
            if not reason:
                if site.kind == "edge" and gpus_of_row > site.devices.get(cfg.gpu.id, 0):
                    reason = f"needs {gpus_of_row} {cfg.gpu.id} but {site.id} has {site.devices.get(cfg.gpu.id, 0)}"
                elif gpus_of_row > cfg.gpu.gpus_per_node and not site.has_scale_out_fabric:
                    reason = f"{layout_name(cfg.tp, cfg.pp, cfg.ep)} spans nodes but {site.id} has no scale-out fabric"
                else:
                    pending.append((len(config_col), cfg, site))
            config_col.append(c_index)
            site_col.append(site.id)
            placement_col.append("edge" if site.kind == "edge" else "cloud")
            usd_col.append(quote_cache[key] * cfg.tp * cfg.ep * cfg.pp * cfg.share_frac)
            reason_col.append(reason)
    table.extend(config_col, site_col, placement_col, usd_col, reason_col)
    pending, pd_pending = add_pd_rows(catalog, pending, table)
    table.start_evaluation(pool_rows=bool(pd_pending))
    point_rows = [_operating_points(pending, scenario, ev, index_of, table)] if pending else []
    for role in ("prefill", "decode"):
        pool = [p for p in pd_pending if table.role[p[0]] == role]
        if pool:
            idx = np.array([index_of[id(cfg)] for _, cfg, _ in pool])
            net = network_column(pool, network_s)
            point_rows.append(pd_operating_points(
                catalog, pool, scenario, terms=take_terms(ev["terms"], idx), fit_batch=ev["fit_batch"][idx], net_s=net,
                table=table, role=role,
            ))

    candidates = table.frame()
    points = points_frame(point_rows)
    return CandidateTable(candidates=candidates, points=points, sites=sites)


def network_s(workload: Workload, site: Site) -> float:
    """Network part of TTFT: site RTT + prompt upload (P tokens × 4 B over the users' uplink), s (card 12)."""
    upload_s = workload.input_tokens * PROMPT_BYTES_PER_TOKEN * 8.0 / (site.uplink_mbit_per_s * 1e6)
    return site.rtt_ms / 1e3 + upload_s


class SloPercentiles(TypedDict):
    """Keywords of serve_at_load / capacity_at_slo: the SLO percentiles (None = the mean)."""

    ttft_percentile: float | None
    tpot_percentile: float | None


def slo_percentiles(workload: Workload) -> SloPercentiles:
    """The workload's SLO percentiles as keywords of serve_at_load / capacity_at_slo (None = the mean)."""
    return {"ttft_percentile": workload.slo.ttft_percentile, "tpot_percentile": workload.slo.tpot_percentile}


def _percentile_column(pending: list[Pending], key: str) -> Any:
    """(N, 1) percentiles of ``key`` per row (nan = the mean), or None when every row uses the mean."""
    values = [getattr(cfg.workload.slo, key) for _, cfg, _ in pending]  # key: a field of SloPercentiles
    if all(v is None for v in values):
        return None
    return np.array([np.nan if v is None else float(v) for v in values])[:, None]


def _operating_points(
    pending: list[Pending],
    scenario: Scenario,
    ev: dict[str, Any],
    index_of: dict[int, int],
    table: CandidateRows,
) -> dict[str, np.ndarray]:
    """Capacity at the SLO and the load-fraction points (columns) of every pending row at once; fill the rows."""
    idx = np.array([index_of[id(cfg)] for _, cfg, _ in pending])
    net = network_column(pending, network_s)[:, None]
    workloads, w_of = workload_rows(pending)
    in_tok = np.array([w.input_tokens for w in workloads], dtype=float)[w_of][:, None]
    out_tok = np.array([w.output_tokens for w in workloads], dtype=float)[w_of][:, None]
    slo_ttft = np.array([w.slo.ttft_ms for w in workloads])[w_of][:, None] / 1e3
    slo_tpot = np.array([w.slo.tpot_ms for w in workloads])[w_of][:, None] / 1e3
    pct = {key: _percentile_column(pending, key) for key in ("ttft_percentile", "tpot_percentile")}
    fit = ev["fit_batch"][idx].astype(int)
    first, where = distinct_rows([(id(cfg), float(n)) for (_, cfg, _), n in zip(pending, net[:, 0], strict=True)])
    c = colocated_curves(
        take_terms(ev["terms"], idx[first]), take_optimizations(ev["opt"], idx[first]), input_tokens=in_tok[first],
        output_tokens=out_tok[first], max_batch=fit[first], network_s=net[first], slo_ttft_s=slo_ttft[first],
        slo_tpot_s=slo_tpot[first], percentiles={k: column_rows(v, first) for k, v in pct.items()},
        max_utilization_frac=scenario.max_utilization_frac, load_fractions=LOAD_FRACTIONS,
        workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB, schedule_size=len(pending),
    )
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
        table.reason[rows[r]] = "does not fit: weights + workspace + one sequence's KV exceed GPU memory"
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
