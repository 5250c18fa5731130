"""Card 8 (distributed inference) subcommands of `planner ledger`: ``planner.ledgers.distributed``.

Defaults are the book's worked examples (Qwen3-8B / Qwen3-32B on H100) so every command runs bare.
"""

from __future__ import annotations

import math

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import distributed as dist
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, MS_PER_S, US_PER_S

QWEN3_8B_KV_BYTES_PER_TOKEN = 147_456.0


def tp_memory(
    weights_gb: float,
    tp: int,
    kv_heads: int,
    kv_bytes_per_token: float,
    context_tokens: float,
    sessions: int,
    replicated_gb: float,
    workspace_gib: float,
    capacity_gb: float,
) -> dict[str, Value]:
    session_kv = context_tokens * kv_bytes_per_token
    weights = weights_gb * BYTES_PER_GB
    replicated = replicated_gb * BYTES_PER_GB
    workspace = workspace_gib * BYTES_PER_GIB
    card = dist.tp_card_bytes(
        weights,
        tp_degree=tp,
        kv_heads=kv_heads,
        kv_bytes=sessions * session_kv,
        replicated_bytes=replicated,
        workspace_bytes=workspace,
    )
    fits = dist.tp_sessions_per_card(
        capacity_gb * BYTES_PER_GB,
        sharded_bytes=weights,
        tp_degree=tp,
        kv_heads=kv_heads,
        session_kv_bytes=session_kv,
        replicated_bytes=replicated,
        workspace_bytes=workspace,
    )
    return {
        "card_gb": card / BYTES_PER_GB,
        "fits": card <= capacity_gb * BYTES_PER_GB,
        "kv_shards": dist.tp_kv_shards(tp, kv_heads=kv_heads),
        "sessions_per_card": fits,
    }


def tp_step(
    local_ms: float,
    tp: int,
    layers: int,
    allreduce_us: float,
    allreduce_doubled_us: float | None,
    kv_local_ms: float,
    kv_heads: int | None,
) -> dict[str, Value]:
    if kv_local_ms > 0 and kv_heads is None:  # the formula's own words named its kv_local_s and kv_heads
        raise ValueError("needs --kv-heads (n_KV: the KV read shards over at most n_KV cards)")
    local_s = local_ms / MS_PER_S
    kv_local_s = kv_local_ms / MS_PER_S
    allreduce_s = allreduce_us / US_PER_S
    step = dist.tp_decode_step_s(
        local_s,
        tp_degree=tp,
        layers=layers,
        allreduce_s=allreduce_s,
        kv_local_s=kv_local_s,
        kv_heads=kv_heads,
    )
    out: dict[str, Value] = {
        "step_ms": step * MS_PER_S,
        "comm_ms": dist.tp_comm_s(layers, allreduce_s=allreduce_s) * MS_PER_S,
        "doubled_step_ms": None,
        "doubling_pays": None,
    }
    if allreduce_doubled_us is not None:
        doubled_s = allreduce_doubled_us / US_PER_S
        doubled = dist.tp_decode_step_s(
            local_s,
            tp_degree=2 * tp,
            layers=layers,
            allreduce_s=doubled_s,
            kv_local_s=kv_local_s,
            kv_heads=kv_heads,
        )
        out["doubled_step_ms"] = doubled * MS_PER_S
        out["doubling_pays"] = dist.tp_doubling_pays(
            local_s,
            tp_degree=tp,
            layers=layers,
            allreduce_s=allreduce_s,
            allreduce_doubled_s=doubled_s,
            kv_local_s=kv_local_s,
            kv_heads=kv_heads,
        )
    return out


