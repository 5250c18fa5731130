"""Card 8 — distributed inference ledger: TP placement and step time, pool rates, prefill–decode and
attention–FFN handoffs, expert parallelism, KV tiers, cache-aware routing, recovery and cost.

Pure formulas over floats. Units: bytes in B, times in s, link and memory bandwidth in decimal GB/s,
link start-up α in µs, rates in requests/s. Model-derived inputs (KV bytes per token, weight bytes,
prefill FLOPs) and collective times (all-reduce) are parameters here: they come from the card 1/2
(``inference``, ``architecture``) and card 6 (``communication``) modules.

References: card 8 of ``reference/ledgers.md`` (book ch09 §9.2–9.7, Examples 9.1–9.8; ch06 §6.1–6.7).
"""

from __future__ import annotations

import math
from typing import Literal

from planner.ledgers._checks import require_count as _require_count
from planner.ledgers._checks import require_fraction as _require_probability
from planner.ledgers._checks import require_non_negative as _require_nonnegative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.accelerator import link_edge_s
from planner.ledgers.inference import drain_time_s
from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP, S_PER_HOUR, US_PER_S

PdStage = Literal["prefill", "decode", "link"]

_TOKEN_TIME_EFFICIENCY = 0.9  # the book's eq. (6-15) divisor on the overlapped per-token term


# --- tensor parallelism: per-card memory -----------------------------------------------------------


def tp_kv_shards(tp_degree: int, *, kv_heads: int) -> int:
    """Number of distinct KV shards under TP degree p: min(p, n_KV).

    Parameters
    ----------
    tp_degree : int
        p, tensor-parallel degree.
    kv_heads : int
        n_KV, KV heads of the model.

    Returns
    -------
    int
        min(p, n_KV). KV shards by KV head; beyond n_KV the heads are replicated and per-card KV
        stops shrinking.

    References
    ----------
    Card 8 (per-card capacity under TP); book ch06 §6.2, §6.4.
    """
    _require_count("tp_degree", tp_degree)
    _require_count("kv_heads", kv_heads)
    return min(tp_degree, kv_heads)


def tp_card_bytes(
    sharded_bytes: float,
    *,
    tp_degree: int,
    kv_heads: int,
    kv_bytes: float = 0.0,
    kv_projection_bytes: float = 0.0,
    replicated_bytes: float = 0.0,
    workspace_bytes: float = 0.0,
) -> float:
    """Bytes on (or read by) the busiest card of a TP group, B.

    Parameters
    ----------
    sharded_bytes : float
        W, weight bytes split evenly over the p cards, B.
    tp_degree : int
        p, tensor-parallel degree.
    kv_heads : int
        n_KV, KV heads (KV state and K/V projections shard over at most n_KV cards).
    kv_bytes : float, optional
        KV cache of all sessions held by the group, B.
    kv_projection_bytes : float, optional
        K/V projection weights, which shard by KV head like the cache, B.
    replicated_bytes : float, optional
        Weights every card holds in full (router, norms, ...), B.
    workspace_bytes : float, optional
        Per-card workspace / activation reservation A + U, B (book: 2 GiB).

    Returns
    -------
    float
        W/p + W_KVproj/min(p, n_KV) + W_rep + KV/min(p, n_KV) + A, B. With only weight and KV read
        bytes it is the per-card read of a decode step.

    Notes
    -----
    Capacity check: W/p (+ replicated parts) + KV_card + A + U ≤ C.

    References
    ----------
    Card 8 (per-card capacity under TP); book ch06 §6.1, §6.2, §6.7.1.
    """
    _require_nonnegative("sharded_bytes", sharded_bytes)
    _require_nonnegative("kv_bytes", kv_bytes)
    _require_nonnegative("kv_projection_bytes", kv_projection_bytes)
    _require_nonnegative("replicated_bytes", replicated_bytes)
    _require_nonnegative("workspace_bytes", workspace_bytes)
    kv_shards = tp_kv_shards(tp_degree, kv_heads=kv_heads)
    return (
        sharded_bytes / tp_degree
        + (kv_projection_bytes + kv_bytes) / kv_shards
        + replicated_bytes
        + workspace_bytes
    )


def tp_sessions_per_card(
    capacity_bytes: float,
    *,
    sharded_bytes: float,
    tp_degree: int,
    kv_heads: int,
    session_kv_bytes: float,
    kv_projection_bytes: float = 0.0,
    replicated_bytes: float = 0.0,
    workspace_bytes: float = 0.0,
) -> int:
    """Sessions a TP group can hold: every card holds a KV shard of every session, sessions.

    Parameters
    ----------
    capacity_bytes : float
        C, memory per card, B.
    sharded_bytes, kv_projection_bytes, replicated_bytes, workspace_bytes : float
        As in :func:`tp_card_bytes`, B.
    tp_degree : int
        p, tensor-parallel degree.
    kv_heads : int
        n_KV, KV heads.
    session_kv_bytes : float
        KV cache of one session (context × KV bytes per token), B.

    Returns
    -------
    int
        floor((C − W/p − W_KVproj/min(p, n_KV) − W_rep − A) / (KV_session/min(p, n_KV))); 0 if the
        weights alone do not fit.

    References
    ----------
    Card 8 (per-card capacity under TP); book ch06 §6.1 (47 sessions of 8K), §6.2.
    """
    _require_positive("capacity_bytes", capacity_bytes)
    _require_positive("session_kv_bytes", session_kv_bytes)
    fixed = tp_card_bytes(
        sharded_bytes,
        tp_degree=tp_degree,
        kv_heads=kv_heads,
        kv_projection_bytes=kv_projection_bytes,
        replicated_bytes=replicated_bytes,
        workspace_bytes=workspace_bytes,
    )
    per_session = session_kv_bytes / tp_kv_shards(tp_degree, kv_heads=kv_heads)
    return max(0, math.floor((capacity_bytes - fixed) / per_session))


# --- tensor parallelism: step time -----------------------------------------------------------------


