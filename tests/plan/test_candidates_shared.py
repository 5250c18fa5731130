"""planner/candidates_shared.py: one slice record per GPU and share gives the terms a fresh slice per deployment
gives, and a different share or GPU gets its own slice."""

from __future__ import annotations

from planner.candidates import _perf_configs
from planner.candidates_shared import shared_configs
from planner.catalog import Catalog
from planner.performance import deployment_terms
from planner.performance.sharing import shared_accelerator, shared_terms
from planner.scenario import parse_scenario
from tests.plan.test_gpu_sharing import two_small_models


def test_shared_terms_are_those_of_a_fresh_slice_per_deployment(catalog: Catalog) -> None:
    data = two_small_models()
    data["hardware"] = {**data["hardware"], "gpu_share_fracs": [0.5, 0.25]}
    scenario = parse_scenario(data)
    gpus = [catalog.accelerators[g] for g in ("l40s", "mi300x")]
    whole = [c for c in _perf_configs(catalog, scenario, gpus)
             if c.share_frac == 1.0]
    shared = shared_configs(catalog, scenario, whole)
    assert {(c.gpu.id, c.share_frac) for c in shared} == {(g, f) for g in ("l40s", "mi300x") for f in (0.5, 0.25)}
    for cfg in shared:
        fresh = shared_terms(deployment_terms(
            catalog, model=catalog.models[cfg.model], gpu=shared_accelerator(cfg.gpu, cfg.share_frac),
            weight_format=catalog.formats[cfg.quantization], kv_format=catalog.formats[cfg.kv_dtype], tp=1, pp=1,
            engine=cfg.workload.engine,
        ), cfg.share_frac)
        assert cfg.terms == fresh  # every field, bit for bit
    by_share = {(c.gpu.id, c.share_frac, c.model): c.terms for c in shared}
    half, quarter = by_share["l40s", 0.5, "qwen3_8b"], by_share["l40s", 0.25, "qwen3_8b"]
    assert quarter.bandwidth_gb_per_s == half.bandwidth_gb_per_s / 2  # its own slice
    assert by_share["mi300x", 0.5, "qwen3_8b"].bandwidth_gb_per_s != half.bandwidth_gb_per_s