def pd_rate(
    prefill_cards: float,
    prefill_gpu_s: float,
    decode_cards: float,
    decode_gpu_s: float,
    link_gb_per_s: float,
    kv_gib: float,
    arrival_per_s: float | None,
) -> dict[str, Value]:
    kv_bytes = kv_gib * BYTES_PER_GIB
    mu_p = dist.pool_rate_per_s(prefill_cards, gpu_s_per_request=prefill_gpu_s)
    mu_d = dist.pool_rate_per_s(decode_cards, gpu_s_per_request=decode_gpu_s)
    link = {"link_gb_per_s": link_gb_per_s, "kv_bytes_per_request": kv_bytes}
    out: dict[str, Value] = {
        "prefill_rate_per_s": mu_p,
        "decode_rate_per_s": mu_d,
        "link_rate_per_s": dist.kv_link_rate_per_s(link_gb_per_s, kv_bytes_per_request=kv_bytes),
        "pd_rate_per_s": dist.pd_rate_per_s(mu_p, decode_rate_per_s=mu_d, **link),
        "binding": dist.pd_binding_stage(mu_p, decode_rate_per_s=mu_d, **link),
    }
    if arrival_per_s is not None:
        out["stable"] = dist.pool_is_stable(
            arrival_per_s, gpu_s_per_request=prefill_gpu_s, cards=prefill_cards
        ) and dist.pool_is_stable(arrival_per_s, gpu_s_per_request=decode_gpu_s, cards=decode_cards)
    return out


def kv_handoff(
    tokens: float, kv_bytes_per_token: float, latency_us: float, link_gb_per_s: float
) -> dict[str, Value]:
    kv_bytes = dist.kv_handoff_bytes(tokens, kv_bytes_per_token=kv_bytes_per_token)
    handoff_s = dist.kv_handoff_s(kv_bytes, latency_us=latency_us, link_gb_per_s=link_gb_per_s)
    return {
        "kv_bytes": kv_bytes,
        "kv_gib": kv_bytes / BYTES_PER_GIB,
        "handoff_ms": handoff_s * MS_PER_S,
        "buffer_bytes_per_end": dist.kv_handoff_buffer_bytes(kv_bytes),
        "link_rate_per_s": dist.kv_link_rate_per_s(link_gb_per_s, kv_bytes_per_request=kv_bytes),
    }


def af_handoff(
    layers: int, hidden_size: float, latency_us: float, link_gb_per_s: float, kv_gib: float
) -> dict[str, Value]:
    af = dist.af_bytes_per_token(layers, hidden_size=hidden_size)
    step_s = dist.af_step_s(
        layers, hidden_size=hidden_size, latency_us=latency_us, link_gb_per_s=link_gb_per_s
    )
    return {
        "af_bytes_per_token": af,
        "af_step_ms": step_s * MS_PER_S,
        "equal_time_latency_us": dist.af_equal_time_latency_us(
            kv_gib * BYTES_PER_GIB, af_bytes=af, transfers=2 * layers, link_gb_per_s=link_gb_per_s
        ),
    }


def save_vs_recompute(
    kv_gib: float, recompute_ms: float, write_gb_per_s: float, read_gb_per_s: float, reuses: float
) -> dict[str, Value]:
    kv_bytes = kv_gib * BYTES_PER_GIB
    recompute_s = recompute_ms / MS_PER_S
    write_s = dist.kv_handoff_s(kv_bytes, latency_us=0.0, link_gb_per_s=write_gb_per_s)
    read_s = dist.kv_handoff_s(kv_bytes, latency_us=0.0, link_gb_per_s=read_gb_per_s)
    save = dist.save_beats_recompute(write_s, read_s=read_s, recompute_s=recompute_s, reuses=reuses)
    return {
        "write_ms": write_s * MS_PER_S,
        "read_ms": read_s * MS_PER_S,
        "save_path_ms": (write_s + reuses * read_s) * MS_PER_S,
        "recompute_path_ms": reuses * recompute_ms,
        "critical_gb_per_s": dist.kv_production_gb_per_s(kv_bytes, prefill_s=recompute_s),
        "decision": "save" if save else "recompute",
    }


