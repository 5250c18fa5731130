"""Catalog record types: accelerators, models, numeric formats, interconnects, sites, prices.

Every record is a frozen pydantic model with ``extra="forbid"``; ids match ``^[a-z0-9]+(_[a-z0-9]+)*$``;
every record with numbers carries ``source`` (where the numbers come from) and ``as_of`` (the date of
that source, ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``). Units are in the field names: GB = 1e9 B,
GB/s = 1e9 B/s, TFLOP/s dense (no 2:4 sparsity), bandwidths per direction.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

Id = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(_[a-z0-9]+)*$")]
AsOf = Annotated[str, StringConstraints(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")]
Source = Annotated[str, StringConstraints(min_length=3)]
PositiveFloat = Annotated[float, Field(gt=0, strict=True)]
NonNegFloat = Annotated[float, Field(ge=0, strict=True)]
Fraction = Annotated[float, Field(gt=0, le=1, strict=True)]
"""Strict: a number in the file (an integer is fine), never ``true`` or a string."""

ComputeFormat = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4"]
"""Tensor-core input formats that have a peak in ``Accelerator.dense_tflops``."""

TensorKind = Literal["embedding", "lm_head", "norm", "router", "attention", "ffn", "expert"]
"""Weight tensor classes a quantization format may keep in high precision."""


class Record(BaseModel):
    """Strict, frozen base: unknown fields are errors, records are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, allow_inf_nan=False)


class Sourced(Record):
    """A record whose numbers come from a cited source on a date."""

    source: Source
    as_of: AsOf


# --------------------------------------------------------------------------------------------------
# Numeric formats
# --------------------------------------------------------------------------------------------------


class NumericFormat(Sourced):
    """A weight / KV storage format, e.g. bf16, fp8, int8 (grouped), int4 (grouped), mxfp4, nvfp4.

    Bytes per stored value = bits_per_value / 8 + scale_bytes / group_size_values (card 5:
    V_W = n·b/8 + (n/g)·s). Tensors listed in ``high_precision_tensors`` stay in ``high_precision``.
    """

    id: Id
    name: str
    bits_per_value: PositiveFloat
    group_size_values: Annotated[int, Field(ge=1)] | None = None
    """Values sharing one scale; None = per-tensor scale (negligible bytes)."""
    scale_bytes: NonNegFloat = 0.0
    """Bytes of each group's scale (and zero point, if any)."""
    compute_format: ComputeFormat
    """Which tensor-core peak runs matrices stored in this format (int4 weight-only -> bf16 compute)."""
    weight_only: bool = False
    """True when weights are de-quantized to ``compute_format`` before the matmul (W4A16, W8A16)."""
    high_precision: Id = "bf16"
    high_precision_tensors: tuple[TensorKind, ...] = ()
    kv_cache: bool = True
    """Whether the format is usable for the KV cache."""
    quality_tier: Annotated[int, Field(ge=0, le=3)] = 0
    """0 = reference quality (bf16/fp16), 1 = near-lossless (fp8/int8), 2 = 4-bit, 3 = lower."""
    notes: str = ""

    @property
    def bytes_per_value(self) -> float:
        """Stored bytes per value including group scales, B/value."""
        scale = self.scale_bytes / self.group_size_values if self.group_size_values else 0.0
        return self.bits_per_value / 8.0 + scale


# --------------------------------------------------------------------------------------------------
# Interconnects
# --------------------------------------------------------------------------------------------------


class InSwitchReduction(Sourced):
    """Reduction inside the fabric's switch (NVLink SHARP / NVLS; card 11): measured all-reduce figures."""

    algbw_gb_per_s: PositiveFloat
    """Algorithm bandwidth M / T of a large all-reduce with the switch reducing, GB/s."""
    latency_us: PositiveFloat
    """Start-up α of one in-switch all-reduce (beyond the engine's launch), µs."""
    notes: str = ""


class Interconnect(Sourced):
    """A link technology: NVLink gen, PCIe gen, InfiniBand, RoCE, Ethernet, Infinity Fabric, ..."""

    id: Id
    name: str
    kind: Literal["scale_up", "host", "scale_out", "network"]
    gb_per_s_per_direction: PositiveFloat
    """Per-GPU (per-port for networks) bandwidth in one direction, GB/s."""
    latency_us: PositiveFloat
    """Start-up latency alpha per message or round, microseconds."""
    in_switch_reduction: InSwitchReduction | None = None
    """The switch reduces all-reduce buffers itself (NVLS on NVSwitch gen3+, SHARP on InfiniBand)."""
    notes: str = ""