def tp_allreduce_message_bytes(batch: float, *, hidden_size: float, bytes_per_value: float = 2.0) -> float:
    """Message of one TP all-reduce in a decode step, B·d·b, B.

    Parameters
    ----------
    batch : float
        B, tokens in the step (one per sequence in decode).
    hidden_size : float
        d, hidden size.
    bytes_per_value : float, optional
        Bytes per activation value, B (BF16: 2).

    Returns
    -------
    float
        B·d·b, B (Qwen3-32B: 10 KiB per token).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (TP decode step); book ch06 §6.4.
    """
    _require_nonnegative("batch", batch)
    _require_positive("hidden_size", hidden_size)
    _require_positive("bytes_per_value", bytes_per_value)
    return batch * hidden_size * bytes_per_value


def tp_comm_s(layers: int, *, allreduce_s: float, allreduces_per_layer: int = 2) -> float:
    """Communication time of a TP decode step: 2L·T_AR, s.

    Parameters
    ----------
    layers : int
        L, transformer layers.
    allreduce_s : float
        T_AR(p), time of one all-reduce of the step's message over the TP group, s (card 6).
    allreduces_per_layer : int, optional
        All-reduces per layer (2: attention output and FFN output).

    Returns
    -------
    float
        2L·T_AR, s (Qwen3-32B TP16 over IB: 128 × 32.74 µs).

    Notes
    -----
    The all-reduces sit on the critical path of every layer and do not overlap. Works on numpy arrays.

    References
    ----------
    Card 8 (TP decode step); book ch06 §6.4.
    """
    _require_count("layers", layers)
    _require_count("allreduces_per_layer", allreduces_per_layer)
    _require_nonnegative("allreduce_s", allreduce_s)
    return allreduces_per_layer * layers * allreduce_s


def _tp_local_s(local_s: float, tp_degree: int, kv_local_s: float, kv_heads: int | None) -> float:
    if kv_heads is None:
        if kv_local_s:
            raise ValueError("kv_local_s needs kv_heads (KV shards over at most n_KV cards)")
        return local_s / tp_degree
    return local_s / tp_degree + kv_local_s / tp_kv_shards(tp_degree, kv_heads=kv_heads)


def tp_decode_step_s(
    local_s: float,
    *,
    tp_degree: int,
    layers: int,
    allreduce_s: float,
    kv_local_s: float = 0.0,
    kv_heads: int | None = None,
) -> float:
    """TP decode step T(p) = T_local/p + 2L·T_AR(p), s.

    Parameters
    ----------
    local_s : float
        T_local, single-card local (matrix/memory) time of the step, s. When ``kv_local_s`` is given,
        the part that shards over all p cards (weights) only.
    tp_degree : int
        p, tensor-parallel degree.
    layers : int
        L, transformer layers.
    allreduce_s : float
        T_AR(p), one all-reduce over p ranks, s (card 6).
    kv_local_s : float, optional
        Single-card KV-read time, which shards over min(p, n_KV) cards only, s.
    kv_heads : int or None, optional
        n_KV; required with ``kv_local_s``.

    Returns
    -------
    float
        T(p), s.

    Notes
    -----
    T(p) = T_local/p + 2L·T_AR(p), refined to T_W/p + T_KV/min(p, n_KV) + 2L·T_AR(p) when the KV
    part is given (Qwen3-32B, 8 KV heads: local 3.67 ms at TP8 → 2.48 ms at TP16, not 1.84 ms).

    References
    ----------
    Card 8 (TP decode step); book ch06 §6.4.
    """
    _require_count("tp_degree", tp_degree)
    _require_nonnegative("local_s", local_s)
    _require_nonnegative("kv_local_s", kv_local_s)
    local = _tp_local_s(local_s, tp_degree, kv_local_s, kv_heads)
    return local + tp_comm_s(layers, allreduce_s=allreduce_s)


def tp_doubling_pays(
    local_s: float,
    *,
    tp_degree: int,
    layers: int,
    allreduce_s: float,
    allreduce_doubled_s: float,
    kv_local_s: float = 0.0,
    kv_heads: int | None = None,
) -> bool:
    """Rule: grow TP from p to 2p iff the added all-reduce time is below the local time removed.

    Parameters
    ----------
    local_s, kv_local_s, kv_heads : float, float, int or None
        As in :func:`tp_decode_step_s`.
    tp_degree : int
        p, current TP degree.
    layers : int
        L, transformer layers.
    allreduce_s : float
        T_AR(p), s.
    allreduce_doubled_s : float
        T_AR(2p), s.

    Returns
    -------
    bool
        True iff 2L·[T_AR(2p) − T_AR(p)] < T_local/(2p) (the removed local time; with the KV refinement
        it is local(p) − local(2p)).

    References
    ----------
    Card 8 (add cards iff ...; grow TP only while the added all-reduce time is smaller than the local
    time it removes); book ch06 §6.4.
    """
    _require_count("tp_degree", tp_degree)
    _require_nonnegative("allreduce_doubled_s", allreduce_doubled_s)
    removed_s = _tp_local_s(local_s, tp_degree, kv_local_s, kv_heads) - _tp_local_s(
        local_s, 2 * tp_degree, kv_local_s, kv_heads
    )
    added_s = tp_comm_s(layers, allreduce_s=allreduce_doubled_s) - tp_comm_s(layers, allreduce_s=allreduce_s)
    return added_s < removed_s


def tp_ring_bytes_per_rank(tp_degree: int, *, hidden_size: float, bytes_per_value: float = 2.0) -> float:
    """Bytes each rank sends per token per layer under ring all-reduces, B.

    Parameters
    ----------
    tp_degree : int
        p, TP degree.
    hidden_size : float
        d, hidden size.
    bytes_per_value : float, optional
        Bytes per activation value, B (BF16: 2).

    Returns
    -------
    float
        2 × 2(p − 1)/p × d·b, B (two all-reduces per layer, each sending 2(p − 1)/p of the message).

    References
    ----------
    Card 8 (TP bytes per rank per token per layer); book ch06 §6.4.
    """
    _require_count("tp_degree", tp_degree)
    message = tp_allreduce_message_bytes(1.0, hidden_size=hidden_size, bytes_per_value=bytes_per_value)
    return 2.0 * 2.0 * (tp_degree - 1) / tp_degree * message


