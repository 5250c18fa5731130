"""Card 12 — edge–cloud ledger, including buy vs rent.

Where a request runs (device, nearby edge, cloud) from bytes moved, RTT, device bandwidth,
deadlines and energy; and whether to own, reserve or pay per use (self-host break-even,
break-even utilisation, fixed-investment and lifecycle break-evens, 24 × 7 rent vs API).

References: ledgers.md card 12; book ch12 §12.1–12.5, ch11 §11.4.4, ch04 §4.8.4, ch03 §3.6,
experiment ch13 13-06 (single-agent serving).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from planner.ledgers._checks import require_fraction as _require_frac
from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import transfer_s
from planner.ledgers.inference import compute_time_s, memory_time_s
from planner.ledgers.training import lifecycle_breakeven_volume
from planner.ledgers.utilization import expected_cost_per_success_usd
from planner.units import (
    BYTES_PER_GB,
    HOURS_PER_MONTH,
    S_PER_HOUR,
    S_PER_MONTH,
    mbit_per_s_to_bytes_per_s,
)

FIBRE_M_PER_S = 2e8
"""Propagation speed in optical fibre, m/s."""

PHONE_LPDDR5X_GB_PER_S = 84.8
"""Phone memory bandwidth (Snapdragon 8 Elite, 4 × LPDDR5X-5300 x16), GB/s."""

TCP_MSS_BYTES = 1460
"""TCP maximum segment size in the book's slow-start example, bytes."""

TCP_INITIAL_SEGMENTS = 10
"""TCP initial congestion window, segments."""

MATHIS_C = math.sqrt(1.5)
"""Mathis constant C = √(3/2) ≈ 1.22."""

TOKENS_PER_MILLION = 1e6
"""Prices and volumes in the rent-vs-API ledger are per million tokens."""

PROMPT_BYTES_PER_TOKEN = 4.0
"""Upload size of a prompt: ≈ 4 bytes of UTF-8 text per token (English BPE average)."""

API_REBUILD_WINDOW_FRAC = 0.1
"""Rent-vs-API experiment: a cache rebuild is triggered when O + T exceed 10 % of the history."""


# --------------------------------------------------------------------------------------------------
# Remote execution, compression, streaming
# --------------------------------------------------------------------------------------------------


def link_transfer_s(n_bytes: float, *, mbit_per_s: float) -> float:
    """Time to push bytes through a link quoted in Mbit/s.

    Parameters
    ----------
    n_bytes : float
        Payload, bytes (MB = 10^6 B).
    mbit_per_s : float
        Link rate, Mbit/s (> 0).

    Returns
    -------
    float
        Transfer time, s.

    Notes
    -----
    T = 8·S / (b·10^6); delegates to card 6's :func:`planner.ledgers.communication.transfer_s`.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.
    """
    return transfer_s(n_bytes, bandwidth_gb_per_s=mbit_per_s_to_bytes_per_s(mbit_per_s) / BYTES_PER_GB)


def request_network_s(input_tokens: float, *, rtt_ms: float, uplink_mbit_per_s: float) -> float:
    """Network part of a request's time to first token at a site: its round trip and the prompt's upload.

    Parameters
    ----------
    input_tokens : float
        Prompt tokens P.
    rtt_ms : float
        Users' round-trip time to the site, ms.
    uplink_mbit_per_s : float
        Users' uplink rate, Mbit/s (> 0).

    Returns
    -------
    float
        Network time, s.

    Notes
    -----
    T_net = RTT + 8·P·b / (U·10^6), b = :data:`PROMPT_BYTES_PER_TOKEN` bytes of text per token. Every TTFT a
    plan reports at a site adds it (planner.candidates.network_s), and so does ``planner predict --site``.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.
    """
    _require_positive("uplink_mbit_per_s", uplink_mbit_per_s)
    return rtt_ms / 1e3 + input_tokens * PROMPT_BYTES_PER_TOKEN * 8.0 / (uplink_mbit_per_s * 1e6)


def remote_exec_s(
    upload_bytes: float,
    *,
    uplink_mbit_per_s: float,
    rtt_s: float,
    compute_s: float,
    download_bytes: float,
    downlink_mbit_per_s: float,
    queue_s: float = 0.0,
    handshake_s: float = 0.0,
) -> float:
    """Completion time of a request executed remotely as a whole.

    Parameters
    ----------
    upload_bytes : float
        Request payload S_up, bytes.
    uplink_mbit_per_s : float
        Uplink rate B_up, Mbit/s.
    rtt_s : float
        Round-trip time, s.
    compute_s : float
        Remote compute time, s.
    download_bytes : float
        Response payload S_down, bytes.
    downlink_mbit_per_s : float
        Downlink rate B_down, Mbit/s.
    queue_s, handshake_s : float
        Remote queueing and connection set-up, s.

    Returns
    -------
    float
        T, s. Remote wins iff T < local compute time.

    Notes
    -----
    T = S_up/B_up + RTT + T_compute + S_down/B_down (+ queue + handshake).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.
    """
    return (
        link_transfer_s(upload_bytes, mbit_per_s=uplink_mbit_per_s)
        + rtt_s
        + compute_s
        + link_transfer_s(download_bytes, mbit_per_s=downlink_mbit_per_s)
        + queue_s
        + handshake_s
    )


