"""Why a workload has no SLO-feasible candidate, read from the candidate table: it fits nowhere, a sync-ratio
limit, or its SLOs — each SLO no configuration meets is named with its best attainable value and the relaxation
(a TPOT of 1 ms and a TTFT of 1 ms give two causes, not the first alone); SLOs each met by some configuration
but by none together name the closest configuration and what it misses.
"""

from __future__ import annotations

import math

import pandas as pd

from planner.candidates import CandidateTable, gpus_at_site
from planner.catalog.loader import Catalog
from planner.context_window import REASON_START
from planner.optimize.explain import Explanation
from planner.optimize.relaxations import cannot_run_relaxation, context_relaxation, reason_relaxation
from planner.scenario import Scenario, Workload
from planner.scenario_base import Slo


def closest_miss(rows: pd.DataFrame, slo: Slo) -> str:
    """Why the candidate ``rows`` (of one workload, none SLO-feasible) cannot serve it, naming the closest
    miss rather than the most common reason.

    Among the rows that fit in memory (max_batch ≥ 1) the closest miss is the configuration with the least
    worst ratio max(TPOT floor / TPOT SLO, TTFT floor / TTFT SLO), TTFT floor = prefill + network ms (at
    batch 1, no queueing): "fits as TP4 int8 but misses TTFT by 980 ms (3980 ms > 3000 ms) at its best
    configuration". With nothing fitting: "does not fit in memory" when that is a reason, else the most
    common reason."""
    fits = rows[rows["max_batch"] >= 1]
    if fits.empty:
        reasons = rows["reason"].value_counts()
        if reasons.empty:
            return "no candidates"
        memory = [r for r in reasons.index if str(r).startswith("does not fit")]
        domain = [r for r in reasons.index if "NVLink domain" in str(r)]  # larger TP would leave it
        if memory and domain:
            return f"does not fit in memory at any TP inside the NVLink domain ({memory[0]}; {domain[0]})"
        return (
            f"does not fit in memory at any allowed TP/PP and format ({memory[0]})"
            if memory
            else str(reasons.index[0])
        )
    synced = _sync_limited(fits)
    if not synced.empty:
        best = synced.loc[synced["sync_ratio"].idxmin()]
        return (
            f"fits as {best['gpu']} TP{best['tp']}xPP{best['pp']} {best['quantization']} at {best['site']} "
            f"but {best['reason']}"
        )
    best = closest_fit(fits, slo)
    best_ttft_ms = float(best["prefill_ms"] + best["network_ms"])
    ep = int(best.get("ep", 1))
    config = f"{best['gpu']} TP{best['tp']}xPP{best['pp']}{f'xEP{ep}' if ep > 1 else ''} {best['quantization']} at {best['site']}"
    misses = []
    if best["tpot_floor_ms"] > slo.tpot_ms:
        tpot = float(best["tpot_floor_ms"])
        misses.append(f"TPOT by {tpot - slo.tpot_ms:.1f} ms ({tpot:.1f} ms > {slo.tpot_ms:g} ms)")
    if best_ttft_ms > slo.ttft_ms:
        misses.append(
            f"TTFT by {best_ttft_ms - slo.ttft_ms:.0f} ms ({best_ttft_ms:.0f} ms > {slo.ttft_ms:g} ms)"
        )
    if not misses:
        return f"fits as {config} but no operating point meets the SLOs with queueing"
    return f"fits as {config} but misses {' and '.join(misses)} at its best configuration"


def closest_fit(fits: pd.DataFrame, slo: Slo) -> pd.Series:
    """The row of ``fits`` (rows that fit in memory) with the least worst SLO ratio, max(TPOT floor / TPOT SLO,
    TTFT floor / TTFT SLO), TTFT floor = prefill + network ms (batch 1, no queueing): the closest miss."""
    ttft_ms = fits["prefill_ms"] + fits["network_ms"]
    ratio = pd.concat([fits["tpot_floor_ms"] / slo.tpot_ms, ttft_ms / slo.ttft_ms], axis=1).max(axis=1)
    return fits.loc[ratio.idxmin()]


def _servable(rows: pd.DataFrame) -> bool:
    """A workload can be served: a feasible co-located candidate, or feasible prefill AND decode pools (of one
    PD group: same model, weight and KV format)."""
    if "role" not in rows.columns:
        return bool(rows["feasible"].any())
    feasible = rows["feasible"].to_numpy(dtype=bool)
    if (feasible & (rows["role"].to_numpy() == "colocated")).any():
        return True
    ok = rows[feasible]
    groups = {
        role: set(zip(g["model"], g["quantization"], g["kv_dtype"], strict=True))
        for role, g in ok.groupby("role")
    }
    return bool(groups.get("prefill", set()) & groups.get("decode", set()))


