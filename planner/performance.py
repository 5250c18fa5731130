"""The performance model: one deployment (model, format, GPU, TP, PP) → memory, TTFT, TPOT, throughput.

This module composes the ledgers (cards 1, 2, 5, 6, 8) with catalog data and the calibrated efficiency
terms. It is the single code path used by ``planner predict``, by the candidate table of ``planner plan``,
by the plan audit and by ``make validate``.

Two steps:

1. :func:`deployment_terms` turns catalog records into a flat :class:`DeploymentTerms` of floats (bytes,
   FLOPs, peaks, link figures, efficiencies). Nothing else reads the catalog.
2. The time/memory functions (:func:`decode_step`, :func:`prefill_step`, :func:`memory_per_gpu_bytes`, ...)
   are plain arithmetic over those terms and a batch / context, so they accept numpy arrays: the candidate
   table evaluates all candidates × batch breakpoints at once by building a DeploymentTerms of columns.

Decode step of B sequences at history H, TP degree t, PP degree p (B split into p micro-batches):

    T_step = T_overhead + p·[max(T_linear, T_weights) + max(T_attn, T_kv) + T_tp_comm] + (p − 1)·T_pp
    T_linear = F_lin(B/p) / (t·p) / (Π·η_c)             T_weights = R_W(B/p) / (t·p) / (β·η_m)
    T_attn = F_attn(B/p, H) / (t·p) / (Π·η_c)           T_kv = (B/p)·c_KV(H) / (s_kv·p) / (β·η_m)
    T_tp_comm = 2·(L/p)·[2(t − 1)·α + 2(t − 1)·M/(t·B_link·η_link)],  M = (B/p)·d·2 B

with s_kv = min(t, n_KV) KV shards (MLA latents are replicated over TP). The linear layers and attention
are serially dependent operator groups, each bound by its own roofline (card 7), so their times add; the
all-reduce start-up 2(t − 1)·α is the in-node NCCL small-message latency (``tp_latency`` in the
breakdown; planner/ledgers/communication.py allreduce_startup_s). Prefill of P tokens:

    T_prefill = T_overhead + max(F_lin(P)/(t·Π·η_p(P)), M_W/(t·β·η_m)) + max(F_attn(P)/(t·Π·η_p(P)), KV_write)
                + 2L·T_allreduce(P·d·2 B, t) + (p − 1)·T_pp

References: cards 1 (step bounds), 2 (bytes and FLOPs), 5 (roofline), 6 (ring/tree all-reduce), 8 (TP ledger).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Interconnect, Model, NumericFormat
from planner.errors import InputError, did_you_mean
from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff
from planner.ledgers import operators as ops
from planner.ledgers.communication import allreduce_startup_s, tp_allreduce_s, transfer_s
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, FLOP_PER_TFLOP

ACTIVATION_BYTES = 2.0
"""Activations travel between TP ranks and PP stages in BF16 (2 B per value)."""

Num = Any  # float or numpy array: every function below is plain arithmetic over its inputs


@dataclass(frozen=True)
class DeploymentTerms:
    """Flat numeric description of one deployment (floats, or numpy columns for the candidate table).

    Byte and FLOP figures are for the whole replica; the step functions divide by t·p.
    """

    tp: Num
    pp: Num
    layers: Num
    hidden_size: Num
    # bytes
    weights_bytes: Num
    weights_read_fixed_bytes: Num
    """Streamed weight bytes that every decode step reads (everything but the embedding and routed experts)."""
    expert_bytes: Num
    """Bytes of one routed expert (0 for dense models)."""
    moe_layers: Num
    experts_routed: Num
    experts_per_token: Num
    kv_bytes_per_token_per_layer: Num
    full_attention_layers: Num
    window_layers: Num
    window_tokens: Num
    kv_shards: Num
    # FLOPs
    linear_flop_per_token: Num
    lm_head_flop_per_token: Num
    attention_flop_per_pair_per_layer: Num
    # hardware
    memory_capacity_bytes: Num
    peak_tflops: Num
    bandwidth_gb_per_s: Num
    tp_link_gb_per_s: Num
    tp_link_latency_us: Num
    pp_link_gb_per_s: Num
    pp_link_latency_us: Num
    # efficiencies (1.0 and 0 overhead when ideal)
    efficiency: eff.EfficiencyTerms = field(default_factory=eff.EfficiencyTerms.ideal)

    def as_dict(self) -> dict[str, Any]:
        """Field values by name (efficiency terms flattened with an ``eff_`` prefix)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "efficiency"}
        out.update({f"eff_{k}": v for k, v in self.efficiency.as_dict().items()})
        return out