# --------------------------------------------------------------------------------------------------
# Accelerators
# --------------------------------------------------------------------------------------------------


class Efficiency(Sourced):
    """Default efficiency factors measured on this accelerator (or its family), fractions of peak."""

    prefill_mfu_frac: Fraction
    decode_mbu_frac: Fraction
    link_efficiency_frac: Fraction
    """Achieved all-reduce bus bandwidth / link spec."""
    format_mfu_scale: dict[str, Fraction] = {}
    """Matmul efficiency of a compute format relative to BF16's, (achieved/peak) ÷ BF16's (absent = 1)."""


class Purchase(Sourced):
    """Purchase price of one GPU and of a whole node (GPUs + server + network share), USD."""

    usd_per_gpu: PositiveFloat
    usd_per_node: PositiveFloat
    lifetime_years: PositiveFloat = 4.0
    lead_time_months: NonNegFloat = 0.0


class Accelerator(Sourced):
    """One accelerator (GPU, APU or edge module) and the node it ships in."""

    id: Id
    name: str
    vendor: str
    family: Id
    """Architecture family for calibration, e.g. nvidia_hopper, nvidia_ada, amd_cdna3, apple_m."""
    placement: Literal["datacenter", "workstation", "edge"]
    dense_tflops: dict[ComputeFormat, PositiveFloat]
    """Dense tensor peak per input format, TFLOP/s (TOPS for int8). bf16 is required."""
    memory_gb: PositiveFloat
    memory_bandwidth_gb_per_s: PositiveFloat
    scale_up: Id | None = None
    """Interconnect id of the in-node GPU-to-GPU fabric (NVLink, Infinity Fabric); None = host link only."""
    scale_up_domain_gpus: Annotated[int, Field(ge=1)] = 1
    """GPUs reachable over the scale-up fabric (8 for HGX, 72 for NVL72)."""
    host_link: Id
    """Interconnect id of the host link (pcie_gen4, pcie_gen5, ...)."""
    scale_out: Id | None = None
    """Interconnect id of the per-GPU network for multi-node groups; None = no scale-out fabric."""
    tdp_w: PositiveFloat
    idle_w: NonNegFloat
    gpus_per_node: Annotated[int, Field(ge=1)]
    native_formats: tuple[Id, ...]
    """Formats this accelerator serves (others are refused): on its tensor cores where ``dense_tflops`` has the
    format's compute format, else weight-only, de-quantised to BF16 (MXFP4 on Hopper:
    planner.performance.terms.format_as_run)."""
    purchase: Purchase | None = None
    efficiency: Efficiency
    cuda_core_int8_tops: PositiveFloat | None = None
    """Int8 dot-product peak of the CUDA cores (dp4a: SMs × 64 × 4 MACs × 2 × boost clock), TOPS; None = unknown
    (planner/performance/matmul_units.py)."""
    notes: str = ""

    @model_validator(mode="after")
    def _check(self) -> Accelerator:
        if "bf16" not in self.dense_tflops:
            raise ValueError("dense_tflops must include bf16")
        if self.idle_w >= self.tdp_w:
            raise ValueError("idle_w must be below tdp_w")
        if self.scale_up_domain_gpus < self.gpus_per_node and self.scale_up is not None:
            raise ValueError("scale_up_domain_gpus must cover a whole node when scale_up is set")
        return self


# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------


class Mla(Record):
    """Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds a latent of kv_lora_rank + rope."""

    q_lora_rank: Annotated[int, Field(ge=0)]
    """0 = queries projected directly from the hidden state."""
    kv_lora_rank: Annotated[int, Field(ge=1)]
    qk_nope_head_dim: Annotated[int, Field(ge=1)]
    qk_rope_head_dim: Annotated[int, Field(ge=1)]
    v_head_dim: Annotated[int, Field(ge=1)]


class Moe(Record):
    """Mixture-of-experts FFN layers."""

    experts_routed: Annotated[int, Field(ge=1)]
    experts_per_token: Annotated[int, Field(ge=1)]
    experts_shared: Annotated[int, Field(ge=0)] = 0
    expert_ffn_size: Annotated[int, Field(ge=1)]
    """Intermediate width of one routed expert (SwiGLU, 3 matrices)."""
    shared_expert_ffn_size: Annotated[int, Field(ge=1)] | None = None
    """Width of a shared expert; None = same as expert_ffn_size."""
    moe_layers: Annotated[int, Field(ge=1)]
    """Number of layers with an MoE FFN; the other layers use the dense ``ffn_size``."""
    expert_bias: bool = False
    """Experts carry biases (gpt-oss)."""