def _explained_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows whose TPOT and TTFT floors explain a workload: the co-located ones where they were evaluated (a
    prefill pool has no TPOT, a decode pool no TTFT), else the decode pools (``disaggregation: on``) — unless
    there are none (no configuration could run, so no pool was built): then the co-located rows, whose
    reasons say why ("TP16 leaves the 8-GPU NVLink domain of h100_sxm ...", not "no candidates")."""
    if "role" not in rows.columns:
        return rows
    colocated = rows[rows["role"] == "colocated"]
    if (colocated["max_batch"] >= 1).any():
        return colocated
    decode = rows[rows["role"] == "decode"]
    return colocated if decode.empty else decode


def _sync_limited(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows left out only by the sync-ratio limit (planner.performance.sync)."""
    if "sync_ratio" not in rows:
        return rows.iloc[0:0]
    return rows[rows["reason"].astype(str).str.startswith("sync ratio")]


def _sites_down(w: Workload) -> int:
    """Sites the workload's SLO must survive losing (its ``redundancy`` rule; 0 without one)."""
    return 0 if w.redundancy is None else w.redundancy.sites_down


def _site_redundancy(w: Workload, rows: pd.DataFrame) -> Explanation | None:
    """A workload that must keep its SLO with ``spare_replicas`` sites down but can run at no more sites than
    that (nothing would be left to serve it); None otherwise."""
    down = _sites_down(w)
    if not down:
        return None
    sites = sorted({str(s) for s in rows.loc[rows["feasible"], "site"]})
    if len(sites) > down:
        return None
    return Explanation(
        workload=w.name,
        requirement="redundancy",
        message=(
            f"{w.name}: its SLO must hold with {down} site(s) down, so it needs candidates at "
            f"{down + 1} sites or more; it can run only at {', '.join(sites)}"
        ),
        relaxation=f"add a site to {w.name}.sites, or use {w.name}.redundancy.failure_domain node",
    )


def _unoffered(catalog: Catalog, scenario: Scenario, table: CandidateTable, rows: pd.DataFrame) -> str | None:
    """Why none of the GPU types of ``rows`` (one workload's candidates) can be had at any of their sites (not
    offered there, no price for its procurement, no device or inventory: planner.candidates.gpus_at_site), each
    site's reason once; None when some (GPU, site) pair is usable. A row's own reason names its configuration's
    fault first ("fp8 is not supported natively on apple_m3_ultra"), which no other format or degree cures."""
    if rows.empty:
        return None
    gpus = sorted({str(g) for g in rows["gpu"]})
    accelerators = [catalog.accelerators[g] for g in gpus]
    why: list[str] = []
    for site in sorted({str(s) for s in rows["site"]}):
        reasons = gpus_at_site(catalog, scenario, table.sites[site], accelerators)
        if any(not r for r in reasons.values()):
            return None
        why += [reasons[g] for g in gpus]
    return "; ".join(dict.fromkeys(why))


def explain_workload_candidates(
    catalog: Catalog, table: CandidateTable, scenario: Scenario
) -> list[Explanation]:
    """For each workload without an SLO-feasible candidate: what binds, the best value, the relaxation."""
    out: list[Explanation] = []
    cands = table.candidates
    workload = cands["workload"].to_numpy()  # numpy: a string column's own == is several times slower
    served = cands["feasible"].to_numpy(dtype=bool)
    if "role" in cands.columns:
        served = served & (cands["role"].to_numpy() == "colocated")
    for w in scenario.workloads:
        mine = workload == w.name
        if (mine & served).any() and not _sites_down(w):
            continue  # servable co-located (_servable) and no sites to lose (_site_redundancy): nothing to say
        rows = cands[mine]
        if _servable(rows):
            lost_sites = _site_redundancy(w, rows)
            if lost_sites is not None:
                out.append(lost_sites)
            continue
        unoffered = _unoffered(catalog, scenario, table, rows)
        if unoffered is not None:
            out.append(
                Explanation(
                    workload=w.name,
                    requirement="sites",
                    message=f"{w.name}: no allowed (model, format, GPU, TP, PP, site) fits in memory or can run: {unoffered}",
                    relaxation=reason_relaxation(unoffered, w.name) or f"allow another GPU type or site for {w.name}",
                )
            )
            continue
        rows = _explained_rows(rows)
        fits = rows[rows["max_batch"] >= 1]
        if fits.empty:
            miss = closest_miss(rows, w.slo)
            context = miss.startswith(REASON_START)
            out.append(
                Explanation(
                    workload=w.name,
                    requirement="context_window" if context else "memory",
                    message=f"{w.name}: no allowed (model, format, GPU, TP, PP, site) fits in memory or can run: {miss}",
                    relaxation=context_relaxation(catalog, w)
                    if context
                    else cannot_run_relaxation(rows, miss, w.name),
                )
            )
            continue
        synced = _sync_limited(fits)
        if not synced.empty:
            least = float(synced["sync_ratio"].min())
            out.append(
                Explanation(
                    workload=w.name,
                    requirement="sync_ratio",
                    message=f"{w.name}: {closest_miss(rows, w.slo)}",
                    relaxation=f"raise {w.name}.max_sync_ratio to {math.ceil(least * 100) / 100:g}",
                )
            )
            continue
        out += slo_misses(w, fits, rows)
    return out


