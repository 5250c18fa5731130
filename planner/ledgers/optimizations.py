"""Card 3 — inference optimisation boundaries.

When do batching, paging, prefix caching, KV quantisation, compression, offload and speculative
decoding pay, and by how much. Pure formulas: floats in, floats out.

References: ledgers.md card 3; book ch08 (all sections), ch02 (speculative rule), ch09 (save vs
recompute).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from planner.ledgers._checks import require_fraction as _require_frac
from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import transfer_s
from planner.ledgers.inference import kv_overtakes_weights_batch, memory_time_s, step_lower_bound_s
from planner.units import MS_PER_S, US_PER_S

KV_BLOCK_TOKENS = 16
"""KV block (page) size in tokens used by the book's capacity examples (vLLM default)."""

ROUND_FIXED_MS = 26.22
"""Fixed part of the book's fitted round time (Qwen3-8B BF16 on one RTX PRO 6000), ms."""

ROUND_US_PER_NEW_TOKEN = 30.4
"""Per-new-token part of the book's fitted round time, microseconds per token."""

ROUND_NS_PER_PAIR = 3.0
"""Per-causal-pair part of the book's fitted round time, nanoseconds per (query, key) pair."""

GGUF_BLOCK_VALUES = 32
"""Values per GGUF quantisation block."""

GGUF_Q8_0_BLOCK_BYTES = 34
"""Bytes of one q8_0 block: 32 int8 values + one FP16 scale."""

GGUF_Q4_0_BLOCK_BYTES = 18
"""Bytes of one q4_0 block: 32 4-bit values + one FP16 scale."""

BatchPolicy = Literal["fixed", "continuous", "chunked"]


# --------------------------------------------------------------------------------------------------
# Bytes per step and the batching boundary
# --------------------------------------------------------------------------------------------------


def step_bytes(
    batch: float, *, context_tokens: float, weight_bytes: float, kv_bytes_per_token: float
) -> float:
    """Bytes read from memory in one decode step of a batch.

    Parameters
    ----------
    batch : float
        Concurrent sequences b in the step.
    context_tokens : float
        Context length L of each sequence, tokens.
    weight_bytes : float
        Weight bytes streamed per step D_w, bytes (exclude tables that are only gathered, such as
        the embedding).
    kv_bytes_per_token : float
        KV cache bytes per token k, bytes.

    Returns
    -------
    float
        Bytes read per step D(b, L), bytes.

    Notes
    -----
    D(b, L) = D_w + b·L·k. Plain arithmetic, so it also works on numpy arrays.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2 efficiency table.
    """
    return weight_bytes + batch * context_tokens * kv_bytes_per_token


def bytes_per_output_token(
    batch: float, *, context_tokens: float, weight_bytes: float, kv_bytes_per_token: float
) -> float:
    """Bytes read per generated token when b sequences share one step.

    Parameters
    ----------
    batch : float
        Concurrent sequences b (> 0).
    context_tokens : float
        Context length L, tokens.
    weight_bytes : float
        Weight bytes streamed per step D_w, bytes.
    kv_bytes_per_token : float
        KV bytes per token k, bytes.

    Returns
    -------
    float
        Bytes per output token d, bytes.

    Notes
    -----
    d = D_w/b + L·k: batching amortises the weights, never the KV reads.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2.
    """
    return weight_bytes / batch + context_tokens * kv_bytes_per_token


def step_time_lower_bound_s(
    batch: float,
    *,
    flop_per_sequence: float,
    peak_tflops: float,
    bytes_per_step: float,
    bandwidth_gb_per_s: float,
) -> float:
    """Lower bound of one step: the slower of compute and memory.

    Parameters
    ----------
    batch : float
        Concurrent sequences b.
    flop_per_sequence : float
        FLOPs per sequence per step F, FLOP.
    peak_tflops : float
        Peak compute P (dense, matched precision), TFLOP/s.
    bytes_per_step : float
        Bytes read per step D(b, L), bytes (see :func:`step_bytes`).
    bandwidth_gb_per_s : float
        Memory bandwidth β, GB/s (decimal).

    Returns
    -------
    float
        Step time lower bound, s.

    Notes
    -----
    T_step ≈ max(b·F/P, D(b, L)/β) — an ideal bound used to exclude options; delegates to card 1's
    :func:`planner.ledgers.inference.step_lower_bound_s` with F_step = b·F.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2.
    """
    _require_positive("peak_tflops", peak_tflops)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    return step_lower_bound_s(
        batch * flop_per_sequence,
        n_bytes=bytes_per_step,
        peak_tflops=peak_tflops,
        bandwidth_gb_per_s=bandwidth_gb_per_s,
    )