def compression_gain_s(
    original_bytes: float, *, compressed_bytes: float, uplink_mbit_per_s: float, codec_s: float
) -> float:
    """Upload time saved by compressing first, net of codec time.

    Parameters
    ----------
    original_bytes : float
        Uncompressed payload S_u, bytes.
    compressed_bytes : float
        Compressed payload S'_u, bytes.
    uplink_mbit_per_s : float
        Uplink rate B_u, Mbit/s.
    codec_s : float
        Encode + decode time T_codec, s.

    Returns
    -------
    float
        ΔT, s (positive: compress).

    Notes
    -----
    ΔT = (S_u − S'_u)/B_u − T_codec.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.
    """
    return link_transfer_s(original_bytes - compressed_bytes, mbit_per_s=uplink_mbit_per_s) - codec_s


def compression_breakeven_uplink_mbit_per_s(
    original_bytes: float, *, compressed_bytes: float, codec_s: float
) -> float:
    """Uplink rate above which compression no longer pays.

    Parameters
    ----------
    original_bytes : float
        Uncompressed payload S_u, bytes.
    compressed_bytes : float
        Compressed payload S'_u, bytes.
    codec_s : float
        Codec time T_codec, s (> 0).

    Returns
    -------
    float
        Break-even B_u, Mbit/s.

    Notes
    -----
    B_u = (S_u − S'_u) / T_codec.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1 (15 MB saved, 0.15 s codec → 800 Mb/s).
    """
    _require_positive("codec_s", codec_s)
    saved_bytes_per_s = (original_bytes - compressed_bytes) / codec_s
    return saved_bytes_per_s / mbit_per_s_to_bytes_per_s(1.0)


@dataclass(frozen=True)
class StreamTimeline:
    """Result of :func:`streaming_pipeline` (all times in s).

    Attributes
    ----------
    computed_s : tuple[float, ...]
        c_i, chunk i processed.
    sent_s : tuple[float, ...]
        u_i, result of chunk i sent.
    received_s : tuple[float, ...]
        r_i, result of chunk i received.
    playback_s : tuple[float, ...]
        p_i, chunk i played (or shown).
    """

    computed_s: tuple[float, ...]
    sent_s: tuple[float, ...]
    received_s: tuple[float, ...]
    playback_s: tuple[float, ...]


def streaming_pipeline(
    arrival_s: Sequence[float],
    *,
    process_s: Sequence[float],
    send_s: Sequence[float],
    delivery_s: Sequence[float],
    jitter_buffer_s: float = 0.0,
    playback_interval_s: float = 0.0,
) -> StreamTimeline:
    """Chunk-by-chunk timeline of a streamed request.

    Parameters
    ----------
    arrival_s : Sequence[float]
        a_i, when chunk i is available to the processor, s.
    process_s : Sequence[float]
        m_i, processing time of chunk i, s.
    send_s : Sequence[float]
        s_i, time to send the result of chunk i over the (serial) return link, s.
    delivery_s : Sequence[float]
        d_i, propagation delay of the result of chunk i, s.
    jitter_buffer_s : float
        J, playback start delay after the first chunk is received, s.
    playback_interval_s : float
        τ, playback time per chunk, s.

    Returns
    -------
    StreamTimeline
        c_i, u_i, r_i and p_i.

    Notes
    -----
    c_i = max(a_i, c_{i−1}) + m_i; u_i = max(c_i, u_{i−1}) + s_i; r_i = u_i + d_i;
    p_0 = r_0 + J, p_i = max(r_i, p_{i−1} + τ).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.
    """
    n = len(arrival_s)
    if not (len(process_s) == len(send_s) == len(delivery_s) == n) or n == 0:
        raise ValueError("arrival_s, process_s, send_s and delivery_s must be non-empty and of equal length")
    computed: list[float] = []
    sent: list[float] = []
    received: list[float] = []
    playback: list[float] = []
    for i in range(n):
        c = max(arrival_s[i], computed[-1] if computed else -math.inf) + process_s[i]
        u = max(c, sent[-1] if sent else -math.inf) + send_s[i]
        r = u + delivery_s[i]
        p = r + jitter_buffer_s if not playback else max(r, playback[-1] + playback_interval_s)
        computed.append(c)
        sent.append(u)
        received.append(r)
        playback.append(p)
    return StreamTimeline(tuple(computed), tuple(sent), tuple(received), tuple(playback))


def buffer_exhaustion_s(
    buffer_bits: float, *, consumption_bit_per_s: float, supply_bit_per_s: float
) -> float:
    """Time until a playback buffer runs dry when supply is below consumption.

    Parameters
    ----------
    buffer_bits : float
        Buffered data, bits.
    consumption_bit_per_s : float
        Playback consumption rate, bit/s.
    supply_bit_per_s : float
        Network supply rate, bit/s.

    Returns
    -------
    float
        Time to exhaustion, s (``math.inf`` when supply keeps up).

    Notes
    -----
    t = buffer / (consumption − supply).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.
    """
    _require_non_negative("buffer_bits", buffer_bits)
    deficit = consumption_bit_per_s - supply_bit_per_s
    if deficit <= 0:
        return math.inf
    return buffer_bits / deficit


def propagation_rtt_s(distance_km: float, *, speed_m_per_s: float = FIBRE_M_PER_S) -> float:
    """Round-trip propagation floor over a one-way distance.

    Parameters
    ----------
    distance_km : float
        One-way path length, km.
    speed_m_per_s : float
        Signal speed, m/s (fibre: 2×10^8).

    Returns
    -------
    float
        RTT floor, s.

    Notes
    -----
    RTT ≥ 2·d / v (10,000 km → 100 ms).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.1.4.
    """
    _require_positive("speed_m_per_s", speed_m_per_s)
    _require_non_negative("distance_km", distance_km)
    return 2 * distance_km * 1e3 / speed_m_per_s


# --------------------------------------------------------------------------------------------------
# Device limits: decode floor, memory, token budget, encoder placement, TP over Wi-Fi
# --------------------------------------------------------------------------------------------------