# --- pools, co-location and prefill–decode disaggregation -----------------------------------------


def decode_gpu_s_per_request(step_s: float, *, batch: float, output_tokens: int) -> float:
    """Decode card-seconds per request: T_step × (G − 1) / B, s.

    Parameters
    ----------
    step_s : float
        Decode step time at batch B, s.
    batch : float
        B, sequences sharing each step.
    output_tokens : int
        G, tokens returned; the first comes from prefill, so G − 1 decode steps.

    Returns
    -------
    float
        d_D, card-seconds per request (A100, 55.1 ms at B = 32, G = 1,025: 1.764 s).

    Notes
    -----
    Works on numpy arrays for ``step_s``.

    References
    ----------
    Card 8 (pool demand d_r); card 1 (G outputs = 1 prefill + G − 1 decode calls); book ch09 §9.2.
    """
    _require_nonnegative("step_s", step_s)
    _require_positive("batch", batch)
    _require_count("output_tokens", output_tokens)
    return step_s * (output_tokens - 1) / batch


def pool_rate_per_s(cards: float, *, gpu_s_per_request: float) -> float:
    """Service rate of a pool: μ_r = n_r/d_r, requests/s.

    Parameters
    ----------
    cards : float
        n_r, cards in the pool.
    gpu_s_per_request : float
        d_r, card-seconds each request needs on this pool, s.

    Returns
    -------
    float
        Requests per second (4 A100 prefilling 0.856 s each: 4.67 req/s).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (stability, PD rate); book ch09 §9.2.
    """
    _require_nonnegative("cards", cards)
    _require_positive("gpu_s_per_request", gpu_s_per_request)
    return cards / gpu_s_per_request


def pool_is_stable(arrival_per_s: float, *, gpu_s_per_request: float, cards: float) -> bool:
    """Stability of a pool: λ·d_r < n_r.

    Parameters
    ----------
    arrival_per_s : float
        λ, arrival rate, requests/s.
    gpu_s_per_request : float
        d_r, card-seconds per request on the pool, s.
    cards : float
        n_r, cards in the pool.

    Returns
    -------
    bool
        True iff the pool keeps up (its queue does not grow without bound).

    References
    ----------
    Card 8 (stability λ·d_r < n_r for every pool); book ch09 §9.2.
    """
    _require_nonnegative("arrival_per_s", arrival_per_s)
    _require_positive("gpu_s_per_request", gpu_s_per_request)
    _require_nonnegative("cards", cards)
    return arrival_per_s * gpu_s_per_request < cards


def colocated_rate_per_s(cards: float, *, prefill_gpu_s: float, decode_gpu_s: float) -> float:
    """Service rate of co-located prefill and decode: μ_co = N/(d_P + d_D), requests/s.

    Parameters
    ----------
    cards : float
        N, cards running both phases.
    prefill_gpu_s : float
        d_P, prefill card-seconds per request, s.
    decode_gpu_s : float
        d_D, decode card-seconds per request, s.

    Returns
    -------
    float
        Requests per second (8 A100: 8/(0.856 + 1.764) = 3.05).

    Notes
    -----
    For a mixed fleet sum the per-card-type rates. Works on numpy arrays.

    References
    ----------
    Card 8 (co-located service rate); book ch09 §9.2.
    """
    _require_nonnegative("cards", cards)
    _require_nonnegative("prefill_gpu_s", prefill_gpu_s)
    _require_nonnegative("decode_gpu_s", decode_gpu_s)
    _require_positive("prefill_gpu_s + decode_gpu_s", prefill_gpu_s + decode_gpu_s)
    return cards / (prefill_gpu_s + decode_gpu_s)


def kv_link_rate_per_s(link_gb_per_s: float, *, kv_bytes_per_request: float) -> float:
    """Requests per second the PD handoff link can carry: B_net/V_KV, requests/s.

    Parameters
    ----------
    link_gb_per_s : float
        B_net, handoff link bandwidth per direction, GB/s.
    kv_bytes_per_request : float
        V_KV, KV bytes handed off per request, B.

    Returns
    -------
    float
        Requests per second (25 GB/s ÷ 1.125 GiB = 20.7).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (PD rate); book ch09 §9.2.
    """
    _require_positive("link_gb_per_s", link_gb_per_s)
    _require_positive("kv_bytes_per_request", kv_bytes_per_request)
    return link_gb_per_s * BYTES_PER_GB / kv_bytes_per_request


def pd_rate_per_s(
    prefill_rate_per_s: float, *, decode_rate_per_s: float, link_gb_per_s: float, kv_bytes_per_request: float
) -> float:
    """Service rate of prefill–decode disaggregation: μ_PD = min(μ_P, μ_D, B_net/V_KV), requests/s.

    Parameters
    ----------
    prefill_rate_per_s : float
        μ_P, prefill pool rate, requests/s (:func:`pool_rate_per_s`).
    decode_rate_per_s : float
        μ_D, decode pool rate, requests/s.
    link_gb_per_s : float
        B_net, handoff link bandwidth, GB/s.
    kv_bytes_per_request : float
        V_KV, KV bytes per request, B.

    Returns
    -------
    float
        μ_PD, requests/s (4 A100 P + 4 H20 D: min(4.67, 4.55, 20.7) = 4.55).

    Notes
    -----
    The link binds iff B_net < μ·V_KV. Split only when μ_PD exceeds the co-located rate.

    References
    ----------
    Card 8 (PD rate); book ch09 §9.2.
    """
    _require_nonnegative("prefill_rate_per_s", prefill_rate_per_s)
    _require_nonnegative("decode_rate_per_s", decode_rate_per_s)
    link_rate = kv_link_rate_per_s(link_gb_per_s, kv_bytes_per_request=kv_bytes_per_request)
    return min(prefill_rate_per_s, decode_rate_per_s, link_rate)


