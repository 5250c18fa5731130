"""Card 10 — supernode ledger: size a tightly coupled domain under capacity, power, cooling and bandwidth.

Power in kW, bandwidth per direction in decimal GB/s, bytes in bytes, times in seconds unless the name
says otherwise.

The sync ratio is a planner output, not a book rule: the book never states a "< 30 %" threshold; the
planner reports ``sync_ratio = exposed communication / step time`` and accepts a user threshold with
default 0.30 (see the note at the top of the reference ledgers.md).

References: card 10 (book ch06 §6.1, §6.5–6.7; ch07 §7.1, §7.6.4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from planner.ledgers._checks import require_count as _require_count
from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import window_limited_gb_per_s
from planner.ledgers.inference import max_concurrent_requests
from planner.units import BYTES_PER_GB

DEFAULT_SYNC_RATIO_THRESHOLD_FRAC = 0.30
"""Planner default for the acceptable sync ratio (planner's choice, not the book's)."""
AIR_COOLED_RACK_LIMIT_KW = 40.0
"""Book's air-cooling threshold per rack (≈ 40 kW), card 10."""


# --------------------------------------------------------------------------------------------------
# Capacity of the busiest card
# --------------------------------------------------------------------------------------------------


def card_load_bytes(
    weights_bytes: float, *, kv_bytes: float, activation_bytes: float, workspace_bytes: float
) -> float:
    """Resident bytes on one card: W_i + K_i + A_i + U_i. Works on numpy arrays.

    References
    ----------
    Card 10 (busiest-card check), book ch06 §6.1.
    """
    for name, value in (
        ("weights_bytes", weights_bytes),
        ("kv_bytes", kv_bytes),
        ("activation_bytes", activation_bytes),
        ("workspace_bytes", workspace_bytes),
    ):
        _require_non_negative(name, value)
    return weights_bytes + kv_bytes + activation_bytes + workspace_bytes


def busiest_card_headroom_bytes(capacity_bytes: Sequence[float], *, load_bytes: Sequence[float]) -> float:
    """Smallest free memory over all cards, min_i (C_i − load_i), bytes (negative = the plan does not fit).

    Parameters
    ----------
    capacity_bytes : sequence of float
        Memory C_i of each card, B.
    load_bytes : sequence of float
        Resident bytes W_i + K_i + A_i + U_i of each card, B (see :func:`card_load_bytes`).

    Returns
    -------
    float
        Headroom of the busiest card, B. Aggregate capacity is necessary, not sufficient: a plan fits only
        if this is ≥ 0.

    References
    ----------
    Card 10 (per-card capacity check), book ch06 §6.1.
    """
    if len(capacity_bytes) != len(load_bytes) or not capacity_bytes:
        raise ValueError("capacity_bytes and load_bytes must be non-empty and of equal length")
    return min(c - load for c, load in zip(capacity_bytes, load_bytes, strict=True))


def sharded_weight_bytes_per_card(replicated_bytes: float, *, sharded_bytes: float, shards: int) -> float:
    """Weights held by one card when part of them is sharded over S cards: W_rep + W_sharded/S, bytes.

    References
    ----------
    Card 10 (sessions per card with sharding), book ch06 §6.2, §6.7.1.
    """
    _require_non_negative("replicated_bytes", replicated_bytes)
    _require_non_negative("sharded_bytes", sharded_bytes)
    _require_count("shards", shards)
    return replicated_bytes + sharded_bytes / shards


def sessions_per_card(
    capacity_bytes: float,
    *,
    replicated_bytes: float,
    sharded_bytes: float,
    shards: int,
    workspace_bytes: float,
    kv_bytes_per_session: float,
) -> int:
    """Concurrent sessions a card holds with weights sharded over S cards: floor((C − W_card − U)/K).

    Parameters
    ----------
    capacity_bytes : float
        Card memory C, B.
    replicated_bytes : float
        Weights every card keeps in full, B.
    sharded_bytes : float
        Weights split evenly over the S cards, B.
    shards : int
        Cards S sharing the sharded weights.
    workspace_bytes : float
        Reserved workspace U, B.
    kv_bytes_per_session : float
        KV state K of one session on this card, B.

    Returns
    -------
    int
        N_session (0 if nothing fits).

    Notes
    -----
    W_card = W_replicated + W_sharded/S; N_session = floor((C − W_card − U)/K). The floor is card 1's
    concurrency bound (:func:`planner.ledgers.inference.max_concurrent_requests`).

    References
    ----------
    Card 10 (book ch06 §6.2, §6.7.1).
    """
    w_card = sharded_weight_bytes_per_card(replicated_bytes, sharded_bytes=sharded_bytes, shards=shards)
    return max_concurrent_requests(
        capacity_bytes,
        weights_bytes=w_card,
        workspace_bytes=workspace_bytes,
        state_bytes_per_request=kv_bytes_per_session,
    )