def device_decode_floor_tokens_per_s(bandwidth_gb_per_s: float, *, bytes_per_step: float) -> float:
    """Upper bound on a device's decode rate.

    Parameters
    ----------
    bandwidth_gb_per_s : float
        Device memory bandwidth, GB/s (phone LPDDR5X: 84.8).
    bytes_per_step : float
        Bytes read per decode step, bytes (> 0).

    Returns
    -------
    float
        tokens/s upper bound (one token per step at B = 1).

    Notes
    -----
    tokens/s ≤ memory bandwidth / bytes per step.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.
    """
    _require_positive("bytes_per_step", bytes_per_step)
    return 1.0 / memory_time_s(bytes_per_step, bandwidth_gb_per_s=bandwidth_gb_per_s)


def decode_round_s(
    steps: float, *, bytes_per_step: float, bandwidth_gb_per_s: float, overhead_factor: float = 1.0
) -> float:
    """Model time of one round of bandwidth-bound decode steps.

    Parameters
    ----------
    steps : float
        Decode steps per round.
    bytes_per_step : float
        Bytes read per step, bytes.
    bandwidth_gb_per_s : float
        Memory bandwidth, GB/s.
    overhead_factor : float
        Measured / bound step-time ratio (1 = the bound; book measured 2.83 = 25.83/9.12).

    Returns
    -------
    float
        Round model time, s.

    Notes
    -----
    t_model = k × steps × bytes / β.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.5.
    """
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_positive("overhead_factor", overhead_factor)
    return overhead_factor * steps * memory_time_s(bytes_per_step, bandwidth_gb_per_s=bandwidth_gb_per_s)


def prefill_compute_s(flop: float, *, peak_tflops: float) -> float:
    """Compute-bound preparation (prefill) time.

    Parameters
    ----------
    flop : float
        FLOPs of the preparation, FLOP.
    peak_tflops : float
        Peak compute (dense), TFLOP/s.

    Returns
    -------
    float
        Time, s.

    Notes
    -----
    T_prep = F / Π (133.6 TFLOP on 503.8 TFLOP/s → 0.27 s).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.5.
    """
    _require_positive("peak_tflops", peak_tflops)
    return compute_time_s(flop, peak_tflops=peak_tflops)


def edge_free_memory_gb(device_memory_gb: float, *, os_reserve_gb: float, model_gb: float) -> float:
    """Memory left on a device for the KV cache (negative: the model does not fit).

    Parameters
    ----------
    device_memory_gb : float
        Device RAM, GB.
    os_reserve_gb : float
        Memory kept by the OS and other apps, GB (book: 4).
    model_gb : float
        Model weights (+ runtime), GB.

    Returns
    -------
    float
        Free memory, GB.

    Notes
    -----
    free = RAM − reserve − model.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.
    """
    return device_memory_gb - os_reserve_gb - model_gb


def edge_kv_tokens(free_gb: float, *, kv_bytes_per_token: float) -> float:
    """KV tokens that fit the free device memory.

    Parameters
    ----------
    free_gb : float
        Free memory, GB (see :func:`edge_free_memory_gb`).
    kv_bytes_per_token : float
        KV bytes per token, bytes (> 0).

    Returns
    -------
    float
        Tokens (0 when nothing is free).

    Notes
    -----
    max(free, 0) / c_KV.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.
    """
    _require_positive("kv_bytes_per_token", kv_bytes_per_token)
    return max(free_gb, 0.0) * BYTES_PER_GB / kv_bytes_per_token


def edge_context_slots(free_gb: float, *, context_tokens: int, kv_bytes_per_token: float) -> int:
    """Whole contexts of a given length that fit the free device memory.

    Parameters
    ----------
    free_gb : float
        Free memory, GB.
    context_tokens : int
        Context length per session, tokens (> 0).
    kv_bytes_per_token : float
        KV bytes per token, bytes.

    Returns
    -------
    int
        Contexts, count.

    Notes
    -----
    floor(free / (context × c_KV)).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.
    """
    if context_tokens <= 0:
        raise ValueError(f"context_tokens must be > 0, got {context_tokens}")
    return math.floor(edge_kv_tokens(free_gb, kv_bytes_per_token=kv_bytes_per_token) / context_tokens)


def edge_token_budget_tokens(
    deadline_s: float, *, rounds: int, fixed_s_per_round: float, tokens_per_s: float
) -> float:
    """Tokens a device may generate per round and still meet the deadline.

    Parameters
    ----------
    deadline_s : float
        Deadline for all rounds, s.
    rounds : int
        Rounds (> 0).
    fixed_s_per_round : float
        Non-generation time per round, s.
    tokens_per_s : float
        Device decode rate, tokens/s.

    Returns
    -------
    float
        Token budget per round (negative: the fixed time alone misses the deadline).

    Notes
    -----
    (deadline / rounds − fixed time) × tokens/s.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.
    """
    if rounds <= 0:
        raise ValueError(f"rounds must be > 0, got {rounds}")
    return (deadline_s / rounds - fixed_s_per_round) * tokens_per_s


def encoder_placement_delta_s(
    local_encode_s: float,
    *,
    remote_encode_s: float,
    feature_bytes: float,
    image_bytes: float,
    uplink_mbit_per_s: float,
    extra_s: float = 0.0,
) -> float:
    """Time lost by encoding on the device instead of shipping the raw input.

    Parameters
    ----------
    local_encode_s : float
        Encoder time on the device T_E,local, s.
    remote_encode_s : float
        Encoder time remotely T_E,remote, s.
    feature_bytes : float
        Encoder output size S_features, bytes.
    image_bytes : float
        Raw (compressed) input size S_image, bytes.
    uplink_mbit_per_s : float
        Uplink rate B_up, Mbit/s.
    extra_s : float
        Other per-choice differences T_x, s.

    Returns
    -------
    float
        ΔT = local-encode time − remote-encode time, s (positive: ship the image).

    Notes
    -----
    ΔT = T_E,local − T_E,remote + T_x + (S_features − S_image)/B_up.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.2.
    """
    return (
        local_encode_s
        - remote_encode_s
        + extra_s
        + link_transfer_s(feature_bytes - image_bytes, mbit_per_s=uplink_mbit_per_s)
    )


