"""Validation cases: what one measurement row predicts, and the helpers that turn rows into cases.

The per-source readers are in :mod:`planner.validate.sources`.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, NumericFormat
from planner.errors import InputError
from planner.units import BYTES_PER_GIB
from planner.validate.names import FORMAT_IDS, GPU_IDS, MODEL_IDS

MEASUREMENTS_ENV = "PLANNER_MEASUREMENTS_DIR"
MAX_OFFLINE_BATCH = 512
"""Batch cap for offline max-throughput runs (engines schedule at most a few hundred sequences)."""
WORKSPACE_GIB = 2.0
"""Activation workspace per GPU, GiB (the ``planner predict`` default)."""
MLENERGY_INPUT_TOKENS = 256.0
"""Assumed mean prompt length of the ML.ENERGY runs (prompt lengths are not recorded) [U]."""
EDGE_PROMPT_TOKENS = 512.0
"""Prompt length of llama.cpp ``pp512`` (also used when the test is not stated)."""
EDGE_GENERATION_TOKENS = 128.0
"""Generated tokens when the test is not stated (llama-bench tg128)."""

METRICS = ("ttft_or_prefill", "tpot_itl", "throughput", "memory", "allreduce_busbw", "allreduce_us")
TIME_METRICS = ("ttft_or_prefill", "tpot_itl", "throughput")


@dataclass(frozen=True)
class Case:
    """One prediction target: a catalog configuration, the quantity to predict and the measured value."""

    source: str
    metric: str
    label: str
    measured: float
    family: str
    gpu: Accelerator | None
    weight_format: NumericFormat | None
    terms: perf.DeploymentTerms | None
    batch: float = 1.0
    prompt_tokens: float = 0.0
    output_tokens: float = 0.0
    context_tokens: float = 0.0
    note: str = ""
    fixed_prediction: float | None = None
    """Predictions that no efficiency parameter changes (memory, all-reduce), computed once."""
    serving: bool = False
    """ITL of a continuous-batching serving run: B / throughput (decode steps stretched by prefills)."""
    fitted: bool = True
    """Whether the row enters the calibration fit (it is always validated)."""
    requests_per_s: float = 0.0
    """Open-loop serving row at this Poisson rate (inf = offline burst); 0 = not a load row."""
    concurrency: float = 0.0
    """Closed-loop serving row with this many clients; 0 = not a closed-loop row."""
    engine: str = ""
    """Serving engine the row ran (catalogs/engines.yaml id): the calibration group."""
    percentile: float | None = None
    """The statistic a load row's TTFT or TPOT reports: None the mean, 50 the median (predicted as such by
    planner.performance.tail, the plan's percentile SLOs' own formulas)."""


@dataclass(frozen=True)
class Skipped:
    """A measurement row that is not predicted, with the reason."""

    source: str
    label: str
    reason: str


def measurements_dir() -> Path:
    """``$PLANNER_MEASUREMENTS_DIR`` or ``<repo parent>/shared/reference/measurements``."""
    env = os.environ.get(MEASUREMENTS_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "reference" / "measurements"


def _read_csv(directory: Path, name: str) -> list[dict[str, str]]:
    path = directory / name
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _num(row: Mapping[str, str], key: str) -> float | None:
    value = (row.get(key) or "").strip()
    return float(value) if value else None


class _Builder:
    """Turns measurement rows into cases, collecting skipped rows."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.cases: list[Case] = []
        self.skipped: list[Skipped] = []

    def skip(self, source: str, label: str, reason: str) -> None:
        self.skipped.append(Skipped(source, label, reason))

    def terms(
        self,
        source: str,
        label: str,
        *,
        model: str,
        gpu: str,
        quant: str,
        engine: str,
        kv: str | None = None,
        tp: int = 1,
        ep: int = 1,
        ep_in_tp: bool = False,
    ) -> tuple[Accelerator, NumericFormat, perf.DeploymentTerms, str] | None:
        """Deployment terms of a measurement configuration, or None (row skipped) if it is not in the catalog
        (``ep``/``ep_in_tp``: :func:`planner.performance.deployment_terms`)."""
        if gpu not in GPU_IDS or GPU_IDS[gpu] is None:
            self.skip(source, label, f"GPU '{gpu}' is not in the catalog")
            return None
        if model not in MODEL_IDS or MODEL_IDS[model] is None:
            self.skip(source, label, f"model '{model}' is not in the catalog")
            return None
        if quant not in FORMAT_IDS:
            self.skip(source, label, f"quantisation '{quant}' has no catalog format")
            return None
        acc = self.catalog.gpu(str(GPU_IDS[gpu]))
        wfmt = self.catalog.format(FORMAT_IDS[quant])
        kfmt = self.catalog.format(kv or _default_kv_format(wfmt))
        try:
            t = perf.deployment_terms(
                self.catalog,
                model=self.catalog.model(str(MODEL_IDS[model])),
                gpu=acc,
                weight_format=wfmt,
                kv_format=kfmt,
                tp=tp,
                engine=engine,
                ep=ep,
                ep_in_tp=ep_in_tp,
            )
        except InputError as exc:
            self.skip(source, label, f"not a supported deployment: {exc}")
            return None
        return acc, wfmt, t, engine

    def add(self, source: str, metric: str, label: str, measured: float | None, cfg: Any, **kw: Any) -> None:
        if measured is None or measured <= 0:
            return
        acc, wfmt, t, engine = cfg
        self.cases.append(
            Case(
                source=source,
                metric=metric,
                label=label,
                measured=measured,
                family=acc.family,
                gpu=acc,
                weight_format=wfmt,
                terms=t,
                engine=engine,
                **kw,
            )
        )


def _default_kv_format(wfmt: NumericFormat) -> str:
    # Engines that run FP8/FP4 weights keep an FP8 KV cache; weight-only formats keep a BF16 cache.
    if wfmt.id in ("fp8", "nvfp4", "mxfp4"):
        return "fp8"
    return "fp16" if wfmt.id == "fp16" else "bf16"


def _fitting_batch(terms: perf.DeploymentTerms, *, context_tokens: float, cap: float) -> float:
    """Sequences a replica holds at ``context_tokens``: the KV room of the terms' engine
    (planner.performance.memory.kv_room_bytes, the plan's own) with the default workspace, at most ``cap``, ≥ 1."""
    fits = float(perf.max_batch(terms, context_tokens=context_tokens, workspace_bytes=WORKSPACE_GIB * BYTES_PER_GIB))
    return max(min(fits, cap), 1.0)