class Model(Sourced):
    """A decoder-only transformer; ledgers derive parameters, bytes and FLOPs from these fields."""

    id: Id
    name: str
    family: str
    layers: Annotated[int, Field(ge=1)]
    hidden_size: Annotated[int, Field(ge=1)]
    q_heads: Annotated[int, Field(ge=1)]
    kv_heads: Annotated[int, Field(ge=1)]
    head_dim: Annotated[int, Field(ge=1)]
    ffn_size: Annotated[int, Field(ge=0)]
    """Dense SwiGLU intermediate width (used by non-MoE layers; 0 if every layer is MoE)."""
    vocab_size: Annotated[int, Field(ge=1)]
    tied_embeddings: bool = False
    qkv_bias: bool = False
    attention_output_bias: bool = False
    qk_norm: bool = False
    """Per-head RMSNorm on q and k (Qwen3): 2·head_dim weights per layer."""
    mla: Mla | None = None
    moe: Moe | None = None
    sliding_window_tokens: Annotated[int, Field(ge=1)] | None = None
    sliding_window_layers: Annotated[int, Field(ge=0)] = 0
    """Layers that keep only the last ``sliding_window_tokens`` tokens of KV."""
    max_context_tokens: Annotated[int, Field(ge=1)]
    native_format: Id = "bf16"
    """Format of the released checkpoint (gpt-oss ships mxfp4 experts)."""
    params_published_b: PositiveFloat
    """Published total parameter count, billions (cross-check of the derived count)."""
    notes: str = ""

    @model_validator(mode="after")
    def _check(self) -> Model:
        if self.q_heads % self.kv_heads != 0:
            raise ValueError("q_heads must be a multiple of kv_heads")
        if self.sliding_window_layers > self.layers:
            raise ValueError("sliding_window_layers exceeds layers")
        if self.sliding_window_layers and self.sliding_window_tokens is None:
            raise ValueError("sliding_window_layers needs sliding_window_tokens")
        if self.moe is not None and self.moe.moe_layers > self.layers:
            raise ValueError("moe.moe_layers exceeds layers")
        if self.moe is not None and self.moe.experts_per_token > self.moe.experts_routed:
            raise ValueError("moe.experts_per_token exceeds moe.experts_routed")
        if (self.moe is None or self.moe.moe_layers < self.layers) and self.ffn_size == 0:
            raise ValueError("ffn_size must be > 0 when some layers are dense")
        return self

    @property
    def attention_kind(self) -> Literal["mha", "gqa", "mqa", "mla"]:
        """Attention variant implied by the head counts (MLA when ``mla`` is set)."""
        if self.mla is not None:
            return "mla"
        if self.kv_heads == self.q_heads:
            return "mha"
        if self.kv_heads == 1:
            return "mqa"
        return "gqa"


# --------------------------------------------------------------------------------------------------
# Sites and prices
# --------------------------------------------------------------------------------------------------


