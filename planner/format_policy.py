"""Which weight formats a workload allows on a model, and the quality tier of a model's weights in a format:
one rule for the candidate table (planner.candidates), the MILP's policy rows
(constraints/quantization_policy.py) and the scenario's size check (planner.limits)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # planner.limits counts with it while planner.scenario imports planner.limits
    from planner.catalog.loader import Catalog
    from planner.scenario import Workload


def allowed_formats(catalog: Catalog, w: Workload, model_id: str) -> list[str]:
    """Weight formats ``w`` allows on ``model_id``: its ``quantizations``; when the scenario leaves them at their
    default, also the model's released format where it is quantized (under 16 bits per value: gpt-oss's MXFP4
    experts), so the checkpoint as published is planned beside the re-quantized ones (a 16-bit release is the
    default's bf16)."""
    released = catalog.models[model_id].native_format
    defaulted = "quantizations" not in w.model_fields_set
    if defaulted and released not in w.quantizations and catalog.formats[released].bits_per_value < 16:
        return [*w.quantizations, released]
    return list(w.quantizations)


def weight_quality_tier(catalog: Catalog, model_id: str, weight_format: str) -> int:
    """Quality tier of ``model_id``'s weights in ``weight_format``: 0 in the format the model is released in (its
    reference: gpt-oss trained and released with MXFP4 experts, DeepSeek-V3 in FP8), else the format's tier
    (catalogs/formats.yaml: 0 16-bit, 1 8-bit, 2 4-bit)."""
    if weight_format == catalog.models[model_id].native_format:
        return 0
    return catalog.formats[weight_format].quality_tier
