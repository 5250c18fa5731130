"""Efficiency terms that separate a roofline from a real engine (the non-ideal part of every step time).

Each term is named, has a physical meaning and takes its parameters from the catalog (accelerator
``efficiency`` defaults and the per-family ``calibration`` record); ``EfficiencyTerms.ideal()`` turns them
all off (efficiency 1, no overhead, no paging waste), which is what ``--ideal`` prints.

Terms:
- decode bandwidth efficiency η_m (MBU of the weight/KV stream);
- prefill compute efficiency η_p(n, t) = η_max · (n/t) / (n/t + n_half): small prefills, and GEMMs sharded
  t ways (each GPU holds 1/t of the columns, so n rows over t GPUs are n/t full-width rows of work per GPU),
  cannot fill the tensor cores;
- fixed per-step overhead T_overhead (scheduler, kernel launches, sampling);
- weight-read efficiency of de-quantizing kernels (W4A16/W8A16 read fewer bytes but not at full speed);
- TP all-reduce bus-bandwidth efficiency (achieved busbw / link spec);
- KV paging waste: a sequence of H tokens holds ceil(H/p)·p slots (p = page size in tokens);
- compute/memory overlap of one operator group: ‖(T_compute, T_memory)‖_q instead of the roofline's max.

References: card 1 (MFU/MBU), card 3 (paging waste; measured MBU 33–65 %, prefill MFU 58–62 %),
card 6 (busbw vs algbw), README rule "never add an overhead twice when an efficiency already contains it".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

Num = Any

OPERATOR_OVERLAP_EXPONENT = 2.85
"""q of :func:`overlapped_stage_s` (bounds: 1 = no overlap, the sum; ∞ = perfect overlap, the roofline max, card
7). Measured: the 128 GEMMs of measurements/h200_kernels.csv whose compute and memory times are within 2× of
each other (min/max > 0.5, at the kernel-level rates 0.71 / 0.64 of the bf16 / FP8 peak and 0.83 of the
bandwidth + 3.6 µs) take 1.09-1.30× the larger one; (T_c^q + T_m^q)^(1/q) is median-unbiased on them at
q = 2.85 (mean-unbiased 2.35), i.e. 2^(-1/q) = 78 % of the roofline where the two times are equal. With the
H100-family MBUs at the same rows' bandwidth transfer (catalogs/accelerators.yaml) it moved the public medians
TPOT / throughput / TTFT 14.6 / 11.2 / 16.8 → 13.5 / 10.8 / 16.8 % (reports/validation.md, 'TPOT median', F4).
A family's calibration record may set its own ``operator_overlap_exponent``."""


@dataclass(frozen=True)
class EfficiencyTerms:
    """Parameters of the efficiency terms of one (accelerator, weight format)."""

    decode_mbu_frac: Num = 1.0
    prefill_mfu_frac: Num = 1.0
    prefill_half_tokens: Num = 0.0
    """Tokens per prefill at which compute efficiency is half its maximum (0 = always at maximum)."""
    step_overhead_s: Num = 0.0
    weight_read_efficiency_frac: Num = 1.0
    """Bandwidth efficiency of the weight stream relative to η_m (below 1 for de-quantizing kernels)."""
    link_efficiency_frac: Num = 1.0
    kv_page_tokens: Num = 1.0
    overlap_exponent: Num = math.inf
    """q of :func:`overlapped_stage_s` (∞ = the roofline's max: compute and memory overlap perfectly)."""
    weight_stream_frac: Num = 0.0
    """Achieved fraction of peak bandwidth of one GEMM's weight stream, kernel level (0 = ``decode_mbu_frac``)."""
    gemm_launch_s: Num = 0.0
    """Fixed time of one GEMM kernel on top of its weight stream, s (0 = none)."""
    layer_kernels_s: Num = 0.0
    """Fixed GPU time per decoder layer of its small non-GEMM kernels (norms, RoPE, KV write, activation,
    residual), s (0 = none)."""
    kv_stream_frac: Num = 0.0
    """Achieved fraction of peak bandwidth of the attention kernels' KV read and write (0 = ``decode_mbu_frac``)."""

    @classmethod
    def ideal(cls) -> EfficiencyTerms:
        """All terms off: the roofline lower bound."""
        return cls()

    def as_dict(self) -> dict[str, Num]:
        """Parameter values by name."""
        return asdict(self)