def pd_binding_stage(
    prefill_rate_per_s: float, *, decode_rate_per_s: float, link_gb_per_s: float, kv_bytes_per_request: float
) -> PdStage:
    """Which term of μ_PD = min(μ_P, μ_D, B_net/V_KV) binds: "prefill", "decode" or "link".

    Parameters
    ----------
    prefill_rate_per_s, decode_rate_per_s, link_gb_per_s, kv_bytes_per_request : float
        As in :func:`pd_rate_per_s`.

    Returns
    -------
    {"prefill", "decode", "link"}
        The smallest term (ties go to prefill, then decode).

    References
    ----------
    Card 8 (PD rate; size the P:D ratio from the stage rates); book ch09 §9.2.
    """
    rates: dict[PdStage, float] = {
        "prefill": prefill_rate_per_s,
        "decode": decode_rate_per_s,
        "link": kv_link_rate_per_s(link_gb_per_s, kv_bytes_per_request=kv_bytes_per_request),
    }
    return min(rates, key=lambda stage: rates[stage])


# --- handoffs: KV (PD) and activations (AF) --------------------------------------------------------


def kv_handoff_bytes(tokens: float, *, kv_bytes_per_token: float) -> float:
    """KV bytes handed from prefill to decode: V_KV = n·c_KV, B.

    Parameters
    ----------
    tokens : float
        n, tokens of context handed over.
    kv_bytes_per_token : float
        c_KV = 2·L·h_kv·d_h·b, KV bytes per token, B (card 2).

    Returns
    -------
    float
        V_KV = 2·n·L·h_kv·d_h·b, B (Qwen3-8B 8K: 1.125 GiB).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (KV handoff); book ch09 §9.2.
    """
    _require_nonnegative("tokens", tokens)
    _require_nonnegative("kv_bytes_per_token", kv_bytes_per_token)
    return tokens * kv_bytes_per_token


def kv_handoff_s(kv_bytes: float, *, latency_us: float, link_gb_per_s: float) -> float:
    """KV handoff time T_handoff = α + V_KV/B_link, s.

    Parameters
    ----------
    kv_bytes : float
        V_KV, B.
    latency_us : float
        α, start-up latency, µs.
    link_gb_per_s : float
        B_link, per direction, GB/s.

    Returns
    -------
    float
        T_handoff, s (1.125 GiB at 25 GB/s: 48.3 ms).

    Notes
    -----
    Same edge formula as card 5 (:func:`planner.ledgers.accelerator.link_edge_s`). Works on numpy arrays.

    References
    ----------
    Card 8 (KV handoff); book ch09 §9.2, Example 9.4.
    """
    return link_edge_s(kv_bytes, latency_us=latency_us, bandwidth_gb_per_s=link_gb_per_s)


def kv_handoff_buffer_bytes(kv_bytes: float, *, double_buffered: bool = True) -> float:
    """Buffer each end of a KV handoff holds: 2·V_KV with double buffering, else V_KV, B.

    Parameters
    ----------
    kv_bytes : float
        V_KV of one request, B.
    double_buffered : bool, optional
        Whether the next request's KV lands while the current one is consumed.

    Returns
    -------
    float
        Bytes reserved at the sender and at the receiver, each, B.

    References
    ----------
    Card 8 (double buffering holds 2× at both ends); book ch09 §9.2.
    """
    _require_nonnegative("kv_bytes", kv_bytes)
    return (2.0 if double_buffered else 1.0) * kv_bytes


def af_bytes_per_token(layers: int, *, hidden_size: float, bytes_per_value: float = 2.0) -> float:
    """Attention–FFN disaggregation: bytes moved per decoded token, 2L·d·b, B.

    Parameters
    ----------
    layers : int
        L, layers (each crosses attention → FFN and back: 2L directional transfers).
    hidden_size : float
        d, hidden size.
    bytes_per_value : float, optional
        Bytes per activation value, B (BF16: 2).

    Returns
    -------
    float
        V_AF = 2L·d·b, B (Qwen3-8B: 72 × 8 KiB = 576 KiB).

    References
    ----------
    Card 8 (AF per-token transfers); book ch09 Example 9.4.
    """
    _require_count("layers", layers)
    _require_positive("hidden_size", hidden_size)
    _require_positive("bytes_per_value", bytes_per_value)
    return 2.0 * layers * hidden_size * bytes_per_value


def af_step_s(
    layers: int, *, hidden_size: float, latency_us: float, link_gb_per_s: float, bytes_per_value: float = 2.0
) -> float:
    """AF transfer time per decode step: T_AF = Σ_{2L} (α + v/B), s.

    Parameters
    ----------
    layers : int
        L, layers (2L dependent transfers per step).
    hidden_size : float
        d, hidden size.
    latency_us : float
        α per transfer, µs.
    link_gb_per_s : float
        B, link bandwidth per direction, GB/s.
    bytes_per_value : float, optional
        Bytes per activation value, B.

    Returns
    -------
    float
        2L·(α + d·b/B), s (Qwen3-8B, 5 µs, 25 GB/s: 0.384 ms).

    References
    ----------
    Card 8 (AF per-token transfers); book ch09 Example 9.4.
    """
    _require_count("layers", layers)
    per_transfer_bytes = hidden_size * bytes_per_value
    _require_positive("hidden_size * bytes_per_value", per_transfer_bytes)
    return (
        2 * layers * link_edge_s(per_transfer_bytes, latency_us=latency_us, bandwidth_gb_per_s=link_gb_per_s)
    )


