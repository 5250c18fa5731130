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
    cand, batch, tpot_ms (decode step + prefill interference), decode_step_ms (TPOT without prompt chunks: the
    bare decode step at a request's own batch, per output token under speculation),
    ttft_ms (at the operating load), capacity_requests_per_s (one replica, with headroom), memory_per_gpu_gb,
    sync_ratio (exposed communication / decode step; points above max_sync_ratio are left out).

Per replica the engine scheduler (planner/performance/load.py, also behind ``planner predict
--requests-per-s``) gives TTFT/TPOT at an offered load; the capacity at the SLO λ* is the largest load
meeting both SLOs in memory (bisection); the operating points are max_utilization_frac·λ*·f for f in
LOAD_FRACTIONS, each with TTFT/TPOT/batch/memory at that load.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from planner import performance as perf
from planner.candidate_columns import CandidateRows
from planner.candidate_optimizations import config_variants, stack_optimizations
from planner.candidate_rows import Curves, network_column, points_frame
from planner.candidate_terms import TermsMemo
from planner.candidates_colocated import colocated_curves_of, colocated_points, distinct_pairs
from planner.candidates_pd import (
    PD_ROLES,
    Pending,
    add_pd_rows,
    pd_operating_points,
)
from planner.candidates_shared import shared_configs
from planner.candidates_split import SCHEDULE_ROWS, estimated_rows, merged, schedules_hold, two_parts
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.context_window import context_window_problem
from planner.costs import rent_quote
from planner.forked import Background, workers_for
from planner.format_policy import allowed_formats, weight_quality_tier
from planner.gc_pause import gc_paused
from planner.ledgers.edge_cloud import request_network_s
from planner.performance.moe import layout_name, moe_layouts
from planner.performance.optimizations import (
    LoadOptimizations,
    optimized_max_batch,
)
from planner.performance.stack import stack_terms, take_terms
from planner.scenario import Scenario, Workload, merged_sites
from planner.units import BYTES_PER_GIB

FORK_MIN_ROWS = 2000
"""Co-located rows from which their curves are computed in a forked child while the prefill/decode pools'
are computed here (planner.forked.Background): below, the fork (~0.03-0.06 s) costs more than it saves."""

@dataclass(frozen=True)
class CandidateTable:
    """The evaluated candidates and their SLO-feasible operating points."""

    candidates: pd.DataFrame
    points: pd.DataFrame
    sites: dict[str, Site]

    @cached_property
    def feasible(self) -> pd.DataFrame:
        """Rows of ``candidates`` with at least one SLO-feasible operating point (selected once: the table is
        never changed; callers read the frame and never change it)."""
        return self.candidates[self.candidates["feasible"].to_numpy(dtype=bool)]

    def rows_with(self, column: str, value: str) -> pd.DataFrame:
        """Rows of ``candidates`` whose ``column`` is ``value`` (numpy: a string column's own == is slower)."""
        return self.candidates[self.candidates[column].to_numpy() == value]


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
            out[gpu.id] = "" if site.devices.get(gpu.id, 0) > 0 else _no_devices(site, gpu, gpus)
        elif site.gpus_available is not None and gpu.id not in site.gpus_available:
            out[gpu.id] = f"{gpu.id} not available at {site.id}"
        elif site.kind == "cloud":
            rentable = "rent" in scenario.procurement and any(
                rent_quote(catalog, gpu, site, kind, scenario.rent_providers) is not None for kind in scenario.rental_kinds
            )
            buyable = (
                "buy" in scenario.procurement and gpu.purchase is not None and gpu.placement == "datacenter"
            )
            out[gpu.id] = "" if rentable or buyable else _no_price(catalog, scenario, site, gpu)
        else:  # own datacenter
            buyable = "buy" in scenario.procurement and gpu.purchase is not None
            out[gpu.id] = (
                "" if buyable else f"{gpu.id} at datacenter {site.id} needs procurement 'buy' or inventory"
            )
    return out


def _no_devices(site: Site, gpu: Accelerator, gpus: list[Accelerator]) -> str:
    """Why ``gpu`` cannot run at edge ``site``: it has none of them; naming the devices it has that the
    scenario's GPU list leaves out (they are what the site can run)."""
    allowed = {g.id for g in gpus}
    left_out = sorted(g for g, n in site.devices.items() if n > 0 and g not in allowed)
    has = f" (its devices: {', '.join(left_out)}, not in hardware.gpus)" if left_out else ""
    return f"no {gpu.id} devices at edge site {site.id}{has}"


def _no_price(catalog: Catalog, scenario: Scenario, site: Site, gpu: Accelerator) -> str:
    """Why ``gpu`` cannot be rented or bought at cloud ``site``: no quote of the allowed kinds — from the
    allowed providers, when other providers do quote it (the rent_providers filter is then the cause)."""
    kinds = "/".join(scenario.rental_kinds)
    providers = scenario.rent_providers
    if "rent" in scenario.procurement and providers and any(
        rent_quote(catalog, gpu, site, kind) is not None for kind in scenario.rental_kinds
    ):
        return f"no {kinds} price for {gpu.id} at {site.id} from {', '.join(providers)} (rent_providers; other providers quote it)"
    return f"no {kinds} price for {gpu.id} at {site.id}"


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
            window = context_window_problem(model, input_tokens=w.input_tokens, output_tokens=w.output_tokens)
            for q in allowed_formats(catalog, w, model_id):
                fmt = catalog.formats[q]
                for kv in w.kv_dtypes:
                    kfmt = catalog.formats[kv]
                    for gpu in gpus:
                        for tp, ep in moe_layouts(model, scenario.hardware.tp, scenario.hardware.ep):
                            for pp in scenario.hardware.pp:
                                reason = ""
                                terms = None
                                tier = max(weight_quality_tier(catalog, model_id, q), kfmt.quality_tier)
                                if window:
                                    reason = window
                                elif tier > w.max_quality_tier:
                                    reason = f"format quality tier {tier} above the workload's max_quality_tier {w.max_quality_tier}"
                                else:
                                    terms, reason = terms_of(model_id=model_id, gpu=gpu, quantization=q, kv_dtype=kv,
                                                             tp=tp, pp=pp, ep=ep, engine=w.engine_key)
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
    collector waits until it is done (planner/gc_pause.py). A large scenario of several workloads is evaluated
    in two parts on two cores (planner.candidates_split: the same table)."""
    parts = two_parts(_estimated_rows(catalog, scenario)) if workers_for(2) > 1 else None
    table = None if parts is None else _in_two_parts(catalog, scenario, parts)
    return table if table is not None else _evaluated(catalog, scenario)[0]


def _estimated_rows(catalog: Catalog, scenario: Scenario) -> list[int]:
    """Per workload, its (configuration, site) rows on the GPU types usable at each of its sites, before any
    is evaluated (planner.candidates_split)."""
    sites = merged_sites(catalog, scenario)
    gpus = [catalog.accelerators[g] for g in scenario.hardware.gpus or catalog.accelerators]
    usable: dict[str, int] = {}  # site → GPU types usable there
    hw = scenario.hardware
    configurations, pairs = [], []
    for w in scenario.workloads:
        configurations.append(sum(
            len(allowed_formats(catalog, w, m)) * len(w.kv_dtypes) * len(moe_layouts(catalog.models[m], hw.tp, hw.ep))
            * len(hw.pp)
            for m in w.models
        ))
        mine = workload_sites(w, sites)
        for site in mine:
            if site.id not in usable:
                usable[site.id] = sum(not why for why in gpus_at_site(catalog, scenario, site, gpus).values())
        pairs.append(sum(usable[site.id] for site in mine))
    return estimated_rows(configurations, pairs)


def _in_two_parts(catalog: Catalog, scenario: Scenario, parts: tuple[list[int], list[int]]) -> CandidateTable | None:
    """The table of ``scenario`` from the tables of its workloads ``parts`` (planner.candidates_split), the
    second evaluated in a forked child; None when the bisections' schedule does not hold for the whole table."""
    mine, theirs = (scenario.model_copy(update={"workloads": [scenario.workloads[i] for i in p]}) for p in parts)

    def frames(sub: Scenario) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
        table, rows = _evaluated(catalog, sub, fork_curves=False, schedule_floor=SCHEDULE_ROWS)
        return table.candidates, table.points, rows

    with Background(lambda: frames(theirs)) as child:
        own = frames(mine)
        other = child.result()
    if not schedules_hold([own[2], other[2]]):
        return None
    candidates, points = merged(scenario, [own[:2], other[:2]])
    return CandidateTable(candidates=candidates, points=points, sites=merged_sites(catalog, scenario))


def _evaluated(
    catalog: Catalog, scenario: Scenario, *, fork_curves: bool = True, schedule_floor: int = 0
) -> tuple[CandidateTable, dict[str, int]]:
    """The candidate table of ``scenario`` evaluated at once, and the rows of each of its bisection tables
    (co-located, prefill, decode). ``fork_curves``: the co-located curves may be computed in a forked child
    (:data:`FORK_MIN_ROWS`); ``schedule_floor``: the bisections take the schedule of a table of at least that
    many rows (planner.candidates_split)."""
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
    net = network_column(pending, network_s)[:, None] if pending else np.zeros((0, 1))
    idx = np.array([index_of[id(cfg)] for _, cfg, _ in pending], dtype=np.int64)  # each row's configuration
    first, where = distinct_pairs(pending, net)
    pools = {role: [p for p in pd_pending if table.role[p[0]] == role] for role in PD_ROLES}
    rows = {"colocated": len(pending), **{role: len(pool) for role, pool in pools.items()}}
    schedule = {key: max(n, schedule_floor) for key, n in rows.items()}
    forked = fork_curves and len(pending) >= FORK_MIN_ROWS and bool(pd_pending)
    with _curves(pending, net, first, scenario, ev, idx, schedule["colocated"], forked) as curves:
        point_rows = _pool_points(catalog, scenario, pools, ev, index_of, table, schedule)
        if pending:
            point_rows.insert(0, colocated_points(pending, net, where, scenario, ev, idx, table, curves.result()))
    candidates = table.frame()
    points = points_frame(point_rows)
    return CandidateTable(candidates=candidates, points=points, sites=sites), rows


def _curves(
    pending: list[Pending],
    net: np.ndarray,
    first: np.ndarray,
    scenario: Scenario,
    ev: dict[str, Any],
    idx: np.ndarray,
    schedule_size: int,
    forked: bool,
) -> Background[Curves]:
    """The co-located rows' curves (planner.candidates_colocated), computed on the other core while this
    process computes the prefill/decode pools' when ``forked`` (planner.forked.Background), else here."""
    return Background(lambda: colocated_curves_of(pending, net, first, scenario, ev, idx, schedule_size), fork=forked)


def _pool_points(
    catalog: Catalog,
    scenario: Scenario,
    pools: dict[str, list[Pending]],
    ev: dict[str, Any],
    index_of: dict[int, int],
    table: CandidateRows,
    schedule: dict[str, int],
) -> list[dict[str, np.ndarray]]:
    """The operating points of the prefill-only and decode-only rows (planner.candidates_pd), pool by pool
    (``pools``: each role's rows; ``schedule``: each pool's bisection-table size)."""
    point_rows = []
    for role, pool in pools.items():
        if pool:
            idx = np.array([index_of[id(cfg)] for _, cfg, _ in pool])
            net = network_column(pool, network_s)
            point_rows.append(pd_operating_points(
                catalog, pool, scenario, terms=take_terms(ev["terms"], idx), fit_batch=ev["fit_batch"][idx], net_s=net,
                table=table, role=role, schedule_size=schedule[role],
            ))
    return point_rows


def network_s(workload: Workload, site: Site) -> float:
    """Network part of TTFT at ``site``: its RTT + the prompt's upload, s (planner.ledgers.edge_cloud)."""
    return request_network_s(workload.input_tokens, rtt_ms=site.rtt_ms, uplink_mbit_per_s=site.uplink_mbit_per_s)


class SloPercentiles(TypedDict):
    """Keywords of serve_at_load / capacity_at_slo: the SLO percentiles (None = the mean)."""

    ttft_percentile: float | None
    tpot_percentile: float | None


def slo_percentiles(workload: Workload) -> SloPercentiles:
    """The workload's SLO percentiles as keywords of serve_at_load / capacity_at_slo (None = the mean)."""
    return {"ttft_percentile": workload.slo.ttft_percentile, "tpot_percentile": workload.slo.tpot_percentile}