# --------------------------------------------------------------------------------------------------
# Catalog -> terms
# --------------------------------------------------------------------------------------------------


class UnsupportedDeployment(InputError):
    """The configuration cannot run at all (format not supported, TP too large for the fabric, ...)."""


@dataclass(frozen=True)
class Links:
    """The links a TP group and a PP chain use."""

    tp: Interconnect | None
    pp: Interconnect | None


def group_links(catalog: Catalog, gpu: Accelerator, *, tp: int, pp: int) -> Links:
    """Pick the TP and PP links: scale-up inside its domain, host link inside a node, scale-out across nodes.

    Raises UnsupportedDeployment when a group must span nodes and the GPU has no scale-out fabric.
    A TP group never spans nodes when a scale-out link is missing; with one, it uses that link (slow).
    """

    def link_for(group_gpus: int, what: str) -> Interconnect | None:
        if group_gpus <= 1:
            return None
        if gpu.scale_up is not None and group_gpus <= gpu.scale_up_domain_gpus:
            return catalog.interconnect(gpu.scale_up)
        if group_gpus <= gpu.gpus_per_node:
            return catalog.interconnect(gpu.host_link)
        if gpu.scale_out is None:
            raise UnsupportedDeployment(
                f"{what} of {group_gpus} GPUs exceeds the {gpu.gpus_per_node} GPUs per {gpu.id} node "
                "and the node has no multi-node link"
            )
        return catalog.interconnect(gpu.scale_out)

    tp_link = link_for(tp, f"TP{tp} group")
    pp_link = link_for(tp * pp, f"TP{tp}xPP{pp} replica") if pp > 1 else None
    return Links(tp=tp_link, pp=pp_link)


def compute_peak_tflops(gpu: Accelerator, fmt: NumericFormat) -> float:
    """Dense peak used for matmuls stored in ``fmt``: the format's compute peak, else BF16 (card 5)."""
    return gpu.dense_tflops.get(fmt.compute_format) or gpu.dense_tflops["bf16"]


def check_format_supported(gpu: Accelerator, fmt: NumericFormat, *, role: str) -> None:
    """Raise UnsupportedDeployment unless ``fmt`` runs natively on ``gpu``."""
    if fmt.id not in gpu.native_formats:
        raise UnsupportedDeployment(
            f"{role} format {fmt.id} is not supported natively on {gpu.id} (supported: {', '.join(gpu.native_formats)})"
        )


def efficiency_terms(catalog: Catalog, gpu: Accelerator, weight_format: NumericFormat) -> eff.EfficiencyTerms:
    """Efficiency terms of ``gpu`` running weights in ``weight_format``.

    MBU, prefill MFU and link efficiency come from the accelerator's sourced defaults; overhead, prefill
    saturation, de-quantizing kernel and paging parameters from the calibration record of its family.
    """
    return eff.calibrated_efficiency_terms(
        catalog.calibration[gpu.family].parameters,
        decode_mbu_frac=gpu.efficiency.decode_mbu_frac,
        prefill_mfu_frac=gpu.efficiency.prefill_mfu_frac,
        link_efficiency_frac=gpu.efficiency.link_efficiency_frac,
        weight_only=weight_format.weight_only,
    )