def slo_misses(w: Workload, fits: pd.DataFrame, rows: pd.DataFrame) -> list[Explanation]:
    """The SLOs of ``w`` that no configuration of ``fits`` (its rows that fit in memory) meets, each with its best
    value and relaxation: TPOT (best decode step at batch 1) and TTFT (best prefill + network). When each is met by
    some configuration but none meets both (or only with queueing), one cause names the closest configuration
    (:func:`closest_miss`) and raises what it misses."""
    out: list[Explanation] = []
    best_tpot = fits.loc[fits["tpot_floor_ms"].idxmin()]
    if best_tpot["tpot_floor_ms"] > w.slo.tpot_ms:
        out.append(
            Explanation(
                workload=w.name,
                requirement="tpot_ms",
                best_value_ms=float(best_tpot["tpot_floor_ms"]),
                slo_ms=w.slo.tpot_ms,
                message=(
                    f"lowest TPOT for {best_tpot['model']} on any allowed GPU is {best_tpot['tpot_floor_ms']:.1f} ms on "
                    f"{best_tpot['gpu']} TP{best_tpot['tp']} ({best_tpot['quantization']}); the SLO is {w.slo.tpot_ms:g} ms"
                ),
                relaxation=f"raise {w.name}.slo.tpot_ms to {math.ceil(best_tpot['tpot_floor_ms'] * 10) / 10:g}",
            )
        )
    ttft_floor = fits["prefill_ms"] + fits["network_ms"]
    best = fits.loc[ttft_floor.idxmin()]
    floor_ms = float(best["prefill_ms"] + best["network_ms"])
    if floor_ms > w.slo.ttft_ms:
        out.append(
            Explanation(
                workload=w.name,
                requirement="ttft_ms",
                best_value_ms=floor_ms,
                slo_ms=w.slo.ttft_ms,
                message=(
                    f"lowest TTFT for {best['model']} is {floor_ms:.0f} ms (prefill {best['prefill_ms']:.0f} ms + network "
                    f"{best['network_ms']:.0f} ms) on {best['gpu']} TP{best['tp']} at {best['site']}; the SLO is {w.slo.ttft_ms:g} ms"
                ),
                relaxation=f"raise {w.name}.slo.ttft_ms to {math.ceil(floor_ms * 1.1):g} (with queueing headroom)",
            )
        )
    if out:
        return out
    return [
        Explanation(
            workload=w.name,
            requirement="slo",
            message=f"{w.name}: {closest_miss(rows, w.slo)}",
            relaxation=_joint_relaxation(w, fits),
        )
    ]


def _joint_relaxation(w: Workload, fits: pd.DataFrame) -> str:
    """Raise what the closest configuration (least worst SLO ratio) misses to its floors (TTFT with 10 %
    queueing headroom); both SLOs with headroom when it misses neither (queueing alone)."""
    best = closest_fit(fits, w.slo)
    tpot_ms, best_ttft_ms = float(best["tpot_floor_ms"]), float(best["prefill_ms"] + best["network_ms"])
    raises = []
    if tpot_ms > w.slo.tpot_ms:
        raises.append(f"{w.name}.slo.tpot_ms to {math.ceil(tpot_ms * 10) / 10:g}")
    if best_ttft_ms > w.slo.ttft_ms:
        raises.append(f"{w.name}.slo.ttft_ms to {math.ceil(best_ttft_ms * 1.1):g}")
    if not raises:
        return f"raise {w.name}.slo.tpot_ms or {w.name}.slo.ttft_ms (queueing at the load leaves no headroom)"
    return "raise " + " and ".join(raises)
