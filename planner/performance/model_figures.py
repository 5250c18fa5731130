"""Per-(model, formats) figures of :func:`planner.performance.terms.deployment_terms`, evaluated once each.

A candidate table asks ``deployment_terms`` for every model × weight format × KV format × GPU × TP × PP × EP ×
engine (about 8,000 deployments for five workloads over the full catalog), but its byte and FLOP figures —
weight bytes, the streamed fixed part, one expert's bytes and FLOPs, KV bytes per token per layer, linear,
LM-head and attention FLOPs — read only the model and the two formats (architecture ledger, card 2). They
are kept here per (model, weight format, KV format, high-precision bytes), keyed by the identity of the
frozen catalog records (held with the figures, so an id cannot be reused while its entry lives); the GPU's
efficiency terms likewise per (calibration parameters' values, GPU record, weight-only flag), and the busiest
pipeline stage's shares per (model, weight format, PP). A kept value is the one the ledgers returned for the same
records: the same numbers, computed once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from planner.catalog.schema import Accelerator, Model, NumericFormat
from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff

MAX_KEPT = 4096
"""Entries kept per memo (all are dropped past this)."""


@dataclass(frozen=True)
class ModelFigures:
    """The model- and format-only figures of a deployment's terms (B, FLOP)."""

    weights_bytes: float
    weights_read_fixed_bytes: float
    """M_W − embedding bytes (unless tied) − L_moe·E·M_e: the part every pass streams whole."""
    expert_bytes: float
    kv_bytes_per_token_per_layer: float
    linear_flop_per_token: float
    lm_head_flop_per_token: float
    attention_flop_per_pair_per_layer: float
    expert_flop_per_token: float


_FIGURES: dict[tuple[int, int, int, float], tuple[Model, NumericFormat, NumericFormat, ModelFigures]] = {}
_EFFICIENCY: dict[tuple[Any, int, bool], tuple[Accelerator, eff.EfficiencyTerms]] = {}
_STAGES: dict[tuple[int, int, int, float], tuple[Model, NumericFormat, tuple[float, float]]] = {}
_LOCK = threading.Lock()


def _figures(model: Model, weight_format: NumericFormat, kv_format: NumericFormat, hp: float) -> ModelFigures:
    per_kind = arch.bytes_per_param_by_kind(weight_format, high_precision_bytes_per_value=hp)
    pb = arch.param_breakdown(model)
    expert_bytes = arch.expert_params(model) * per_kind["expert"]
    moe = model.moe
    weights = arch.weights_bytes(model, weight_format, high_precision_bytes_per_value=hp)
    embedding_bytes = 0.0 if model.tied_embeddings else pb.embedding * per_kind["embedding"]
    experts_routed = moe.experts_routed if moe else 1
    moe_layers = moe.moe_layers if moe else 0
    return ModelFigures(
        weights_bytes=weights,
        weights_read_fixed_bytes=weights - embedding_bytes - moe_layers * experts_routed * expert_bytes,
        expert_bytes=expert_bytes,
        kv_bytes_per_token_per_layer=arch.kv_bytes_per_token_per_layer(
            model, kv_bytes_per_value=kv_format.bytes_per_value
        ),
        linear_flop_per_token=arch.linear_flop_per_token(model),
        lm_head_flop_per_token=arch.lm_head_flop_per_token(model),
        attention_flop_per_pair_per_layer=arch.attention_flop_per_pair_per_layer(model),
        expert_flop_per_token=2.0 * (moe.moe_layers * moe.experts_per_token if moe else 0) * arch.expert_params(model),
    )


def model_figures(
    model: Model, weight_format: NumericFormat, kv_format: NumericFormat, *, high_precision_bytes_per_value: float
) -> ModelFigures:
    """:class:`ModelFigures` of ``model`` with weights in ``weight_format`` (exempt kinds at
    ``high_precision_bytes_per_value``) and KV in ``kv_format``, evaluated once per records (module docstring)."""
    key = (id(model), id(weight_format), id(kv_format), float(high_precision_bytes_per_value))
    with _LOCK:
        hit = _FIGURES.get(key)
    if hit is not None and hit[0] is model and hit[1] is weight_format and hit[2] is kv_format:
        return hit[3]
    figures = _figures(model, weight_format, kv_format, high_precision_bytes_per_value)
    with _LOCK:
        if len(_FIGURES) >= MAX_KEPT:
            _FIGURES.clear()
        _FIGURES[key] = (model, weight_format, kv_format, figures)
    return figures


def calibrated_efficiency(parameters: Any, gpu: Accelerator, *, weight_only: bool) -> eff.EfficiencyTerms:
    """:func:`planner.ledgers.efficiency.calibrated_efficiency_terms` of ``gpu``'s sourced defaults and its
    family's calibration ``parameters`` (a name → value mapping, keyed by its items), evaluated once per
    (parameters, GPU record, weight-only flag)."""
    key = (tuple(sorted(parameters.items())), id(gpu), bool(weight_only))
    with _LOCK:
        hit = _EFFICIENCY.get(key)
    if hit is not None and hit[0] is gpu:
        return hit[1]
    terms = eff.calibrated_efficiency_terms(
        parameters,
        decode_mbu_frac=gpu.efficiency.decode_mbu_frac,
        prefill_mfu_frac=gpu.efficiency.prefill_mfu_frac,
        link_efficiency_frac=gpu.efficiency.link_efficiency_frac,
        weight_only=weight_only,
    )
    with _LOCK:
        if len(_EFFICIENCY) >= MAX_KEPT:
            _EFFICIENCY.clear()
        _EFFICIENCY[key] = (gpu, terms)
    return terms


def busiest_stage_shares(
    model: Model, weight_format: NumericFormat, pp: int, *, high_precision_bytes_per_value: float
) -> tuple[float, float]:
    """:func:`planner.ledgers.architecture.busiest_pipeline_stage` of ``model`` in ``weight_format`` over ``pp``
    stages (its weights' and layers' shares on the busiest stage), evaluated once per (records, pp): it reads
    neither the GPU nor the engine."""
    if pp <= 1:
        return 1.0, 1.0
    key = (id(model), id(weight_format), int(pp), float(high_precision_bytes_per_value))
    with _LOCK:
        hit = _STAGES.get(key)
    if hit is not None and hit[0] is model and hit[1] is weight_format:
        return hit[2]
    shares = arch.busiest_pipeline_stage(
        model, weight_format, pp, high_precision_bytes_per_value=high_precision_bytes_per_value
    )
    with _LOCK:
        if len(_STAGES) >= MAX_KEPT:
            _STAGES.clear()
        _STAGES[key] = (model, weight_format, shares)
    return shares