def af_equal_time_latency_us(
    kv_bytes: float, *, af_bytes: float, transfers: int, link_gb_per_s: float
) -> float:
    """Start-up latency at which one decode step's AF transfers take as long as the one PD handoff, µs.

    Parameters
    ----------
    kv_bytes : float
        V_KV, the PD handoff payload, B.
    af_bytes : float
        V_AF, bytes of the AF transfers of one step, B.
    transfers : int
        n, AF transfers per step (2L; 72 for Qwen3-8B).
    link_gb_per_s : float
        B, link bandwidth, GB/s.

    Returns
    -------
    float
        α* = (V_KV − V_AF)/((n − 1)·B), µs (Qwen3-8B GQA at 25 GB/s: 680 µs).

    Notes
    -----
    Equating n·α + V_AF/B with α + V_KV/B. Above α* a single AF step already costs more than the
    whole PD handoff.

    References
    ----------
    Card 8 (AF equal-time start-up threshold); book ch09 Example 9.4.
    """
    if transfers < 2:
        raise ValueError(f"transfers must be at least 2 to compare with one handoff, got {transfers}")
    _require_nonnegative("kv_bytes", kv_bytes)
    _require_nonnegative("af_bytes", af_bytes)
    _require_positive("link_gb_per_s", link_gb_per_s)
    return (kv_bytes - af_bytes) / ((transfers - 1) * link_gb_per_s * BYTES_PER_GB) * US_PER_S


# --- experts: CPU vs GPU execution, expert parallelism, replicas ----------------------------------


def cpu_expert_s(
    rows: float,
    *,
    expert_params: float,
    expert_bytes: float,
    hidden_size: float,
    bytes_per_value: float,
    latency_us: float,
    link_gb_per_s: float,
    cpu_tflops: float,
    dram_gb_per_s: float,
) -> float:
    """Time to run one expert on the CPU (activations cross the link both ways), s.

    Parameters
    ----------
    rows : float
        m, token rows routed to the expert.
    expert_params : float
        P_e, parameters of the expert.
    expert_bytes : float
        W_e, stored bytes of the expert, B.
    hidden_size : float
        h, hidden size.
    bytes_per_value : float
        b, bytes per activation value, B.
    latency_us : float
        α, link start-up, µs.
    link_gb_per_s : float
        B_L, host–device link bandwidth, GB/s.
    cpu_tflops : float
        C_CPU, CPU compute, TFLOP/s.
    dram_gb_per_s : float
        B_DRAM, host memory bandwidth, GB/s.

    Returns
    -------
    float
        T_CPU(m) = 2α + 2m·h·b/B_L + max(2m·P_e/C_CPU, W_e/B_DRAM), s.

    References
    ----------
    Card 8 (CPU vs GPU expert execution, KTransformers style); book ch09.
    """
    _require_nonnegative("rows", rows)
    _require_positive("cpu_tflops", cpu_tflops)
    _require_positive("dram_gb_per_s", dram_gb_per_s)
    activation_bytes = 2.0 * rows * hidden_size * bytes_per_value
    transfer = 2.0 * latency_us / US_PER_S + activation_bytes / (link_gb_per_s * BYTES_PER_GB)
    compute = 2.0 * rows * expert_params / (cpu_tflops * FLOP_PER_TFLOP)
    weights = expert_bytes / (dram_gb_per_s * BYTES_PER_GB)
    return transfer + max(compute, weights)


def gpu_expert_s(
    rows: float,
    *,
    expert_params: float,
    expert_bytes: float,
    latency_us: float,
    link_gb_per_s: float,
    gpu_tflops: float,
    hbm_gb_per_s: float,
) -> float:
    """Time to run one host-resident expert on the GPU (weights cross the link), s.

    Parameters
    ----------
    rows : float
        m, token rows routed to the expert.
    expert_params : float
        P_e, parameters of the expert.
    expert_bytes : float
        W_e, stored bytes of the expert, B.
    latency_us : float
        α, link start-up, µs.
    link_gb_per_s : float
        B_L, host–device link bandwidth, GB/s.
    gpu_tflops : float
        C_GPU, GPU compute, TFLOP/s.
    hbm_gb_per_s : float
        B_HBM, device memory bandwidth, GB/s.

    Returns
    -------
    float
        T_GPU(m) = α + W_e/B_L + max(2m·P_e/C_GPU, W_e/B_HBM), s.

    References
    ----------
    Card 8 (CPU vs GPU expert execution); book ch09.
    """
    _require_nonnegative("rows", rows)
    _require_positive("gpu_tflops", gpu_tflops)
    _require_positive("hbm_gb_per_s", hbm_gb_per_s)
    transfer = link_edge_s(expert_bytes, latency_us=latency_us, bandwidth_gb_per_s=link_gb_per_s)
    compute = 2.0 * rows * expert_params / (gpu_tflops * FLOP_PER_TFLOP)
    weights = expert_bytes / (hbm_gb_per_s * BYTES_PER_GB)
    return transfer + max(compute, weights)


def ep_rows_per_expert(tokens: float, *, top_k: float, experts: float) -> float:
    """Mean token rows per expert under expert parallelism: n·k/E, rows.

    Parameters
    ----------
    tokens : float
        n, tokens in the batch.
    top_k : float
        k, experts per token.
    experts : float
        E, routed experts (or R ranks for rows per rank).

    Returns
    -------
    float
        n·k/E, rows.

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (expert-parallel load); book ch09 Example 9.5.
    """
    _require_nonnegative("tokens", tokens)
    _require_positive("top_k", top_k)
    _require_positive("experts", experts)
    return tokens * top_k / experts


def ep_skew_ratio(max_rows: float, *, tokens: float, top_k: float, ranks: float) -> float:
    """Load skew of expert parallelism: s = max_j m_j / (n·k/R), ratio.

    Parameters
    ----------
    max_rows : float
        Rows on the busiest rank.
    tokens, top_k : float
        n tokens, k experts per token.
    ranks : float
        R, expert-parallel ranks.

    Returns
    -------
    float
        s ≥ 1 (1 = balanced; the book's hotspot: 2.5).

    References
    ----------
    Card 8 (expert-parallel load); book ch09 Example 9.5.
    """
    _require_nonnegative("max_rows", max_rows)
    return max_rows / ep_rows_per_expert(tokens, top_k=top_k, experts=ranks)