def deployment_terms(
    catalog: Catalog,
    *,
    model: Model,
    gpu: Accelerator,
    weight_format: NumericFormat,
    kv_format: NumericFormat,
    tp: int = 1,
    pp: int = 1,
    ideal: bool = False,
) -> DeploymentTerms:
    """Evaluate the architecture ledgers and catalog figures of one deployment into DeploymentTerms.

    Raises UnsupportedDeployment for configurations that cannot run (format, fabric, layer split).
    """
    if tp < 1 or pp < 1:
        raise InputError("tp and pp must be >= 1")
    check_format_supported(gpu, weight_format, role="weight")
    check_format_supported(gpu, kv_format, role="KV")
    if not kv_format.kv_cache:
        raise UnsupportedDeployment(f"format {kv_format.id} cannot hold the KV cache")
    if pp > model.layers:
        raise UnsupportedDeployment(f"PP{pp} exceeds the {model.layers} layers of {model.id}")
    links = group_links(catalog, gpu, tp=tp, pp=pp)
    hp = catalog.format(weight_format.high_precision).bytes_per_value
    per_kind = arch.bytes_per_param_by_kind(weight_format, high_precision_bytes_per_value=hp)
    pb = arch.param_breakdown(model)
    expert_bytes = arch.expert_params(model) * per_kind["expert"]
    moe = model.moe
    weights = arch.weights_bytes(model, weight_format, high_precision_bytes_per_value=hp)
    embedding_bytes = 0.0 if model.tied_embeddings else pb.embedding * per_kind["embedding"]
    experts_routed = moe.experts_routed if moe else 1
    moe_layers = moe.moe_layers if moe else 0
    fixed_read = weights - embedding_bytes - moe_layers * experts_routed * expert_bytes
    kv_shards = 1 if model.mla is not None else min(tp, model.kv_heads)
    efficiency = eff.EfficiencyTerms.ideal() if ideal else efficiency_terms(catalog, gpu, weight_format)
    return DeploymentTerms(
        tp=tp,
        pp=pp,
        layers=model.layers,
        hidden_size=model.hidden_size,
        weights_bytes=weights,
        weights_read_fixed_bytes=fixed_read,
        expert_bytes=expert_bytes,
        moe_layers=moe_layers,
        experts_routed=experts_routed,
        experts_per_token=moe.experts_per_token if moe else 1,
        kv_bytes_per_token_per_layer=arch.kv_bytes_per_token_per_layer(
            model, kv_bytes_per_value=kv_format.bytes_per_value
        ),
        full_attention_layers=model.layers - model.sliding_window_layers,
        window_layers=model.sliding_window_layers,
        window_tokens=model.sliding_window_tokens or 0,
        kv_shards=kv_shards,
        linear_flop_per_token=arch.linear_flop_per_token(model),
        lm_head_flop_per_token=arch.lm_head_flop_per_token(model),
        attention_flop_per_pair_per_layer=arch.attention_flop_per_pair_per_layer(model),
        memory_capacity_bytes=gpu.memory_gb * BYTES_PER_GB,
        peak_tflops=compute_peak_tflops(gpu, weight_format),
        bandwidth_gb_per_s=gpu.memory_bandwidth_gb_per_s,
        tp_link_gb_per_s=links.tp.gb_per_s_per_direction if links.tp else 1.0,
        tp_link_latency_us=links.tp.latency_us if links.tp else 0.0,
        pp_link_gb_per_s=links.pp.gb_per_s_per_direction if links.pp else 1.0,
        pp_link_latency_us=links.pp.latency_us if links.pp else 0.0,
        efficiency=efficiency,
    )


# --------------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------------


def _min(a: Num, b: Num) -> Num:
    return (a + b - abs(a - b)) / 2


def kv_bytes_per_sequence(terms: DeploymentTerms, context_tokens: Num) -> Num:
    """KV bytes one sequence holds at ``context_tokens`` (windowed layers keep at most the window), B."""
    held = terms.full_attention_layers * context_tokens + terms.window_layers * _min(
        context_tokens, terms.window_tokens
    )
    return terms.kv_bytes_per_token_per_layer * held


def kv_bytes_per_gpu(terms: DeploymentTerms, *, batch: Num, context_tokens: Num) -> Num:
    """KV bytes on one GPU: B·c(H) / (s_kv·p) (KV heads split over TP up to n_KV; layers over PP), B (card 8)."""
    return (
        batch
        * kv_bytes_per_sequence(terms, context_tokens)
        * eff.kv_paging_factor(terms.efficiency, context_tokens)
        / (terms.kv_shards * terms.pp)
    )


def weights_bytes_per_gpu(terms: DeploymentTerms) -> Num:
    """Weight bytes on one GPU: M_W / (t·p), B (card 8, TP/PP sharding)."""
    return terms.weights_bytes / (terms.tp * terms.pp)


