"""Card 1 — inference resource accounting: capacity per card, step lower bounds, request metrics, queues.

Pure formulas over floats (and numpy arrays where noted). Model-derived quantities (weights, KV bytes per
token, FLOPs) come from :mod:`planner.ledgers.architecture`.

References: card 1 (book ch01 §1.2–1.3 Example 1-1, ch02 capacity examples, ch03 request metrics and queues).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP


def memory_per_gpu_bytes(weights_bytes: float, *, state_bytes: float, workspace_bytes: float) -> float:
    """Resident bytes on one card: M_W + M_state + M_work.

    References
    ----------
    Card 1 (capacity per card: M_W + M_state + M_work ≤ M_cap).
    """
    return weights_bytes + state_bytes + workspace_bytes


def max_concurrent_requests(
    capacity_bytes: float, *, weights_bytes: float, workspace_bytes: float, state_bytes_per_request: float
) -> int:
    """Concurrency bound B_max = floor((M_dev − M_W − M_ws) / M_state_per_request); 0 if nothing fits.

    References
    ----------
    Card 1 (book ch02 §2.6: 70B on H100 in 8-bit → 1 request of 8K, 4-bit → 14).
    """
    if state_bytes_per_request <= 0:
        raise ValueError("state_bytes_per_request must be positive")
    room = capacity_bytes - weights_bytes - workspace_bytes
    return max(0, math.floor(room / state_bytes_per_request))


def max_params(
    capacity_bytes: float,
    *,
    reservation_bytes: float,
    batch: int,
    state_bytes_per_request: float,
    bytes_per_param: float,
) -> float:
    """Largest model that fits at a given concurrency: N_max = (C − M_0 − B·K) / b_W, parameters.

    References
    ----------
    Card 1 (reverse question).
    """
    if bytes_per_param <= 0:
        raise ValueError("bytes_per_param must be positive")
    return max(0.0, (capacity_bytes - reservation_bytes - batch * state_bytes_per_request) / bytes_per_param)


def compute_time_s(flop: float, *, peak_tflops: float, efficiency_frac: float = 1.0) -> float:
    """Compute time F / (Π·η), s (Π in dense TFLOP/s). Works on numpy arrays.

    References
    ----------
    Card 1 (T_r = work_r / capacity_r).
    """
    return flop / (peak_tflops * FLOP_PER_TFLOP * efficiency_frac)


def memory_time_s(n_bytes: float, *, bandwidth_gb_per_s: float, efficiency_frac: float = 1.0) -> float:
    """Memory time R / (β·η), s (β in GB/s, decimal). Works on numpy arrays.

    References
    ----------
    Card 1 (Example 1-1: 70 GB at 3.35 TB/s → 20.90 ms).
    """
    return n_bytes / (bandwidth_gb_per_s * BYTES_PER_GB * efficiency_frac)


def step_lower_bound_s(
    flop: float, *, n_bytes: float, peak_tflops: float, bandwidth_gb_per_s: float
) -> float:
    """Roofline step bound T_step ≥ max(F/Π, R/β), s.

    References
    ----------
    Card 1 (step lower bound), README rule 3 (lower bound per resource).
    """
    return max(
        compute_time_s(flop, peak_tflops=peak_tflops),
        memory_time_s(n_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s),
    )


def mfu_frac(flop: float, *, time_s: float, peak_tflops: float) -> float:
    """Model FLOP utilisation MFU = F / (Π·T) over the same window (card 1)."""
    return flop / (peak_tflops * FLOP_PER_TFLOP * time_s)


def mbu_frac(n_bytes: float, *, time_s: float, bandwidth_gb_per_s: float) -> float:
    """Memory bandwidth utilisation MBU = R / (β·T) over the same window (card 1; 8.62 / 26.26 ms → 33 %)."""
    return n_bytes / (bandwidth_gb_per_s * BYTES_PER_GB * time_s)


def kv_overtakes_weights_batch(
    weights_read_bytes: float, *, kv_bytes_per_token: float, context_tokens: float
) -> float:
    """Batch at which KV reads equal weight reads: B = R_W / (c_KV·H) (card 1; Qwen3-8B 13 at 8K, 51 at 2K)."""
    return weights_read_bytes / (kv_bytes_per_token * context_tokens)


def tokens_per_s(batch: float, *, step_s: float) -> float:
    """Decode throughput B / T_step, tokens/s (card 1). Works on numpy arrays."""
    return batch / step_s


def mean_inter_token_interval_s(first_token_s: float, *, last_token_s: float, output_tokens: int) -> float:
    """Mean inter-token interval (t_last − t_first) / (G − 1), s (card 1 request metrics)."""
    if output_tokens < 2:
        raise ValueError("output_tokens must be at least 2 to define an inter-token interval")
    return (last_token_s - first_token_s) / (output_tokens - 1)


def percentile_nearest_rank(samples: Sequence[float], *, percentile: float) -> float:
    """Nearest-rank percentile: the ceil(p/100·n)-th smallest sample (README unit conventions)."""
    if not samples:
        raise ValueError("samples must not be empty")
    if not 0 < percentile <= 100:
        raise ValueError("percentile must be in (0, 100]")
    ordered = sorted(samples)
    rank = math.ceil(percentile / 100.0 * len(ordered))
    return ordered[rank - 1]


def state_time_area_byte_s(memory_bytes: Sequence[float], *, interval_s: float) -> float:
    """State–time area A = ∫ M(t) dt for samples at a fixed interval, byte·s (card 1)."""
    return float(sum(memory_bytes)) * interval_s


def little_law_mean_memory_bytes(
    arrival_per_s: float, *, bytes_per_request: float, residence_s: float
) -> float:
    """Steady-state mean memory ≈ λ·M_0·τ (Little's law), B (card 1)."""
    return arrival_per_s * bytes_per_request * residence_s


def fluid_queue(arrivals: Sequence[float], *, service_rate_per_s: float, interval_s: float) -> list[float]:
    """Fluid queue Q_{k+1} = max(0, Q_k + A_k − μ·Δt); returns the backlog after each interval (card 1)."""
    backlog = 0.0
    out = []
    for arrived in arrivals:
        backlog = max(0.0, backlog + arrived - service_rate_per_s * interval_s)
        out.append(backlog)
    return out


def burst_backlog(arrival_per_s: float, *, service_rate_per_s: float, burst_s: float) -> float:
    """Backlog after a burst: (λ_w − μ)·τ (0 if the service keeps up), requests (card 1)."""
    return max(0.0, (arrival_per_s - service_rate_per_s) * burst_s)


def drain_time_s(backlog: float, *, service_rate_per_s: float, arrival_per_s: float = 0.0) -> float:
    """Drain time backlog/μ if arrivals stop, backlog/(μ − λ) if they continue, s (card 1)."""
    if service_rate_per_s <= arrival_per_s:
        return math.inf
    return backlog / (service_rate_per_s - arrival_per_s)


def engine_host_s(layers: Any, batch: Any, *, step_ms: Any, per_layer_us: Any, per_sequence_us: Any) -> Any:
    """Host time of one engine step: T_host = T_step + L·τ_layer + B·τ_seq, s. Works on numpy arrays.

    Parameters
    ----------
    layers
        Decoder layers L the step runs on this pipeline stage.
    batch
        Running sequences B in the step.
    step_ms, per_layer_us, per_sequence_us
        The engine's ``host_step_ms`` (ms), ``host_per_layer_us`` (µs) and ``host_per_sequence_us`` (µs)
        from catalogs/engines.yaml.

    Notes
    -----
    Eager engines launch every kernel from Python (≈ 60 µs per layer), so an 80-layer model pays
    3 + 80·0.06 = 7.8 ms per step before any GPU work; CUDA-graph engines replay the layers (τ_layer = 0).
    Example: vLLM V1 at B = 64 → 1.4 ms + 64·10 µs = 2.04 ms.
    """
    return engine_host_at_s(engine_host_fixed_s(layers, step_ms=step_ms, per_layer_us=per_layer_us), batch,
                            per_sequence_us=per_sequence_us)


def engine_host_fixed_s(layers: Any, *, step_ms: Any, per_layer_us: Any) -> Any:
    """The batch-free part of :func:`engine_host_s`: T_step + L·τ_layer, s (a step table at many loads
    computes it once)."""
    return step_ms * 1e-3 + layers * per_layer_us * 1e-6


def engine_host_at_s(fixed_s: Any, batch: Any, *, per_sequence_us: Any) -> Any:
    """:func:`engine_host_s` from its batch-free part ``fixed_s`` (:func:`engine_host_fixed_s`): + B·τ_seq, s."""
    return fixed_s + batch * per_sequence_us * 1e-6


def md1_queue_wait_s(arrival_per_s: Any, *, service_s: Any) -> Any:
    """Mean queueing delay of an M/D/1 server: W_q = ρ·s / (2(1 − ρ)), ρ = λ·s, s; inf at ρ ≥ 1.

    Notes
    -----
    Used for the TTFT queueing term: prefills of one replica are served one after another with a
    deterministic service time s. Works on numpy arrays element-wise (inf where ρ ≥ 1).

    References
    ----------
    Card 1 (request timing, queues; book ch03).
    """
    rho = arrival_per_s * service_s
    if np.ndim(rho) == 0:
        if rho >= 1.0:
            return math.inf
        return rho * service_s / (2.0 * (1.0 - rho))
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = rho * service_s / (2.0 * (1.0 - rho))
    return np.where(rho >= 1.0, np.inf, wait)


def md1_max_utilization_frac(*, service_s: float, max_wait_s: float) -> float:
    """Largest utilisation ρ with M/D/1 wait ≤ max_wait_s: ρ = 2w / (s + 2w) (inverse of md1_queue_wait_s).

    Works on numpy arrays.
    """
    return 2.0 * max_wait_s / (service_s + 2.0 * max_wait_s)


def cost_per_success(cost: float, *, success_frac: float) -> float:
    """Cost per successful result C/p (card 1; 1 unit at 50 % → 2)."""
    if not 0 < success_frac <= 1:
        raise ValueError("success_frac must be in (0, 1]")
    return cost / success_frac


def option_beats(cost_ratio: float, *, success_ratio: float) -> bool:
    """Option 2 beats option 1 iff p_2/p_1 > c_2/c_1 (card 1)."""
    return success_ratio > cost_ratio