def kv_weight_parity_batch(context_tokens: float, *, weight_bytes: float, kv_bytes_per_token: float) -> int:
    """Smallest batch at which the KV reads reach the weight reads.

    Parameters
    ----------
    context_tokens : float
        Context length L, tokens (> 0).
    weight_bytes : float
        Weight bytes streamed per step D_w, bytes.
    kv_bytes_per_token : float
        KV bytes per token k, bytes (> 0).

    Returns
    -------
    int
        b_KV, sequences.

    Notes
    -----
    b_KV = ceil(D_w / (L·k)); beyond it batching no longer halves the bytes per token. The ratio
    itself is card 1's :func:`planner.ledgers.inference.kv_overtakes_weights_batch`.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2.
    """
    _require_positive("context_tokens", context_tokens)
    _require_positive("kv_bytes_per_token", kv_bytes_per_token)
    _require_non_negative("weight_bytes", weight_bytes)
    ratio = kv_overtakes_weights_batch(
        weight_bytes, kv_bytes_per_token=kv_bytes_per_token, context_tokens=context_tokens
    )
    return math.ceil(ratio)


# --------------------------------------------------------------------------------------------------
# The book's fitted round-time model and chunked prefill
# --------------------------------------------------------------------------------------------------


def chunk_causal_pairs(chunk_tokens: float, *, history_tokens: float) -> float:
    """Causal (query, key) pairs of a prefill chunk after a cached history.

    Parameters
    ----------
    chunk_tokens : float
        New tokens in the chunk c.
    history_tokens : float
        Tokens already in the cache h.

    Returns
    -------
    float
        Pairs, count.

    Notes
    -----
    pairs = c·h + c(c + 1)/2. A decode token is a chunk of one: h + 1 pairs.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2.2 (512 after 7,680 → 4,063,488 pairs).
    """
    return chunk_tokens * history_tokens + chunk_tokens * (chunk_tokens + 1) / 2


def round_time_ms(
    new_tokens: float,
    *,
    causal_pairs: float,
    fixed_ms: float = ROUND_FIXED_MS,
    us_per_new_token: float = ROUND_US_PER_NEW_TOKEN,
    ns_per_pair: float = ROUND_NS_PER_PAIR,
) -> float:
    """Round time from the book's fitted linear model.

    Parameters
    ----------
    new_tokens : float
        Tokens processed in the round (prefill chunk tokens + one per decoding sequence).
    causal_pairs : float
        Causal attention pairs of the round, count (see :func:`chunk_causal_pairs`).
    fixed_ms : float
        Fixed cost per round, ms (book fit: 26.22).
    us_per_new_token : float
        Cost per new token, µs (book fit: 30.4).
    ns_per_pair : float
        Cost per causal pair, ns (book fit: 3).

    Returns
    -------
    float
        Round time, ms.

    Notes
    -----
    T_round ≈ 26.22 ms + 30.4 µs × new tokens + 3 ns × pairs (Qwen3-8B BF16, RTX PRO 6000). The
    fit reproduces the 26.26 ms decode round and a 94.8 ms 2K prefill; refit it for other setups.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2.
    """
    return fixed_ms + new_tokens * us_per_new_token / US_PER_S * MS_PER_S + causal_pairs * ns_per_pair * 1e-6


# --------------------------------------------------------------------------------------------------
# Paging and block-rounded capacity
# --------------------------------------------------------------------------------------------------


def paging_waste_slots(length_tokens: int, *, page_tokens: int) -> int:
    """Unused slots in the last page of one sequence.

    Parameters
    ----------
    length_tokens : int
        Tokens of the sequence L (>= 0).
    page_tokens : int
        Page (block) size p, tokens (> 0).

    Returns
    -------
    int
        Wasted slots, tokens (at most p − 1).

    Notes
    -----
    waste = p·ceil(L/p) − L.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.3.1.
    """
    return paged_slots([length_tokens], page_tokens=page_tokens) - length_tokens


