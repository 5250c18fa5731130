"""The MoE terms of a deployed MoE candidate for the plan JSON: expert groups, attention DP, experts touched,
rows per expert, expert GEMM efficiency, load imbalance and the all-to-all of its decode step
(:func:`planner.performance.moe.explain_terms`, the figures ``planner predict --explain`` prints)."""

from __future__ import annotations

from typing import Any

from planner.candidate_terms import catalog_terms
from planner.catalog.loader import Catalog
from planner.performance.moe import explain_terms
from planner.performance.terms import DeploymentTerms


def deployment_moe_terms(catalog: Catalog, cand: Any, batch: float) -> dict[str, float] | None:
    """MoE terms of one candidate row's decode step at ``batch`` running sequences, as ``planner predict``
    reports them; None for dense models and deployments whose terms cannot be evaluated.

    The catalog's efficiencies (not a scenario's stated MFU/MBU): the terms are routing and layout figures,
    and only ``expert_gemm_efficiency_frac`` reads an efficiency.
    """
    if catalog.models[str(cand["model"])].moe is None:
        return None
    terms, _why = catalog_terms(
        catalog, model_id=str(cand["model"]), gpu=catalog.accelerators[str(cand["gpu"])],
        quantization=str(cand["quantization"]), kv_dtype=str(cand["kv_dtype"]), tp=int(cand["tp"]),
        pp=int(cand["pp"]), ep=int(cand.get("ep", 1)), engine=str(cand.get("engine", "vllm")),
    )
    return None if terms is None else moe_terms_at(terms, batch)


def moe_terms_at(terms: DeploymentTerms, batch: float) -> dict[str, float] | None:
    """:func:`planner.performance.moe.explain_terms` at ``batch`` running sequences, rounded to 6 decimals (the
    plan JSON stays byte-stable); None for a dense model."""
    return {k: round(v, 6) for k, v in explain_terms(terms, tokens=batch).items()} or None