def ep_alltoall(
    tokens: float,
    top_k: float,
    token_bytes: float,
    ranks: float,
    nic_gb_per_s: float,
    fabric_gb_per_s: float | None,
    skew: float,
) -> dict[str, Value]:
    total = tokens * top_k * token_bytes
    per_rank = total / ranks
    dispatch = dist.ep_alltoall_s(
        per_rank,
        max_recv_bytes=skew * per_rank,
        send_gb_per_s=nic_gb_per_s,
        recv_gb_per_s=nic_gb_per_s,
        cut_bytes=total if fabric_gb_per_s is not None else 0.0,
        cut_gb_per_s=fabric_gb_per_s if fabric_gb_per_s is not None else math.inf,
    )
    return {
        "rows_per_rank": dist.ep_rows_per_expert(tokens, top_k=top_k, experts=ranks),
        "bytes_per_rank": per_rank,
        "dispatch_ms": dispatch * MS_PER_S,
    }


def cache_routing(
    queue_ms: float,
    compute_ms: float,
    miss_fetch_ms: float,
    hit_prob: float,
    parallel_fetch: bool,
    alternative_ms: float | None,
) -> dict[str, Value]:
    queue_s, compute_s = queue_ms / MS_PER_S, compute_ms / MS_PER_S
    hit = dist.routed_first_token_s(queue_s, fetch_s=0.0, compute_s=compute_s, parallel_fetch=parallel_fetch)
    miss = dist.routed_first_token_s(
        queue_s, fetch_s=miss_fetch_ms / MS_PER_S, compute_s=compute_s, parallel_fetch=parallel_fetch
    )
    out: dict[str, Value] = {
        "hit_ms": hit * MS_PER_S,
        "miss_ms": miss * MS_PER_S,
        "expected_ms": dist.expected_first_token_s(hit_prob, hit_s=hit, miss_s=miss) * MS_PER_S,
        "breakeven_hit_frac": None,
    }
    if alternative_ms is not None and miss > hit:
        out["breakeven_hit_frac"] = dist.breakeven_hit_frac(alternative_ms / MS_PER_S, hit_s=hit, miss_s=miss)
    return out