def paged_slots(lengths_tokens: Sequence[int], *, page_tokens: int) -> int:
    """Slots reserved when every sequence is rounded up to whole pages.

    Parameters
    ----------
    lengths_tokens : Sequence[int]
        Token count of each sequence.
    page_tokens : int
        Page size p, tokens (> 0).

    Returns
    -------
    int
        Reserved slots, tokens.

    Notes
    -----
    Σ_i p·ceil(L_i/p).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.3.1.
    """
    if page_tokens <= 0:
        raise ValueError(f"page_tokens must be > 0, got {page_tokens}")
    if any(n < 0 for n in lengths_tokens):
        raise ValueError("sequence lengths must be >= 0")
    return sum(page_tokens * math.ceil(n / page_tokens) for n in lengths_tokens)


def reserved_slots(lengths_tokens: Sequence[int], *, max_tokens: int) -> int:
    """Slots reserved when every sequence gets the maximum length up front.

    Parameters
    ----------
    lengths_tokens : Sequence[int]
        Token count of each sequence (each <= max_tokens).
    max_tokens : int
        Maximum sequence length reserved per sequence, tokens.

    Returns
    -------
    int
        Reserved slots, tokens.

    Notes
    -----
    n·L_max (full reservation, no paging).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.3.1.
    """
    if any(n > max_tokens or n < 0 for n in lengths_tokens):
        raise ValueError(f"every length must be in [0, {max_tokens}]")
    return len(lengths_tokens) * max_tokens


