"""Deployment terms of the candidate table, evaluated once per deployment.

:func:`planner.performance.deployment_terms` reads only the catalog and (model, weight format, KV format,
GPU, TP, PP, EP, engine); the scenario's stated efficiencies (``hardware.efficiency``) depend on the GPU
alone. Workloads that serve the same model on the same engine — several workloads of one model, sweep
copies that differ in demand or SLO — therefore share one evaluation per deployment (the same frozen
DeploymentTerms object), instead of one per workload. The catalog's terms are also kept across tables
(sweep variants that change an SLO, compare's probes: :data:`MAX_KEPT` deployments of the latest catalog,
which is held so its id cannot be reused); the stated efficiencies are applied per table.
"""

from __future__ import annotations

import threading
from typing import Any

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator
from planner.head_split import head_split_problems, valid_tps
from planner.performance.terms import with_efficiency

MAX_KEPT = 50_000
"""Deployments whose catalog terms are kept across tables (all of them are dropped past this)."""
Evaluated = tuple[perf.DeploymentTerms | None, str]
"""(terms, '') of a deployment, or (None, why it cannot run)."""

_KEPT: dict[tuple[Any, ...], Evaluated] = {}
_CATALOG: list[Catalog] = []
_LOCK = threading.Lock()


def catalog_terms(
    catalog: Catalog, *, model_id: str, gpu: Accelerator, quantization: str, kv_dtype: str, tp: int, pp: int,
    ep: int, engine: str,
) -> Evaluated:
    """:func:`planner.performance.deployment_terms` of a catalog deployment, evaluated once per catalog."""
    key = (model_id, gpu.id, quantization, kv_dtype, tp, pp, ep, engine)
    with _LOCK:
        if not _CATALOG or _CATALOG[0] is not catalog:
            _KEPT.clear()
            _CATALOG[:] = [catalog]
        hit = _KEPT.get(key)
    if hit is not None:
        return hit
    model = catalog.models[model_id]
    split = head_split_problems(model.q_heads, model.kv_heads, tp, model.mla is not None)
    try:
        if split:  # the attention heads cannot be sharded TP ways (planner predict refuses it too)
            raise perf.UnsupportedDeployment(
                "; ".join(split) + f" (TP degrees that do: {valid_tps(model.q_heads, model.kv_heads, model.mla is not None)})"
            )
        hit = perf.deployment_terms(
            catalog, model=model, gpu=gpu, weight_format=catalog.formats[quantization],
            kv_format=catalog.formats[kv_dtype], tp=tp, pp=pp, engine=engine, ep=ep,
        ), ""
    except perf.UnsupportedDeployment as exc:
        hit = None, str(exc)
    with _LOCK:
        if _CATALOG and _CATALOG[0] is catalog:
            if len(_KEPT) >= MAX_KEPT:
                _KEPT.clear()
            _KEPT[key] = hit
    return hit


class TermsMemo:
    """Terms of the deployments of one table, with the scenario's stated efficiencies; each evaluated once."""

    def __init__(self, catalog: Catalog, efficiency: dict[str, Any]) -> None:
        self.catalog = catalog
        self.efficiency = efficiency
        """``hardware.efficiency`` of the scenario: GPU id → stated efficiency (pydantic model)."""
        self._done: dict[tuple[Any, ...], Evaluated] = {}

    def __call__(
        self, *, model_id: str, gpu: Accelerator, quantization: str, kv_dtype: str, tp: int, pp: int, ep: int,
        engine: str,
    ) -> Evaluated:
        key = (model_id, gpu.id, quantization, kv_dtype, tp, pp, ep, engine)
        hit = self._done.get(key)
        if hit is None:
            hit = self._done[key] = self._evaluate(model_id, gpu, quantization, kv_dtype, tp, pp, ep, engine)
        return hit

    def _evaluate(
        self, model_id: str, gpu: Accelerator, quantization: str, kv_dtype: str, tp: int, pp: int, ep: int,
        engine: str,
    ) -> Evaluated:
        terms, reason = catalog_terms(
            self.catalog, model_id=model_id, gpu=gpu, quantization=quantization, kv_dtype=kv_dtype, tp=tp, pp=pp,
            ep=ep, engine=engine,
        )
        stated = self.efficiency.get(gpu.id)
        if terms is not None and stated is not None:
            terms = with_efficiency(terms, **stated.model_dump())
        return terms, reason