def ep_alltoall_s(
    max_send_bytes: float,
    *,
    max_recv_bytes: float,
    send_gb_per_s: float,
    recv_gb_per_s: float,
    cut_bytes: float = 0.0,
    cut_gb_per_s: float = math.inf,
) -> float:
    """Lower bound of an all-to-all (dispatch or combine): the busiest port or cut, s.

    Parameters
    ----------
    max_send_bytes : float
        Bytes sent by the busiest sender, B.
    max_recv_bytes : float
        Bytes received by the busiest receiver, B (s × the balanced share under skew s).
    send_gb_per_s, recv_gb_per_s : float
        Per-card injection / ejection bandwidth, GB/s (e.g. one 400G NIC: 50).
    cut_bytes : float, optional
        Bytes crossing the narrowest cut of the fabric, B.
    cut_gb_per_s : float, optional
        Bandwidth of that cut, GB/s (infinite: no fabric bound).

    Returns
    -------
    float
        T ≥ max(max send/B_send, max receive/B_recv, cut bytes/B_cut), s.

    References
    ----------
    Card 8 (all-to-all lower bound); book ch09 Example 9.5.
    """
    _require_nonnegative("max_send_bytes", max_send_bytes)
    _require_nonnegative("max_recv_bytes", max_recv_bytes)
    _require_nonnegative("cut_bytes", cut_bytes)
    _require_positive("send_gb_per_s", send_gb_per_s)
    _require_positive("recv_gb_per_s", recv_gb_per_s)
    _require_positive("cut_gb_per_s", cut_gb_per_s)
    return max(
        max_send_bytes / (send_gb_per_s * BYTES_PER_GB),
        max_recv_bytes / (recv_gb_per_s * BYTES_PER_GB),
        cut_bytes / (cut_gb_per_s * BYTES_PER_GB),
    )


def replica_breakeven_batches(copy_s: float, *, saving_per_batch_s: float) -> int:
    """Batches after which copying a hot expert replica pays: N_min = floor(T_copy/Δt) + 1.

    Parameters
    ----------
    copy_s : float
        T_copy, time to place the replica, s.
    saving_per_batch_s : float
        Δt, time the replica saves per batch, s.

    Returns
    -------
    int
        N_min, batches.

    References
    ----------
    Card 8 (expert replica break-even); book ch09.
    """
    _require_nonnegative("copy_s", copy_s)
    _require_positive("saving_per_batch_s", saving_per_batch_s)
    return math.floor(round(copy_s / saving_per_batch_s, 9)) + 1


# --- KV tiers, save vs recompute, prefetch ---------------------------------------------------------


def kv_production_gb_per_s(kv_bytes: float, *, prefill_s: float) -> float:
    """KV production rate of prefill, r = V_KV/T_prefill, GB/s; also the critical save bandwidth.

    Parameters
    ----------
    kv_bytes : float
        KV bytes produced by one prefill, B.
    prefill_s : float
        Time of that prefill (= the recompute time), s.

    Returns
    -------
    float
        r, GB/s (Qwen3-8B 8K on A100 at 50 %: 1.125 GiB/0.856 s ≈ 1.41 GB/s). A store slower than r
        cannot beat recomputation however often the prefix is reused.

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (KV tiers; critical link bandwidth = KV production rate); book ch09 §9.5.
    """
    _require_nonnegative("kv_bytes", kv_bytes)
    _require_positive("prefill_s", prefill_s)
    return kv_bytes / prefill_s / BYTES_PER_GB


def kv_retention_s(capacity_bytes: float, *, production_gb_per_s: float) -> float:
    """How long a KV tier keeps a prefix before it is overwritten: capacity / production rate, s.

    Parameters
    ----------
    capacity_bytes : float
        Free capacity of the tier, B.
    production_gb_per_s : float
        r, KV production rate, GB/s.

    Returns
    -------
    float
        Retention, s (A100 HBM ≈ 45 s, host ≈ 195 s, SSD ≈ 2,722 s at 1.41 GB/s).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (KV tiers); book ch09 §9.5.
    """
    _require_nonnegative("capacity_bytes", capacity_bytes)
    _require_positive("production_gb_per_s", production_gb_per_s)
    return capacity_bytes / (production_gb_per_s * BYTES_PER_GB)


def kv_tier_capacity_bytes(production_gb_per_s: float, *, reuse_interval_s: float) -> float:
    """Capacity a tier needs to keep prefixes until they are reused: C ≥ r·T_reuse, B.

    Parameters
    ----------
    production_gb_per_s : float
        r, KV production rate, GB/s.
    reuse_interval_s : float
        T_reuse, time until a prefix is reused, s.

    Returns
    -------
    float
        C, B.

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (KV tiers); book ch09 §9.5.
    """
    _require_nonnegative("production_gb_per_s", production_gb_per_s)
    _require_nonnegative("reuse_interval_s", reuse_interval_s)
    return production_gb_per_s * BYTES_PER_GB * reuse_interval_s


def save_beats_recompute(write_s: float, *, read_s: float, recompute_s: float, reuses: float = 1.0) -> bool:
    """Rule: save KV for reuse iff T_write + k·T_read < k·T_recompute.

    Parameters
    ----------
    write_s : float
        T_write, time to store the KV once, s.
    read_s : float
        T_read, time to load it back, s.
    recompute_s : float
        T_recompute, prefill time of the prefix, s.
    reuses : float, optional
        k, expected reuses.

    Returns
    -------
    bool
        True when saving wins (8K prefix over 25 GB/s: 48.3 + 48.3 ms < 856 ms).

    References
    ----------
    Card 8 (save vs recompute); book ch09 §9.5.
    """
    _require_nonnegative("write_s", write_s)
    _require_nonnegative("read_s", read_s)
    _require_nonnegative("recompute_s", recompute_s)
    _require_positive("reuses", reuses)
    return write_s + reuses * read_s < reuses * recompute_s