def shared_prefix_saved_slots(prefix_tokens: int, *, page_tokens: int, sharing_requests: int) -> int:
    """Slots saved when several requests map the same full prefix pages.

    Parameters
    ----------
    prefix_tokens : int
        Common prefix length, tokens.
    page_tokens : int
        Page size p, tokens (> 0).
    sharing_requests : int
        Requests sharing the prefix (>= 1).

    Returns
    -------
    int
        Saved slots, tokens.

    Notes
    -----
    Only whole pages can be shared: saved = (n − 1)·p·floor(prefix/p).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.3.1.
    """
    if page_tokens <= 0:
        raise ValueError(f"page_tokens must be > 0, got {page_tokens}")
    if sharing_requests < 1:
        raise ValueError(f"sharing_requests must be >= 1, got {sharing_requests}")
    if prefix_tokens < 0:
        raise ValueError(f"prefix_tokens must be >= 0, got {prefix_tokens}")
    return (sharing_requests - 1) * page_tokens * (prefix_tokens // page_tokens)


def kv_footprint_tokens(
    prompt_tokens: int, *, output_tokens: int, block_tokens: int = KV_BLOCK_TOKENS
) -> int:
    """Block-rounded KV slots a request needs at its peak.

    Parameters
    ----------
    prompt_tokens : int
        Prompt tokens P.
    output_tokens : int
        Returned tokens G (>= 1); the last one is never written to the cache.
    block_tokens : int
        KV block size, tokens (book: 16).

    Returns
    -------
    int
        Footprint, tokens.

    Notes
    -----
    footprint = ceil((P + G − 1)/16)·16 tokens.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.1.
    """
    if output_tokens < 1:
        raise ValueError(f"output_tokens must be >= 1, got {output_tokens}")
    if prompt_tokens < 0:
        raise ValueError(f"prompt_tokens must be >= 0, got {prompt_tokens}")
    return paged_slots([prompt_tokens + output_tokens - 1], page_tokens=block_tokens)


def kv_footprint_bytes(
    prompt_tokens: int, *, output_tokens: int, kv_bytes_per_token: float, block_tokens: int = KV_BLOCK_TOKENS
) -> float:
    """Block-rounded KV bytes a request needs at its peak.

    Parameters
    ----------
    prompt_tokens : int
        Prompt tokens P.
    output_tokens : int
        Returned tokens G (>= 1).
    kv_bytes_per_token : float
        KV bytes per token c_KV, bytes.
    block_tokens : int
        KV block size, tokens (book: 16).

    Returns
    -------
    float
        Footprint, bytes.

    Notes
    -----
    ceil((P + G − 1)/16)·16 × c_KV.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.1.
    """
    _require_non_negative("kv_bytes_per_token", kv_bytes_per_token)
    tokens = kv_footprint_tokens(prompt_tokens, output_tokens=output_tokens, block_tokens=block_tokens)
    return tokens * kv_bytes_per_token


def kv_pool_capacity_requests(pool_bytes: float, *, footprint_bytes: float) -> int:
    """Whole requests that fit a KV pool.

    Parameters
    ----------
    pool_bytes : float
        KV pool size, bytes.
    footprint_bytes : float
        Peak footprint of one request, bytes (> 0).

    Returns
    -------
    int
        Requests, count.

    Notes
    -----
    n = floor(pool / footprint).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.1.
    """
    _require_positive("footprint_bytes", footprint_bytes)
    _require_non_negative("pool_bytes", pool_bytes)
    return math.floor(pool_bytes / footprint_bytes)


# --------------------------------------------------------------------------------------------------
# Prefix caching, KV quantisation, compression, offload
# --------------------------------------------------------------------------------------------------


def prefix_retention_value_s(hit_frac: float, *, recompute_s: float, fetch_s: float, move_s: float) -> float:
    """Expected time saved by keeping a prefix's KV instead of dropping it.

    Parameters
    ----------
    hit_frac : float
        Probability p_h that the prefix is reused, 0..1.
    recompute_s : float
        Time to recompute the prefix, s.
    fetch_s : float
        Time to bring the kept KV back, s.
    move_s : float
        One-off cost to move the KV to the retention tier, s.

    Returns
    -------
    float
        V_h, s (positive: retain).

    Notes
    -----
    V_h = p_h·(T_recompute − T_fetch) − T_move.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.3, ch09 (save vs recompute).
    """
    _require_frac("hit_frac", hit_frac)
    return hit_frac * (recompute_s - fetch_s) - move_s


def prefix_breakeven_hit_frac(recompute_s: float, *, fetch_s: float, move_s: float) -> float:
    """Reuse probability above which retaining a prefix pays.

    Parameters
    ----------
    recompute_s : float
        Time to recompute the prefix, s.
    fetch_s : float
        Time to fetch the kept KV, s.
    move_s : float
        One-off move cost, s.

    Returns
    -------
    float
        Break-even p_h (may exceed 1: never pays); ``math.inf`` when fetching is not faster than
        recomputing.

    Notes
    -----
    Retain iff p_h > T_move / (T_recompute − T_fetch).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.3 (4.8 % on PCIe Gen5, 10.1 % on Gen4, 6,144-token prefix).
    """
    _require_non_negative("move_s", move_s)
    if recompute_s <= fetch_s:
        return math.inf
    return move_s / (recompute_s - fetch_s)


def quantized_kv_bytes(
    bf16_bytes: float, *, block_bytes: float, block_values: int = GGUF_BLOCK_VALUES
) -> float:
    """KV bytes after block quantisation of a BF16 cache.

    Parameters
    ----------
    bf16_bytes : float
        KV bytes in BF16 (2 B per value), bytes.
    block_bytes : float
        Bytes per quantised block, bytes (q8_0: 34, q4_0: 18).
    block_values : int
        Values per block (GGUF: 32).

    Returns
    -------
    float
        Quantised KV bytes, bytes.

    Notes
    -----
    bytes = (bf16_bytes / 2) × block_bytes / block_values.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.4.2 (8K: 1,152 → 612 / 324 MiB).
    """
    _require_non_negative("bf16_bytes", bf16_bytes)
    if block_values <= 0:
        raise ValueError(f"block_values must be > 0, got {block_values}")
    return bf16_bytes / 2 * block_bytes / block_values


def kv_quant_net_saving_s(saved_bytes: float, *, bandwidth_gb_per_s: float, convert_s: float) -> float:
    """Net time saved per step by reading a smaller (quantised) KV cache.

    Parameters
    ----------
    saved_bytes : float
        Bytes no longer read per step ΔD, bytes.
    bandwidth_gb_per_s : float
        Effective memory bandwidth β, GB/s.
    convert_s : float
        Dequantisation / conversion time per step, s.

    Returns
    -------
    float
        ΔT, s (positive: quantisation pays, quality permitting).

    Notes
    -----
    ΔT = ΔD/β − T_convert.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.4.2.
    """
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    return memory_time_s(saved_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s) - convert_s


def itl_line_ms(context_tokens: float, *, intercept_ms: float, slope_ms_per_token: float) -> float:
    """Inter-token latency from a fitted straight line in context length.

    Parameters
    ----------
    context_tokens : float
        Context length L, tokens.
    intercept_ms : float
        ITL at zero context, ms.
    slope_ms_per_token : float
        ITL growth per context token, ms/token.

    Returns
    -------
    float
        ITL, ms.

    Notes
    -----
    ITL(L) = a + s·L (book: BF16 6.44 + 4.37e-5·L, FP8 6.58 + 2.37e-5·L, Llama-3.1-8B on H100).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.4.2.
    """
    return intercept_ms + slope_ms_per_token * context_tokens


def itl_crossover_tokens(
    intercept_a_ms: float, *, slope_a_ms_per_token: float, intercept_b_ms: float, slope_b_ms_per_token: float
) -> float:
    """Context length at which two fitted ITL lines cross.

    Parameters
    ----------
    intercept_a_ms : float
        Intercept of line A, ms.
    slope_a_ms_per_token : float
        Slope of line A, ms/token.
    intercept_b_ms : float
        Intercept of line B, ms.
    slope_b_ms_per_token : float
        Slope of line B, ms/token.

    Returns
    -------
    float
        Crossover L, tokens.

    Notes
    -----
    L* = (a_B − a_A) / (s_A − s_B).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.4.2 (≈ 7,000 tokens).
    """
    if slope_a_ms_per_token == slope_b_ms_per_token:
        raise ValueError("parallel ITL lines never cross")
    return (intercept_b_ms - intercept_a_ms) / (slope_a_ms_per_token - slope_b_ms_per_token)


def compress_min_decompress_gb_per_s(link_gb_per_s: float, *, compressed_frac: float) -> float:
    """Decompression rate above which compressing before a transfer pays.

    Parameters
    ----------
    link_gb_per_s : float
        Link bandwidth B_link per direction, GB/s.
    compressed_frac : float
        Compressed size / original size r, 0 <= r < 1.

    Returns
    -------
    float
        Minimum decompression rate R_dec (in original bytes), GB/s.

    Notes
    -----
    Compress before moving pays iff R_dec > B_link / (1 − r).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.4.
    """
    if not 0.0 <= compressed_frac < 1.0:
        raise ValueError(f"compressed_frac must be in [0, 1), got {compressed_frac}")
    _require_positive("link_gb_per_s", link_gb_per_s)
    return link_gb_per_s / (1 - compressed_frac)


def offload_exposed_s(copy_bytes_per_step: float, *, link_gb_per_s: float, step_s: float) -> float:
    """Copy time of offloaded weights that the step cannot hide.

    Parameters
    ----------
    copy_bytes_per_step : float
        Weight bytes copied per step, bytes.
    link_gb_per_s : float
        Host→device link bandwidth per direction, GB/s.
    step_s : float
        Step time the copy can overlap with, s.

    Returns
    -------
    float
        Exposed copy time, s (0 when fully hidden).

    Notes
    -----
    Hidden iff copy_bytes / B_link <= T_step; exposed = max(0, copy_bytes/B_link − T_step).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.4.
    """
    _require_positive("link_gb_per_s", link_gb_per_s)
    _require_non_negative("copy_bytes_per_step", copy_bytes_per_step)
    copy_s = transfer_s(copy_bytes_per_step, bandwidth_gb_per_s=link_gb_per_s)
    return max(0.0, copy_s - step_s)


# --------------------------------------------------------------------------------------------------
# Speculative decoding
# --------------------------------------------------------------------------------------------------


def spec_acceptance_frac(target_prob: float, *, draft_prob: float) -> float:
    """Acceptance probability of one drafted token (speculative sampling).

    Parameters
    ----------
    target_prob : float
        Target-model probability p of the drafted token, 0..1.
    draft_prob : float
        Draft-model probability q of the drafted token, 0 < q <= 1.

    Returns
    -------
    float
        α, 0..1.

    Notes
    -----
    α = min(1, p/q).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5, ch02.
    """
    _require_frac("target_prob", target_prob)
    if not 0.0 < draft_prob <= 1.0:
        raise ValueError(f"draft_prob must be in (0, 1], got {draft_prob}")
    return min(1.0, target_prob / draft_prob)


def spec_expected_tokens(acceptance_frac: float, *, draft_tokens: int) -> float:
    """Expected tokens produced per verification round.

    Parameters
    ----------
    acceptance_frac : float
        Per-position acceptance a, 0..1.
    draft_tokens : int
        Drafted tokens per round K (>= 0).

    Returns
    -------
    float
        E[N], tokens per round (1 … K + 1).

    Notes
    -----
    E[N] = 1 + a + a² + … + a^K (the verifier always yields one token).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5.
    """
    _require_frac("acceptance_frac", acceptance_frac)
    if draft_tokens < 0:
        raise ValueError(f"draft_tokens must be >= 0, got {draft_tokens}")
    return sum(acceptance_frac**i for i in range(draft_tokens + 1))


def draft_phase_ms(draft_forward_ms: float, *, draft_tokens: int, parallel: bool = False) -> float:
    """Drafting time per round.

    Parameters
    ----------
    draft_forward_ms : float
        Time of one draft forward pass, ms.
    draft_tokens : int
        Drafted tokens per round K.
    parallel : bool
        True when all K drafts come from one forward (parallel heads); False for K serial passes.

    Returns
    -------
    float
        Draft time per round, ms.

    Notes
    -----
    serial: K·t_draft; parallel: t_draft.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5.
    """
    _require_non_negative("draft_forward_ms", draft_forward_ms)
    if draft_tokens < 0:
        raise ValueError(f"draft_tokens must be >= 0, got {draft_tokens}")
    forwards = min(draft_tokens, 1) if parallel else draft_tokens
    return draft_forward_ms * forwards


def spec_ms_per_token(verify_ms: float, *, tokens_per_round: float, draft_ms: float = 0.0) -> float:
    """Time per output token with speculative decoding.

    Parameters
    ----------
    verify_ms : float
        Verification round time T_verify, ms.
    tokens_per_round : float
        Tokens accepted per round N (E[N] or a measured mean), > 0.
    draft_ms : float
        Drafting time per round T_draft, ms (0 for prompt-lookup style drafts).

    Returns
    -------
    float
        ms per output token.

    Notes
    -----
    t = (T_draft + T_verify) / N.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5.
    """
    _require_positive("tokens_per_round", tokens_per_round)
    return (draft_ms + verify_ms) / tokens_per_round


def spec_breakeven_tokens_per_round(round_ms: float, *, plain_ms_per_token: float) -> float:
    """Accepted tokens per round at which speculation ties plain decoding.

    Parameters
    ----------
    round_ms : float
        Draft + verify time per round, ms.
    plain_ms_per_token : float
        Time per token without speculation, ms.

    Returns
    -------
    float
        Break-even N, tokens per round; speculation pays iff N exceeds it.

    Notes
    -----
    (T_draft + T_verify)/N < T_plain ⇔ N > (T_draft + T_verify)/T_plain.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5, ch02.
    """
    _require_positive("plain_ms_per_token", plain_ms_per_token)
    return round_ms / plain_ms_per_token


def lengthen_draft_pays(
    delta_round_ms: float, *, delta_tokens: float, round_ms: float, tokens_per_round: float
) -> bool:
    """Whether drafting one more token lowers the time per output token.

    Parameters
    ----------
    delta_round_ms : float
        Extra round time of the longer draft ΔT, ms.
    delta_tokens : float
        Extra accepted tokens per round ΔN.
    round_ms : float
        Current round time T, ms.
    tokens_per_round : float
        Current accepted tokens per round N (> 0).

    Returns
    -------
    bool
        True iff ΔT/ΔN < T/N.

    Notes
    -----
    Marginal cost per token below the average cost per token.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5.
    """
    _require_positive("tokens_per_round", tokens_per_round)
    if delta_tokens <= 0:
        return False
    return delta_round_ms / delta_tokens < round_ms / tokens_per_round


def pooled_ms_per_token(round_ms: Sequence[float], *, tokens_per_round: Sequence[float]) -> float:
    """Average latency per token over rounds (ratio of sums).

    Parameters
    ----------
    round_ms : Sequence[float]
        Time of each round, ms.
    tokens_per_round : Sequence[float]
        Tokens produced in each round.

    Returns
    -------
    float
        ms per token.

    Notes
    -----
    ΣT / ΣN — not the mean of per-round ratios.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.5.
    """
    if len(round_ms) != len(tokens_per_round):
        raise ValueError("round_ms and tokens_per_round must have the same length")
    total_tokens = sum(tokens_per_round)
    _require_positive("total tokens", total_tokens)
    return sum(round_ms) / total_tokens


# --------------------------------------------------------------------------------------------------
# Queues, goodput and GPU time per request
# --------------------------------------------------------------------------------------------------


def littles_law_concurrency(arrival_per_s: float, *, residence_s: float) -> float:
    """Mean number of items in a system (Little's law).

    Parameters
    ----------
    arrival_per_s : float
        Arrival (= completion) rate λ, per s.
    residence_s : float
        Mean time in the system T, s.

    Returns
    -------
    float
        Mean concurrency n, count.

    Notes
    -----
    n = λ·T. Plain arithmetic (works on numpy arrays).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.6; card 9 (environments).
    """
    return arrival_per_s * residence_s


def goodput_per_s(quality_ok: Sequence[float], *, on_time: Sequence[float], window_s: float) -> float:
    """Outputs per second that meet both quality and deadline.

    Parameters
    ----------
    quality_ok : Sequence[float]
        1 if output i meets the quality bar else 0.
    on_time : Sequence[float]
        1 if output i meets its deadline else 0.
    window_s : float
        Observation window T_obs, s.

    Returns
    -------
    float
        R_good, outputs/s.

    Notes
    -----
    R_good = Σ_i quality_i·deadline_i / T_obs.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.6.
    """
    if len(quality_ok) != len(on_time):
        raise ValueError("quality_ok and on_time must have the same length")
    _require_positive("window_s", window_s)
    return sum(q * d for q, d in zip(quality_ok, on_time, strict=True)) / window_s


def gpu_s_per_request(
    new_tokens: float, *, output_tokens: float, prefill_tokens_per_s: float, decode_calls_per_s: float
) -> float:
    """GPU time one request occupies.

    Parameters
    ----------
    new_tokens : float
        Uncached prompt tokens L_new.
    output_tokens : float
        Returned tokens G (>= 1).
    prefill_tokens_per_s : float
        Prefill rate r_P, tokens/s per request share.
    decode_calls_per_s : float
        Decode calls per second r_D for this request's share.

    Returns
    -------
    float
        t_GPU, s.

    Notes
    -----
    t_GPU = L_new/r_P + (G − 1)/r_D (the first token comes out of prefill).

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.6.
    """
    _require_positive("prefill_tokens_per_s", prefill_tokens_per_s)
    _require_positive("decode_calls_per_s", decode_calls_per_s)
    if output_tokens < 1:
        raise ValueError(f"output_tokens must be >= 1, got {output_tokens}")
    return new_tokens / prefill_tokens_per_s + (output_tokens - 1) / decode_calls_per_s


# --------------------------------------------------------------------------------------------------
# Continuous batching timeline (fixed vs continuous vs chunked prefill)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batching timeline.

    Attributes
    ----------
    arrival_ms : float
        Arrival time, ms.
    prompt_tokens : int
        Prompt tokens to prefill (>= 1).
    output_tokens : int
        Tokens to return (>= 1); the first comes out of the prefill round.
    """

    arrival_ms: float
    prompt_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class BatchTimeline:
    """Result of :func:`batching_timeline`.

    Attributes
    ----------
    total_ms : float
        Time of the last completion, ms from t = 0.
    max_itl_ms : float
        Largest gap between consecutive tokens of any request, ms.
    first_token_ms : tuple[float, ...]
        Time of each request's first token, ms.
    completion_ms : tuple[float, ...]
        Time of each request's last token, ms.
    round_ms : tuple[float, ...]
        Duration of every executed round, ms.
    """

    total_ms: float
    max_itl_ms: float
    first_token_ms: tuple[float, ...]
    completion_ms: tuple[float, ...]
    round_ms: tuple[float, ...]


@dataclass
class _Progress:
    prefilled: int = 0
    generated: int = 0
    last_token_ms: float | None = None


def batching_timeline(
    requests: Sequence[BatchRequest],
    *,
    policy: BatchPolicy,
    max_concurrent: int = 2,
    chunk_tokens: int = 2048,
    round_token_budget: int = 4096,
    fixed_ms: float = ROUND_FIXED_MS,
    us_per_new_token: float = ROUND_US_PER_NEW_TOKEN,
    ns_per_pair: float = ROUND_NS_PER_PAIR,
) -> BatchTimeline:
    """Round-by-round timeline of one engine under a batching policy.

    Parameters
    ----------
    requests : Sequence[BatchRequest]
        The requests (admitted first-come first-served, ties by position).
    policy : {"fixed", "continuous", "chunked"}
        fixed: admit only when the batch is empty and run it to completion; continuous: fill free
        slots at every round boundary, whole prompts prefilled in one round; chunked: as continuous,
        but each prefilling request advances at most ``chunk_tokens`` per round and a round holds at
        most ``round_token_budget`` new tokens (decode tokens first).
    max_concurrent : int
        Concurrency limit (sequences in the batch).
    chunk_tokens : int
        Prefill chunk size for the chunked policy, tokens.
    round_token_budget : int
        New-token budget per round for the chunked policy, tokens.
    fixed_ms, us_per_new_token, ns_per_pair : float
        Parameters of :func:`round_time_ms`.

    Returns
    -------
    BatchTimeline
        Completion times, maximum inter-token latency and round durations, ms.

    Notes
    -----
    Each round costs T_round = fixed + u·(new tokens) + v·(pairs) with chunk pairs c·h + c(c + 1)/2;
    a decoding sequence with h cached tokens adds one new token and h + 1 pairs.

    References
    ----------
    Card 3 (ledgers.md), book ch08 §8.2.2.
    """
    if max_concurrent < 1:
        raise ValueError(f"max_concurrent must be >= 1, got {max_concurrent}")
    if chunk_tokens < 1 or round_token_budget < 1:
        raise ValueError("chunk_tokens and round_token_budget must be >= 1")
    for r in requests:
        if r.prompt_tokens < 1 or r.output_tokens < 1:
            raise ValueError("every request needs prompt_tokens >= 1 and output_tokens >= 1")
    order = sorted(range(len(requests)), key=lambda i: (requests[i].arrival_ms, i))
    waiting = list(order)
    running: list[int] = []
    progress = [_Progress() for _ in requests]
    first = [math.nan] * len(requests)
    done = [math.nan] * len(requests)
    rounds: list[float] = []
    max_itl = 0.0
    now = 0.0
    remaining = len(requests)
    while remaining:
        arrived = [i for i in waiting if requests[i].arrival_ms <= now]
        free = max_concurrent - len(running)
        if policy == "fixed" and running:
            free = 0
        for i in arrived[: max(free, 0)]:
            waiting.remove(i)
            running.append(i)
        if not running:
            now = min(requests[i].arrival_ms for i in waiting)
            continue
        budget = round_token_budget if policy == "chunked" else math.inf
        new_tokens = 0.0
        pairs = 0.0
        emitting: list[int] = []
        for i in running:
            p = progress[i]
            if p.prefilled >= requests[i].prompt_tokens:
                cached = requests[i].prompt_tokens + p.generated - 1
                new_tokens += 1
                pairs += chunk_causal_pairs(1, history_tokens=cached)
                budget -= 1
                emitting.append(i)
        for i in running:
            p = progress[i]
            todo = requests[i].prompt_tokens - p.prefilled
            if todo <= 0:
                continue
            chunk = todo if policy != "chunked" else int(min(todo, chunk_tokens, budget))
            if chunk <= 0:
                continue
            new_tokens += chunk
            pairs += chunk_causal_pairs(chunk, history_tokens=p.prefilled)
            budget -= chunk
            p.prefilled += chunk
            if p.prefilled >= requests[i].prompt_tokens:
                emitting.append(i)
        duration = round_time_ms(
            new_tokens,
            causal_pairs=pairs,
            fixed_ms=fixed_ms,
            us_per_new_token=us_per_new_token,
            ns_per_pair=ns_per_pair,
        )
        rounds.append(duration)
        now += duration
        for i in emitting:
            p = progress[i]
            p.generated += 1
            if p.last_token_ms is None:
                first[i] = now
            else:
                max_itl = max(max_itl, now - p.last_token_ms)
            p.last_token_ms = now
            if p.generated >= requests[i].output_tokens:
                done[i] = now
                remaining -= 1
        running = [i for i in running if math.isnan(done[i])]
    return BatchTimeline(
        total_ms=max(done) if done else 0.0,
        max_itl_ms=max_itl,
        first_token_ms=tuple(first),
        completion_ms=tuple(done),
        round_ms=tuple(rounds),
    )
