"""GPU sharing in the candidate table: TP1·PP1 configurations on a share of one GPU (planner.performance.sharing).

Only plain whole-GPU configurations (no expert parallelism, no prefix-cache or speculative variant) are
offered on a share; the scenario's stated efficiencies (``hardware.efficiency``) apply to the slice too.
One slice record is made per GPU and share and used by all its deployments: ``deployment_terms`` keeps its
per-GPU figures (efficiencies, links) by record identity (planner/performance/model_figures.py), so they are
evaluated once per slice instead of once per deployment — the same numbers."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator
from planner.performance.sharing import shared_accelerator, terms_on_share
from planner.scenario import Scenario

C = TypeVar("C")


def shared_configs(catalog: Catalog, scenario: Scenario, configs: list[C]) -> list[C]:
    """TP1·PP1 configs on a share of one GPU (``hardware.gpu_share_fracs``), evaluated on the slice the
    replica sees (planner.performance.sharing.shared_accelerator); appended after the whole-GPU configs so
    those keep their candidate ids."""
    out: list[C] = []
    done: dict[tuple[Any, ...], Any] = {}  # one slice evaluation per deployment, shared by workloads
    slices: dict[tuple[str, float], Accelerator] = {}  # one slice record per GPU and share (module docstring)
    for frac in scenario.hardware.gpu_share_fracs:
        for c in configs:
            cfg: Any = c
            if cfg.terms is None or cfg.tp * cfg.pp * cfg.ep != 1 or cfg.prefix_cache or cfg.speculative:
                continue
            key = (frac, cfg.model, cfg.gpu.id, cfg.quantization, cfg.kv_dtype, cfg.workload.engine_key)
            if key not in done:
                if (cfg.gpu.id, frac) not in slices:
                    slices[cfg.gpu.id, frac] = shared_accelerator(cfg.gpu, frac)
                done[key] = _slice_terms(catalog, scenario, cfg, frac, slices[cfg.gpu.id, frac])
            if done[key] is not None:
                out.append(dataclasses.replace(cfg, terms=done[key], share_frac=frac))
    return out


def _slice_terms(catalog: Catalog, scenario: Scenario, cfg: Any, frac: float, gpu_slice: Accelerator) -> Any:
    """The terms of ``cfg``'s deployment on a ``frac`` share of its GPU, ``gpu_slice`` (None if it cannot run
    there)."""
    stated = scenario.hardware.efficiency.get(cfg.gpu.id)
    try:
        return terms_on_share(
            catalog,
            model=catalog.models[cfg.model],
            gpu=cfg.gpu,
            share_frac=frac,
            gpu_slice=gpu_slice,
            weight_format=catalog.formats[cfg.quantization],
            kv_format=catalog.formats[cfg.kv_dtype],
            engine=cfg.workload.engine_key,
            prefill_mfu_frac=None if stated is None else stated.prefill_mfu_frac,
            decode_mbu_frac=None if stated is None else stated.decode_mbu_frac,
        )
    except perf.UnsupportedDeployment:
        return None