def prefetch_buffer_bytes(link_gb_per_s: float, *, read_s: float, compute_s: float) -> float:
    """Layer-wise prefetch buffer S_buf = B·(T_read − T_compute_new), B (0 if compute hides the read).

    Parameters
    ----------
    link_gb_per_s : float
        B, bandwidth of the tier the KV streams from, GB/s.
    read_s : float
        T_read, time to read the saved KV, s.
    compute_s : float
        T_compute_new, compute time of the new tokens it overlaps with, s.

    Returns
    -------
    float
        Bytes that must be fetched ahead of the first layer, B.

    References
    ----------
    Card 8 (layer-wise prefetch buffer); book ch09 §9.5.
    """
    _require_positive("link_gb_per_s", link_gb_per_s)
    _require_nonnegative("read_s", read_s)
    _require_nonnegative("compute_s", compute_s)
    return link_gb_per_s * BYTES_PER_GB * max(0.0, read_s - compute_s)


# --- cache-aware routing ---------------------------------------------------------------------------


def routed_first_token_s(queue_s: float, *, fetch_s: float, compute_s: float, parallel_fetch: bool) -> float:
    """Time to first token on a replica that fetches the prefix KV: max(Q, R) + C or Q + R + C, s.

    Parameters
    ----------
    queue_s : float
        Q, queueing delay on the chosen replica, s.
    fetch_s : float
        R, prefix fetch (or recompute) time, s; 0 if the replica holds the prefix.
    compute_s : float
        C, compute of the new part of the request, s.
    parallel_fetch : bool
        True if the fetch runs while the request waits in the queue.

    Returns
    -------
    float
        T_first, s (replica A holding the prefix behind a 250 ms queue: 250 + 30.9 = 281 ms).

    References
    ----------
    Card 8 (routing); book ch09 Example 9.7.
    """
    _require_nonnegative("queue_s", queue_s)
    _require_nonnegative("fetch_s", fetch_s)
    _require_nonnegative("compute_s", compute_s)
    waited = max(queue_s, fetch_s) if parallel_fetch else queue_s + fetch_s
    return waited + compute_s


def expected_first_token_s(hit_prob_frac: float, *, hit_s: float, miss_s: float) -> float:
    """Mean time to first token with a probabilistic cache hit: E[T] = T_miss − p·(T_miss − T_hit), s.

    Parameters
    ----------
    hit_prob_frac : float
        p, probability that the prefix is found, 0..1.
    hit_s : float
        T_hit, s.
    miss_s : float
        T_miss, s.

    Returns
    -------
    float
        E[T], s (Q = 80 ms: 967.2 − 856.3·p ms; p = 0.9 → 196.5 ms). The tail is still T_miss whenever
        1 − p exceeds the tail probability (p99 = 967 ms at p = 0.9).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (routing, probabilistic hit); book ch09 Example 9.7.
    """
    _require_probability("hit_prob_frac", hit_prob_frac)
    _require_nonnegative("hit_s", hit_s)
    _require_nonnegative("miss_s", miss_s)
    return miss_s - hit_prob_frac * (miss_s - hit_s)


def breakeven_hit_frac(alternative_s: float, *, hit_s: float, miss_s: float) -> float:
    """Hit probability above which a probabilistic-hit route beats a certain alternative, fraction.

    Parameters
    ----------
    alternative_s : float
        T of the alternative route (e.g. recompute on an idle replica), s.
    hit_s, miss_s : float
        T_hit and T_miss of the probabilistic route, s.

    Returns
    -------
    float
        p* = (T_miss − T_alt)/(T_miss − T_hit) (Example 9.7: 7.0 %); ≤ 0 means it always wins,
        > 1 never.

    References
    ----------
    Card 8 (routing, probabilistic hit); book ch09 Example 9.7.
    """
    _require_nonnegative("alternative_s", alternative_s)
    _require_nonnegative("hit_s", hit_s)
    if not miss_s > hit_s:
        raise ValueError(f"miss_s ({miss_s!r}) must exceed hit_s ({hit_s!r})")
    return (miss_s - alternative_s) / (miss_s - hit_s)


def fetch_tie_gb_per_s(
    kv_bytes: float, *, target_s: float, queue_s: float, compute_s: float, fixed_s: float = 0.0
) -> float:
    """Fetch bandwidth at which a serial fetch route ties a target time: V/(T − Q − C − fixed), GB/s.

    Parameters
    ----------
    kv_bytes : float
        Prefix KV to fetch, B.
    target_s : float
        T of the route to tie (e.g. the replica that holds the prefix), s.
    queue_s : float
        Q on the fetching replica, s.
    compute_s : float
        C of the new part, s.
    fixed_s : float, optional
        Other serial fetch time not set by the link (local copies, start-up), s.

    Returns
    -------
    float
        Bandwidth, GB/s; faster links make the fetch route win.

    References
    ----------
    Card 8 (routing: T_first = Q + R + C serial); book ch09 Example 9.7.
    """
    _require_positive("kv_bytes", kv_bytes)
    budget_s = target_s - queue_s - compute_s - fixed_s
    if budget_s <= 0:
        raise ValueError(f"no fetch time is left to tie {target_s!r} s (budget {budget_s!r} s)")
    return kv_bytes / budget_s / BYTES_PER_GB


# --- start-up gaps, migration, cost, supernode token time ------------------------------------------


def startup_backlog_requests(arrival_per_s: float, *, gap_s: float) -> float:
    """Requests queued while a replica starts: λ·T_s, requests.

    Parameters
    ----------
    arrival_per_s : float
        λ, arrivals routed to the replica, requests/s.
    gap_s : float
        T_s, start-up gap, s.

    Returns
    -------
    float
        Backlog, requests.

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (backlog after a start-up gap); book ch09.
    """
    _require_nonnegative("arrival_per_s", arrival_per_s)
    _require_nonnegative("gap_s", gap_s)
    return arrival_per_s * gap_s