def decode_bandwidth_efficiency_frac(terms: EfficiencyTerms) -> Num:
    """Achieved fraction of peak bandwidth while streaming weights and KV, η_m (constant in batch): the
    weight, KV and expert streams' fraction where no kernel-level figure is set.

    Per-step fixed costs (engine host time, step overhead) are separate terms: counting them here too would
    add them twice. (The book's RTX PRO 6000 table, 33 % → 65 % with batch, was measured with request logging
    on, a ≈ 26 ms host floor; the same box's GPU-only step gives 0.81 at B = 1.)
    """
    return terms.decode_mbu_frac


def weight_stream_efficiency_frac(terms: EfficiencyTerms) -> Num:
    """Achieved fraction of peak bandwidth of the weight stream, η_w·η_q: ``weight_stream_frac`` (kernel level)
    where set, else the decode MBU η_m; times the de-quantizing kernels' read efficiency η_q."""
    frac = np.where(terms.weight_stream_frac > 0, terms.weight_stream_frac, decode_bandwidth_efficiency_frac(terms))
    return frac * terms.weight_read_efficiency_frac


def kv_stream_efficiency_frac(terms: EfficiencyTerms) -> Num:
    """Achieved fraction of peak bandwidth of the KV stream: ``kv_stream_frac`` (kernel level) where set, else the
    decode MBU η_m. Measured (measurements/h200_kernels.csv attn_decode, SDPA over a contiguous bf16 KV cache):
    0.85-0.93 of 4.8 TB/s at ≥ 256 MiB of KV per kernel, a ≈ 7.8 µs floor per kernel below that."""
    return np.where(terms.kv_stream_frac > 0, terms.kv_stream_frac, decode_bandwidth_efficiency_frac(terms))


def expert_stream_efficiency_frac(terms: EfficiencyTerms) -> Num:
    """Achieved fraction of peak bandwidth of the routed experts' weight stream: the decode MBU η_m times η_q.
    ``weight_stream_frac`` is a dense-GEMM figure; grouped expert GEMMs were measured at 0.47-0.63 of β at 1-64
    tokens per expert (measurements/h200_kernels_extra.csv moe_gemm, torch._grouped_mm bf16), below η_m = 0.65."""
    return decode_bandwidth_efficiency_frac(terms) * terms.weight_read_efficiency_frac


def weight_stream_s(
    terms: EfficiencyTerms, weight_bytes: Num, bandwidth_bytes_per_s: Num, gemm_kernels: Num, layers: Num = 0.0,
    expert_bytes: Num = 0.0,
) -> Num:
    """Time to stream the weights of ``gemm_kernels`` GEMM kernels over ``layers`` decoder layers, s:

        T_W = W / (β · η_w · η_q) + N_gemm · τ_gemm + L · τ_layer

    W = weight bytes per GPU, β = peak bandwidth (B/s), η_w·η_q = :func:`weight_stream_efficiency_frac`,
    τ_gemm = ``gemm_launch_s`` (the per-kernel fixed time of a memory-bound GEMM: prologue, first tile's
    latency, tail), τ_layer = ``layer_kernels_s`` (the small kernels of a layer that run between its GEMMs,
    serially). ``expert_bytes`` (part of W: routed experts) stream at :func:`expert_stream_efficiency_frac`.
    With τ = 0 and η_w unset this is the roofline weight read at the decode MBU. Monotone: more
    bandwidth never slows it. Measured (measurements/h200_kernels.csv, H200, 1-32 rows, bf16 and FP8):
    t ≈ 3.6 µs + W / 3.99 TB/s (0.83 of 4.8 TB/s), median error 5 %.
    """
    dense_bw = bandwidth_bytes_per_s * weight_stream_efficiency_frac(terms)
    # the experts' correction is exactly 0 where both fractions are equal (kernel terms unset): W/(β·η_m) as before
    stream = weight_bytes / dense_bw + expert_bytes * (
        1.0 / (bandwidth_bytes_per_s * expert_stream_efficiency_frac(terms)) - 1.0 / dense_bw
    )
    return stream + gemm_kernels * terms.gemm_launch_s + layers * terms.layer_kernels_s


