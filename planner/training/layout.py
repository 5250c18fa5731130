"""One training layout evaluated with the card-4 ledgers: memory, iteration time, MFU, completion.

Placement: TP innermost (inside a node), then DP, then PP outermost (Megatron order). Iteration time
t = t_compute + t_bubble + t_tp + t_pp + t_dp,exposed, where
- t_compute = F_hw/(n·Π·η_kernel) (card 4 step compute; F_hw adds recomputed forward FLOPs),
- t_bubble = t_compute·(p − 1)/(v·m) (card 4 pipeline bubble; v = 2 for interleaved),
- t_tp = (L/p)·m·k·T_ring(b·s·h·2 B, t ranks) with k = 4 all-reduces per layer (6 with full recompute),
- t_pp = 2·v·m·(α + b·s·h·2/(t_sp)/B) when p > 1,
- t_dp: ZeRO 0–2 a hierarchical all-reduce of the 2N/(t·p) gradient bytes, exposed beyond the backward
  of the last micro-batch (2/3 of its compute); ZeRO-3 the 3·m·(d − 1)/d·2N' bytes of card 4 over the
  bottleneck link, exposed beyond the whole compute time.
MFU = F_model/(t·n·Π). Completion = T_0 + steps·t·(1 + L(τ*)), τ* = sqrt(2c/λ), λ = n/MTBF_GPU.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

from planner.ledgers import training as card4
from planner.ledgers.communication import hierarchical_allreduce_parts, ring_allreduce_s, transfer_s
from planner.training.memory import activation_bytes_per_gpu, state_bytes_per_gpu
from planner.training.scenario import Recompute, Schedule
from planner.training.terms import GpuTerms, Link, ModelTerms
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, S_PER_HOUR

BF16_BYTES = 2.0
INTERLEAVED_VIRTUAL_STAGES = 2
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class Layout:
    """A parallel layout of one run: GPU type, counts and the memory/time knobs."""

    gpu: str
    tp: int
    pp: int
    dp: int
    zero_stage: int
    recompute: Recompute
    sequence_parallel: bool
    micro_batch: int
    schedule: Schedule

    @property
    def gpus(self) -> int:
        """n = t·p·d."""
        return self.tp * self.pp * self.dp

    @property
    def virtual_stages(self) -> int:
        """Model chunks per stage v (:func:`virtual_stages`)."""
        return virtual_stages(self.schedule, self.pp)


def virtual_stages(schedule: Schedule, pp: int) -> int:
    """Model chunks per pipeline stage v: 2 for the interleaved schedule over more than one stage, else 1."""
    return INTERLEAVED_VIRTUAL_STAGES if schedule == "interleaved" and pp > 1 else 1


@dataclass(frozen=True)
class RunSettings:
    """Run-level inputs: tokens, batch, reliability and reserves."""

    training_tokens: float
    global_batch_seqs: int
    checkpoint_write_gb_per_s: float
    gpu_mtbf_hours: float
    restart_s: float
    setup_days: float
    workspace_gib: float


@dataclass(frozen=True)
class Breakdown:
    """Iteration-time terms, s."""

    compute_s: float
    bubble_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    dp_comm_exposed_s: float


@dataclass(frozen=True)
class Evaluation:
    """The ledgers of one layout (memory in GiB per GPU, times in s)."""

    layout: Layout
    microbatches: int
    memory_states_gib_per_gpu: float
    memory_activations_gib_per_gpu: float
    memory_per_gpu_gib: float
    memory_capacity_gib: float
    fits: bool
    iteration_time_s: float
    breakdown: Breakdown
    mfu: float
    tokens_per_s: float
    steps: int
    checkpoint_s: float
    checkpoint_interval_s: float
    failure_overhead_frac: float
    days: float

    @property
    def gpu_hours(self) -> float:
        """GPU-hours of the whole run (setup included): n·days·24."""
        return self.layout.gpus * self.days * SECONDS_PER_DAY / S_PER_HOUR

    def breakdown_json(self) -> dict[str, float]:
        """Iteration-time terms by name, s."""
        return asdict(self.breakdown)


def layout_problem(layout: Layout, model: ModelTerms, gpu: GpuTerms, global_batch_seqs: int) -> str | None:
    """Why a layout cannot run at all (None when it can): divisibility, TP beyond a node, no fabric."""
    if model.heads % layout.tp:
        return f"TP{layout.tp} does not divide {model.heads} heads"
    if model.layers % (layout.pp * layout.virtual_stages):
        return f"PP{layout.pp}×v{layout.virtual_stages} does not divide {model.layers} layers"
    if global_batch_seqs % (layout.dp * layout.micro_batch):
        return f"{global_batch_seqs} sequences do not split into DP{layout.dp} × micro-batch {layout.micro_batch}"
    local_gpus = gpu.scale_up_gpus
    if layout.tp > local_gpus:
        return f"TP{layout.tp} spans more than the {local_gpus} GPUs of one {gpu.gpu_id} scale-up domain"
    if layout.gpus > local_gpus and gpu.scale_out is None:
        return f"{layout.gpus} GPUs span nodes and {gpu.gpu_id} has no scale-out link"
    if layout.sequence_parallel and layout.tp == 1:
        return "sequence parallelism needs TP > 1"
    return None


def _dp_links(layout: Layout, gpu: GpuTerms) -> tuple[int, int]:
    """DP peers per node q and nodes H of the DP group (ranks are spaced t apart)."""
    per_node = max(1, gpu.local_domain_gpus // layout.tp)
    q = min(layout.dp, per_node)
    return q, math.ceil(layout.dp / q)


def _tp_comm_s(layout: Layout, model: ModelTerms, gpu: GpuTerms, microbatches: int) -> float:
    if layout.tp == 1:
        return 0.0
    link = gpu.local  # TP stays inside a node (layout_problem)
    message = layout.micro_batch * model.seq_len * model.hidden_size * BF16_BYTES
    per_layer = 6 if layout.recompute == "full" else 4
    one = ring_allreduce_s(
        message, ranks=layout.tp, bandwidth_gb_per_s=link.gb_per_s, latency_us=link.latency_us
    )
    return float(model.layers / layout.pp * microbatches * per_layer * one)


def _pp_link(layout: Layout, gpu: GpuTerms) -> Link:
    if layout.gpus <= gpu.local_domain_gpus or gpu.scale_out is None:
        return gpu.local
    return gpu.scale_out


def _pp_comm_s(layout: Layout, model: ModelTerms, gpu: GpuTerms, microbatches: int) -> float:
    if layout.pp == 1:
        return 0.0
    link = _pp_link(layout, gpu)
    shard = layout.tp if layout.sequence_parallel else 1
    message = layout.micro_batch * model.seq_len * model.hidden_size * BF16_BYTES / shard
    one = transfer_s(message, bandwidth_gb_per_s=link.gb_per_s, latency_us=link.latency_us)
    return float(2 * layout.virtual_stages * microbatches * one)


def _dp_comm_s(layout: Layout, model: ModelTerms, gpu: GpuTerms, microbatches: int) -> float:
    if layout.dp == 1:
        return 0.0
    shard_params = model.n_params / (layout.tp * layout.pp)
    q, nodes = _dp_links(layout, gpu)
    nic = gpu.scale_out or gpu.local
    parts = hierarchical_allreduce_parts(
        BF16_BYTES * shard_params,
        ranks_per_node=q,
        nodes=nodes,
        local_bandwidth_gb_per_s=gpu.local.gb_per_s,
        nic_bandwidth_gb_per_s=nic.gb_per_s,
        latency_us=gpu.local.latency_us,
        nic_latency_us=nic.latency_us,
    )
    if layout.zero_stage == 3:
        # 3m collectives a step (forward and backward all-gather of the weights, reduce-scatter of the
        # gradients), each half an all-reduce of the 2N-byte shard: in one node 3m·(d − 1)/d·2N / B = V / B
        # (card 4's V), across nodes the hierarchical split of each (was V·(q − 1)/q / B_L + V / (q·B_NIC),
        # which counted (d − 1)/d twice inside a node: 7/8 of V / B on 8 GPUs)
        return ZERO3_COLLECTIVES_PER_MICROBATCH / 2 * microbatches * parts.total_s
    return parts.total_s


ZERO3_COLLECTIVES_PER_MICROBATCH = 3
"""Forward all-gather, backward all-gather, gradient reduce-scatter (card 4: V = 3·m·(d − 1)/d × 2N)."""


def hardware_flop_per_token(model: ModelTerms, recompute: Recompute) -> tuple[float, float]:
    """(linear, attention) FLOPs per token the GPUs execute: model FLOPs plus recomputed forwards.

    Notes
    -----
    none: 3·F_lin, 3·F_attn; selective adds one attention forward (4·F_attn); full adds the whole forward
    (4·F_lin, 4·F_attn).
    """
    lin, attn = 3.0 * model.linear_fwd_flop_per_token, 3.0 * model.attention_fwd_flop_per_token
    if recompute == "full":
        return lin + model.linear_fwd_flop_per_token, attn + model.attention_fwd_flop_per_token
    if recompute == "selective":
        return lin, attn + model.attention_fwd_flop_per_token
    return lin, attn


def _compute_s(layout: Layout, model: ModelTerms, gpu: GpuTerms, tokens: float) -> float:
    lin, attn = hardware_flop_per_token(model, layout.recompute)
    eff = gpu.kernel_efficiency_frac
    linear_s = card4.step_compute_s(
        lin * tokens, cards=layout.gpus, peak_tflops=gpu.peak_tflops, mfu_frac=eff
    )
    attention_s = card4.step_compute_s(
        attn * tokens, cards=layout.gpus, peak_tflops=gpu.bf16_peak_tflops, mfu_frac=eff
    )
    return linear_s + attention_s


def memory_per_gpu(layout: Layout, model: ModelTerms, run: RunSettings) -> tuple[float, float, float]:
    """(state bytes, activation bytes, total GiB with the reserve) on the busiest GPU of ``layout``.

    Notes
    -----
    M = S_ZeRO + A_Korthikanti + reserve (see :mod:`planner.training.memory`).
    """
    microbatches = run.global_batch_seqs // (layout.dp * layout.micro_batch)
    states = state_bytes_per_gpu(
        model.n_params, tp=layout.tp, pp=layout.pp, dp=layout.dp, zero_stage=layout.zero_stage
    )
    acts = activation_bytes_per_gpu(
        model.seq_len,
        micro_batch=layout.micro_batch,
        hidden_size=model.hidden_size,
        heads=model.heads,
        layers=model.layers,
        vocab_size=model.vocab_size,
        tp=layout.tp,
        pp=layout.pp,
        sequence_parallel=layout.sequence_parallel,
        recompute=layout.recompute,
        schedule=layout.schedule,
        microbatches=microbatches,
        virtual_stages=layout.virtual_stages,
    )
    memory_gib = (states + acts) / BYTES_PER_GIB + run.workspace_gib
    return states, acts, memory_gib


@functools.lru_cache(maxsize=4096)
def reliability(n_params: float, gpus: int, run: RunSettings) -> tuple[float, float, float]:
    """(checkpoint write c, interval τ*, loss L(τ*)) of a run on ``gpus`` GPUs (card 4).

    Notes
    -----
    c = 14·N/B_ckpt; λ = n/(MTBF_GPU·3600); τ* = sqrt(2c/λ); L = c/τ* + λτ*/2 + λr.
    """
    checkpoint_s = card4.checkpoint_bytes(n_params) / (run.checkpoint_write_gb_per_s * BYTES_PER_GB)
    failure_rate = 1.0 / (card4.job_mtbf_hours(gpus, card_mtbf_hours=run.gpu_mtbf_hours) * S_PER_HOUR)
    interval = card4.optimal_checkpoint_interval_s(checkpoint_s, failure_rate_per_s=failure_rate)
    loss = card4.checkpoint_overhead_frac(
        interval, checkpoint_s=checkpoint_s, failure_rate_per_s=failure_rate, restart_s=run.restart_s
    )
    return checkpoint_s, interval, loss


def evaluate_layout(layout: Layout, model: ModelTerms, gpu: GpuTerms, run: RunSettings) -> Evaluation:
    """All card-4 quantities of ``layout`` (call :func:`layout_problem` first)."""
    microbatches = run.global_batch_seqs // (layout.dp * layout.micro_batch)
    tokens_per_step = float(run.global_batch_seqs * model.seq_len)
    states, acts, memory_gib = memory_per_gpu(layout, model, run)
    capacity_gib = gpu.memory_gb * BYTES_PER_GB / BYTES_PER_GIB
    compute = _compute_s(layout, model, gpu, tokens_per_step)
    bubble = compute * (
        card4.pipeline_bubble_frac(microbatches, stages=layout.pp, virtual_stages=layout.virtual_stages)
    )
    dp = _dp_comm_s(layout, model, gpu, microbatches)
    window = compute if layout.zero_stage == 3 else compute / microbatches * 2.0 / 3.0
    breakdown = Breakdown(
        compute_s=compute,
        bubble_s=bubble,
        tp_comm_s=_tp_comm_s(layout, model, gpu, microbatches),
        pp_comm_s=_pp_comm_s(layout, model, gpu, microbatches),
        dp_comm_s=dp,
        dp_comm_exposed_s=max(0.0, dp - window),
    )
    step_s = (
        breakdown.compute_s
        + breakdown.bubble_s
        + breakdown.tp_comm_s
        + breakdown.pp_comm_s
        + breakdown.dp_comm_exposed_s
    )
    model_flop = model.train_flop_per_token * tokens_per_step
    checkpoint_s, interval, loss = reliability(model.n_params, layout.gpus, run)
    steps = card4.training_step_count(run.training_tokens, tokens_per_step=tokens_per_step)
    finish_s = card4.completion_time_s(
        run.setup_days * SECONDS_PER_DAY, steps=steps, step_s=step_s, loss_frac=loss
    )
    return Evaluation(
        layout=layout,
        microbatches=microbatches,
        memory_states_gib_per_gpu=states / BYTES_PER_GIB,
        memory_activations_gib_per_gpu=acts / BYTES_PER_GIB,
        memory_per_gpu_gib=memory_gib,
        memory_capacity_gib=capacity_gib,
        fits=memory_gib <= capacity_gib,
        iteration_time_s=step_s,
        breakdown=breakdown,
        mfu=model_flop / (step_s * layout.gpus * gpu.peak_tflops * 1e12),
        tokens_per_s=tokens_per_step / step_s,
        steps=steps,
        checkpoint_s=checkpoint_s,
        checkpoint_interval_s=interval,
        failure_overhead_frac=loss,
        days=finish_s / SECONDS_PER_DAY,
    )