def startup_drain_s(arrival_per_s: float, *, service_rate_per_s: float, gap_s: float) -> float:
    """Time to drain the start-up backlog while arrivals continue: λT_s/(μ − λ), s (inf if μ ≤ λ).

    Parameters
    ----------
    arrival_per_s : float
        λ, requests/s.
    service_rate_per_s : float
        μ, requests/s once running.
    gap_s : float
        T_s, start-up gap, s.

    Returns
    -------
    float
        T_drain, s.

    References
    ----------
    Card 8 (backlog after a start-up gap); card 1 (drain time); book ch09.
    """
    backlog = startup_backlog_requests(arrival_per_s, gap_s=gap_s)
    return drain_time_s(backlog, service_rate_per_s=service_rate_per_s, arrival_per_s=arrival_per_s)


def startup_drain_rate_per_s(arrival_per_s: float, *, gap_s: float, window_s: float) -> float:
    """Service rate needed to drain a start-up backlog within a window: μ ≥ λ + λT_s/W, requests/s.

    Parameters
    ----------
    arrival_per_s : float
        λ, requests/s.
    gap_s : float
        T_s, start-up gap, s.
    window_s : float
        W, drain window, s.

    Returns
    -------
    float
        Minimum μ, requests/s.

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 8 (backlog after a start-up gap); book ch09.
    """
    _require_positive("window_s", window_s)
    return arrival_per_s + startup_backlog_requests(arrival_per_s, gap_s=gap_s) / window_s


def live_migration_s(state_bytes: float, *, link_gb_per_s: float, growth_gb_per_s: float = 0.0) -> float:
    """Live migration of growing state: t = V/(B − growth rate), s.

    Parameters
    ----------
    state_bytes : float
        V, state to move, B.
    link_gb_per_s : float
        B, migration bandwidth, GB/s.
    growth_gb_per_s : float, optional
        Rate at which the state keeps growing (new KV) during the copy, GB/s.

    Returns
    -------
    float
        t, s.

    References
    ----------
    Card 8 (live migration); book ch09.
    """
    _require_nonnegative("state_bytes", state_bytes)
    _require_nonnegative("growth_gb_per_s", growth_gb_per_s)
    if not link_gb_per_s > growth_gb_per_s:
        raise ValueError(
            f"migration never converges: link {link_gb_per_s!r} GB/s "
            f"must exceed growth {growth_gb_per_s!r} GB/s"
        )
    return state_bytes / ((link_gb_per_s - growth_gb_per_s) * BYTES_PER_GB)


def cost_per_qualifying_request(period_cost: float, *, qualifying_requests: float) -> float:
    """Cost per qualifying request: total cost in the period / requests meeting quality and deadline.

    Parameters
    ----------
    period_cost : float
        Everything spent in the period (idle reservation, failures, retries included), currency.
    qualifying_requests : float
        Requests in the period that met quality and deadline (C_on_time uses on-time requests).

    Returns
    -------
    float
        C_effective, currency per request; inf when nothing qualified (report the spend and zero
        successes rather than a finite average).

    References
    ----------
    Card 8 (cost per qualifying request; rank placements by it, not by raw throughput); book ch09 §9.7.
    """
    _require_nonnegative("period_cost", period_cost)
    _require_nonnegative("qualifying_requests", qualifying_requests)
    if qualifying_requests == 0:
        return math.inf
    return period_cost / qualifying_requests


def cost_per_request_at_rate(cost_per_hour: float, *, qualifying_per_s: float) -> float:
    """Cost per qualifying request of a fleet serving a steady rate: c_hour / (3,600·rate).

    Parameters
    ----------
    cost_per_hour : float
        Fleet cost per hour, currency (8 cards at 1 unit/h: 8).
    qualifying_per_s : float
        Qualifying requests served per second.

    Returns
    -------
    float
        Currency per qualifying request (8 units/h at 3.5 req/s: 0.63 per 1,000).

    Notes
    -----
    :func:`cost_per_qualifying_request` over one hour. Works on numpy arrays.

    References
    ----------
    Card 8 (cost per qualifying request); book ch09 §9.7.
    """
    _require_nonnegative("cost_per_hour", cost_per_hour)
    _require_positive("qualifying_per_s", qualifying_per_s)
    return cost_per_hour / (S_PER_HOUR * qualifying_per_s)


def supernode_token_s(
    weight_s: float,
    *,
    kv_s: float,
    compute_s: float,
    comm_s: float,
    fixed_s: float,
    efficiency_frac: float = _TOKEN_TIME_EFFICIENCY,
) -> float:
    """Per-token time of a supernode or weight-resident (ROM) system, s.

    Parameters
    ----------
    weight_s : float
        T_w, weight-read time per token on the busiest device, s.
    kv_s : float
        T_KV, KV-read time, s.
    compute_s : float
        T_c, compute time, s.
    comm_s : float
        T_comm, exposed communication per token, s.
    fixed_s : float
        T_fixed, fixed per-token overhead (launches, sampling), s.
    efficiency_frac : float, optional
        Overlap efficiency of the three local terms (book: 0.9).

    Returns
    -------
    float
        T_token = max(T_w, T_KV, T_c)/0.9 + T_comm + T_fixed, s.

    References
    ----------
    Card 8 (supernode / ROM token time); card 10; book ch06 §6.7.4, eq. (6-15).
    """
    _require_nonnegative("weight_s", weight_s)
    _require_nonnegative("kv_s", kv_s)
    _require_nonnegative("compute_s", compute_s)
    _require_nonnegative("comm_s", comm_s)
    _require_nonnegative("fixed_s", fixed_s)
    if not 0 < efficiency_frac <= 1:
        raise ValueError(f"efficiency_frac must be in (0, 1], got {efficiency_frac!r}")
    return max(weight_s, kv_s, compute_s) / efficiency_frac + comm_s + fixed_s