def prefill_compute_efficiency_frac(terms: EfficiencyTerms, tokens: Num, tp: Num = 1.0) -> Num:
    """Prefill GEMM efficiency η_p(n, t) = η_max · (n/t) / (n/t + n_half), fraction of the dense peak.

    n = GEMM rows (prompt tokens in the step), t = TP degree. The curve saturates in n/t ("tokens per GPU":
    a rank does 1/t of the work of n rows), with n_half (``prefill_half_tokens``) about half a tensor-core
    tile of rows. The t in it is a serving-level term, not a GEMM property: one 70B rank's whole 512-token
    prefill, collectives left out, runs at 0.62 / 0.56 / 0.51 of the dense peak at TP 2 / 4 / 8 on an H200
    (measurements/h200_kernels_steps_70b_shards.csv), where this curve charges 0.48 / 0.40 / 0.30; the
    serving rows still need the loss (saturating in n instead worsens them: reports/validation.md, "Whole
    steps"), so it stands in for what short TP prefills lose outside the rank's kernels (launched without a CUDA
    graph, the TP8 rank's prefill is host-bound: measurements/h200_kernels_steps_host.csv). Monotone:
    more tokens never lower the efficiency, and the per-GPU time F/t / η_p = F_row·(n/t + n_half)/η_max
    never grows with t. The weight stream is charged separately (max(compute, weight read)), so n_half is
    NOT the roofline ridge; using the ridge here would count the memory bound twice.
    """
    rows_per_gpu = tokens / np.maximum(tp, 1.0)
    return terms.prefill_mfu_frac * rows_per_gpu / (rows_per_gpu + terms.prefill_half_tokens)


def decode_compute_efficiency_frac(terms: EfficiencyTerms, tokens: Num) -> Num:
    """Compute efficiency of a decode step's matmuls, η_max (constant in the row count).

    A decode matmul with few rows is slow because it is bound by the weight stream, which the step
    already charges as T_weights; applying the prefill saturation curve here as well would count that
    bound twice (at batch 1 it made a 4-bit 8B model on an RTX 4090 5x slower than measured).
    """
    return terms.prefill_mfu_frac + 0.0 * tokens


def kv_paging_factor(terms: EfficiencyTerms, context_tokens: Num) -> Num:
    """KV slots held per token of history with paged allocation: ceil(H/p)·p / H (card 3 paging waste)."""
    page = terms.kv_page_tokens
    ctx = np.maximum(context_tokens, 1.0)
    return np.ceil(ctx / page) * page / ctx


def overlapped_stage_s(terms: EfficiencyTerms, compute_s: Num, memory_s: Num) -> Num:
    """Time of one operator group whose compute and memory streams overlap imperfectly, s.

        T = (T_c^q + T_m^q)^(1/q) = T_hi · (1 + (T_lo/T_hi)^q)^(1/q),   q = ``overlap_exponent``

    Far from the ridge (one term ≫ the other) T → max(T_c, T_m), the card 7 roofline; at the ridge
    (T_c = T_m) T = 2^(1/q)·max: a kernel cannot keep both the tensor cores and the memory pipe busy while
    its tiles wait for operands (loads, epilogue, tails of waves). This is where a decode step at batch
    100-1,000 sits (the batched GEMMs turn compute-bound there; the KV read against attention at long
    context), so the loss appears at large batch only and small-batch steps keep the memory-bound time.
    Monotone: non-decreasing in both times, so more FLOP/s or bandwidth is never slower. q = ∞ (ideal) is
    the max.
    """
    hi = np.maximum(compute_s, memory_s)
    q = terms.overlap_exponent
    if np.all(np.isinf(q)):  # the roofline max: skip the powers (the candidate table asks this per step)
        return hi
    return hi * overlap_factor(q, np.minimum(compute_s, memory_s), hi)


