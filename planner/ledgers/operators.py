"""Card 7 — operator & runtime ledger.

Bounds for single operators and short kernel sequences: host copies, tiled GEMM traffic,
FlashAttention I/O and the online softmax, double buffering, fusion, graph replay, compile
amortisation, shape bucketing, occupancy and the critical path.

References: ledgers.md card 7; book ch05 (Examples 5-1 … 5-12, §5.6), ch04 (roofline, tiles).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import transfer_s
from planner.units import BYTES_PER_GB, BYTES_PER_KIB, US_PER_S

BF16_BYTES = 2
"""Bytes per BF16 element (tile inputs)."""

FP32_BYTES = 4
"""Bytes per FP32 element (accumulators, attention scores)."""

H100_SMS = 132
"""H100 SXM streaming multiprocessors (book occupancy example)."""

H100_SM_REGISTERS = 65536
"""32-bit registers per H100 SM."""

H100_SM_MAX_THREADS = 2048
"""Resident threads per H100 SM."""

H100_SM_MAX_BLOCKS = 32
"""Resident thread blocks per H100 SM."""

H100_SM_SHARED_BYTES = 228 * BYTES_PER_KIB
"""Shared memory per H100 SM, bytes (228 KiB)."""


# --------------------------------------------------------------------------------------------------
# Host transfers and the bottleneck rule
# --------------------------------------------------------------------------------------------------


def tensor_bytes(shape: Sequence[int], *, bytes_per_element: float) -> float:
    """Bytes of a dense tensor.

    Parameters
    ----------
    shape : Sequence[int]
        Dimensions (each >= 0).
    bytes_per_element : float
        Bytes per element (BF16: 2).

    Returns
    -------
    float
        Size, bytes.

    Notes
    -----
    bytes = Π_i shape_i × bytes_per_element.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-1.
    """
    if any(d < 0 for d in shape):
        raise ValueError("tensor dimensions must be >= 0")
    _require_non_negative("bytes_per_element", bytes_per_element)
    return math.prod(shape) * bytes_per_element


def host_copy_s(n_bytes: float, *, bandwidth_gb_per_s: float, latency_s: float = 0.0) -> float:
    """Host→device (or device→host) copy time.

    Parameters
    ----------
    n_bytes : float
        Bytes copied.
    bandwidth_gb_per_s : float
        Link bandwidth per direction, GB/s (PCIe Gen5 x16: 64).
    latency_s : float
        Start-up latency of the copy, s.

    Returns
    -------
    float
        Copy time, s.

    Notes
    -----
    T = α + bytes / B; delegates to card 6's :func:`planner.ledgers.communication.transfer_s`.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-1.
    """
    return transfer_s(n_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_s * US_PER_S)


def arithmetic_intensity_flop_per_byte(flop: float, *, traffic_bytes: float) -> float:
    """Arithmetic intensity of an operator.

    Parameters
    ----------
    flop : float
        FLOPs executed, FLOP.
    traffic_bytes : float
        Off-chip bytes moved, bytes (> 0).

    Returns
    -------
    float
        I, FLOP/byte.

    Notes
    -----
    I = F / V.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-3, ch04 (roofline).
    """
    _require_positive("traffic_bytes", traffic_bytes)
    return flop / traffic_bytes


# --------------------------------------------------------------------------------------------------
# Tiled GEMM
# --------------------------------------------------------------------------------------------------


def gemm_tile_buffer_bytes(
    tile_m: int,
    *,
    tile_n: int,
    k_step: int,
    input_bytes: float = BF16_BYTES,
    accumulator_bytes: float = FP32_BYTES,
) -> float:
    """On-chip buffer of one GEMM output tile.

    Parameters
    ----------
    tile_m, tile_n : int
        Output tile size m × n.
    k_step : int
        K slice loaded per step k.
    input_bytes : float
        Bytes per input element (BF16: 2).
    accumulator_bytes : float
        Bytes per accumulator element (FP32: 4).

    Returns
    -------
    float
        Buffer, bytes.

    Notes
    -----
    S = 2mk + 2kn + 4mn (BF16 inputs, FP32 accumulator).

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-3.
    """
    if min(tile_m, tile_n, k_step) <= 0:
        raise ValueError("tile sizes and k_step must be > 0")
    return input_bytes * (tile_m * k_step + k_step * tile_n) + accumulator_bytes * tile_m * tile_n


def gemm_tiled_traffic_bytes(
    m: float, *, n: float, k: float, tile_m: float, tile_n: float, element_bytes: float = BF16_BYTES
) -> float:
    """Off-chip traffic of a tiled GEMM.

    Parameters
    ----------
    m, n, k : float
        GEMM dimensions M, N, K.
    tile_m, tile_n : float
        Output tile size m × n.
    element_bytes : float
        Bytes per input/output element (BF16: 2).

    Returns
    -------
    float
        Traffic V, bytes.

    Notes
    -----
    V = 2MK·(N/n) + 2KN·(M/m) + 2MN: A is re-read once per tile column, B once per tile row.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-3.
    """
    _require_positive("tile_m", tile_m)
    _require_positive("tile_n", tile_n)
    return element_bytes * (m * k * (n / tile_n) + k * n * (m / tile_m) + m * n)


# --------------------------------------------------------------------------------------------------
# Fusion, attention, online softmax
# --------------------------------------------------------------------------------------------------


def unfused_traffic_bytes(
    input_bytes: float, *, output_bytes: float, intermediate_bytes: Sequence[float]
) -> float:
    """Memory traffic of an operator chain run as separate kernels.

    Parameters
    ----------
    input_bytes : float
        Bytes of the chain's inputs.
    output_bytes : float
        Bytes of the final outputs.
    intermediate_bytes : Sequence[float]
        Size of each intermediate tensor, bytes.

    Returns
    -------
    float
        Traffic, bytes.

    Notes
    -----
    inputs + outputs + 2·Σ intermediates (each written once and re-read once).

    References
    ----------
    Card 7 (ledgers.md), book ch05.
    """
    if any(b < 0 for b in intermediate_bytes):
        raise ValueError("intermediate sizes must be >= 0")
    return fused_traffic_bytes(input_bytes, output_bytes=output_bytes) + 2 * sum(intermediate_bytes)


def fused_traffic_bytes(input_bytes: float, *, output_bytes: float) -> float:
    """Memory traffic of a fully fused operator chain.

    Parameters
    ----------
    input_bytes : float
        Bytes of the inputs.
    output_bytes : float
        Bytes of the final outputs.

    Returns
    -------
    float
        Traffic, bytes.

    Notes
    -----
    fused = inputs + final outputs.

    References
    ----------
    Card 7 (ledgers.md), book ch05.
    """
    _require_non_negative("input_bytes", input_bytes)
    _require_non_negative("output_bytes", output_bytes)
    return input_bytes + output_bytes


def attention_io_bytes(seq_tokens: float, *, head_dim: float, io_bytes: float = BF16_BYTES) -> float:
    """Q, K, V and O bytes of one attention head (what fused attention moves).

    Parameters
    ----------
    seq_tokens : float
        Sequence length L, tokens.
    head_dim : float
        Head dimension d.
    io_bytes : float
        Bytes per element of Q/K/V/O (BF16: 2).

    Returns
    -------
    float
        Bytes, O(L·d).

    Notes
    -----
    4·L·d·b_io.

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.3.3 (L = 8,192, d = 128: 8 MiB).
    """
    return 4 * seq_tokens * head_dim * io_bytes


def attention_score_bytes(seq_tokens: float, *, score_bytes: float = FP32_BYTES) -> float:
    """Bytes of one L × L score (or probability) matrix of one head.

    Parameters
    ----------
    seq_tokens : float
        Sequence length L, tokens.
    score_bytes : float
        Bytes per score (FP32: 4).

    Returns
    -------
    float
        Bytes, O(L²).

    Notes
    -----
    L²·b_s.

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.3.3 (L = 8,192: 256 MiB).
    """
    return seq_tokens * seq_tokens * score_bytes


def attention_naive_bytes(
    seq_tokens: float, *, head_dim: float, io_bytes: float = BF16_BYTES, score_bytes: float = FP32_BYTES
) -> float:
    """Memory traffic of unfused attention for one head.

    Parameters
    ----------
    seq_tokens : float
        Sequence length L, tokens.
    head_dim : float
        Head dimension d.
    io_bytes : float
        Bytes per Q/K/V/O element.
    score_bytes : float
        Bytes per score / probability element.

    Returns
    -------
    float
        Traffic, bytes.

    Notes
    -----
    Q, K, V, O plus S and P each written and re-read: 4·L·d·b_io + 2·2·L²·b_s
    (:func:`unfused_traffic_bytes` with the two L × L intermediates).

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.3.3.
    """
    score = attention_score_bytes(seq_tokens, score_bytes=score_bytes)
    qkv = 3 * seq_tokens * head_dim * io_bytes
    out = seq_tokens * head_dim * io_bytes
    return unfused_traffic_bytes(qkv, output_bytes=out, intermediate_bytes=[score, score])


def attention_tile_buffer_bytes(q_rows: int, *, kv_rows: int, head_dim: int) -> float:
    """Shared-memory budget of one FlashAttention tile.

    Parameters
    ----------
    q_rows : int
        Query rows per tile a.
    kv_rows : int
        Key/value rows per tile b.
    head_dim : int
        Head dimension d.

    Returns
    -------
    float
        Bytes; must not exceed the SM's shared memory.

    Notes
    -----
    S = 2ad + 2bd + 4ab + 4ad + 12a (BF16 Q and K/V tile, FP32 scores, FP32 output accumulator,
    FP32 running max / sum / scale per row).

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.3.3.
    """
    a, b, d = q_rows, kv_rows, head_dim
    if min(a, b, d) <= 0:
        raise ValueError("tile sizes must be > 0")
    return 2 * a * d + 2 * b * d + 4 * a * b + 4 * a * d + 12 * a


@dataclass(frozen=True)
class OnlineSoftmaxState:
    """Running state of the online softmax for one query row (scalar values).

    Attributes
    ----------
    running_max : float
        m, the largest score seen.
    denominator : float
        ℓ, Σ exp(s − m).
    numerator : float
        u, Σ exp(s − m)·v.
    """

    running_max: float = -math.inf
    denominator: float = 0.0
    numerator: float = 0.0


def online_softmax_update(
    state: OnlineSoftmaxState, *, scores: Sequence[float], values: Sequence[float]
) -> OnlineSoftmaxState:
    """Fold one tile of scores and values into the online softmax state.

    Parameters
    ----------
    state : OnlineSoftmaxState
        State before the tile.
    scores : Sequence[float]
        Scores s of the tile.
    values : Sequence[float]
        Values v of the tile (one scalar per key).

    Returns
    -------
    OnlineSoftmaxState
        State after the tile.

    Notes
    -----
    m' = max(m, max s); r = e^{m − m'}; p = e^{s − m'}; ℓ' = r·ℓ + Σp; u' = r·u + Σ p·v.

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.3.3.
    """
    if len(scores) != len(values):
        raise ValueError("scores and values must have the same length")
    if not scores:
        return state
    new_max = max(state.running_max, max(scores))
    rescale = math.exp(state.running_max - new_max) if state.denominator > 0 else 0.0
    weights = [math.exp(s - new_max) for s in scores]
    return OnlineSoftmaxState(
        running_max=new_max,
        denominator=rescale * state.denominator + sum(weights),
        numerator=rescale * state.numerator + sum(w * v for w, v in zip(weights, values, strict=True)),
    )


def online_softmax_output(state: OnlineSoftmaxState) -> float:
    """Attention output of an online softmax state.

    Parameters
    ----------
    state : OnlineSoftmaxState
        State after all tiles.

    Returns
    -------
    float
        u / ℓ.

    Notes
    -----
    output = u/ℓ (equals Σ softmax(s)·v).

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.3.3 (scores [0, ln 2], values [1, 3] → 7/3).
    """
    if state.denominator <= 0:
        raise ValueError("online softmax state is empty")
    return state.numerator / state.denominator


# --------------------------------------------------------------------------------------------------
# Pipelines, graphs, amortisation
# --------------------------------------------------------------------------------------------------


def serial_blocks_s(blocks: int, *, load_s: float, compute_s: float) -> float:
    """Time of n blocks loaded and computed one after another.

    Parameters
    ----------
    blocks : int
        Blocks n.
    load_s : float
        Load time per block t_m, s.
    compute_s : float
        Compute time per block t_c, s.

    Returns
    -------
    float
        T, s.

    Notes
    -----
    T = n·(t_m + t_c).

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-5.
    """
    if blocks < 0:
        raise ValueError(f"blocks must be >= 0, got {blocks}")
    return blocks * (load_s + compute_s)


def operator_sequence_s(stages: Sequence[tuple[Any, Any]]) -> Any:
    """Time of serially dependent operator groups, each bound by its own roofline, s. Works on numpy arrays.

    Parameters
    ----------
    stages : sequence of (compute_s, memory_s)
        Per operator group (e.g. a step's linear layers and its attention), the compute time F/(Π·η_c)
        and the memory time V/(β·η_m), s.

    Returns
    -------
    float
        T = Σ_i max(T_compute,i, T_memory,i), s.

    Notes
    -----
    Operators that depend on each other run one after the other, so their times add; only the compute and
    memory traffic *inside* one operator overlap (README rule 2). In a decode step the attention kernel
    (KV-read bound) waits for the QKV projection and the FFN waits for attention, so a batch whose
    projections are compute-bound cannot hide its KV reads behind them: max over the whole step,
    max(ΣF/Π, ΣV/β), is only the ideal lower bound.

    References
    ----------
    Card 7 (bottleneck rule: time per operator ≥ max(F/Π, V/β); critical path = Σ serial stages),
    README general accounting rule 2.
    """
    total: Any = 0.0
    for compute_s, memory_s in stages:
        total = total + operator_stage_s(compute_s, memory_s)
    return total


def operator_stage_s(compute_s: Any, memory_s: Any) -> Any:
    """Time of one operator group whose compute and memory traffic overlap: max(T_compute, T_memory), s.

    One term of :func:`operator_sequence_s` (card 7 bottleneck rule). Works on numpy arrays.
    """
    return np.maximum(compute_s, memory_s)


def launch_path_s(host_submit_s: float, *, h2d_s: float, kernel_s: float, d2h_s: float) -> float:
    """End-to-end time of one launch: submit, copy in, run, copy out.

    Parameters
    ----------
    host_submit_s : float
        Host-side submission time, s.
    h2d_s : float
        Host→device copy, s.
    kernel_s : float
        Kernel time, s.
    d2h_s : float
        Device→host copy, s.

    Returns
    -------
    float
        T, s.

    Notes
    -----
    T = host submit + H2D + kernel + D2H.

    References
    ----------
    Card 7 (ledgers.md), book ch05.
    """
    return host_submit_s + h2d_s + kernel_s + d2h_s


def graph_replay_copy_s(input_bytes: float, *, bandwidth_gb_per_s: float) -> float:
    """Extra copy a CUDA-graph replay pays to move inputs into its static buffers.

    Parameters
    ----------
    input_bytes : float
        Input size X, bytes.
    bandwidth_gb_per_s : float
        Device memory bandwidth B, GB/s.

    Returns
    -------
    float
        Copy time, s.

    Notes
    -----
    2X/B (read and write once).

    References
    ----------
    Card 7 (ledgers.md), book ch05.
    """
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    return 2 * input_bytes / (bandwidth_gb_per_s * BYTES_PER_GB)


def graph_replay_pays(input_bytes: float, *, saved_host_s: float, bandwidth_gb_per_s: float) -> bool:
    """Whether graph replay saves more host time than its extra copy costs.

    Parameters
    ----------
    input_bytes : float
        Input size X, bytes.
    saved_host_s : float
        Host launch time the graph removes, s.
    bandwidth_gb_per_s : float
        Device memory bandwidth B, GB/s.

    Returns
    -------
    bool
        True iff X < saved × B / 2.

    Notes
    -----
    Worthwhile iff 2X/B < saved host time.

    References
    ----------
    Card 7 (ledgers.md), book ch05.
    """
    return graph_replay_copy_s(input_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s) < saved_host_s


def amortization_calls(prep_s: float, *, saving_s_per_call: float) -> float:
    """Calls needed before a one-off preparation pays back.

    Parameters
    ----------
    prep_s : float
        Preparation time (compile, autotune, index build), s.
    saving_s_per_call : float
        Time saved per call (or per token), s (> 0).

    Returns
    -------
    float
        Break-even number of calls.

    Notes
    -----
    n_calls ≥ preparation time / saving per call.

    References
    ----------
    Card 7 (ledgers.md), book ch05; also card 3's index-build example (ch08 §8.5).
    """
    _require_non_negative("prep_s", prep_s)
    _require_positive("saving_s_per_call", saving_s_per_call)
    return prep_s / saving_s_per_call


# --------------------------------------------------------------------------------------------------
# Shape specialisation
# --------------------------------------------------------------------------------------------------


def bucketed_rows(rows: Sequence[int], *, buckets: Sequence[int]) -> int:
    """Rows executed when every call is padded up to the next bucket.

    Parameters
    ----------
    rows : Sequence[int]
        Rows of each call.
    buckets : Sequence[int]
        Available bucket sizes.

    Returns
    -------
    int
        Padded rows, total.

    Notes
    -----
    Σ_i min{b ∈ buckets : b ≥ rows_i}.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-12.
    """
    ordered = sorted(buckets)
    if not ordered or ordered[0] <= 0:
        raise ValueError("buckets must be a non-empty list of positive sizes")
    total = 0
    for r in rows:
        fitting = [b for b in ordered if b >= r]
        if not fitting:
            raise ValueError(f"{r} rows exceed the largest bucket {ordered[-1]}")
        total += fitting[0]
    return total


def kernel_group_s(rows: float, *, s_per_row_at_peak: float, mfu_frac: float) -> float:
    """Execution time of one shape group.

    Parameters
    ----------
    rows : float
        Rows executed (padded where bucketed).
    s_per_row_at_peak : float
        Time per row at 100 % MFU, s (FLOP per row / peak).
    mfu_frac : float
        MFU the kernel reaches, 0 < MFU <= 1.

    Returns
    -------
    float
        Group time, s.

    Notes
    -----
    T_group = rows × t_row / MFU.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-12.
    """
    if not 0.0 < mfu_frac <= 1.0:
        raise ValueError(f"mfu_frac must be in (0, 1], got {mfu_frac}")
    return rows * s_per_row_at_peak / mfu_frac


def shape_plan_total_s(groups: float, *, prep_s: float, group_s: float) -> float:
    """Total time of a kernel strategy over a number of shape groups.

    Parameters
    ----------
    groups : float
        Repetitions r of the shape group.
    prep_s : float
        One-off preparation P_prep (compile / tune), s.
    group_s : float
        Time per group T_group, s.

    Returns
    -------
    float
        Total, s.

    Notes
    -----
    total = P_prep + r·T_group.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-12.
    """
    return prep_s + groups * group_s


def shape_strategy_crossover_groups(
    prep_a_s: float, *, group_a_s: float, prep_b_s: float, group_b_s: float
) -> float:
    """Group count at which strategy B (more prep, faster groups) overtakes A.

    Parameters
    ----------
    prep_a_s, group_a_s : float
        Preparation and per-group time of A, s.
    prep_b_s, group_b_s : float
        Preparation and per-group time of B, s.

    Returns
    -------
    float
        r*, groups (B is faster for r > r*).

    Notes
    -----
    r* = (P_B − P_A) / (T_A − T_B).

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-12.
    """
    if group_a_s == group_b_s:
        raise ValueError("equal per-group times never cross")
    return (prep_b_s - prep_a_s) / (group_a_s - group_b_s)


def best_shape_strategy(groups: float, *, strategies: Mapping[str, tuple[float, float]]) -> str:
    """Fastest kernel strategy for a number of shape groups.

    Parameters
    ----------
    groups : float
        Repetitions r of the shape group.
    strategies : Mapping[str, tuple[float, float]]
        name → (prep_s, group_s).

    Returns
    -------
    str
        Name with the smallest total (first listed on ties).

    Notes
    -----
    argmin over strategies of P_prep + r·T_group.

    References
    ----------
    Card 7 (ledgers.md), book ch05 Example 5-12.
    """
    if not strategies:
        raise ValueError("strategies must not be empty")
    totals = {name: shape_plan_total_s(groups, prep_s=p, group_s=t) for name, (p, t) in strategies.items()}
    return min(totals, key=lambda name: totals[name])


# --------------------------------------------------------------------------------------------------
# Occupancy and in-flight bytes
# --------------------------------------------------------------------------------------------------


def blocks_per_sm(
    threads_per_block: int,
    *,
    registers_per_thread: int,
    shared_bytes_per_block: float,
    sm_registers: int = H100_SM_REGISTERS,
    sm_max_threads: int = H100_SM_MAX_THREADS,
    sm_shared_bytes: float = H100_SM_SHARED_BYTES,
    sm_max_blocks: int = H100_SM_MAX_BLOCKS,
) -> int:
    """Resident thread blocks per SM (the tightest per-SM limit).

    Parameters
    ----------
    threads_per_block : int
        Threads per block (> 0).
    registers_per_thread : int
        Registers per thread.
    shared_bytes_per_block : float
        Shared memory per block, bytes.
    sm_registers, sm_max_threads, sm_max_blocks : int
        Per-SM limits (H100 defaults).
    sm_shared_bytes : float
        Shared memory per SM, bytes (H100: 228 KiB).

    Returns
    -------
    int
        Blocks per SM.

    Notes
    -----
    min(floor(R_SM / (threads·regs)), floor(S_SM / S_block), floor(T_SM / threads), B_max);
    register allocation granularity is ignored.

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.2.
    """
    if threads_per_block <= 0:
        raise ValueError(f"threads_per_block must be > 0, got {threads_per_block}")
    limits = [sm_max_threads // threads_per_block, sm_max_blocks]
    if registers_per_thread > 0:
        limits.append(sm_registers // (threads_per_block * registers_per_thread))
    if shared_bytes_per_block > 0:
        limits.append(math.floor(sm_shared_bytes / shared_bytes_per_block))
    return max(0, min(limits))


def occupancy_frac(
    threads_per_block: int, *, resident_blocks: int, sm_max_threads: int = H100_SM_MAX_THREADS
) -> float:
    """Fraction of an SM's thread slots in use.

    Parameters
    ----------
    threads_per_block : int
        Threads per block.
    resident_blocks : int
        Blocks resident per SM (see :func:`blocks_per_sm`).
    sm_max_threads : int
        Thread slots per SM (H100: 2,048).

    Returns
    -------
    float
        Occupancy, 0..1.

    Notes
    -----
    occupancy = blocks × threads / T_SM.

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.2.
    """
    if sm_max_threads <= 0:
        raise ValueError(f"sm_max_threads must be > 0, got {sm_max_threads}")
    return resident_blocks * threads_per_block / sm_max_threads


def inflight_bytes_per_sm(bandwidth_gb_per_s: float, *, latency_ns: float, sms: int) -> float:
    """Bytes each SM must keep in flight to saturate memory bandwidth.

    Parameters
    ----------
    bandwidth_gb_per_s : float
        Memory bandwidth β, GB/s.
    latency_ns : float
        Memory latency, ns.
    sms : int
        SM count.

    Returns
    -------
    float
        Bytes in flight per SM.

    Notes
    -----
    β × latency / SMs (H100: 3.35 TB/s × 600 ns / 132 ≈ 15.2 KB).

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.2.
    """
    if sms <= 0:
        raise ValueError(f"sms must be > 0, got {sms}")
    return bandwidth_gb_per_s * BYTES_PER_GB * latency_ns * 1e-9 / sms


# --------------------------------------------------------------------------------------------------
# Critical path
# --------------------------------------------------------------------------------------------------


def critical_path_s(serial_s: Sequence[float], *, parallel_branches_s: Sequence[float] = ()) -> float:
    """Time of serial stages followed by one group of parallel branches.

    Parameters
    ----------
    serial_s : Sequence[float]
        Times of the stages that run one after another, s.
    parallel_branches_s : Sequence[float]
        Times of independent branches that overlap, s.

    Returns
    -------
    float
        Total, s.

    Notes
    -----
    total = Σ serial + max(parallel branches).

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.6.
    """
    return sum(serial_s) + max(parallel_branches_s, default=0.0)


def amdahl_speedup(fraction: float, *, speedup: float) -> float:
    """Overall speed-up when a fraction of the critical path is accelerated.

    Parameters
    ----------
    fraction : float
        Share f of the time that is sped up, 0..1.
    speedup : float
        Speed-up s of that share (> 0).

    Returns
    -------
    float
        Overall speed-up.

    Notes
    -----
    1 / ((1 − f) + f/s); ceiling 1/(1 − f).

    References
    ----------
    Card 7 (ledgers.md), book ch05 §5.6; reference README general rule 5.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    _require_positive("speedup", speedup)
    return 1.0 / ((1 - fraction) + fraction / speedup)