def memory_per_gpu_bytes(
    terms: DeploymentTerms, *, batch: Num, context_tokens: Num, workspace_bytes: float
) -> Num:
    """Resident bytes per GPU: weights + KV + workspace (card 1 capacity rule)."""
    return (
        weights_bytes_per_gpu(terms)
        + kv_bytes_per_gpu(terms, batch=batch, context_tokens=context_tokens)
        + workspace_bytes
    )


def max_batch(terms: DeploymentTerms, *, context_tokens: Num, workspace_bytes: float) -> Num:
    """Largest batch whose KV fits next to the weights and workspace: floor(room / KV per sequence per GPU).

    Returns 0 where even the weights do not fit. Works on numpy arrays.
    """
    room = terms.memory_capacity_bytes - weights_bytes_per_gpu(terms) - workspace_bytes
    per_seq = kv_bytes_per_gpu(terms, batch=1.0, context_tokens=context_tokens)
    return np.maximum(np.floor(room / per_seq), 0.0)


# --------------------------------------------------------------------------------------------------
# Time
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepBreakdown:
    """Terms of one step (seconds), each already divided by its efficiency; ``total_s`` combines them."""

    weights_read_s: Num
    kv_read_s: Num
    compute_s: Num
    attention_compute_s: Num
    """Part of ``compute_s`` spent on attention (grows with context)."""
    tp_comm_s: Num
    pp_comm_s: Num
    overhead_s: Num
    total_s: Num
    read_bytes_per_gpu: Num
    flop_per_gpu: Num
    linear_ops_s: Num
    """Linear layers (projections, FFN/experts, LM head): max(their compute, the weight stream)."""
    attention_ops_s: Num
    """Attention: max(its compute, the KV read or write); runs after the projections, so it adds (card 7)."""
    tp_latency_s: Num
    """Start-up part 2(t − 1)·α of the TP all-reduces (included in ``tp_comm_s``)."""

    def bound(self) -> Num:
        """Dominant resource: 'memory', 'compute' or 'communication' (arrays give an object array)."""
        memory = self.weights_read_s + self.kv_read_s
        comm = self.tp_comm_s + self.pp_comm_s
        return np.where(
            (comm > memory) & (comm > self.compute_s),
            "communication",
            np.where(self.compute_s > memory, "compute", "memory"),
        )


def experts_touched(terms: DeploymentTerms, tokens: Num) -> Num:
    """Expected distinct routed experts a step with ``tokens`` tokens reads, per MoE layer (card 2)."""
    return arch.expected_experts_touched(
        tokens, experts=terms.experts_routed, experts_per_token=terms.experts_per_token
    )


def weights_read_bytes(terms: DeploymentTerms, tokens: Num) -> Num:
    """Weight bytes one pass over ``tokens`` tokens streams: fixed part + expert union (cards 1, 2), B."""
    return (
        terms.weights_read_fixed_bytes
        + terms.moe_layers * experts_touched(terms, tokens) * terms.expert_bytes
    )


def _tp_allreduce_s(terms: DeploymentTerms, message_bytes: Num) -> Num:
    ranks = terms.tp
    link_gb_per_s = terms.tp_link_gb_per_s * terms.efficiency.link_efficiency_frac
    t = tp_allreduce_s(
        message_bytes, ranks=ranks, bandwidth_gb_per_s=link_gb_per_s, latency_us=terms.tp_link_latency_us
    )
    return np.where(ranks > 1, t, 0.0)


def _tp_allreduce_startup_s(terms: DeploymentTerms) -> Num:
    """Start-up part 2(t − 1)·α of one TP all-reduce (the small-message NCCL latency), s."""
    return np.where(terms.tp > 1, allreduce_startup_s(terms.tp, latency_us=terms.tp_link_latency_us), 0.0)


def _pp_transfer_s(terms: DeploymentTerms, message_bytes: Num) -> Num:
    t = transfer_s(
        message_bytes, bandwidth_gb_per_s=terms.pp_link_gb_per_s, latency_us=terms.pp_link_latency_us
    )
    return (terms.pp - 1) * t