def overlap_factor(q: Num, low_s: Num, high_s: Num) -> Num:
    """(1 + r^q)^(1/q) with r = ``low_s`` / ``high_s`` ≤ 1: T / max(T_c, T_m) of :func:`overlapped_stage_s`,
    between 1 and 2^(1/q) (where both times are 0 any factor gives T = 0).

    For finite q it is evaluated as exp(ln(1 + exp(q·ln r)) / q): the same number to floating rounding as the
    two powers (within 4e-16), at about 0.6 of their cost (numpy's float64 exp and log are vectorized, its power
    is not; the candidate table asks this on every step of its fixed points). A q = ∞ element takes the powers
    (r^∞ = 0 below the ridge, 1 at it: the max).
    """
    if np.all(np.isfinite(q)):
        # max(·, 1e-300): where the low time is 0, r^q = (1e-300/T_hi)^q = 0 (factor 1); where both are, r = 1
        # (T = 0·2^(1/q) = 0); a nonzero step time is far above 1e-300 s, so r = lo/hi everywhere else
        ratio = np.maximum(low_s, 1e-300) / np.maximum(high_s, 1e-300)
        return np.exp(np.log(1.0 + np.exp(q * np.log(ratio))) / q)
    ratio = np.where(high_s > 0, low_s / np.where(high_s > 0, high_s, 1.0), 0.0)
    return (1.0 + ratio**q) ** (1.0 / q)


def overlap_loss_s(terms: EfficiencyTerms, compute_s: Num, memory_s: Num) -> Num:
    """:func:`overlapped_stage_s` − max(T_c, T_m) ≥ 0: the time imperfect overlap adds to the roofline, s."""
    if np.all(np.isinf(terms.overlap_exponent)):
        return 0.0
    hi = np.maximum(compute_s, memory_s)
    return hi * overlap_factor(terms.overlap_exponent, np.minimum(compute_s, memory_s), hi) - hi


def calibrated_efficiency_terms(
    parameters: Mapping[str, float],
    *,
    decode_mbu_frac: float,
    prefill_mfu_frac: float,
    link_efficiency_frac: float,
    weight_only: bool,
) -> EfficiencyTerms:
    """Efficiency terms from an accelerator's sourced defaults and its family's calibration parameters.

    Parameters
    ----------
    parameters
        The family record of catalogs/calibration.yaml: ``step_overhead_ms`` (ms),
        ``prefill_saturation_tokens`` (tokens), optional ``decode_mbu_scale`` and ``prefill_mfu_scale``
        (dimensionless multipliers on the accelerator defaults, fitted by ``make validate``),
        ``weight_only_read_efficiency_frac``, ``kv_page_tokens`` (tokens) and optional
        ``operator_overlap_exponent`` (q of :func:`overlapped_stage_s`, default
        :data:`OPERATOR_OVERLAP_EXPONENT`).
    decode_mbu_frac, prefill_mfu_frac, link_efficiency_frac
        The accelerator's sourced defaults (fractions of peak).
    weight_only
        True when the weight format is de-quantized on the fly (W4A16 / W8A16).

    Returns
    -------
    EfficiencyTerms
        With η_m = min(η_m0 · s_m, 1) and η_p = min(η_p0 · s_p, 1).

    Notes
    -----
    The scales are per family and per (accelerator, format) never per measurement row; a scale of 1
    keeps the sourced default. Efficiencies are capped at 1 so a fit can never beat the roofline.

    References
    ----------
    Card 1 (MFU/MBU), card 3 (measured MBU and MFU), chapter 8 §8.2.
    """
    mbu = min(decode_mbu_frac * parameters.get("decode_mbu_scale", 1.0), 1.0)
    mfu = min(prefill_mfu_frac * parameters.get("prefill_mfu_scale", 1.0), 1.0)
    weight_read = parameters.get("weight_only_read_efficiency_frac", 1.0) if weight_only else 1.0
    return EfficiencyTerms(
        decode_mbu_frac=mbu,
        prefill_mfu_frac=mfu,
        prefill_half_tokens=parameters.get("prefill_saturation_tokens", 0.0),
        step_overhead_s=parameters.get("step_overhead_ms", 0.0) / 1e3,
        weight_read_efficiency_frac=weight_read,
        link_efficiency_frac=link_efficiency_frac,
        kv_page_tokens=parameters.get("kv_page_tokens", 16.0),
        overlap_exponent=parameters.get("operator_overlap_exponent", OPERATOR_OVERLAP_EXPONENT),
        weight_stream_frac=0.0 if weight_only else parameters.get("weight_stream_frac", 0.0),
        gemm_launch_s=parameters.get("gemm_launch_us", 0.0) / 1e6,
        layer_kernels_s=parameters.get("layer_kernels_us", 0.0) / 1e6,
        kv_stream_frac=parameters.get("kv_stream_frac", 0.0),
    )
