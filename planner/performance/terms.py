"""Catalog → :class:`DeploymentTerms`: the flat floats (bytes, FLOPs, peaks, links, efficiencies) of one deployment.

Nothing else in the performance model reads the catalog (see :mod:`planner.performance`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Engine, Interconnect, Model, NumericFormat
from planner.errors import InputError
from planner.ledgers import efficiency as eff
from planner.performance.links import UnsupportedDeployment, group_links, require_in_domain
from planner.performance.matmul_units import matmul_peak_tflops, missing_dp4a_message
from planner.performance.model_figures import busiest_stage_shares, calibrated_efficiency, model_figures
from planner.units import BYTES_PER_GB

ACTIVATION_BYTES = 2.0
"""Activations travel between TP ranks and PP stages in BF16 (2 B per value)."""

DEFAULT_ENGINE = "vllm"
"""Engine of a deployment that names none (workloads, ``planner predict``)."""

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
    attention_peak_tflops: Num
    """Dense peak of the attention matmuls (QKᵀ, PV), TFLOP/s (:func:`attention_peak_tflops`): the wider of the
    queries' and the KV cache's formats, not the weights' (an FP8- or FP4-weight model with a bf16 KV cache
    computes attention at the bf16 rate)."""
    bandwidth_gb_per_s: Num
    tp_link_gb_per_s: Num
    tp_link_latency_us: Num
    pp_link_gb_per_s: Num
    pp_link_latency_us: Num
    # efficiencies (1.0 and 0 overhead when ideal)
    efficiency: eff.EfficiencyTerms = field(default_factory=eff.EfficiencyTerms.ideal)
    # serving engine (catalogs/engines.yaml; all 0 when ideal)
    host_step_ms: Num = 0.0
    host_per_layer_us: Num = 0.0
    host_per_sequence_us: Num = 0.0
    collective_launch_us: Num = 0.0
    collectives_overlap: Num = 0.0
    """1 when the engine overlaps TP all-reduces with the next GEMM, else 0."""
    chunk_tokens: Num = 8192.0
    """The engine's chunked-prefill token budget per step."""
    prefill_first: Num = 0.0
    """1 when the engine has no chunked prefill (each prompt's prefill is its own pass, decode waits), else 0."""
    max_running_sequences: Num = 1e9
    """The engine's limit on sequences per step (max_num_seqs)."""
    memory_claim_frac: Num = 1.0
    """Share u of the GPU's memory the engine allocates (weights, workspace, KV); 1 when ideal."""
    kv_free_memory_frac: Num = 1.0
    """Share k of the memory left after weights and workspace that the engine gives its KV cache; 1 when ideal."""
    scheduler_steps: Num = 1.0
    """Decode steps per scheduler call n_s (vLLM V0 multi-step); prompts are admitted between blocks."""
    scheduler_lookahead_steps: Num = 0.0
    """Steps the scheduler runs ahead of the GPU (SGLang overlap scheduler: 1), else 0."""
    # mixture of experts (planner/performance/moe.py; all neutral for dense models and EP 1)
    attention_dp: Num = 1.0
    """Attention data-parallel ranks per stage, = the EP degree e of the attention-DP layout (``tp`` is then t·e
    GPUs); 1 without EP and with EP inside the TP group."""
    expert_parallel: Num = 1.0
    """Groups the routed experts are split into, e (whole experts per group; the load imbalance is over them):
    ``attention_dp`` in the attention-DP layout, the EP degree inside the TP group with ``ep_in_tp``."""
    expert_flop_per_token: Num = 0.0
    """Routed-expert FLOPs per token, 2·k·L_moe·N_e (part of ``linear_flop_per_token``)."""
    ep_link_gb_per_s: Num = 1.0
    ep_link_latency_us: Num = 0.0
    tp_in_switch_gb_per_s: Num = 0.0
    """Algorithm bandwidth of the TP fabric's in-switch reduction (NVLS), GB/s; 0 = the switch cannot reduce."""
    tp_in_switch_latency_us: Num = 0.0
    """Start-up of that in-switch all-reduce, µs (ledgers.collectives.allreduce_choice picks per message)."""
    stage_weights_frac: Num = 1.0
    """Share of the replica's weights its busiest pipeline stage holds (1 without stages; ≥ 1/p:
    planner.ledgers.architecture.busiest_pipeline_stage): the per-GPU weights of the memory ledger."""
    stage_layers_frac: Num = 1.0
    """Share of the decoder layers on the stage with the most (1 without stages; ≥ 1/p): that stage's KV."""
    gemm_kernels: Num = 0.0
    """GEMM kernels of one pass over the whole model (:func:`gemm_kernels_per_pass`; each pays the efficiency
    terms' ``gemm_launch_s``)."""

    def as_dict(self) -> dict[str, Any]:
        """Field values by name (efficiency terms flattened with an ``eff_`` prefix)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "efficiency"}
        out.update({f"eff_{k}": v for k, v in self.efficiency.as_dict().items()})
        return out


def compute_peak_tflops(gpu: Accelerator, fmt: NumericFormat) -> float:
    """Dense peak used for matmuls stored in ``fmt``: the format's compute peak, else BF16 (card 5), times the
    format's matmul efficiency relative to BF16 on this GPU (accelerators.yaml ``efficiency.format_mfu_scale``:
    H100/H200 FP8 GEMMs reach 0.89 of the fraction of peak BF16 reaches), TFLOP/s."""
    peak = gpu.dense_tflops.get(fmt.compute_format)
    if not peak:
        return gpu.dense_tflops["bf16"]
    return peak * gpu.efficiency.format_mfu_scale.get(fmt.compute_format, 1.0)


def attention_peak_tflops(gpu: Accelerator, weight_format: NumericFormat, kv_format: NumericFormat) -> float:
    """Dense peak of the attention matmuls, TFLOP/s: min(Π(weights' format), Π(KV format)) of
    :func:`compute_peak_tflops`. QKᵀ and PV multiply the queries — activations, FP8 only where the weights'
    format quantizes activations too (W8A8) — by the cached keys and values, in the wider of the two formats:
    FP8 weights over a bf16 cache attend at the bf16 rate, bf16 weights over an FP8 cache too (the queries are
    bf16), FP8 weights over an FP8 cache at the FP8 rate (measurements/h200_kernels_steps_fp8.csv: 8B FP8-weight
    prefills of 8,192 tokens with bf16 attention predicted 12.5 % fast at the weights' rate, 3.4 % at this)."""
    return min(compute_peak_tflops(gpu, weight_format), compute_peak_tflops(gpu, kv_format))


def format_as_run(gpu: Accelerator, fmt: NumericFormat) -> NumericFormat:
    """``fmt`` as ``gpu`` runs it: unchanged where its tensor cores have the format's compute format (a peak
    in ``dense_tflops``) or the format is weight-only already; else weight-only, its matmuls at the high-precision
    BF16 peak after de-quantising kernels (MXFP4 on Hopper: vLLM's Marlin / Triton MoE kernels keep the
    4.25-bit storage and multiply in BF16; measurements/mlenergy_vllm.csv gpt-oss-120b MXFP4 on one and two
    H100). Storage bytes do not change."""
    if fmt.weight_only or fmt.compute_format in gpu.dense_tflops:
        return fmt
    return fmt.model_copy(update={"weight_only": True, "compute_format": "bf16"})


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
    return calibrated_efficiency(  # eff.calibrated_efficiency_terms, once per GPU and weight-only flag
        catalog.calibration[gpu.family].parameters, gpu, weight_only=format_as_run(gpu, weight_format).weight_only
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
    engine: Engine | str = DEFAULT_ENGINE,
    ep: int = 1,
    ep_in_tp: bool = False,
) -> DeploymentTerms:
    """Evaluate the architecture ledgers and catalog figures of one deployment into DeploymentTerms.

    ``engine`` (a record or an id of catalogs/engines.yaml) supplies the host costs, the collective start-up
    and the chunked-prefill budget; ``ideal`` zeroes its costs like every other efficiency term.
    ``ep`` > 1 is expert parallelism with attention data parallel (DP = EP, planner/performance/moe.py): the
    stage spans tp·ep GPUs. ``ep_in_tp``: EP inside the TP group instead (vLLM ``-tp w --enable-expert-parallel``
    without ``-dp``): the stage is ``tp`` GPUs, attention tensor-parallel over all of them, the routed experts split
    ``ep`` ways (``ep`` divides ``tp``), combined by the TP all-reduce (no all-to-all). Raises UnsupportedDeployment for configurations that cannot run (format, fabric,
    layer split, EP on a dense model or not dividing the experts).
    """
    eng = catalog.engine(engine) if isinstance(engine, str) else engine
    if tp < 1 or pp < 1 or ep < 1:
        raise InputError("tp, pp and ep must be >= 1")
    check_expert_parallel(model, ep)
    check_format_supported(gpu, weight_format, role="weight")
    check_format_supported(gpu, kv_format, role="KV")
    weight_format = format_as_run(gpu, weight_format)
    if not kv_format.kv_cache:
        raise UnsupportedDeployment(catalog.kv_format_refusal(kv_format.id))
    if pp > model.layers:
        raise UnsupportedDeployment(f"PP{pp} exceeds the {model.layers} layers of {model.id}")
    if ep_in_tp and tp % ep:
        raise UnsupportedDeployment(f"EP{ep} inside TP{tp} needs an EP degree that divides the TP degree")
    dp = 1 if ep_in_tp else ep  # attention data-parallel ranks
    attention_tp, tp = tp, tp * dp  # from here on ``tp`` is the stage width w = t·DP (the per-GPU divisor)
    if dp > 1:  # named as the user wrote it (group_links would say TP{t·DP})
        require_in_domain(gpu, tp, what=f"TP{attention_tp}×EP{dp} ({tp} GPUs per stage)")
    links = group_links(catalog, gpu, tp=tp, pp=pp)
    attention_link = group_links(catalog, gpu, tp=attention_tp, pp=1).tp
    hp = catalog.format(weight_format.high_precision).bytes_per_value
    figures = model_figures(model, weight_format, kv_format, high_precision_bytes_per_value=hp)  # card 2 ledgers
    moe = model.moe
    kv_shards = dp * (1 if model.mla is not None else min(attention_tp, model.kv_heads))
    efficiency = eff.EfficiencyTerms.ideal() if ideal else efficiency_terms(catalog, gpu, weight_format)
    peak = matmul_peak_tflops(gpu, weight_format, eng, tensor_peak_tflops=compute_peak_tflops(gpu, weight_format))
    if peak is None:
        raise UnsupportedDeployment(missing_dp4a_message(gpu, eng))
    return DeploymentTerms(
        tp=tp,
        pp=pp,
        layers=model.layers,
        hidden_size=model.hidden_size,
        weights_bytes=figures.weights_bytes,
        weights_read_fixed_bytes=figures.weights_read_fixed_bytes,
        expert_bytes=figures.expert_bytes,
        moe_layers=moe.moe_layers if moe else 0,
        experts_routed=moe.experts_routed if moe else 1,
        experts_per_token=moe.experts_per_token if moe else 1,
        kv_bytes_per_token_per_layer=figures.kv_bytes_per_token_per_layer,
        full_attention_layers=model.layers - model.sliding_window_layers,
        window_layers=model.sliding_window_layers,
        window_tokens=model.sliding_window_tokens or 0,
        kv_shards=kv_shards,
        **stage_fields(model, weight_format, pp, high_precision_bytes_per_value=hp),
        linear_flop_per_token=figures.linear_flop_per_token,
        lm_head_flop_per_token=figures.lm_head_flop_per_token,
        attention_flop_per_pair_per_layer=figures.attention_flop_per_pair_per_layer,
        memory_capacity_bytes=gpu.memory_gb * BYTES_PER_GB,
        peak_tflops=peak,
        attention_peak_tflops=attention_peak_tflops(gpu, weight_format, kv_format),
        bandwidth_gb_per_s=gpu.memory_bandwidth_gb_per_s,
        tp_link_gb_per_s=attention_link.gb_per_s_per_direction if attention_link else 1.0,
        tp_link_latency_us=attention_link.latency_us if attention_link else 0.0,
        pp_link_gb_per_s=links.pp.gb_per_s_per_direction if links.pp else 1.0,
        pp_link_latency_us=links.pp.latency_us if links.pp else 0.0,
        **in_switch_fields(attention_link),
        efficiency=efficiency,
        **engine_fields(eng, ideal=ideal),
        attention_dp=dp,
        expert_parallel=ep,
        expert_flop_per_token=figures.expert_flop_per_token,
        ep_link_gb_per_s=links.tp.gb_per_s_per_direction if links.tp else 1.0,
        ep_link_latency_us=links.tp.latency_us if links.tp else 0.0,
        gemm_kernels=gemm_kernels_per_pass(model),
    )


GEMM_KERNELS_PER_LAYER = 4.0
"""QKV, O, gate/up (fused) and down projections of one decoder layer (vLLM's fused linear layers)."""


def stage_fields(
    model: Model, weight_format: NumericFormat, pp: int, *, high_precision_bytes_per_value: float
) -> dict[str, float]:
    """``stage_weights_frac`` and ``stage_layers_frac`` of a replica with ``pp`` pipeline stages."""
    weights_frac, layers_frac = busiest_stage_shares(  # ledgers.architecture.busiest_pipeline_stage, kept per records
        model, weight_format, pp, high_precision_bytes_per_value=high_precision_bytes_per_value
    )
    return {"stage_weights_frac": weights_frac, "stage_layers_frac": layers_frac}


def gemm_kernels_per_pass(model: Model) -> float:
    """GEMM kernels one forward pass launches: 4 per layer (QKV, O, gate-up, down; a MoE layer's fused
    expert kernels take the place of gate-up and down) + 1 router per MoE layer + 1 shared-expert pair where
    the model has shared experts + the LM head."""
    moe = model.moe
    moe_extra = 0.0 if moe is None else moe.moe_layers * (1.0 + (2.0 if moe.experts_shared else 0.0))
    return GEMM_KERNELS_PER_LAYER * model.layers + moe_extra + 1.0


def check_expert_parallel(model: Model, ep: int) -> None:
    """Raise UnsupportedDeployment unless EP ``ep`` fits ``model``: 1 always; > 1 only for MoE models whose
    routed-expert count it divides."""
    if ep == 1:
        return
    if model.moe is None:
        raise UnsupportedDeployment(f"EP{ep} needs a mixture-of-experts model; {model.id} is dense (use ep 1)")
    if model.moe.experts_routed % ep:
        raise UnsupportedDeployment(
            f"EP{ep} does not divide the {model.moe.experts_routed} experts of {model.id}"
        )


def in_switch_fields(tp_link: Interconnect | None) -> dict[str, float]:
    """The DeploymentTerms fields of the TP link's in-switch reduction (0 when it has none)."""
    red = tp_link.in_switch_reduction if tp_link is not None and tp_link.kind == "scale_up" else None
    return {
        "tp_in_switch_gb_per_s": red.algbw_gb_per_s if red else 0.0,
        "tp_in_switch_latency_us": red.latency_us if red else 0.0,
    }


def engine_fields(engine: Engine, *, ideal: bool = False) -> dict[str, float]:
    """The DeploymentTerms fields an engine sets (host costs and collective start-up 0, and its whole memory
    claimed, when ``ideal``)."""
    cost = 0.0 if ideal else 1.0
    return {
        "host_step_ms": cost * engine.host_step_ms,
        "host_per_layer_us": cost * engine.host_per_layer_us,
        "host_per_sequence_us": cost * engine.host_per_sequence_us,
        "collective_launch_us": cost * engine.collective_launch_us,
        "collectives_overlap": 1.0 if engine.overlaps_collectives else 0.0,
        "chunk_tokens": float(engine.chunked_prefill_tokens),
        "prefill_first": 0.0 if engine.chunked_prefill else 1.0,
        "max_running_sequences": float(engine.max_running_sequences),
        "memory_claim_frac": 1.0 if ideal else engine.memory_claim_frac,
        "kv_free_memory_frac": 1.0 if ideal else engine.kv_free_memory_frac,
        "scheduler_steps": float(engine.scheduler_steps),
        "scheduler_lookahead_steps": float(engine.scheduler_lookahead_steps),
    }


def with_efficiency(
    terms: DeploymentTerms, *, prefill_mfu_frac: float | None = None, decode_mbu_frac: float | None = None
) -> DeploymentTerms:
    """``terms`` with stated MFU / MBU (a scenario's ``hardware.efficiency``) in place of the catalog's; the
    other efficiency terms (overhead, saturation, paging) stay."""
    given = {
        k: v for k, v in (("prefill_mfu_frac", prefill_mfu_frac), ("decode_mbu_frac", decode_mbu_frac)) if v is not None
    }
    if not given:
        return terms
    return dataclasses.replace(terms, efficiency=dataclasses.replace(terms.efficiency, **given))