# --------------------------------------------------------------------------------------------------
# Power and cooling
# --------------------------------------------------------------------------------------------------


def power_limited_cards(
    power_budget_kw: float, *, server_power_kw: float, gpus_per_server: int, fixed_power_kw: float = 0.0
) -> int:
    """Largest card count a power budget feeds: N ≤ g·floor((P_budget − P_0)/P_server).

    Parameters
    ----------
    power_budget_kw : float
        Power available P_budget, kW.
    server_power_kw : float
        Power of one server P_server (DGX H100: 10.2 kW), kW.
    gpus_per_server : int
        Cards g per server.
    fixed_power_kw : float
        Power P_0 taken by shared equipment (switches, storage), kW.

    Returns
    -------
    int
        Cards N (120 kW with DGX H100 → 11 servers = 88 cards).

    References
    ----------
    Card 10 (book ch06 eq. (6-11)).
    """
    _require_non_negative("power_budget_kw", power_budget_kw)
    _require_positive("server_power_kw", server_power_kw)
    _require_count("gpus_per_server", gpus_per_server)
    _require_non_negative("fixed_power_kw", fixed_power_kw)
    servers = math.floor((power_budget_kw - fixed_power_kw) / server_power_kw + 1e-9)
    return gpus_per_server * max(0, servers)