def tp_sync_latency_s(
    layers: int, *, exchange_latency_s: float, allreduces_per_layer: int = 2, exchanges_per_allreduce: int = 2
) -> float:
    """Latency floor per token of tensor parallelism across devices.

    Parameters
    ----------
    layers : int
        Transformer layers.
    exchange_latency_s : float
        Start-up latency α of one exchange, s (Wi-Fi short frame: 134 µs).
    allreduces_per_layer : int
        All-reduces per layer (2 for Megatron-style TP).
    exchanges_per_allreduce : int
        Dependent exchanges per all-reduce (2 for two devices).

    Returns
    -------
    float
        Latency per token, s.

    Notes
    -----
    layers × all-reduces × exchanges × α (36 × 2 × 2 = 144·α). Only the α term; card 6 owns the
    bandwidth term of all-reduce.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.2.4.
    """
    if min(layers, allreduces_per_layer, exchanges_per_allreduce) < 0:
        raise ValueError("layer and exchange counts must be >= 0")
    return layers * allreduces_per_layer * exchanges_per_allreduce * exchange_latency_s


def session_migration_gain_s(rounds_left: float, *, saved_s_per_round: float, migration_s: float) -> float:
    """Net time gained by migrating a session to a faster location.

    Parameters
    ----------
    rounds_left : float
        Rounds still to run N.
    saved_s_per_round : float
        Time saved per round Δt, s.
    migration_s : float
        One-off migration cost M, s.

    Returns
    -------
    float
        G(N), s (migrate iff positive, i.e. N > M/Δt).

    Notes
    -----
    G(N) = N·Δt − M.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    return rounds_left * saved_s_per_round - migration_s


# --------------------------------------------------------------------------------------------------
# TCP
# --------------------------------------------------------------------------------------------------


def tcp_rate_bound_bytes_per_s(path_bytes_per_s: float, *, window_bytes: float, rtt_s: float) -> float:
    """Useful TCP rate bound by the path and by the window.

    Parameters
    ----------
    path_bytes_per_s : float
        Bottleneck path rate B_path, bytes/s.
    window_bytes : float
        Window W, bytes.
    rtt_s : float
        Round-trip time, s (> 0).

    Returns
    -------
    float
        Rate bound, bytes/s.

    Notes
    -----
    rate ≤ min(B_path, W/RTT).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    _require_positive("rtt_s", rtt_s)
    return min(path_bytes_per_s, window_bytes / rtt_s)


def slow_start_window_bytes(
    rtts: int, *, mss_bytes: float = TCP_MSS_BYTES, initial_segments: int = TCP_INITIAL_SEGMENTS
) -> float:
    """Congestion window after k RTTs of loss-free slow start.

    Parameters
    ----------
    rtts : int
        Round trips elapsed k (>= 0).
    mss_bytes : float
        Segment size, bytes (book: 1,460).
    initial_segments : int
        Initial window, segments (10).

    Returns
    -------
    float
        Window, bytes.

    Notes
    -----
    W_k = 10·MSS·2^k.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    if rtts < 0:
        raise ValueError(f"rtts must be >= 0, got {rtts}")
    return initial_segments * mss_bytes * 2.0**rtts


def mathis_rate_bytes_per_s(mss_bytes: float, *, rtt_s: float, loss_frac: float) -> float:
    """Mathis bound on steady-state TCP throughput under random loss.

    Parameters
    ----------
    mss_bytes : float
        Segment size, bytes.
    rtt_s : float
        Round-trip time, s (> 0).
    loss_frac : float
        Packet loss probability p, 0 < p <= 1.

    Returns
    -------
    float
        Rate bound, bytes/s.

    Notes
    -----
    B ≤ (MSS/RTT)·(C/√p), C = √(3/2).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    _require_positive("rtt_s", rtt_s)
    if not 0.0 < loss_frac <= 1.0:
        raise ValueError(f"loss_frac must be in (0, 1], got {loss_frac}")
    return mss_bytes / rtt_s * MATHIS_C / math.sqrt(loss_frac)


# --------------------------------------------------------------------------------------------------
# §12.5 deployment choice, energy, retries, multipath
# --------------------------------------------------------------------------------------------------