def decode_step(terms: DeploymentTerms, *, batch: Num, context_tokens: Num) -> StepBreakdown:
    """One decode step of ``batch`` sequences at history ``context_tokens`` (see the module docstring)."""
    e = terms.efficiency
    t, p = terms.tp, terms.pp
    micro = batch / p
    window_ctx = _min(context_tokens, terms.window_tokens)
    attn_flop = (
        terms.attention_flop_per_pair_per_layer
        * micro
        * (terms.full_attention_layers * context_tokens + terms.window_layers * window_ctx)
    )
    flop = micro * (terms.linear_flop_per_token + terms.lm_head_flop_per_token) + attn_flop
    flop_per_gpu = flop / (t * p)
    mfu = eff.decode_compute_efficiency_frac(e, micro)
    compute_s = flop_per_gpu / (terms.peak_tflops * FLOP_PER_TFLOP * mfu)
    attention_s = attn_flop / (t * p) / (terms.peak_tflops * FLOP_PER_TFLOP * mfu)
    mbu = eff.decode_bandwidth_efficiency_frac(e, batch)
    w_bytes = weights_read_bytes(terms, micro) / (t * p)
    kv_bytes = kv_bytes_per_gpu(terms, batch=micro, context_tokens=context_tokens) / eff.kv_paging_factor(
        e, context_tokens
    )
    bw = terms.bandwidth_gb_per_s * BYTES_PER_GB * mbu
    weights_s = w_bytes / (bw * e.weight_read_efficiency_frac)
    kv_s = kv_bytes / bw
    allreduces = 2 * (terms.layers / p)
    tp_comm = allreduces * _tp_allreduce_s(terms, micro * terms.hidden_size * ACTIVATION_BYTES)
    pp_comm = _pp_transfer_s(terms, micro * terms.hidden_size * ACTIVATION_BYTES)
    overhead = e.step_overhead_s
    # serially dependent groups add (ops.operator_sequence_s); each is kept for the breakdown
    linear_ops = ops.operator_stage_s(compute_s - attention_s, weights_s)
    attention_ops = ops.operator_stage_s(attention_s, kv_s)
    total = overhead + p * (linear_ops + attention_ops + tp_comm) + pp_comm
    return StepBreakdown(
        weights_read_s=p * weights_s,
        kv_read_s=p * kv_s,
        compute_s=p * compute_s,
        attention_compute_s=p * attention_s,
        tp_comm_s=p * tp_comm,
        pp_comm_s=pp_comm,
        overhead_s=overhead + 0 * total,
        total_s=total,
        read_bytes_per_gpu=w_bytes + kv_bytes,
        flop_per_gpu=flop_per_gpu,
        linear_ops_s=p * linear_ops,
        attention_ops_s=p * attention_ops,
        tp_latency_s=p * allreduces * _tp_allreduce_startup_s(terms) + 0 * total,
    )


def prefill_step(
    terms: DeploymentTerms, *, prompt_tokens: Num, cached_tokens: Num = 0.0, batch: Num = 1.0
) -> StepBreakdown:
    """Prefill of ``batch`` prompts of ``prompt_tokens`` new tokens after ``cached_tokens`` (module docstring)."""
    e = terms.efficiency
    t, p = terms.tp, terms.pp
    tokens = batch * prompt_tokens
    pairs = arch.attention_pairs(prompt_tokens, cached_tokens=cached_tokens, batch=batch)
    windowed = _min(pairs, batch * prompt_tokens * terms.window_tokens)
    attn_flop = terms.attention_flop_per_pair_per_layer * (
        terms.full_attention_layers * pairs + terms.window_layers * windowed
    )
    flop = tokens * terms.linear_flop_per_token + batch * terms.lm_head_flop_per_token + attn_flop
    mfu = eff.prefill_compute_efficiency_frac(e, tokens)
    peak = terms.peak_tflops * FLOP_PER_TFLOP * mfu
    compute_s = flop / t / peak
    attention_s = attn_flop / t / peak
    bw = terms.bandwidth_gb_per_s * BYTES_PER_GB * eff.decode_bandwidth_efficiency_frac(e, tokens)
    w_bytes = weights_read_bytes(terms, tokens) / t
    weights_s = w_bytes / (bw * e.weight_read_efficiency_frac)
    kv_write_s = kv_bytes_per_gpu(terms, batch=batch, context_tokens=prompt_tokens) * p / bw
    allreduces = 2 * terms.layers
    tp_comm = allreduces * _tp_allreduce_s(terms, tokens * terms.hidden_size * ACTIVATION_BYTES)
    pp_comm = _pp_transfer_s(terms, tokens * terms.hidden_size * ACTIVATION_BYTES)
    overhead = e.step_overhead_s
    linear_ops = ops.operator_stage_s(compute_s - attention_s, weights_s)
    attention_ops = ops.operator_stage_s(attention_s, kv_write_s)
    total = overhead + linear_ops + attention_ops + tp_comm + pp_comm
    return StepBreakdown(
        weights_read_s=weights_s,
        kv_read_s=kv_write_s,
        compute_s=compute_s,
        attention_compute_s=attention_s,
        tp_comm_s=tp_comm,
        pp_comm_s=pp_comm,
        overhead_s=overhead + 0 * total,
        total_s=total,
        read_bytes_per_gpu=w_bytes,
        flop_per_gpu=flop / (t * p),
        linear_ops_s=linear_ops,
        attention_ops_s=attention_ops,
        tp_latency_s=allreduces * _tp_allreduce_startup_s(terms) + 0 * total,
    )