def cluster_power_kw(
    cards: int, *, server_power_kw: float, gpus_per_server: int, fixed_power_kw: float = 0.0
) -> float:
    """Power drawn by the servers needed for ``cards`` cards: P_0 + ceil(cards/g)·P_server, kW.

    References
    ----------
    Card 10 (book ch06 eq. (6-11): 64 / 72 / 96 H100 → 81.6 / 91.8 / 122.4 kW).
    """
    _require_count("cards", cards, 0)
    _require_positive("server_power_kw", server_power_kw)
    _require_count("gpus_per_server", gpus_per_server)
    _require_non_negative("fixed_power_kw", fixed_power_kw)
    return fixed_power_kw + -(-cards // gpus_per_server) * server_power_kw


def servers_per_rack(rack_limit_kw: float, *, server_power_kw: float) -> int:
    """Servers one rack can power and cool: floor(P_rack / P_server).

    References
    ----------
    Card 10 (air-cooled rack ≈ 40 kW → 3 DGX H100, 30.6 kW), book ch06 §6.5.
    """
    _require_positive("rack_limit_kw", rack_limit_kw)
    _require_positive("server_power_kw", server_power_kw)
    return math.floor(rack_limit_kw / server_power_kw + 1e-9)


def racks_needed(servers: int, *, rack_limit_kw: float, server_power_kw: float) -> int:
    """Racks for ``servers`` servers under a per-rack power/cooling limit: ceil(servers / per rack).

    References
    ----------
    Card 10 (air-cooling threshold), book ch06 §6.5.
    """
    _require_count("servers", servers, 0)
    per_rack = servers_per_rack(rack_limit_kw, server_power_kw=server_power_kw)
    if per_rack == 0:
        raise ValueError(f"one {server_power_kw} kW server exceeds the {rack_limit_kw} kW rack limit")
    return -(-servers // per_rack)


# --------------------------------------------------------------------------------------------------
# Boundary bandwidth, torus vs switch, OCS, pooling
# --------------------------------------------------------------------------------------------------


def supernode_exit_gb_per_s(cards: int, *, nic_gb_per_s: float, oversubscription_ratio: float = 1.0) -> float:
    """Bandwidth leaving a supernode: cards × NIC / r, GB/s.

    References
    ----------
    Card 10 (in-node vs inter-node, non-oversubscribed vs 3:1), book ch07 §7.1.
    """
    _require_count("cards", cards)
    _require_positive("nic_gb_per_s", nic_gb_per_s)
    _require_positive("oversubscription_ratio", oversubscription_ratio)
    return cards * nic_gb_per_s / oversubscription_ratio


def boundary_all_to_all_s(leaving_bytes: float, *, exit_gb_per_s: float) -> float:
    """All-to-all time at the supernode boundary: bytes leaving / exit bandwidth, s. Works on numpy arrays.

    References
    ----------
    Card 10 (in-node vs inter-node), book ch07 §7.1.
    """
    _require_non_negative("leaving_bytes", leaving_bytes)
    _require_positive("exit_gb_per_s", exit_gb_per_s)
    return leaving_bytes / (exit_gb_per_s * BYTES_PER_GB)


def torus_mean_hops(radix: int, *, dims: int) -> float:
    """Mean shortest-path hop count between distinct nodes of a k-ary n-dimensional torus.

    Parameters
    ----------
    radix : int
        Nodes k per dimension (wrap-around links).
    dims : int
        Dimensions n.

    Returns
    -------
    float
        Mean hops over all ordered pairs of distinct nodes (4×4×4: 192/63 ≈ 3.05).

    Notes
    -----
    Per dimension the offsets d = 0..k−1 cost min(d, k − d) hops; summing over all k^n destinations gives
    n·k^(n−1)·Σ_d min(d, k − d), divided by the k^n − 1 other nodes.

    References
    ----------
    Card 10 (torus vs switch), book ch06 §6.5.
    """
    _require_count("radix", radix, 2)
    _require_count("dims", dims)
    ring_sum = sum(min(d, radix - d) for d in range(radix))
    nodes: int = radix**dims
    return dims * (nodes // radix) * ring_sum / (nodes - 1)


def torus_alltoall_link_bytes(bytes_per_node: float, *, radix: int, dims: int) -> float:
    """Per-link load of a uniform all-to-all on a k-ary n-dim torus: M × mean hops / (2n), bytes.

    Parameters
    ----------
    bytes_per_node : float
        Bytes M each node sends, spread evenly over all other nodes, B.
    radix : int
        Nodes k per dimension.
    dims : int
        Dimensions n (each node has 2n outgoing links).

    Returns
    -------
    float
        Bytes per directed link (4×4×4 TPU rack ≈ M/2).

    References
    ----------
    Card 10 (torus vs switch: ≈ M/2 per link vs M/ports), book ch06 §6.5.
    """
    _require_non_negative("bytes_per_node", bytes_per_node)
    return bytes_per_node * torus_mean_hops(radix, dims=dims) / (2 * dims)


def switch_alltoall_link_bytes(bytes_per_node: float, *, ports: int) -> float:
    """Per-link load of a uniform all-to-all through a switch with ``ports`` links per node: M/ports, bytes.

    References
    ----------
    Card 10 (torus vs switch), book ch06 §6.5.
    """
    _require_non_negative("bytes_per_node", bytes_per_node)
    _require_count("ports", ports)
    return bytes_per_node / ports


def ocs_payback_repetitions(reconfig_s: float, *, saving_per_repetition_s: float) -> int:
    """Repetitions after which an optical-circuit reconfiguration pays: ceil(T_reconfig / saving).

    Parameters
    ----------
    reconfig_s : float
        Reconfiguration time, s.
    saving_per_repetition_s : float
        Time saved each time the collective runs on the new topology, s.

    Returns
    -------
    int
        n (TPU v4: 1 ms / 195.7 µs → 6; 100 ms → 511).

    References
    ----------
    Card 10 (book ch06 §6.5).
    """
    _require_non_negative("reconfig_s", reconfig_s)
    _require_positive("saving_per_repetition_s", saving_per_repetition_s)
    return math.ceil(reconfig_s / saving_per_repetition_s - 1e-9)


def pooled_memory_access_gb_per_s(
    path_gb_per_s: float, *, outstanding_requests: float, request_bytes: float, round_trip_us: float
) -> float:
    """Access rate to pooled (borrowed) memory: B_usable = min(B_path, u·q/L), GB/s.

    Notes
    -----
    The same window bound as card 6's remote window
    (:func:`planner.ledgers.communication.window_limited_gb_per_s`).

    References
    ----------
    Card 10 (memory pooling), book ch06 §6.5.
    """
    return window_limited_gb_per_s(
        path_gb_per_s,
        outstanding_requests=outstanding_requests,
        request_bytes=request_bytes,
        round_trip_us=round_trip_us,
    )


# --------------------------------------------------------------------------------------------------
# Training step vs supernode size; sync ratio
# --------------------------------------------------------------------------------------------------


def supernode_training_step_s(
    compute_s: float, *, tp_comm_s: float, grad_sync_s: float, update_s: float
) -> float:
    """Training step in the ch07 §7.6.4 model (nothing overlaps): compute + TP comm + T_grad + update, s.

    References
    ----------
    Card 10 (supernode-size sweep), card 4 (T_grad); book ch07 §7.6.4. Works on numpy arrays.
    """
    for name, value in (
        ("compute_s", compute_s),
        ("tp_comm_s", tp_comm_s),
        ("grad_sync_s", grad_sync_s),
        ("update_s", update_s),
    ):
        _require_non_negative(name, value)
    return compute_s + tp_comm_s + grad_sync_s + update_s


def training_tokens_per_s(tokens_per_step: float, *, step_s: float) -> float:
    """Training throughput Θ = tokens per step / step time, tokens/s. Works on numpy arrays.

    References
    ----------
    Card 10 (book ch07 §7.6.4: 2^20 tokens / 0.614 s ≈ 1.709M tokens/s).
    """
    _require_non_negative("tokens_per_step", tokens_per_step)
    _require_positive("step_s", step_s)
    return tokens_per_step / step_s


def sync_ratio_frac(exposed_comm_s: float, *, step_s: float) -> float:
    """Sync ratio = exposed (non-overlapped) communication time / step time. Works on numpy arrays.

    Parameters
    ----------
    exposed_comm_s : float
        Communication time not hidden behind compute, s (say which terms were counted: gradient sync only,
        or also TP all-reduces and pipeline transfers).
    step_s : float
        Step time, s.

    Returns
    -------
    float
        Ratio in [0, 1] (ch07 §7.6.4, 8-card supernodes: 0.318 / 0.939 ≈ 0.34; 64-card: ≈ 0.10).

    Notes
    -----
    A planner output, not a book rule (see the module docstring).

    References
    ----------
    Card 10 (decision rules), ledgers.md "Two things the book does not provide" (2); book ch07 §7.6.4.
    """
    _require_non_negative("exposed_comm_s", exposed_comm_s)
    _require_positive("step_s", step_s)
    if np.any(np.asarray(exposed_comm_s) > np.asarray(step_s)):
        raise ValueError("exposed_comm_s cannot exceed step_s")
    return exposed_comm_s / step_s


def sync_ratio_acceptable(
    sync_ratio: float, *, threshold_frac: float = DEFAULT_SYNC_RATIO_THRESHOLD_FRAC
) -> bool:
    """Whether a sync ratio is within the user's threshold (default 0.30, the planner's choice).

    References
    ----------
    Card 10 (decision rules; the threshold is not a book rule).
    """
    if not 0.0 <= threshold_frac <= 1.0:
        raise ValueError(f"threshold_frac must be in [0, 1], got {threshold_frac!r}")
    return sync_ratio <= threshold_frac


# --------------------------------------------------------------------------------------------------
# Token time of a tightly coupled serving domain (ch06 §6.7.4, eq. 6-15)
# --------------------------------------------------------------------------------------------------


def token_time_s(compute_s: float, *, comm_s: float, fixed_s: float = 0.0) -> float:
    """Per-token time of a TP/wafer decode domain: compute term + fixed overhead + communication, s.

    Parameters
    ----------
    compute_s : float
        Memory/compute term of the step (the book already divides it by its 0.9 efficiency), s.
    comm_s : float
        Serial communication per token, s.
    fixed_s : float
        Fixed per-token overhead T_fixed not included in ``compute_s``, s.

    Returns
    -------
    float
        T_token, s (8 H100: 2,689 + 76 µs → 362 tokens/s). Works on numpy arrays.

    References
    ----------
    Card 10 (book ch06 §6.7.4, eq. (6-15)).
    """
    _require_non_negative("compute_s", compute_s)
    _require_non_negative("comm_s", comm_s)
    _require_non_negative("fixed_s", fixed_s)
    return compute_s + fixed_s + comm_s


def comm_share_frac(comm_s: float, *, token_s: float) -> float:
    """Share of the token time spent communicating: T_comm / T_token. Works on numpy arrays.

    References
    ----------
    Card 10 (book ch06 §6.7.4: 3 % on 8 H100, 76 % on 58 B200).
    """
    _require_non_negative("comm_s", comm_s)
    _require_positive("token_s", token_s)
    return comm_s / token_s