def cost_per_request(cost_per_hour: float, qualifying_per_s: float) -> dict[str, Value]:
    per_request = dist.cost_per_request_at_rate(cost_per_hour, qualifying_per_s=qualifying_per_s)
    return {"cost_per_request": per_request, "cost_per_1000_requests": 1000 * per_request}


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "tp-memory",
        8,
        "TP per-card memory",
        "TP per-card memory W/p + W_rep + KV/min(p, n_KV) + A ≤ C, and sessions per card",
        source="book ch06 §6.2",
        formulas=(dist.tp_card_bytes, dist.tp_sessions_per_card, dist.tp_kv_shards),
        params=(
            Param("weights_gb", float, 65.52, "W, weights sharded over the TP group", "GB"),
            Param("tp", int, 2, "p, tensor-parallel degree"),
            Param("kv_heads", int, 8, "n_KV, KV heads (KV shards over min(p, n_KV))"),
            Param("kv_bytes_per_token", float, 262_144.0, "c_KV, KV cache per token", "B/token"),
            Param("context_tokens", float, 131_072.0, "Tokens of context per session"),
            Param("sessions", int, 1, "Sessions held by the group"),
            Param("replicated_gb", float, 0.0, "Weights every card holds in full", "GB"),
            Param("workspace_gib", float, 2.0, "Workspace reservation per card", "GiB"),
            Param("capacity_gb", float, 80.0, "C, memory per card", "GB"),
        ),
        outputs=("card_gb", "fits", "kv_shards", "sessions_per_card"),
        compute=tp_memory,
    ),
    LedgerCommand(
        "tp-step",
        8,
        "TP decode step",
        "TP step T(p) = T_local/p + 2L·T_AR(p); add cards iff 2L·ΔT_AR < T_local/(2p)",
        source="book ch06 §6.4",
        formulas=(dist.tp_decode_step_s, dist.tp_comm_s, dist.tp_doubling_pays),
        params=(
            Param("local_ms", float, 29.35, "T_local, single-card local step time", "ms"),
            Param("tp", int, 8, "p, tensor-parallel degree"),
            Param("layers", int, 64, "L, transformer layers"),
            Param("allreduce_us", float, 11.57, "T_AR(p), one all-reduce over p ranks", "µs"),
            Param(
                "allreduce_doubled_us",
                float | None,
                None,
                "T_AR(2p), all-reduce over 2p ranks (given: apply the add-cards rule)",
                "µs",
            ),
            Param(
                "kv_local_ms",
                float,
                0.0,
                "Single-card KV-read time (shards over min(p, n_KV) cards only)",
                "ms",
            ),
            Param("kv_heads", int | None, None, "n_KV; required with --kv-local-ms"),
        ),
        outputs=("step_ms", "comm_ms", "doubled_step_ms", "doubling_pays"),
        compute=tp_step,
    ),
    LedgerCommand(
        "pd-rate",
        8,
        "Prefill–decode rate",
        "PD rate μ_PD = min(μ_P, μ_D, B_net/V_KV), μ_r = n_r/d_r, and the binding term",
        source="book ch09 §9.2",
        formulas=(
            dist.pool_rate_per_s,
            dist.kv_link_rate_per_s,
            dist.pd_rate_per_s,
            dist.pd_binding_stage,
            dist.pool_is_stable,
        ),
        params=(
            Param("prefill_cards", float, 4, "n_P, prefill cards"),
            Param("prefill_gpu_s", float, 0.8564, "d_P, prefill card-seconds per request", "GPU·s"),
            Param("decode_cards", float, 4, "n_D, decode cards"),
            Param("decode_gpu_s", float, 0.8782, "d_D, decode card-seconds per request", "GPU·s"),
            Param("link_gb_per_s", float, 25.0, "B_net, handoff link", "GB/s"),
            Param("kv_gib", float, 1.125, "V_KV per request", "GiB"),
            Param("arrival_per_s", float | None, None, "λ, to check stability λ·d_r < n_r", "requests/s"),
        ),
        outputs=(
            "prefill_rate_per_s",
            "decode_rate_per_s",
            "link_rate_per_s",
            "pd_rate_per_s",
            "binding",
            "stable",
        ),
        compute=pd_rate,
    ),
    LedgerCommand(
        "kv-handoff",
        8,
        "KV handoff",
        "KV handoff V_KV = n·c_KV, T = α + V_KV/B, double buffering holds 2·V_KV per end",
        source="book ch09 §9.2",
        formulas=(
            dist.kv_handoff_bytes,
            dist.kv_handoff_s,
            dist.kv_handoff_buffer_bytes,
            dist.kv_link_rate_per_s,
        ),
        params=(
            Param("tokens", float, 8192.0, "n, tokens of context handed over"),
            Param(
                "kv_bytes_per_token",
                float,
                QWEN3_8B_KV_BYTES_PER_TOKEN,
                "c_KV, KV cache per token",
                "B/token",
            ),
            Param("latency_us", float, 5.0, "α, start-up latency", "µs"),
            Param("link_gb_per_s", float, 25.0, "B_link, per direction", "GB/s"),
        ),
        outputs=("kv_bytes", "kv_gib", "handoff_ms", "buffer_bytes_per_end", "link_rate_per_s"),
        compute=kv_handoff,
    ),
    LedgerCommand(
        "af-handoff",
        8,
        "Attention–FFN handoff",
        "AF per step 2L·(α + d·2/B); equal-time start-up α* = (V_KV − V_AF)/((2L − 1)·B)",
        source="book ch09 Ex. 9.4",
        formulas=(dist.af_bytes_per_token, dist.af_step_s, dist.af_equal_time_latency_us),
        params=(
            Param("layers", int, 36, "L, layers (2L transfers per decode step)"),
            Param("hidden_size", float, 4096.0, "d, hidden size"),
            Param("latency_us", float, 5.0, "α per transfer", "µs"),
            Param("link_gb_per_s", float, 25.0, "B, link bandwidth", "GB/s"),
            Param("kv_gib", float, 1.125, "V_KV of the PD handoff to compare with", "GiB"),
        ),
        outputs=("af_bytes_per_token", "af_step_ms", "equal_time_latency_us"),
        compute=af_handoff,
    ),
    LedgerCommand(
        "save-vs-recompute",
        8,
        "Save vs recompute",
        "Save iff T_write + k·T_read < k·T_recompute; critical bandwidth = KV production",
        source="book ch09 §9.5",
        formulas=(dist.kv_handoff_s, dist.save_beats_recompute, dist.kv_production_gb_per_s),
        params=(
            Param("kv_gib", float, 1.125, "KV bytes of the prefix", "GiB"),
            Param("recompute_ms", float, 856.4, "T_recompute, prefill time of the prefix", "ms"),
            Param("write_gb_per_s", float, 25.0, "Store write bandwidth", "GB/s"),
            Param("read_gb_per_s", float, 25.0, "Store read bandwidth", "GB/s"),
            Param("reuses", float, 1.0, "k, expected reuses"),
        ),
        outputs=(
            "write_ms",
            "read_ms",
            "save_path_ms",
            "recompute_path_ms",
            "critical_gb_per_s",
            "decision",
        ),
        compute=save_vs_recompute,
    ),
    LedgerCommand(
        "ep-alltoall",
        8,
        "Expert-parallel all-to-all",
        "EP dispatch bound max(send/B_send, recv/B_recv, cut/B_cut); rows n·k/R; skew s",
        source="book ch09 Ex. 9.5",
        formulas=(dist.ep_alltoall_s, dist.ep_rows_per_expert),
        params=(
            Param("tokens", float, 1024.0, "n, tokens in the batch"),
            Param("top_k", float, 8.0, "k, experts per token"),
            Param("token_bytes", float, 8192.0, "Routed token size (d·b)", "B"),
            Param("ranks", float, 4.0, "R, sending ranks = receiving ranks"),
            Param("nic_gb_per_s", float, 50.0, "Per-card injection/ejection bandwidth", "GB/s"),
            Param(
                "fabric_gb_per_s",
                float | None,
                None,
                "Bandwidth of the narrowest fabric cut (default: no cut bound)",
                "GB/s",
            ),
            Param("skew", float, 1.0, "s, busiest receiver load / balanced load"),
        ),
        outputs=("rows_per_rank", "bytes_per_rank", "dispatch_ms"),
        compute=ep_alltoall,
    ),
    LedgerCommand(
        "cache-routing",
        8,
        "Cache-aware routing",
        "Routing T_first = Q + R + C or max(Q, R) + C; E[T] = T_miss − p·(T_miss − T_hit)",
        source="book ch09 Ex. 9.7",
        formulas=(dist.routed_first_token_s, dist.expected_first_token_s, dist.breakeven_hit_frac),
        params=(
            Param("queue_ms", float, 80.0, "Q, queueing delay on the replica", "ms"),
            Param("compute_ms", float, 30.9, "C, compute of the new part", "ms"),
            Param("miss_fetch_ms", float, 856.3, "R on a miss (recompute or fetch)", "ms"),
            Param("hit_prob", float, 0.9, "p, probability of a prefix hit"),
            Param("parallel_fetch", bool, False, "Fetch while queued: max(Q, R) + C"),
            Param("alternative_ms", float | None, None, "T of a certain alternative route", "ms"),
        ),
        outputs=("hit_ms", "miss_ms", "expected_ms", "breakeven_hit_frac"),
        compute=cache_routing,
    ),
    LedgerCommand(
        "cost-per-request",
        8,
        "Cost per qualifying request",
        "Cost per qualifying request = cost in the period / qualifying requests",
        source="book ch09 §9.7",
        formulas=(dist.cost_per_request_at_rate,),
        params=(
            Param("cost_per_hour", float, 8.0, "Fleet cost (any currency)", "currency/h"),
            Param("qualifying_per_s", float, 3.5, "Qualifying (on-time, correct) request rate", "requests/s"),
        ),
        outputs=("cost_per_request", "cost_per_1000_requests"),
        compute=cost_per_request,
    ),
)