def mean_decode_context_tokens(input_tokens: Num, output_tokens: Num) -> Num:
    """Mean history over a request's decode calls: call j sees P + j, j = 1..G − 1 → P + G/2 (card 1)."""
    return input_tokens + output_tokens / 2.0


# --------------------------------------------------------------------------------------------------
# Predict (one configuration, the `planner predict` ledger)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PredictRequest:
    """Inputs of ``planner predict``."""

    model: str
    gpu: str
    tp: int = 1
    pp: int = 1
    quant: str = "bf16"
    kv_dtype: str = "bf16"
    batch: int = 1
    input_tokens: int = 2048
    output_tokens: int = 256
    workspace_gib: float = 2.0
    ideal: bool = False


@dataclass(frozen=True)
class Prediction:
    """The inference ledger of one configuration (all units in the names)."""

    request: PredictRequest
    params: int
    weights_bytes: float
    decode_read_bytes_per_step: float
    kv_bytes_per_token: float
    kv_cache_bytes: float
    memory_per_gpu_bytes: float
    fits: bool
    max_batch: int
    prefill_flop: float
    decode_flop_per_step: float
    prefill: StepBreakdown
    decode: StepBreakdown
    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float
    bound: Literal["memory", "compute", "communication"]
    efficiency: eff.EfficiencyTerms

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``planner predict --json``."""
        r = self.request
        return {
            "model": r.model,
            "gpu": r.gpu,
            "tp": r.tp,
            "pp": r.pp,
            "quant": r.quant,
            "kv_dtype": r.kv_dtype,
            "batch": r.batch,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
            "context_tokens": r.input_tokens + r.output_tokens,
            "ideal": r.ideal,
            "params": self.params,
            "weights_bytes": self.weights_bytes,
            "weights_gb": self.weights_bytes / BYTES_PER_GB,
            "weights_per_gpu_gb": self.weights_bytes / (r.tp * r.pp) / BYTES_PER_GB,
            "decode_read_bytes_per_step": self.decode_read_bytes_per_step,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_cache_gb": self.kv_cache_bytes / BYTES_PER_GB,
            "workspace_gb": r.workspace_gib * BYTES_PER_GIB / BYTES_PER_GB,
            "memory_per_gpu_gb": self.memory_per_gpu_bytes / BYTES_PER_GB,
            "fits": self.fits,
            "max_batch": self.max_batch,
            "prefill_tflop": self.prefill_flop / FLOP_PER_TFLOP,
            "decode_gflop_per_step": self.decode_flop_per_step / 1e9,
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms,
            "output_tokens_per_s": self.output_tokens_per_s,
            "bound": self.bound,
            "breakdown": {
                "decode": _breakdown_json(self.decode),
                "prefill": _breakdown_json(self.prefill),
                "efficiency": self.efficiency.as_dict(),
            },
        }


def _breakdown_json(step: StepBreakdown) -> dict[str, float]:
    return {
        "weights_read_ms": float(step.weights_read_s) * 1e3,
        "kv_read_ms": float(step.kv_read_s) * 1e3,
        "compute_ms": float(step.compute_s) * 1e3,
        "attention_compute_ms": float(step.attention_compute_s) * 1e3,
        "linear_ops_ms": float(step.linear_ops_s) * 1e3,
        "attention_ops_ms": float(step.attention_ops_s) * 1e3,
        "tp_comm_ms": float(step.tp_comm_s) * 1e3,
        "tp_latency_ms": float(step.tp_latency_s) * 1e3,
        "pp_comm_ms": float(step.pp_comm_s) * 1e3,
        "overhead_ms": float(step.overhead_s) * 1e3,
        "total_ms": float(step.total_s) * 1e3,
    }


def resolve(catalog: Catalog, table: dict[str, Any], key: str, what: str, option: str) -> Any:
    """Look ``key`` up in a catalog table; InputError naming the option and a suggestion if unknown."""
    if key not in table:
        raise InputError(f"{option}: unknown {what} '{key}'{did_you_mean(key, table)}")
    return table[key]


def predict(catalog: Catalog, request: PredictRequest) -> Prediction:
    """Evaluate the inference ledger of one configuration (``planner predict``).

    Per-step quantities (``decode_read_bytes_per_step``, ``decode_gflop_per_step``) are for the first decode
    step (history = input tokens, the book's "2K context" convention); TPOT is the step time at the mean
    decode history P + G/2; memory holds the full context P + G; TTFT is prefill alone (no queue/network).
    """
    if request.batch < 1:
        raise InputError("--batch must be >= 1")
    if request.input_tokens < 1 or request.output_tokens < 1:
        raise InputError("--input-tokens and --output-tokens must be >= 1")
    model = resolve(catalog, catalog.models, request.model, "model", "--model")
    gpu = resolve(catalog, catalog.accelerators, request.gpu, "gpu", "--gpu")
    wfmt = resolve(catalog, catalog.formats, request.quant, "format", "--quant")
    kfmt = resolve(catalog, catalog.formats, request.kv_dtype, "format", "--kv-dtype")
    terms = deployment_terms(
        catalog,
        model=model,
        gpu=gpu,
        weight_format=wfmt,
        kv_format=kfmt,
        tp=request.tp,
        pp=request.pp,
        ideal=request.ideal,
    )
    workspace = request.workspace_gib * BYTES_PER_GIB
    context = request.input_tokens + request.output_tokens
    batch = float(request.batch)
    memory = float(
        memory_per_gpu_bytes(terms, batch=batch, context_tokens=context, workspace_bytes=workspace)
    )
    prefill = prefill_step(terms, prompt_tokens=float(request.input_tokens))
    decode = decode_step(
        terms,
        batch=batch,
        context_tokens=mean_decode_context_tokens(request.input_tokens, request.output_tokens),
    )
    # FLOPs do not depend on the efficiency terms: the first step's count comes from the same terms
    first = decode_step(
        terms,
        batch=batch,
        context_tokens=float(request.input_tokens),
    )
    hp = catalog.format(wfmt.high_precision).bytes_per_value
    tpot_s = float(decode.total_s)
    return Prediction(
        request=request,
        params=arch.params_total(model),
        weights_bytes=float(terms.weights_bytes),
        decode_read_bytes_per_step=float(
            arch.decode_read_bytes_per_step(
                model,
                wfmt,
                batch=batch,
                context_tokens=request.input_tokens,
                kv_bytes_per_value=kfmt.bytes_per_value,
                high_precision_bytes_per_value=hp,
            )
        ),
        kv_bytes_per_token=arch.kv_bytes_per_token(model, kv_bytes_per_value=kfmt.bytes_per_value),
        kv_cache_bytes=float(batch * kv_bytes_per_sequence(terms, float(context))),
        memory_per_gpu_bytes=memory,
        fits=bool(memory <= terms.memory_capacity_bytes),
        max_batch=int(max_batch(terms, context_tokens=float(context), workspace_bytes=workspace)),
        prefill_flop=float(prefill.flop_per_gpu) * request.tp * request.pp,
        decode_flop_per_step=float(first.flop_per_gpu) * request.tp * request.pp,
        prefill=prefill,
        decode=decode,
        ttft_ms=float(prefill.total_s) * 1e3,
        tpot_ms=tpot_s * 1e3,
        output_tokens_per_s=batch / tpot_s,
        bound=str(decode.bound()),  # type: ignore[arg-type]
        efficiency=terms.efficiency,
    )
