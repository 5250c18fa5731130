"""Calibration: per-engine regularised least-squares fit (Nelder–Mead) and leave-one-source-out errors.

The fitted parameters are kernel-quality scales of the ENGINE that ran a row (how close its kernels get to
the accelerator's sourced MBU / MFU), not of a hardware family: an engine's kernels are the same code on
every GPU, and a family scale let one engine's overheads leak into every other engine's predictions on that
hardware (issue 12: the Blackwell decode scale made a B200 slower than an H200).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from planner.catalog.loader import Catalog
from planner.validate.cases import TIME_METRICS, Case
from planner.validate.predictions import case_efficiency, evaluate, predict_case
from planner.validate.scores import ResultRow

FIT_PARAMETERS = ("decode_mbu_scale", "prefill_mfu_scale")
MIN_FIT_ROWS = 3
"""A scale with fewer fit rows (of the metrics it governs, :data:`FIT_METRICS`) keeps the physics default."""
FIT_REGULARIZATION = 0.05
"""Weight of the prior term (ln scale)² per parameter (prior: the sourced default, scale 1)."""
LN_SCALE_MIN = math.log(0.8)
LN_SCALE_MAX = math.log(1.25)
"""Efficiency scales stay within 0.8-1.25x the sourced defaults (and efficiencies at most 1): host costs are
the engine's (catalogs/engines.yaml), so a scale can no longer stand in for a missing overhead."""

UNCALIBRATED_PARAMETERS: dict[str, dict[str, float]] = {
    "nvidia_ampere": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 128},
    "nvidia_hopper": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
    "nvidia_ada": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
    "nvidia_blackwell": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
    "nvidia_blackwell_consumer": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
    "amd_cdna3": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
    "apple_m": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 128},
    "nvidia_jetson": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
    "nvidia_gb10": {"step_overhead_ms": 0.1, "prefill_saturation_tokens": 64},
}
"""The physics defaults of catalogs/calibration.yaml before any fit (the 'uncalibrated' baseline)."""


def nelder_mead(
    f: Callable[[np.ndarray], float], x0: Sequence[float], *, step: float = 0.3, iterations: int = 120
) -> np.ndarray:
    """Minimise ``f`` with the Nelder–Mead simplex (reflection 1, expansion 2, contraction ½, shrink ½)."""
    n = len(x0)
    simplex = [np.asarray(x0, dtype=float)]
    for i in range(n):
        v = np.array(x0, dtype=float)
        v[i] += step
        simplex.append(v)
    values = [f(v) for v in simplex]
    for _ in range(iterations):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        xr = centroid + (centroid - worst)
        fr = f(xr)
        if fr < values[0]:
            xe = centroid + 2.0 * (centroid - worst)
            fe = f(xe)
            simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (worst - centroid)
            fc = f(xc)
            if fc < values[-1]:
                simplex[-1], values[-1] = xc, fc
            else:
                best = simplex[0]
                simplex = [best] + [best + 0.5 * (v - best) for v in simplex[1:]]
                values = [values[0]] + [f(v) for v in simplex[1:]]
    return simplex[int(np.argmin(values))]


FIT_METRICS: dict[str, tuple[str, ...]] = {
    "prefill_mfu_scale": ("ttft_or_prefill",),
    "decode_mbu_scale": ("tpot_itl", "throughput"),
}
"""The rows each scale is fitted on: the metrics it governs. The prefill MFU scale first, on TTFT and prompt
rows alone; then the decode MBU scale on TPOT and throughput rows with the prefill scale at its fitted value.
Fitted jointly on every row, the throughput rows (which depend on both) pulled vllm's prefill scale to its
0.8 bound to stand in for a decode-side miss, and the held-out github TTFT rows went from 15 % to 32 %."""


def _scale(x: float) -> float:
    return float(math.exp(min(max(x, LN_SCALE_MIN), LN_SCALE_MAX)))


def fit_engine(catalog: Catalog, cases: Sequence[Case], engine: str) -> dict[str, float]:
    """Regularised least squares on ln(predicted/measured) of one engine's rows, one scale at a time.

    Each scale s of :data:`FIT_METRICS`, in its order, minimises Σ w·ln²(pred/meas) + λ·(ln s)² over the
    engine's fitted rows of the metrics it governs (λ = FIT_REGULARIZATION, bounds LN_SCALE_MIN..LN_SCALE_MAX,
    Nelder–Mead; each metric weighs the same whatever its row count, weights summing to the row count); a
    scale with fewer than MIN_FIT_ROWS rows keeps the sourced default 1. The host costs per step are the
    engine's and are not fitted.
    """
    mine = [c for c in cases if c.engine == engine and c.metric in TIME_METRICS and c.fitted]
    params = dict.fromkeys(FIT_PARAMETERS, 1.0)
    for name, metrics in FIT_METRICS.items():
        rows = [c for c in mine if c.metric in metrics]
        if len(rows) < MIN_FIT_ROWS:
            continue
        counts = {m: sum(1 for c in rows if c.metric == m) for m in metrics}
        used = sum(1 for n in counts.values() if n)
        weights = [len(rows) / (used * counts[c.metric]) for c in rows]

        def objective(x: np.ndarray, rows: list[Case] = rows, weights: list[float] = weights, name: str = name) -> float:
            p = {**params, name: _scale(x[0])}
            loss = sum(
                w * math.log(predict_case(c, case_efficiency(catalog, c, p)) / c.measured) ** 2
                for c, w in zip(rows, weights, strict=True)
            )
            return loss + FIT_REGULARIZATION * math.log(p[name]) ** 2

        params[name] = _scale(float(nelder_mead(objective, [0.0], step=0.1)[0]))
    return params


def fit_calibration(
    catalog: Catalog, cases: Sequence[Case], *, exclude_source: str | None = None
) -> dict[str, dict[str, float]]:
    """Fit FIT_PARAMETERS per engine with >= MIN_FIT_ROWS fitted time/throughput cases (others keep defaults).

    The base parameters (prefill saturation, paging, weight-only efficiency, step overhead) are the
    catalog's. ``exclude_source`` drops one source (leave-one-out).
    """
    base = _uncalibrated_catalog(catalog)
    used = [c for c in cases if c.source != exclude_source]
    fit_rows: dict[str, int] = {}
    for c in used:
        if c.metric in TIME_METRICS and c.fitted:
            fit_rows[c.engine] = fit_rows.get(c.engine, 0) + 1
    engines = sorted(e for e, n in fit_rows.items() if n >= MIN_FIT_ROWS)
    return {engine: fit_engine(base, used, engine) for engine in engines}


def _uncalibrated_catalog(catalog: Catalog) -> Catalog:
    """The catalog with every family's fitted parameters reset to the physics defaults."""
    calib = {}
    for fam, rec in catalog.calibration.items():
        params = {k: v for k, v in rec.parameters.items() if k not in FIT_PARAMETERS}
        params.update(UNCALIBRATED_PARAMETERS.get(fam, {}))
        calib[fam] = rec.model_copy(update={"parameters": params})
    return catalog.model_copy(update={"calibration": calib})


def leave_one_source_out(catalog: Catalog, cases: Sequence[Case]) -> list[ResultRow]:
    """Each source's time/throughput rows predicted under a fit that excludes that source (held out)."""
    base = _uncalibrated_catalog(catalog)
    out: list[ResultRow] = []
    for src in sorted({c.source for c in cases if c.metric in TIME_METRICS}):
        fitted = fit_calibration(catalog, cases, exclude_source=src)
        held = [c for c in cases if c.source == src and c.metric in TIME_METRICS]
        out.extend(evaluate(base, held, fitted))
    return out
