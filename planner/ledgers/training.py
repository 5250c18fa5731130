"""Card 4 — training resource accounting: FLOPs, state bytes, ZeRO, cards, steps, completion, recovery.

Conventions: one multiply-add = 2 FLOP; peak compute Π in dense BF16 TFLOP/s, MFU η as a fraction; bytes
per parameter as in the book (BF16 weights 2, BF16 gradients 2, FP32 master 4, Adam m and v 4 each).
Times in seconds unless the name says otherwise. Functions marked "works on numpy arrays" use plain
arithmetic only.

References: card 4 (book ch10 whole chapter, ch03 §3.4–3.6, ch07 §7.6.4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from planner.ledgers._checks import require_count as _require_count
from planner.ledgers._checks import require_fraction as _require_frac
from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import hierarchical_allreduce_parts
from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP

ZeroStage = Literal[0, 1, 2, 3]

WEIGHT_BYTES_PER_PARAM = 2.0
"""BF16 weights."""
OPTIMIZER_BYTES_PER_PARAM = 12.0
"""FP32 master weights 4 + Adam m 4 + Adam v 4."""
TRAINING_STATE_BYTES_PER_PARAM = 16.0
"""BF16 weights 2 + BF16 gradients 2 + FP32 master 4 + Adam m 4 + Adam v 4 (card 4)."""
TRAINING_STATE_FP32_GRAD_BYTES_PER_PARAM = 18.0
"""As above with FP32 gradients (4 instead of 2)."""
CHECKPOINT_BYTES_PER_PARAM = 14.0
"""BF16 weights 2 + FP32 master 4 + Adam m and v 8 (card 4)."""
CHINCHILLA_TOKENS_PER_PARAM = 20.0
"""D = 20·N (Chinchilla-style), card 4."""


def _effective_flop_per_s(peak_tflops: float, mfu_frac: float) -> float:
    _require_positive("peak_tflops", peak_tflops)
    _require_frac("mfu_frac", mfu_frac, allow_zero=False)
    return peak_tflops * FLOP_PER_TFLOP * mfu_frac


# --------------------------------------------------------------------------------------------------
# FLOPs
# --------------------------------------------------------------------------------------------------


def dense_train_flop(n_params: float, *, tokens: float) -> float:
    """Training FLOPs of a dense model, F ≈ 6·N·D. Works on numpy arrays.

    Parameters
    ----------
    n_params : float
        Parameters N.
    tokens : float
        Training tokens D.

    Returns
    -------
    float
        FLOP (forward 2ND + input gradient 2ND + weight gradient 2ND; attention not included).

    Notes
    -----
    F = 6·N·D (Qwen3-8B, 8,192 tokens: 402.591 TFLOP, 7.15 % below the full count of 431.368).

    References
    ----------
    Card 4 (book ch03 §3.5, ch10 §10.1).
    """
    _require_non_negative("n_params", n_params)
    _require_non_negative("tokens", tokens)
    return 6.0 * n_params * tokens


def linear_train_flop(rows: float, *, inner: float, cols: float) -> float:
    """Training FLOPs of one linear layer [m, k] × [k, n]: forward + input gradient + weight gradient.

    Parameters
    ----------
    rows : float
        m (tokens in the batch).
    inner : float
        k (input features).
    cols : float
        n (output features).

    Returns
    -------
    float
        FLOP = 2mkn + 2mkn + 2mkn = 6mkn. Works on numpy arrays.

    References
    ----------
    Card 4 (book ch03 §3.5).
    """
    _require_non_negative("rows", rows)
    _require_non_negative("inner", inner)
    _require_non_negative("cols", cols)
    return 6.0 * rows * inner * cols


def train_step_flop(linear_train_flop: float, *, attention_forward_flop: float) -> float:
    """Full training FLOPs: linear layers (6mkn each) plus attention at 3× its forward, FLOP.

    Parameters
    ----------
    linear_train_flop : float
        Sum of :func:`linear_train_flop` over all matrices (including the LM head on the tokens that
        carry labels), FLOP.
    attention_forward_flop : float
        Forward FLOPs of the attention score and value products (causal pairs), FLOP.

    Returns
    -------
    float
        F_train, FLOP (no recomputation). Works on numpy arrays.

    Notes
    -----
    F_train = Σ 6mkn + 3·F_attn,fwd (Qwen3-8B, 8,192 tokens: 143.789 + 287.579 = 431.368 TFLOP).

    References
    ----------
    Card 4 (book ch03 §3.5).
    """
    _require_non_negative("linear_train_flop", linear_train_flop)
    _require_non_negative("attention_forward_flop", attention_forward_flop)
    return linear_train_flop + 3.0 * attention_forward_flop


def chinchilla_train_flop(n_params: float, *, tokens_per_param: float = CHINCHILLA_TOKENS_PER_PARAM) -> float:
    """Training FLOPs at a fixed tokens-per-parameter ratio: 6·N·(r·N), = 120·N² for r = 20.

    Parameters
    ----------
    n_params : float
        Parameters N.
    tokens_per_param : float
        D/N (20 for Chinchilla-style training).

    Returns
    -------
    float
        FLOP (1T dense: 1.2e26). Works on numpy arrays.

    References
    ----------
    Card 4 (book ch10 §10.6).
    """
    _require_positive("tokens_per_param", tokens_per_param)
    return dense_train_flop(n_params, tokens=tokens_per_param * n_params)


# --------------------------------------------------------------------------------------------------
# State bytes and ZeRO
# --------------------------------------------------------------------------------------------------


def training_state_bytes(
    n_params: float,
    *,
    weight_bytes_per_param: float = WEIGHT_BYTES_PER_PARAM,
    grad_bytes_per_param: float = 2.0,
    optimizer_bytes_per_param: float = OPTIMIZER_BYTES_PER_PARAM,
) -> float:
    """Training state of a model (weights + gradients + master + Adam), bytes. Works on numpy arrays.

    Parameters
    ----------
    n_params : float
        Parameters N.
    weight_bytes_per_param : float
        Working weights (BF16: 2), B.
    grad_bytes_per_param : float
        Gradients (BF16: 2, FP32: 4), B.
    optimizer_bytes_per_param : float
        FP32 master + Adam m + Adam v (12), B.

    Returns
    -------
    float
        Bytes: 16·N with BF16 gradients, 18·N with FP32 gradients (activations not included).

    Notes
    -----
    Qwen3-8B: 8,190,735,360 × 18 B = 147.433 GB (137.308 GiB); × 16 B = 131.1 GB, 8× the BF16 weights.

    References
    ----------
    Card 4 (book ch03 Example 3-3, ch10 §10.1).
    """
    _require_non_negative("n_params", n_params)
    per_param = weight_bytes_per_param + grad_bytes_per_param + optimizer_bytes_per_param
    _require_non_negative("bytes per param", per_param)
    return n_params * per_param


def checkpoint_bytes(
    n_params: float,
    *,
    weight_bytes_per_param: float = WEIGHT_BYTES_PER_PARAM,
    optimizer_bytes_per_param: float = OPTIMIZER_BYTES_PER_PARAM,
) -> float:
    """Checkpoint size: weights + FP32 master + Adam (no gradients), bytes = 14·N by default.

    References
    ----------
    Card 4 (book ch10 §10.3).
    """
    _require_non_negative("n_params", n_params)
    return n_params * (weight_bytes_per_param + optimizer_bytes_per_param)


def zero_state_bytes_per_card(
    n_params: float,
    *,
    stage: ZeroStage,
    dp_ranks: int,
    weight_bytes_per_param: float = WEIGHT_BYTES_PER_PARAM,
    grad_bytes_per_param: float = 2.0,
    optimizer_bytes_per_param: float = OPTIMIZER_BYTES_PER_PARAM,
    activation_bytes: float = 0.0,
) -> float:
    """Per-card training state under ZeRO stage 0–3 over d data-parallel ranks, bytes.

    Parameters
    ----------
    n_params : float
        Parameters N (of the shard this data-parallel group trains).
    stage : {0, 1, 2, 3}
        0 = no sharding; 1 shards the optimizer; 2 also gradients; 3 also weights.
    dp_ranks : int
        Data-parallel ranks d.
    weight_bytes_per_param, grad_bytes_per_param, optimizer_bytes_per_param : float
        Bytes per parameter (defaults 2 / 2 / 12).
    activation_bytes : float
        Activations held by the card, B (added unsharded).

    Returns
    -------
    float
        Bytes per card.

    Notes
    -----
    With the defaults: stage 0 = 16N; 1 = 4N + 12N/d; 2 = 2N + 14N/d; 3 = 16N/d; plus activations.

    References
    ----------
    Card 4 (book ch10 §10.2).
    """
    _require_non_negative("n_params", n_params)
    _require_count("dp_ranks", dp_ranks)
    _require_non_negative("activation_bytes", activation_bytes)
    w, g, o = weight_bytes_per_param, grad_bytes_per_param, optimizer_bytes_per_param
    if stage == 0:
        per_param = w + g + o
    elif stage == 1:
        per_param = w + g + o / dp_ranks
    elif stage == 2:
        per_param = w + (g + o) / dp_ranks
    elif stage == 3:
        per_param = (w + g + o) / dp_ranks
    else:
        raise ValueError(f"ZeRO stage must be 0, 1, 2 or 3, got {stage!r}")
    return n_params * per_param + activation_bytes


def zero3_traffic_bytes_per_step(
    n_params: float,
    *,
    microbatches: int,
    dp_ranks: int,
    weight_bytes_per_param: float = WEIGHT_BYTES_PER_PARAM,
) -> float:
    """ZeRO-3 parameter/gradient traffic per card per step, bytes.

    Parameters
    ----------
    n_params : float
        Parameters N.
    microbatches : int
        Micro-batches m per step (weights gathered for every forward and backward).
    dp_ranks : int
        Data-parallel ranks d.
    weight_bytes_per_param : float
        Bytes per parameter on the wire (BF16: 2).

    Returns
    -------
    float
        V = 3·m·(d − 1)/d × 2N bytes (forward all-gather, backward all-gather, gradient reduce-scatter).

    References
    ----------
    Card 4 (book ch10 §10.2).
    """
    _require_non_negative("n_params", n_params)
    _require_count("microbatches", microbatches)
    _require_count("dp_ranks", dp_ranks)
    return 3.0 * microbatches * (dp_ranks - 1) / dp_ranks * weight_bytes_per_param * n_params


# --------------------------------------------------------------------------------------------------
# Cards, calendar, steps, completion
# --------------------------------------------------------------------------------------------------


def tokens_per_card_per_s(flop_per_token: float, *, peak_tflops: float, mfu_frac: float) -> float:
    """Training tokens one card processes per second: Π·η / (FLOP per token). Works on numpy arrays.

    Notes
    -----
    H100 at 40 % (395.76 TFLOP/s) and 52.7 GFLOP/token → ≈ 7,500 tokens/s.

    References
    ----------
    Card 4 (book ch10 §10.1).
    """
    _require_positive("flop_per_token", flop_per_token)
    return _effective_flop_per_s(peak_tflops, mfu_frac) / flop_per_token


def cards_for_compute(train_flop: float, *, peak_tflops: float, mfu_frac: float, available_s: float) -> int:
    """Smallest card count that finishes the FLOPs in the available time: ceil(F/(Π·η·T_avail)).

    Parameters
    ----------
    train_flop : float
        Total training FLOPs F.
    peak_tflops : float
        Dense BF16 peak per card Π, TFLOP/s.
    mfu_frac : float
        MFU η (0..1].
    available_s : float
        Wall-clock time available T_avail, s.

    Returns
    -------
    int
        Cards p.

    References
    ----------
    Card 4 (book ch10 §10.1: 5.27e21 FLOP in 30 days → 6 H100 or 31 RTX 4090 at 40 %).
    """
    _require_non_negative("train_flop", train_flop)
    _require_positive("available_s", available_s)
    exact = train_flop / (_effective_flop_per_s(peak_tflops, mfu_frac) * available_s)
    return max(1, math.ceil(exact - 1e-9))


def training_calendar_s(train_flop: float, *, cards: float, peak_tflops: float, mfu_frac: float) -> float:
    """Calendar time of a training run on p cards: T = F/(p·Π·η), s. Works on numpy arrays.

    References
    ----------
    Card 4 (book ch10 §10.1, §10.6: 1.2e26 FLOP on 16,384 H100 at 40 % → 214 days).
    """
    _require_non_negative("train_flop", train_flop)
    _require_positive("cards", cards)
    return train_flop / (cards * _effective_flop_per_s(peak_tflops, mfu_frac))


def calendar_from_gpu_hours_h(gpu_hours: float, *, gpus: float) -> float:
    """Calendar hours from a GPU-hour budget: T_calendar = H_GPU / n_GPU. Works on numpy arrays.

    References
    ----------
    Card 4 (book ch10 §10.1).
    """
    _require_non_negative("gpu_hours", gpu_hours)
    _require_positive("gpus", gpus)
    return gpu_hours / gpus


def training_step_count(tokens: float, *, tokens_per_step: float) -> int:
    """Optimizer steps: ceil(D / tokens per step).

    References
    ----------
    Card 4 (book ch10 §10.6: 1e11 tokens at 3·2^20 per step → 31,790 steps).
    """
    _require_non_negative("tokens", tokens)
    _require_positive("tokens_per_step", tokens_per_step)
    return math.ceil(tokens / tokens_per_step - 1e-9)


def step_compute_s(step_flop: float, *, cards: float, peak_tflops: float, mfu_frac: float) -> float:
    """Compute time of one step spread over p cards: F_step/(p·Π·η), s. Works on numpy arrays.

    References
    ----------
    Card 4 (book ch10 §10.1: 1.66e17 FLOP on 32 / 48 RTX 4090 → 78.3 / 52.2 s).
    """
    return training_calendar_s(step_flop, cards=cards, peak_tflops=peak_tflops, mfu_frac=mfu_frac)


def step_budget_s(deadline_s: float, *, start_s: float, steps: int, loss_frac: float) -> float:
    """Largest step time that still meets the deadline: (T_deadline − T_0)/(steps·(1 + L)), s.

    Parameters
    ----------
    deadline_s : float
        Deadline measured from the same origin as ``start_s``, s.
    start_s : float
        Time T_0 before the first step (setup, data), s.
    steps : int
        Optimizer steps.
    loss_frac : float
        Failure/recovery overhead L as a fraction of the step time.

    Returns
    -------
    float
        Per-step budget t_s, s (25 days / (31,790 × 1.0108) ≈ 67.2 s).

    References
    ----------
    Card 4 (book ch10 §10.6 completion model).
    """
    _require_count("steps", steps)
    _require_non_negative("loss_frac", loss_frac)
    if deadline_s <= start_s:
        raise ValueError(f"deadline_s ({deadline_s}) must be after start_s ({start_s})")
    return (deadline_s - start_s) / (steps * (1.0 + loss_frac))


def completion_time_s(start_s: float, *, steps: int, step_s: float, loss_frac: float) -> float:
    """Completion time T_finish = T_0 + steps·t_s·(1 + L), s. Works on numpy arrays (step_s, loss_frac).

    Parameters
    ----------
    start_s : float
        T_0, s.
    steps : int
        ceil(D/b) optimizer steps.
    step_s : float
        Normal step time t_s, s.
    loss_frac : float
        Failure/recovery overhead L (fraction).

    Returns
    -------
    float
        T_finish, s (32 RTX 4090: 5 d + 31,790 × 78.9 s × 1.0102 = 34.3 days).

    References
    ----------
    Card 4 (book ch10 §10.6 completion table).
    """
    _require_non_negative("start_s", start_s)
    _require_count("steps", steps)
    _require_non_negative("step_s", step_s)
    _require_non_negative("loss_frac", loss_frac)
    return start_s + steps * step_s * (1.0 + loss_frac)


# --------------------------------------------------------------------------------------------------
# Critical batch (McCandlish et al.)
# --------------------------------------------------------------------------------------------------


def noise_scale_batch(
    hessian: npt.NDArray[np.float64],
    *,
    gradient: npt.NDArray[np.float64],
    covariance: npt.NDArray[np.float64],
) -> float:
    """Gradient noise scale B_noise = tr(HΣ)/(GᵀHG), examples.

    Parameters
    ----------
    hessian : ndarray, shape (P, P)
        Loss Hessian H.
    gradient : ndarray, shape (P,)
        True gradient G.
    covariance : ndarray, shape (P, P)
        Per-example gradient covariance Σ.

    Returns
    -------
    float
        B_noise, examples.

    References
    ----------
    Card 4 (critical batch; McCandlish et al.), book ch10 §10.2.
    """
    curvature = float(gradient @ hessian @ gradient)
    if curvature <= 0:
        raise ValueError("GᵀHG must be positive for a noise scale")
    return float(np.trace(hessian @ covariance)) / curvature


def critical_batch_examples(min_examples: float, *, min_steps: float) -> float:
    """Critical batch B_crit = E_min / S_min, examples.

    References
    ----------
    Card 4 (McCandlish et al.), book ch10 §10.2.
    """
    _require_positive("min_examples", min_examples)
    _require_positive("min_steps", min_steps)
    return min_examples / min_steps


def examples_for_steps(steps: float, *, min_steps: float, min_examples: float) -> float:
    """Examples needed to reach a loss in ``steps`` steps, from (S/S_min − 1)(E/E_min − 1) = 1.

    Parameters
    ----------
    steps : float
        Steps S (must exceed S_min).
    min_steps : float
        S_min (infinite-batch limit).
    min_examples : float
        E_min (batch-1 limit).

    Returns
    -------
    float
        E = E_min·(1 + 1/(S/S_min − 1)), examples.

    References
    ----------
    Card 4 (McCandlish et al.), book ch10 §10.2.
    """
    _require_positive("min_steps", min_steps)
    _require_positive("min_examples", min_examples)
    if steps <= min_steps:
        raise ValueError(f"steps ({steps}) must exceed min_steps ({min_steps})")
    return min_examples * (1.0 + 1.0 / (steps / min_steps - 1.0))


# --------------------------------------------------------------------------------------------------
# Pipeline parallelism
# --------------------------------------------------------------------------------------------------


def pipeline_step_s(
    microbatches: int, *, stages: int, forward_s: float, backward_s: float, virtual_stages: int = 1
) -> float:
    """1F1B / GPipe pipeline step time: (m + (p − 1)/v)(t_f + t_b) = m(t_f + t_b)(1 + bubble), s (v = 1:
    (m + p − 1)(t_f + t_b); interleaved, v model chunks per stage: :func:`pipeline_bubble_frac`'s bubble).
    Works on numpy arrays (times).

    Parameters
    ----------
    microbatches : int
        Micro-batches m per step.
    stages : int
        Pipeline stages p.
    forward_s, backward_s : float
        Forward and backward time of one micro-batch on one stage, s.

    Returns
    -------
    float
        Step time, s.

    References
    ----------
    Card 4 (pipeline), book ch10 §10.2.
    """
    _require_count("microbatches", microbatches)
    _require_count("stages", stages)
    _require_non_negative("forward_s", forward_s)
    _require_non_negative("backward_s", backward_s)
    _require_count("virtual_stages", virtual_stages)
    return (microbatches + (stages - 1) / virtual_stages) * (forward_s + backward_s)


def pipeline_utilization_frac(microbatches: int, *, stages: int, virtual_stages: int = 1) -> float:
    """Pipeline utilisation u = m/(m + (p − 1)/v) = 1/(1 + bubble) (v = 1: m/(m + p − 1)).

    References
    ----------
    Card 4 (pipeline), book ch10 §10.2.
    """
    _require_count("microbatches", microbatches)
    _require_count("stages", stages)
    _require_count("virtual_stages", virtual_stages)
    return microbatches / (microbatches + (stages - 1) / virtual_stages)


def pipeline_bubble_frac(microbatches: int, *, stages: int, virtual_stages: int = 1) -> float:
    """Pipeline bubble relative to the ideal (bubble-free) compute time: (1/v)·(p − 1)/m.

    Parameters
    ----------
    microbatches : int
        Micro-batches m.
    stages : int
        Pipeline stages p.
    virtual_stages : int
        Model chunks per stage v (1 = plain 1F1B; > 1 = interleaved).

    Returns
    -------
    float
        Bubble time / ideal compute time (1F1B: (p − 1)/m; interleaved: (p − 1)/(v·m)).

    References
    ----------
    Card 4 (pipeline), book ch10 §10.2.
    """
    _require_count("microbatches", microbatches)
    _require_count("stages", stages)
    _require_count("virtual_stages", virtual_stages)
    return (stages - 1) / (virtual_stages * microbatches)


def zb_h1_bubble_s(stages: int, *, forward_s: float, backward_s: float, weight_grad_s: float) -> float:
    """Zero-bubble ZB-H1 bubble: (p − 1)(T_F + T_B − T_W), s.

    Parameters
    ----------
    stages : int
        Pipeline stages p.
    forward_s : float
        T_F per micro-batch, s.
    backward_s : float
        T_B (input-gradient backward) per micro-batch, s.
    weight_grad_s : float
        T_W (weight-gradient part, deferred into the bubble), s.

    Returns
    -------
    float
        Bubble time, s (never negative).

    References
    ----------
    Card 4 (pipeline), book ch10 §10.2.
    """
    _require_count("stages", stages)
    _require_non_negative("forward_s", forward_s)
    _require_non_negative("backward_s", backward_s)
    _require_non_negative("weight_grad_s", weight_grad_s)
    return max(0.0, (stages - 1) * (forward_s + backward_s - weight_grad_s))


# --------------------------------------------------------------------------------------------------
# Gradient synchronisation across supernodes (ch07 §7.6.4)
# --------------------------------------------------------------------------------------------------


def grad_allreduce_supernodes_s(
    grad_bytes_per_card: float,
    *,
    local_ranks: int,
    supernodes: int,
    local_bandwidth_gb_per_s: float,
    local_latency_us: float,
    nic_bandwidth_gb_per_s: float,
    remote_latency_us: float,
    exit_bandwidth_gb_per_s: float | None = None,
    tensor_parallel: int = 1,
) -> float:
    """Per-step gradient all-reduce across supernodes T_grad, s.

    Parameters
    ----------
    grad_bytes_per_card : float
        Gradient bytes per card G, B.
    local_ranks : int
        Data-parallel peers q of a card inside one supernode (supernode cards / TP degree).
    supernodes : int
        Supernodes H in the data-parallel group.
    local_bandwidth_gb_per_s : float
        Per-card local bandwidth B_L (NVLink), GB/s.
    local_latency_us : float
        α_L per local round, µs.
    nic_bandwidth_gb_per_s : float
        Per-card NIC bandwidth B_NIC, GB/s.
    remote_latency_us : float
        α_R per cross-supernode round, µs.
    exit_bandwidth_gb_per_s : float, optional
        Supernode exit bandwidth B_out (oversubscribed fabric); ``None`` = non-oversubscribed (the NIC term
        alone binds).
    tensor_parallel : int
        TP degree inside the supernode; sets the exit volume V_out = 2(H − 1)/H × TP × G.

    Returns
    -------
    float
        T_grad, s.

    Notes
    -----
    T_grad = 2(q − 1)α_L + 2(q − 1)G/(q·B_L) + 2(H − 1)α_R + max(2(H − 1)G/(H·q·B_NIC), V_out/B_out),
    V_out = 2(H − 1)/H × 8G for TP8. The book's 1,024-card study (TP8 × DP128, G = 8 GB) gives 0.318 s for
    8-card supernodes (q = 1, H = 128) and ≈ 69 ms for 64-card ones (q = 8, H = 16).

    References
    ----------
    Card 4, card 10 (book ch07 §7.6.4).
    """
    _require_count("tensor_parallel", tensor_parallel)
    parts = hierarchical_allreduce_parts(
        grad_bytes_per_card,
        ranks_per_node=local_ranks,
        nodes=supernodes,
        local_bandwidth_gb_per_s=local_bandwidth_gb_per_s,
        nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
        latency_us=local_latency_us,
        nic_latency_us=remote_latency_us,
    )
    cross_s = parts.cross_s
    if exit_bandwidth_gb_per_s is not None:
        _require_positive("exit_bandwidth_gb_per_s", exit_bandwidth_gb_per_s)
        exit_bytes = 2 * (supernodes - 1) / supernodes * tensor_parallel * grad_bytes_per_card
        cross_s = max(cross_s, exit_bytes / (exit_bandwidth_gb_per_s * BYTES_PER_GB))
    return parts.local_s + cross_s + parts.startup_s


# --------------------------------------------------------------------------------------------------
# Offload and gradient casting
# --------------------------------------------------------------------------------------------------


def offload_wait_s(volume_bytes: float, *, bandwidth_gb_per_s: float, overlap_window_s: float) -> float:
    """Exposed wait of an offload transfer hidden behind a compute window: max(0, V/B − W), s.

    Parameters
    ----------
    volume_bytes : float
        Bytes moved V, B.
    bandwidth_gb_per_s : float
        Link bandwidth B, GB/s.
    overlap_window_s : float
        Compute time W the transfer can hide behind, s.

    Returns
    -------
    float
        T_wait, s.

    References
    ----------
    Card 4 (offload), book ch10 §10.2.
    """
    _require_non_negative("volume_bytes", volume_bytes)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_non_negative("overlap_window_s", overlap_window_s)
    return max(0.0, volume_bytes / (bandwidth_gb_per_s * BYTES_PER_GB) - overlap_window_s)


def cpu_side_cast_s(grad_bytes: float, *, link_gb_per_s: float, cpu_cast_gb_per_s: float) -> float:
    """Ship BF16 gradients, cast on the CPU: G/B + 3G/C_c, s. Works on numpy arrays.

    Parameters
    ----------
    grad_bytes : float
        BF16 gradient bytes G, B.
    link_gb_per_s : float
        GPU→host link B, GB/s.
    cpu_cast_gb_per_s : float
        CPU cast throughput C_c (bytes of BF16 input per second), GB/s.

    References
    ----------
    Card 4 (gradient-cast placement), book ch10 §10.2.
    """
    _require_non_negative("grad_bytes", grad_bytes)
    _require_positive("link_gb_per_s", link_gb_per_s)
    _require_positive("cpu_cast_gb_per_s", cpu_cast_gb_per_s)
    return grad_bytes / (link_gb_per_s * BYTES_PER_GB) + 3.0 * grad_bytes / (cpu_cast_gb_per_s * BYTES_PER_GB)


def gpu_side_cast_s(grad_bytes: float, *, link_gb_per_s: float, gpu_cast_gb_per_s: float) -> float:
    """Cast on the GPU, ship FP32 gradients: 3G/C_g + 2G/B, s. Works on numpy arrays.

    References
    ----------
    Card 4 (gradient-cast placement), book ch10 §10.2.
    """
    _require_non_negative("grad_bytes", grad_bytes)
    _require_positive("link_gb_per_s", link_gb_per_s)
    _require_positive("gpu_cast_gb_per_s", gpu_cast_gb_per_s)
    return 3.0 * grad_bytes / (gpu_cast_gb_per_s * BYTES_PER_GB) + 2.0 * grad_bytes / (
        link_gb_per_s * BYTES_PER_GB
    )


def cast_breakeven_link_gb_per_s(cpu_cast_gb_per_s: float, *, gpu_cast_gb_per_s: float) -> float:
    """Link bandwidth at which CPU-side and GPU-side casting tie: B* = 1/(3(1/C_c − 1/C_g)), GB/s.

    Returns
    -------
    float
        B*, GB/s. Below B* the CPU side wins (it ships half the bytes); above it the GPU side wins.
        ``inf`` when C_c ≥ C_g (the CPU side always wins).

    References
    ----------
    Card 4 (gradient-cast placement), book ch10 §10.2.
    """
    _require_positive("cpu_cast_gb_per_s", cpu_cast_gb_per_s)
    _require_positive("gpu_cast_gb_per_s", gpu_cast_gb_per_s)
    gap = 1.0 / cpu_cast_gb_per_s - 1.0 / gpu_cast_gb_per_s
    if gap <= 0:
        return math.inf
    return 1.0 / (3.0 * gap)


# --------------------------------------------------------------------------------------------------
# Checkpointing and failures
# --------------------------------------------------------------------------------------------------


def job_mtbf_hours(cards: int, *, card_mtbf_hours: float) -> float:
    """Mean time between interruptions of a job on n cards with independent failures: MTBF_card / n, h.

    Notes
    -----
    Meta: one interruption per 7.9 h on 1,024 cards ≈ one per card per 337 days.

    References
    ----------
    Card 4 (parameters: failure rate), book ch10 §10.3.
    """
    _require_count("cards", cards)
    _require_positive("card_mtbf_hours", card_mtbf_hours)
    return card_mtbf_hours / cards


def checkpoint_overhead_frac(
    interval_s: float, *, checkpoint_s: float, failure_rate_per_s: float, restart_s: float
) -> float:
    """Lost fraction of throughput from checkpointing and failures: L(τ) = c/τ + λτ/2 + λr.

    Parameters
    ----------
    interval_s : float
        Checkpoint interval τ (also I), s.
    checkpoint_s : float
        Blocking time to write one checkpoint c (also C), s.
    failure_rate_per_s : float
        Job failure rate λ, 1/s (add the loss-spike rollback rate λ_spike to λ_hw).
    restart_s : float
        Restart/recovery time r (also R), s.

    Returns
    -------
    float
        L(τ) = ε ≈ C/I + λ(I/2 + R), dimensionless. Works on numpy arrays.

    References
    ----------
    Card 4 (checkpoint interval, failure overhead), card 6; book ch10 §10.3.
    """
    _require_positive("interval_s", interval_s)
    _require_non_negative("checkpoint_s", checkpoint_s)
    _require_non_negative("failure_rate_per_s", failure_rate_per_s)
    _require_non_negative("restart_s", restart_s)
    return checkpoint_s / interval_s + failure_rate_per_s * (interval_s / 2.0 + restart_s)


def optimal_checkpoint_interval_s(checkpoint_s: float, *, failure_rate_per_s: float) -> float:
    """Checkpoint interval minimising L(τ): τ* = sqrt(2c/λ), s.

    References
    ----------
    Card 4 (book ch10 §10.3; Young's approximation).
    """
    _require_positive("checkpoint_s", checkpoint_s)
    _require_positive("failure_rate_per_s", failure_rate_per_s)
    return math.sqrt(2.0 * checkpoint_s / failure_rate_per_s)


def effective_throughput(throughput: float, *, overhead_frac: float) -> float:
    """Throughput after failure overhead: Θ_eff ≈ Θ/(1 + ε) (same unit as ``throughput``).

    References
    ----------
    Card 4 (failure overhead), book ch10 §10.3.
    """
    _require_non_negative("throughput", throughput)
    _require_non_negative("overhead_frac", overhead_frac)
    return throughput / (1.0 + overhead_frac)


# --------------------------------------------------------------------------------------------------
# Stragglers
# --------------------------------------------------------------------------------------------------


def _simpson(values: Sequence[float], step: float) -> float:
    n = len(values) - 1
    weights = (1.0 if i in (0, n) else (4.0 if i % 2 else 2.0) for i in range(n + 1))
    return step / 3.0 * sum(w * v for w, v in zip(weights, values, strict=True))


def expected_max_standard_normal(workers: int, *, intervals: int = 2400, half_width: float = 12.0) -> float:
    """Expected maximum of N independent standard normal variables, E[max Z_i] (dimensionless).

    Parameters
    ----------
    workers : int
        N ≥ 1.
    intervals : int
        Even number of Simpson intervals on each half-line (deterministic quadrature).
    half_width : float
        Integration limit in standard deviations.

    Returns
    -------
    float
        E[max]: 1.4236 (N = 8), 2.2331 (48), 3.2482 (1,024) — the book's 1.42 / 2.23 / 3.25.

    Notes
    -----
    E[max] = ∫_0^∞ (1 − Φ(x)^N) dx − ∫_{−∞}^0 Φ(x)^N dx, each half by composite Simpson; 1 − Φ^N is
    evaluated as −expm1(N·log1p(−Q(x))) so the upper tail keeps full precision for large N.

    References
    ----------
    Card 4 (stragglers), book ch10 §10.4.
    """
    _require_count("workers", workers)
    if intervals < 2 or intervals % 2:
        raise ValueError(f"intervals must be an even number ≥ 2, got {intervals!r}")
    step = half_width / intervals
    upper: list[float] = []
    lower: list[float] = []
    for i in range(intervals + 1):
        x = i * step
        tail = 0.5 * math.erfc(x / math.sqrt(2.0))  # Q(x) = 1 − Φ(x) = Φ(−x)
        upper.append(-math.expm1(workers * math.log1p(-tail)))
        lower.append(math.exp(workers * math.log(tail)) if tail > 0.0 else 0.0)
    return _simpson(upper, step) - _simpson(lower, step)


def straggler_step_s(mean_s: float, *, sigma_s: float, workers: int) -> float:
    """Expected synchronous step time with N normally distributed workers: μ + E[max Z]·σ, s.

    Parameters
    ----------
    mean_s : float
        Mean per-worker step time μ, s.
    sigma_s : float
        Standard deviation σ of the varying part, s (the book takes σ as a percentage of the compute
        time, not of μ).
    workers : int
        Workers N that wait for each other.

    Returns
    -------
    float
        E[max_i T_i], s (μ = 52.2 + 0.58 s, σ = 2 % of 52.2 s: 54.3 / 55.1 / 56.2 s for 8 / 48 / 1,024).

    References
    ----------
    Card 4 (stragglers), book ch10 §10.4.
    """
    _require_non_negative("mean_s", mean_s)
    _require_non_negative("sigma_s", sigma_s)
    return mean_s + expected_max_standard_normal(workers) * sigma_s


# --------------------------------------------------------------------------------------------------
# MoE capacity, RL, lifecycle, scaling law
# --------------------------------------------------------------------------------------------------


def moe_expert_capacity_tokens(tokens: int, *, capacity_factor: float, top_k: int, experts: int) -> int:
    """Per-expert token capacity: floor(c × tokens × k / E).

    References
    ----------
    Card 4 (MoE capacity), book ch10 §10.2.
    """
    _require_count("tokens", tokens, 0)
    _require_positive("capacity_factor", capacity_factor)
    _require_count("top_k", top_k)
    _require_count("experts", experts)
    return math.floor(capacity_factor * tokens * top_k / experts + 1e-9)


def rl_generate_count(keep: int, *, acceptance_frac: float) -> int:
    """Samples to generate to keep ``keep`` after filtering: ceil(n_keep / acceptance).

    References
    ----------
    Card 4 (RL), book ch03 §3.4, ch10 §10.5.
    """
    _require_count("keep", keep, 0)
    _require_frac("acceptance_frac", acceptance_frac, allow_zero=False)
    return math.ceil(keep / acceptance_frac - 1e-9)


def rl_cycle_flop(samples: float, *, generate_flop: float, reward_flop: float, update_flop: float) -> float:
    """FLOPs of one RL cycle: F_cycle(n) = n(f_g + f_r) + F_u. Works on numpy arrays.

    References
    ----------
    Card 4 (RL), book ch10 §10.5.
    """
    _require_non_negative("samples", samples)
    return samples * (generate_flop + reward_flop) + update_flop


def rl_effective_rate_per_s(
    learn_per_s: float, *, generate_per_s: float, verify_per_s: float, quality_retention_frac: float
) -> float:
    """Effective RL learning rate r_eff = min(r_learn, q·min(r_gen, r_verify)), samples/s.

    Parameters
    ----------
    learn_per_s : float
        Learner throughput r_learn, samples/s.
    generate_per_s : float
        Generation throughput r_gen, samples/s.
    verify_per_s : float
        Verifier throughput r_verify, samples/s.
    quality_retention_frac : float
        q, fraction of samples that remain useful (0..1].

    Returns
    -------
    float
        r_eff, samples/s (r_gen 12, r_verify 6, r_learn 8, q = 0.75 → 4.5).

    References
    ----------
    Card 4 (RL), book ch10 §10.5.
    """
    _require_non_negative("learn_per_s", learn_per_s)
    _require_non_negative("generate_per_s", generate_per_s)
    _require_non_negative("verify_per_s", verify_per_s)
    _require_frac("quality_retention_frac", quality_retention_frac)
    return min(learn_per_s, quality_retention_frac * min(generate_per_s, verify_per_s))


def rl_sync_cycle_s(generate_s: float, *, learn_s: float, sync_s: float) -> float:
    """Synchronous RL cycle: t_gen + t_learn + t_sync, s.

    References
    ----------
    Card 4 (RL), book ch10 §10.5 (40 + 16 + 4 = 60 s).
    """
    _require_non_negative("generate_s", generate_s)
    _require_non_negative("learn_s", learn_s)
    _require_non_negative("sync_s", sync_s)
    return generate_s + learn_s + sync_s


def rl_async_cycle_s(generate_s: float, *, learn_s: float, sync_s: float) -> float:
    """Asynchronous RL cycle: max(t_gen, t_learn) + t_sync, s.

    References
    ----------
    Card 4 (RL), book ch10 §10.5 (max(40, 16) + 4 = 44 s).
    """
    _require_non_negative("generate_s", generate_s)
    _require_non_negative("learn_s", learn_s)
    _require_non_negative("sync_s", sync_s)
    return max(generate_s, learn_s) + sync_s


def rl_async_threshold_frac(generate_s: float, *, learn_s: float, sync_s: float) -> float:
    """Quality retention q above which async RL beats sync: (max(t_g, t_l) + t_s)/(t_g + t_l + t_s).

    References
    ----------
    Card 4 (RL decision rule), book ch10 §10.5 (44/60 = 73.3 %).
    """
    sync_cycle = rl_sync_cycle_s(generate_s, learn_s=learn_s, sync_s=sync_s)
    _require_positive("cycle time", sync_cycle)
    return rl_async_cycle_s(generate_s, learn_s=learn_s, sync_s=sync_s) / sync_cycle


def rl_async_gain_ratio(
    quality_retention_frac: float, *, generate_s: float, learn_s: float, sync_s: float
) -> float:
    """Useful-sample rate of asynchronous over synchronous RL: q·T_sync/T_async (> 1 means async wins).

    References
    ----------
    Card 4 (RL), book ch10 §10.5 (q = 0.8 → 1.09; q = 0.7 → 0.95).
    """
    _require_frac("quality_retention_frac", quality_retention_frac)
    threshold = rl_async_threshold_frac(generate_s, learn_s=learn_s, sync_s=sync_s)
    return quality_retention_frac / threshold


def lifecycle_cost(
    fixed_cost: float, *, volume: float, mix_weights: Sequence[float], unit_costs: Sequence[float]
) -> float:
    """Lifecycle cost of a model: C_life = C_0 + Q·Σ_j w_j·c_j (currency of the inputs).

    Parameters
    ----------
    fixed_cost : float
        Training (fixed) cost C_0.
    volume : float
        Tasks served Q.
    mix_weights : sequence of float
        Share w_j of each task type.
    unit_costs : sequence of float
        Serving cost c_j per task of each type.

    References
    ----------
    Card 4 (lifecycle), book ch03 §3.6.
    """
    if len(mix_weights) != len(unit_costs):
        raise ValueError("mix_weights and unit_costs must have the same length")
    _require_non_negative("volume", volume)
    return fixed_cost + volume * sum(w * c for w, c in zip(mix_weights, unit_costs, strict=True))


def lifecycle_breakeven_volume(delta_fixed_cost: float, *, delta_unit_cost: float) -> float:
    """Volume at which extra training pays back through cheaper serving: Q* = ΔC_0/Δc (tasks).

    Parameters
    ----------
    delta_fixed_cost : float
        Extra fixed cost ΔC_0 (e.g. GPU-s of extra training).
    delta_unit_cost : float
        Serving saving per task Δc (same unit as ΔC_0), positive.

    Returns
    -------
    float
        Q*, tasks (3.6e8 GPU-s / 0.72 GPU-s = 5e8 tasks).

    References
    ----------
    Card 4 (lifecycle), book ch03 §3.6.3.
    """
    _require_non_negative("delta_fixed_cost", delta_fixed_cost)
    _require_positive("delta_unit_cost", delta_unit_cost)
    return delta_fixed_cost / delta_unit_cost


def scaling_law_loss(
    n_params: float, *, tokens: float, irreducible: float, a: float, b: float, alpha: float, beta: float
) -> float:
    """Chinchilla-form loss L = E + A/N^α + B/D^β (nats). Works on numpy arrays.

    References
    ----------
    Card 4 (scaling law), book ch03 §3.5.
    """
    _require_positive("n_params", n_params)
    _require_positive("tokens", tokens)
    loss: float = irreducible + a / n_params**alpha + b / tokens**beta
    return loss


def compute_optimal_params(compute_flop: float, *, a: float, b: float, alpha: float, beta: float) -> float:
    """Loss-minimising parameter count at a compute budget C = 6ND.

    Returns
    -------
    float
        N_opt = (αA/(βB))^{1/(α+β)} · (C/6)^{β/(α+β)}. Works on numpy arrays.

    References
    ----------
    Card 4 (scaling law), book ch03 §3.5.
    """
    _require_positive("compute_flop", compute_flop)
    for name, value in (("a", a), ("b", b), ("alpha", alpha), ("beta", beta)):
        _require_positive(name, value)
    prefactor: float = (alpha * a / (beta * b)) ** (1.0 / (alpha + beta))
    n_opt: float = prefactor * (compute_flop / 6.0) ** (beta / (alpha + beta))
    return n_opt


def compute_optimal_tokens(compute_flop: float, *, a: float, b: float, alpha: float, beta: float) -> float:
    """Tokens matching :func:`compute_optimal_params`: D_opt = C/(6·N_opt).

    References
    ----------
    Card 4 (scaling law), book ch03 §3.5.
    """
    return compute_flop / (6.0 * compute_optimal_params(compute_flop, a=a, b=b, alpha=alpha, beta=beta))