def deployment_completion_s(
    rounds: int,
    *,
    other_s_per_round: float,
    model_s_per_round: float,
    prep_s: float = 0.0,
    rtt_s: float = 0.0,
    upload_bytes_per_round: float = 0.0,
    uplink_mbit_per_s: float = math.inf,
) -> float:
    """Completion time of a multi-round session at one location.

    Parameters
    ----------
    rounds : int
        Remaining rounds.
    other_s_per_round : float
        Non-model work per round t_other, s.
    model_s_per_round : float
        Model time per round at that location t_model, s.
    prep_s : float
        One-off preparation (prefill of the history) at that location, s.
    rtt_s : float
        Round trip per round, s (0 on the device).
    upload_bytes_per_round : float
        Upload per round S_up, bytes.
    uplink_mbit_per_s : float
        Uplink rate b, Mbit/s (infinite: no upload).

    Returns
    -------
    float
        T, s.

    Notes
    -----
    T_local = rounds·(t_other + t_model,local);
    T_remote = prep + rounds·(t_other + t_model + RTT + S_up/b).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.5.
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    upload_s = link_transfer_s(upload_bytes_per_round, mbit_per_s=uplink_mbit_per_s)
    return prep_s + rounds * (other_s_per_round + model_s_per_round + rtt_s + upload_s)


def required_uplink_mbit_per_s(deadline_s: float, *, fixed_s: float, upload_bytes: float) -> float:
    """Uplink rate a remote option needs to finish by a deadline (or to tie a rival).

    Parameters
    ----------
    deadline_s : float
        Deadline D (or the rival's completion time), s.
    fixed_s : float
        Completion time excluding uploads (T at infinite uplink), s.
    upload_bytes : float
        Total upload over the session, bytes.

    Returns
    -------
    float
        Minimum b, Mbit/s; ``math.inf`` when D <= fixed_s (no uplink is fast enough).

    Notes
    -----
    T(b) = fixed + 8·S/b ≤ D ⇔ b ≥ 8·S/(D − fixed) (book: 11.6 + 128/b ⇒ b ≥ 128/33.4 ≈ 3.8 Mb/s).

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.5.
    """
    _require_non_negative("upload_bytes", upload_bytes)
    slack_s = deadline_s - fixed_s
    if slack_s <= 0:
        return math.inf
    return upload_bytes / slack_s / mbit_per_s_to_bytes_per_s(1.0)


def energy_j(power_w: float, *, busy_s: float) -> float:
    """Energy of a device busy for a time.

    Parameters
    ----------
    power_w : float
        Power draw while busy, W.
    busy_s : float
        Busy time, s.

    Returns
    -------
    float
        Energy, J.

    Notes
    -----
    E = P·t.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.5.
    """
    _require_non_negative("power_w", power_w)
    _require_non_negative("busy_s", busy_s)
    return power_w * busy_s


def disconnect_penalty_s(lost_rounds: float, *, round_s: float, reconnect_s: float) -> float:
    """Time added by a disconnect that loses work.

    Parameters
    ----------
    lost_rounds : float
        Rounds that must be redone.
    round_s : float
        Time per round, s.
    reconnect_s : float
        Reconnection time, s.

    Returns
    -------
    float
        Added time, s.

    Notes
    -----
    ΔT = T_reconnect + lost × T_round.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    _require_non_negative("lost_rounds", lost_rounds)
    return reconnect_s + lost_rounds * round_s


def retry_expected_cost(cost: float, *, success_frac: float) -> float:
    """Expected cost until success with independent retries.

    Parameters
    ----------
    cost : float
        Cost (or time) of one attempt C.
    success_frac : float
        Success probability p, 0..1.

    Returns
    -------
    float
        E[cost] = C/p (``math.inf`` when p = 0).

    Notes
    -----
    E[cost] = C/p; delegates to card 9's
    :func:`planner.ledgers.utilization.expected_cost_per_success_usd`.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    return expected_cost_per_success_usd(cost, success_frac=success_frac)


def multipath_transfer_s(total_bytes: float, *, path_mbit_per_s: Sequence[float]) -> float:
    """Transfer time when a payload is split across paths in proportion to their rates.

    Parameters
    ----------
    total_bytes : float
        Payload, bytes.
    path_mbit_per_s : Sequence[float]
        Rate of each path, Mbit/s.

    Returns
    -------
    float
        Time, s (all paths finish together).

    Notes
    -----
    T = 8·S / Σ b_i; path i carries S·b_i/Σ b.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    if not path_mbit_per_s or any(b <= 0 for b in path_mbit_per_s):
        raise ValueError("path_mbit_per_s must be a non-empty list of positive rates")
    return link_transfer_s(total_bytes, mbit_per_s=sum(path_mbit_per_s))


def replicated_failure_frac(
    common_frac: float, *, primary_fail_frac: float, backup_fail_frac: float
) -> float:
    """Failure probability with a backup path that fails independently.

    Parameters
    ----------
    common_frac : float
        Failure probability common to both paths, 0..1.
    primary_fail_frac : float
        Independent failure probability of the primary, 0..1.
    backup_fail_frac : float
        Independent failure probability of the backup, 0..1.

    Returns
    -------
    float
        Failure probability, 0..1.

    Notes
    -----
    p = p_common + (1 − p_common)·p_primary·p_backup.

    References
    ----------
    Card 12 (ledgers.md), book ch12 §12.4.
    """
    for name, value in (
        ("common_frac", common_frac),
        ("primary_fail_frac", primary_fail_frac),
        ("backup_fail_frac", backup_fail_frac),
    ):
        _require_frac(name, value)
    return common_frac + (1 - common_frac) * primary_fail_frac * backup_fail_frac


# --------------------------------------------------------------------------------------------------
# Procurement: self-host vs pay-as-you-go, break-even utilisation
# --------------------------------------------------------------------------------------------------


def monthly_rent_usd(
    usd_per_card_hour: float, *, cards: float, users: float = 1.0, hours_per_month: float = HOURS_PER_MONTH
) -> float:
    """Monthly rent of a reserved GPU group, optionally per sharing user.

    Parameters
    ----------
    usd_per_card_hour : float
        Price, USD per card-hour.
    cards : float
        Cards in the group.
    users : float
        Users sharing the group B (> 0).
    hours_per_month : float
        Billing month, h (book: 720).

    Returns
    -------
    float
        USD per month (per user when users > 1).

    Notes
    -----
    F = 720·h·cards / B.

    References
    ----------
    Card 12 (ledgers.md), book ch11 §11.4.4, experiment ch13 13-06.
    """
    _require_positive("users", users)
    return hours_per_month * usd_per_card_hour * cards / users


def monthly_capacity_tasks(slots: float, *, slot_s_per_task: float, period_s: float = S_PER_MONTH) -> float:
    """Tasks a reserved deployment can serve in a month.

    Parameters
    ----------
    slots : float
        Concurrent task slots.
    slot_s_per_task : float
        Slot-seconds per task, s (> 0).
    period_s : float
        Period, s (book month: 2,592,000).

    Returns
    -------
    float
        Tasks per period.

    Notes
    -----
    slots × period / slot time per task.

    References
    ----------
    Card 12 (ledgers.md), book ch11 §11.4.4 (32 × 2,592,000 / 27 = 3,072,000).
    """
    _require_positive("slot_s_per_task", slot_s_per_task)
    return slots * period_s / slot_s_per_task


def selfhost_monthly_usd(tasks: float, *, fixed_usd: float, marginal_usd_per_task: float = 0.0) -> float:
    """Monthly cost of self-hosting or reserving.

    Parameters
    ----------
    tasks : float
        Tasks per month N.
    fixed_usd : float
        Fixed monthly cost F, USD.
    marginal_usd_per_task : float
        Marginal cost per task v, USD.

    Returns
    -------
    float
        F + N·v, USD.

    Notes
    -----
    C_self = F + N·v.

    References
    ----------
    Card 12 (ledgers.md), book ch11 §11.4.4.
    """
    return fixed_usd + tasks * marginal_usd_per_task


def payg_monthly_usd(tasks: float, *, usd_per_task: float) -> float:
    """Monthly cost of pay-as-you-go.

    Parameters
    ----------
    tasks : float
        Tasks per month N.
    usd_per_task : float
        Price per task c, USD.

    Returns
    -------
    float
        N·c, USD.

    Notes
    -----
    C_payg = N·c.

    References
    ----------
    Card 12 (ledgers.md), book ch11 §11.4.4.
    """
    return tasks * usd_per_task


def selfhost_breakeven_tasks(
    fixed_usd: float,
    *,
    payg_usd_per_task: float,
    marginal_usd_per_task: float = 0.0,
    payg_success_frac: float = 1.0,
    selfhost_success_frac: float = 1.0,
) -> float:
    """Monthly volume above which self-hosting (or reserving) is cheaper than pay-as-you-go.

    Parameters
    ----------
    fixed_usd : float
        Fixed monthly cost F, USD.
    payg_usd_per_task : float
        Pay-per-use price per task c, USD.
    marginal_usd_per_task : float
        Marginal self-host cost per task v, USD.
    payg_success_frac, selfhost_success_frac : float
        Success rates; with them the volume counts successful tasks and c, v become c/p, v/p.

    Returns
    -------
    float
        Break-even N, tasks/month; ``math.inf`` when c <= v (pay-as-you-go always wins).

    Notes
    -----
    F + N·v < N·c ⇔ N > F/(c − v), needs c > v.

    References
    ----------
    Card 12 (ledgers.md), book ch11 §11.4.4 (F = $19,555.2, c = $0.0081 → 2.41 million).
    """
    _require_non_negative("fixed_usd", fixed_usd)
    if not 0.0 < payg_success_frac <= 1.0 or not 0.0 < selfhost_success_frac <= 1.0:
        raise ValueError("success fractions must be in (0, 1]")
    margin = payg_usd_per_task / payg_success_frac - marginal_usd_per_task / selfhost_success_frac
    if margin <= 0:
        return math.inf
    return fixed_usd / margin


def breakeven_utilization_frac(reserved_usd_per_hour: float, *, on_demand_usd_per_hour: float) -> float:
    """Utilisation above which a reservation beats paying per used hour.

    Parameters
    ----------
    reserved_usd_per_hour : float
        Reserved price per GPU-hour (paid whether used or not), USD.
    on_demand_usd_per_hour : float
        Pay-per-use price per used GPU-hour, USD (> 0).

    Returns
    -------
    float
        Break-even utilisation (> 1: the reservation never pays).

    Notes
    -----
    u* = reserved price / on-demand price (6.79/8.64 → 78.6 %).

    References
    ----------
    Card 12 (ledgers.md), book ch11 §11.4.4.
    """
    _require_non_negative("reserved_usd_per_hour", reserved_usd_per_hour)
    _require_positive("on_demand_usd_per_hour", on_demand_usd_per_hour)
    return reserved_usd_per_hour / on_demand_usd_per_hour


# --------------------------------------------------------------------------------------------------
# Fixed investment (specialisation) and lifecycle break-evens
# --------------------------------------------------------------------------------------------------


def breakeven_volume_units(fixed_cost: float, *, saving_per_unit: float) -> float:
    """Output volume at which a fixed investment pays back.

    Parameters
    ----------
    fixed_cost : float
        Extra fixed cost F_0 (currency or GPU·s).
    saving_per_unit : float
        Saving per unit of output Δc (same currency per unit), > 0.

    Returns
    -------
    float
        V*, units (tokens, tasks, calls).

    Notes
    -----
    V* = F_0 / Δc; the division is card 4's
    :func:`planner.ledgers.training.lifecycle_breakeven_volume` (same form as Q*).

    References
    ----------
    Card 12 (ledgers.md), book ch04 §4.8.4 (20M / 0.5 per M tokens → 4e13 tokens).
    """
    return lifecycle_breakeven_volume(fixed_cost, delta_unit_cost=saving_per_unit)


def fleet_output_units(
    machines: float, *, units_per_s_per_machine: float, utilization_frac: float, period_s: float
) -> float:
    """Output of a fleet over a period.

    Parameters
    ----------
    machines : float
        Machines.
    units_per_s_per_machine : float
        Rate per machine while busy, units/s.
    utilization_frac : float
        Average utilisation, 0..1.
    period_s : float
        Useful period, s.

    Returns
    -------
    float
        Units.

    Notes
    -----
    V = machines × rate × utilisation × period.

    References
    ----------
    Card 12 (ledgers.md), book ch04 §4.8.4.
    """
    _require_frac("utilization_frac", utilization_frac)
    return machines * units_per_s_per_machine * utilization_frac * period_s


def breakeven_machines(
    volume_units: float,
    *,
    units_per_s_per_machine: float,
    utilization_frac: float,
    lifetime_s: float,
    delivery_delay_s: float = 0.0,
) -> int:
    """Machines whose lifetime output reaches a break-even volume.

    Parameters
    ----------
    volume_units : float
        Break-even volume V*, units.
    units_per_s_per_machine : float
        Rate per machine, units/s.
    utilization_frac : float
        Average utilisation, 0 < u <= 1.
    lifetime_s : float
        Useful life, s.
    delivery_delay_s : float
        Delivery delay that shortens the useful life, s.

    Returns
    -------
    int
        Machines needed (check that the demand exists).

    Notes
    -----
    machines = ceil(V* / (rate × u × (life − delay))).

    References
    ----------
    Card 12 (ledgers.md), book ch04 §4.8.4 (→ 254 machines in one year).
    """
    useful_s = lifetime_s - delivery_delay_s
    _require_positive("useful life (lifetime_s - delivery_delay_s)", useful_s)
    per_machine = fleet_output_units(
        1.0,
        units_per_s_per_machine=units_per_s_per_machine,
        utilization_frac=utilization_frac,
        period_s=useful_s,
    )
    _require_positive("output per machine", per_machine)
    return math.ceil(volume_units / per_machine)


def payback_years(fixed_cost: float, *, saving_per_year: float) -> float:
    """Years until a fixed investment is recovered.

    Parameters
    ----------
    fixed_cost : float
        F_0, currency.
    saving_per_year : float
        Saving per year, currency (> 0).

    Returns
    -------
    float
        Years.

    Notes
    -----
    F_0 / annual saving.

    References
    ----------
    Card 12 (ledgers.md), book ch04 §4.8.4 (≈ 2.54 years).
    """
    return breakeven_volume_units(fixed_cost, saving_per_unit=saving_per_year)


def lifecycle_cost(training_cost: float, *, tasks: float, serving_cost_per_task: float) -> float:
    """Lifetime cost of a model: training plus serving.

    Parameters
    ----------
    training_cost : float
        Training cost C_0 (currency or GPU·s).
    tasks : float
        Tasks served over the model's life Q.
    serving_cost_per_task : float
        Serving cost per task c (same unit as C_0).

    Returns
    -------
    float
        C_life.

    Notes
    -----
    C_life = C_0 + Q·c.

    References
    ----------
    Card 12 (ledgers.md), book ch03 §3.6.
    """
    return training_cost + tasks * serving_cost_per_task


def lifecycle_breakeven_tasks(delta_training_cost: float, *, delta_serving_cost_per_task: float) -> float:
    """Lifetime volume above which training more (to serve cheaper) pays.

    Parameters
    ----------
    delta_training_cost : float
        Extra training cost ΔC_0 (e.g. GPU·s).
    delta_serving_cost_per_task : float
        Serving saving per task Δc (same unit), > 0.

    Returns
    -------
    float
        Q*, tasks.

    Notes
    -----
    Q* = ΔC_0 / Δc (same division as :func:`breakeven_volume_units`).

    References
    ----------
    Card 12 (ledgers.md), book ch03 §3.6.3 (3.6e8 GPU·s / 0.72 GPU·s → 5e8).
    """
    return breakeven_volume_units(delta_training_cost, saving_per_unit=delta_serving_cost_per_task)


# --------------------------------------------------------------------------------------------------
# 24 × 7 agent: GPU rent vs API
# --------------------------------------------------------------------------------------------------


def monthly_output_tokens(
    tokens_per_s: float, *, overhead_s_per_hour: float = 0.0, period_s: float = S_PER_MONTH
) -> float:
    """Output tokens one user receives in a month of continuous generation.

    Parameters
    ----------
    tokens_per_s : float
        Per-user decode speed r, tokens/s.
    overhead_s_per_hour : float
        Non-overlappable overhead t per hour, s.
    period_s : float
        Month, s (2,592,000).

    Returns
    -------
    float
        Tokens per month (2.592·r million for the 30-day month).

    Notes
    -----
    output = r × 2,592,000 × (3,600 − t)/3,600.

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06.
    """
    if not 0.0 <= overhead_s_per_hour <= S_PER_HOUR:
        raise ValueError(f"overhead_s_per_hour must be in [0, 3600], got {overhead_s_per_hour}")
    return tokens_per_s * period_s * (S_PER_HOUR - overhead_s_per_hour) / S_PER_HOUR


def gpu_usd_per_m_output(rent_usd_per_month: float, *, output_tokens_per_month: float) -> float:
    """GPU cost per million output tokens.

    Parameters
    ----------
    rent_usd_per_month : float
        Rent per user-month, USD.
    output_tokens_per_month : float
        Output tokens per user-month (> 0).

    Returns
    -------
    float
        USD per million output tokens.

    Notes
    -----
    GPU $/M = rent / (output / 10^6).

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06 ($611.10 / 102.38 M → $5.97/M).
    """
    _require_positive("output_tokens_per_month", output_tokens_per_month)
    return rent_usd_per_month / (output_tokens_per_month / TOKENS_PER_MILLION)


def api_rebuild_frac(history_tokens: float, *, output_tokens: float, new_tokens: float) -> float:
    """Fraction of calls that rebuild the API's prompt cache.

    Parameters
    ----------
    history_tokens : float
        History tokens per call L (> 0).
    output_tokens : float
        Output tokens per call O.
    new_tokens : float
        Further new tokens per call T (1,024 in the book's case).

    Returns
    -------
    float
        f, 0..1.

    Notes
    -----
    f = min(1, (O + T) / (0.1·L)).

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06.
    """
    _require_positive("history_tokens", history_tokens)
    return min(1.0, (output_tokens + new_tokens) / (API_REBUILD_WINDOW_FRAC * history_tokens))


def api_cache_hit_tokens(
    history_tokens: float, *, output_tokens: float, new_tokens: float, cache_hit_frac: float
) -> float:
    """Input tokens per call billed at the cache-hit price.

    Parameters
    ----------
    history_tokens : float
        History tokens per call L.
    output_tokens : float
        Output tokens per call O.
    new_tokens : float
        Further new tokens per call T.
    cache_hit_frac : float
        Cache-hit ratio h_c of the cacheable part, 0..1.

    Returns
    -------
    float
        I_hit, tokens (I_miss = L − I_hit).

    Notes
    -----
    I_hit = (L − O − T)·h_c·(1 − f).

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06.
    """
    _require_frac("cache_hit_frac", cache_hit_frac)
    f = api_rebuild_frac(history_tokens, output_tokens=output_tokens, new_tokens=new_tokens)
    return max(history_tokens - output_tokens - new_tokens, 0.0) * cache_hit_frac * (1 - f)


def api_usd_per_m_output(
    history_tokens: float,
    *,
    output_tokens: float,
    new_tokens: float,
    cache_hit_frac: float,
    usd_per_m_hit: float,
    usd_per_m_miss: float,
    usd_per_m_output: float,
) -> float:
    """API cost per million output tokens for an agent that resends its history.

    Parameters
    ----------
    history_tokens : float
        History (input) tokens per call L.
    output_tokens : float
        Output tokens per call O (> 0).
    new_tokens : float
        Further new tokens per call T.
    cache_hit_frac : float
        Cache-hit ratio h_c, 0..1.
    usd_per_m_hit, usd_per_m_miss, usd_per_m_output : float
        Cache-hit input, cache-miss input and output prices, USD per million tokens.

    Returns
    -------
    float
        USD per million output tokens.

    Notes
    -----
    API $/M = p_out + (I_hit·p_hit + I_miss·p_miss)/O, I_miss = L − I_hit.

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06 (DeepSeek-V4-Flash 200K → $4.69/M).
    """
    _require_positive("output_tokens", output_tokens)
    hit = api_cache_hit_tokens(
        history_tokens, output_tokens=output_tokens, new_tokens=new_tokens, cache_hit_frac=cache_hit_frac
    )
    miss = history_tokens - hit
    return usd_per_m_output + (hit * usd_per_m_hit + miss * usd_per_m_miss) / output_tokens


def api_breakeven_cache_hit_frac(
    gpu_usd_per_m: float,
    *,
    history_tokens: float,
    output_tokens: float,
    new_tokens: float,
    usd_per_m_hit: float,
    usd_per_m_miss: float,
    usd_per_m_output: float,
) -> float:
    """Cache-hit ratio above which the API costs less per output token than the GPU group.

    Parameters
    ----------
    gpu_usd_per_m : float
        GPU cost per million output tokens, USD.
    history_tokens, output_tokens, new_tokens : float
        L, O, T per call.
    usd_per_m_hit, usd_per_m_miss, usd_per_m_output : float
        API prices, USD per million tokens.

    Returns
    -------
    float
        h_c*, unclamped: below 0 the API is cheaper at any hit ratio, above 1 never; ``math.nan`` when
        the hit ratio has no effect (no cacheable tokens or equal hit and miss prices).

    Notes
    -----
    API $/M is linear in h_c: p_out + (L·p_miss − h_c·X·(p_miss − p_hit))/O with
    X = (L − O − T)(1 − f); solve for API $/M = GPU $/M.

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06.
    """
    common = {
        "output_tokens": output_tokens,
        "new_tokens": new_tokens,
        "usd_per_m_hit": usd_per_m_hit,
        "usd_per_m_miss": usd_per_m_miss,
        "usd_per_m_output": usd_per_m_output,
    }
    at_zero = api_usd_per_m_output(history_tokens, cache_hit_frac=0.0, **common)
    at_one = api_usd_per_m_output(history_tokens, cache_hit_frac=1.0, **common)
    if at_zero == at_one:
        return math.nan
    return (at_zero - gpu_usd_per_m) / (at_zero - at_one)


def breakeven_rent_usd_per_card_hour(
    usd_per_card_hour: float, *, gpu_usd_per_m: float, api_usd_per_m: float
) -> float:
    """Card-hour price at which the GPU group costs as much per output token as the API.

    Parameters
    ----------
    usd_per_card_hour : float
        Current rent, USD per card-hour.
    gpu_usd_per_m : float
        GPU cost per million output tokens at that rent, USD (> 0).
    api_usd_per_m : float
        API cost per million output tokens, USD.

    Returns
    -------
    float
        Break-even rent, USD per card-hour.

    Notes
    -----
    rent* = rent × (API $/M) / (GPU $/M) (GPU $/M is proportional to rent).

    References
    ----------
    Card 12 (ledgers.md), experiment ch13 13-06 ($6.79 × 4.69/5.97 → $5.334).
    """
    _require_positive("gpu_usd_per_m", gpu_usd_per_m)
    return usd_per_card_hour * api_usd_per_m / gpu_usd_per_m
