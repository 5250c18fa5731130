"""Deployment terms of the candidate table, evaluated once per deployment.

:func:`planner.performance.deployment_terms` reads only the catalog and (model, weight format, KV format,
GPU, TP, PP, EP, engine); the scenario's stated efficiencies (``hardware.efficiency``) depend on the GPU
alone. Workloads that serve the same model on the same engine — several workloads of one model, sweep
copies that differ in demand or SLO — therefore share one evaluation per deployment (the same frozen
DeploymentTerms object), instead of one per workload.
"""

from __future__ import annotations

from typing import Any

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator
from planner.performance.terms import with_efficiency


class TermsMemo:
    """(terms, '') of a deployment, or (None, why it cannot run); each deployment evaluated once."""

    def __init__(self, catalog: Catalog, efficiency: dict[str, Any]) -> None:
        self.catalog = catalog
        self.efficiency = efficiency
        """``hardware.efficiency`` of the scenario: GPU id → stated efficiency (pydantic model)."""
        self._done: dict[tuple[Any, ...], tuple[perf.DeploymentTerms | None, str]] = {}

    def __call__(
        self, *, model_id: str, gpu: Accelerator, quantization: str, kv_dtype: str, tp: int, pp: int, ep: int,
        engine: str,
    ) -> tuple[perf.DeploymentTerms | None, str]:
        key = (model_id, gpu.id, quantization, kv_dtype, tp, pp, ep, engine)
        hit = self._done.get(key)
        if hit is None:
            hit = self._done[key] = self._evaluate(model_id, gpu, quantization, kv_dtype, tp, pp, ep, engine)
        return hit

    def _evaluate(
        self, model_id: str, gpu: Accelerator, quantization: str, kv_dtype: str, tp: int, pp: int, ep: int,
        engine: str,
    ) -> tuple[perf.DeploymentTerms | None, str]:
        catalog = self.catalog
        try:
            terms = perf.deployment_terms(
                catalog, model=catalog.models[model_id], gpu=gpu, weight_format=catalog.formats[quantization],
                kv_format=catalog.formats[kv_dtype], tp=tp, pp=pp, engine=engine, ep=ep,
            )
        except perf.UnsupportedDeployment as exc:
            return None, str(exc)
        stated = self.efficiency.get(gpu.id)
        if stated is not None:
            terms = with_efficiency(terms, **stated.model_dump())
        return terms, ""