class Site(Sourced):
    """Where GPUs run: a cloud region, an own data center or an edge location."""

    id: Id
    name: str
    kind: Literal["cloud", "datacenter", "edge"]
    rtt_ms: NonNegFloat
    """Round-trip time from the site to its users, ms."""
    uplink_mbit_per_s: PositiveFloat = 100.0
    """User upload bandwidth to the site, Mb/s (prompt upload time = prompt bytes / uplink)."""
    electricity_usd_per_kwh: NonNegFloat
    pue: Annotated[float, Field(ge=1.0)]
    colocation_usd_per_kw_month: NonNegFloat = 0.0
    gpus_available: tuple[Id, ...] | None = None
    """GPU types that can be rented or installed here; None = any."""
    max_gpus: Annotated[int, Field(ge=0)] | None = None
    max_power_kw: PositiveFloat | None = None
    devices: dict[Id, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    """Edge sites: devices installed there (a fixed count per GPU type, already owned)."""
    providers: tuple[Id, ...] = ()
    """Rental providers serving this site (empty = any provider's price)."""
    has_scale_out_fabric: bool = True
    """Whether multi-node tensor/pipeline groups can be placed here."""
    notes: str = ""


RentalKind = Literal["on_demand", "reserved_1y", "reserved_3y", "spot"]


class RentalPrice(Sourced):
    """A rental quote: USD per GPU-hour for one GPU type at one provider and pricing kind."""

    gpu: Id
    provider: Id
    kind: RentalKind
    usd_per_gpu_hour: PositiveFloat
    sites: tuple[Id, ...] = ()
    """Sites where this quote applies (empty = every cloud site the provider serves)."""
    gpus_per_instance: tuple[Annotated[int, Field(ge=1)], ...] = ()
    """Instance sizes (GPUs per rented instance) sold at this price, each with its evidence in ``source``;
    empty = whole nodes only (``gpus_per_node`` of the accelerator). A TP×PP group runs inside one instance."""
    notes: str = ""

    def offers_instance(self, gpus: int, gpus_per_node: int) -> bool:
        """Whether an instance of ``gpus`` GPUs is sold at this price (whole nodes when none are listed)."""
        return gpus in self.gpus_per_instance if self.gpus_per_instance else gpus == gpus_per_node


class Engine(Sourced):
    """A serving engine's host and scheduler costs (catalogs/engines.yaml; planner/performance/engine.py).

    Host time per step: T_host = host_step_ms + L·host_per_layer_us + B·host_per_sequence_us (L layers per
    pipeline stage, B running sequences); each TP collective pays ``collective_launch_us`` on top of the
    link's per-hop start-up; prefill is chunked into steps of at most ``chunked_prefill_tokens`` tokens, or
    (``chunked_prefill: false``) runs prompt by prompt ahead of the decode steps.
    """

    id: Id
    name: str
    cuda_graphs: bool
    """Whether decode steps replay captured CUDA graphs (no per-kernel launch cost)."""
    host_step_ms: NonNegFloat
    """Fixed host time per engine step (scheduling, input preparation, sampling, output processing), ms."""
    host_per_layer_us: NonNegFloat
    """Host time per transformer layer per step (kernel launches in eager mode; ≈ 0 with graphs), µs."""
    host_per_sequence_us: NonNegFloat
    """Host time per running sequence per step (scheduler bookkeeping, sampling, detokenisation), µs."""
    collective_launch_us: NonNegFloat
    """Fixed start-up of one TP collective (launch + synchronisation), added to 2(t − 1)·α of the link, µs."""
    overlaps_collectives: bool
    """Whether TP all-reduces overlap the next GEMM (only the part longer than the GEMM is exposed)."""
    chunked_prefill_tokens: Annotated[int, Field(ge=16)]
    """Token budget of one scheduler step (prefill chunks + decode tokens): max_num_batched_tokens. Without
    chunked prefill, the most prompt tokens one prefill pass holds (a longer prompt cannot be served)."""
    chunked_prefill: bool = True
    """Whether prompts are split into chunks that share steps with decode tokens. False: a prefill-first
    scheduler runs each prompt's prefill as its own pass while every running sequence waits
    (planner/performance/prefill_first.py)."""
    max_running_sequences: Annotated[int, Field(ge=1)]
    """Largest number of sequences one step runs (max_num_seqs)."""
    memory_claim_frac: Fraction
    """Share u of device memory the engine allocates in all — weights, activation workspace and KV cache
    (vLLM ``gpu_memory_utilization``); the rest stays unused. KV room = k·(u·M − W − A)
    (planner/performance/memory.py kv_room_bytes)."""
    kv_free_memory_frac: Fraction
    """Share k of the memory left after weights and workspace that becomes KV cache (TensorRT-LLM
    ``free_gpu_memory_fraction``); 1 where the engine sizes the cache from all of it."""
    scheduler_steps: Annotated[int, Field(ge=1)] = 1
    """Decode steps the scheduler runs per call (vLLM V0 ``--num-scheduler-steps``): a new prompt is admitted
    only between blocks of this many steps (planner/performance/tail.step_phase_s)."""
    prompt_matmul: Literal["tensor_cores", "dp4a"] = "tensor_cores"
    """Units that run matmuls of quantized weights (dp4a: CUDA-core int8 dot product, performance/matmul_units.py)."""
    scheduler_lookahead_steps: Annotated[int, Field(ge=0, le=4)] = 0
    """Steps the scheduler prepares ahead of the GPU (SGLang's overlap scheduler: 1): a prompt that arrives
    during step k is scheduled after step k + 1 is already queued, so it also waits for that step."""
    notes: str = ""
