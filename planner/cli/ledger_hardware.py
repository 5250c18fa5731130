"""`planner ledger ...` subcommands for card 5 (accelerator arithmetic) and card 8 (distributed inference).

Each command evaluates one formula family of ``planner.ledgers.accelerator`` or
``planner.ledgers.distributed``; ``--json`` prints a JSON object with unit-suffixed keys, otherwise a
small table. Defaults are the book's reference inputs (H100 SXM, Qwen3-8B) so every command runs bare.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated

import typer

from planner.cli.ledger_common import JsonFlag, Value
from planner.cli.ledger_common import emit as _emit
from planner.cli.ledger_common import guard as _guard
from planner.ledgers import accelerator as acc
from planner.ledgers import distributed as dist
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB, FLOP_PER_TFLOP, MS_PER_S, US_PER_S

PeakTflops = Annotated[float, typer.Option(help="Π, dense peak compute, TFLOP/s (default: H100 SXM BF16).")]
BandwidthGbPerS = Annotated[float, typer.Option(help="β, memory bandwidth, GB/s (default: H100 SXM).")]

H100_TFLOPS = 989.4
H100_GB_PER_S = 3350.0
QWEN3_8B_KV_BYTES_PER_TOKEN = 147_456.0


# --- card 5 ----------------------------------------------------------------------------------------


def peak_compute(
    sms: Annotated[float, typer.Option(help="Streaming multiprocessors.")] = 132,
    clock_ghz: Annotated[float, typer.Option(help="Clock at which the peak is quoted, GHz.")] = 1.83,
    flop_per_clock_per_sm: Annotated[
        float, typer.Option(help="FLOP per clock per SM (H100 BF16 dense tensor: 4,096).")
    ] = 4096,
    as_json: JsonFlag = False,
) -> None:
    """Peak compute Π = SMs × clock × FLOP/clock/SM (card 5, book ch04 §4.3)."""
    values = _guard(
        lambda: {
            "peak_tflops": acc.peak_tensor_tflops(
                sms, clock_ghz=clock_ghz, flop_per_clock_per_sm=flop_per_clock_per_sm
            )
        }
    )
    _emit("Peak compute (card 5)", values, as_json)


def hbm_bandwidth(
    stacks: Annotated[float, typer.Option(help="Active HBM stacks.")] = 5,
    pin_rate_gbit_per_s: Annotated[float, typer.Option(help="Data rate per pin, Gb/s.")] = 5.24,
    bus_width_bits: Annotated[float, typer.Option(help="Interface width per stack, bits.")] = 1024,
    as_json: JsonFlag = False,
) -> None:
    """HBM bandwidth: per stack = bus bits × pin rate / 8; device = stacks × per stack (card 5, ch04 §4.3)."""

    def compute() -> dict[str, Value]:
        stack = acc.hbm_stack_gb_per_s(pin_rate_gbit_per_s, bus_width_bits=bus_width_bits)
        return {
            "stack_gb_per_s": stack,
            "bandwidth_gb_per_s": acc.hbm_bandwidth_gb_per_s(stacks, stack_gb_per_s=stack),
        }

    _emit("HBM bandwidth (card 5)", _guard(compute), as_json)


def roofline(
    intensity_flop_per_byte: Annotated[float, typer.Option(help="I, arithmetic intensity, FLOP/B.")] = 1.0,
    peak_tflops: PeakTflops = H100_TFLOPS,
    bandwidth_gb_per_s: BandwidthGbPerS = H100_GB_PER_S,
    as_json: JsonFlag = False,
) -> None:
    """Roofline: P_att = min(Π, β·I), ridge I* = Π/β, bound = compute iff I ≥ I* (card 5, ch04 §4.7)."""

    def compute() -> dict[str, Value]:
        ridge = acc.ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
        bound = acc.is_compute_bound(intensity_flop_per_byte, ridge_flop_per_byte=ridge)
        return {
            "attainable_tflops": acc.attainable_tflops(
                intensity_flop_per_byte, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
            ),
            "ridge_flop_per_byte": ridge,
            "bound": "compute" if bound else "memory",
            "mfu_ceiling_frac": acc.mfu_ceiling_frac(
                intensity_flop_per_byte, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
            ),
        }

    _emit("Roofline (card 5)", _guard(compute), as_json)


def projection(
    rows: Annotated[float, typer.Option(help="M, activation rows (tokens in the call).")] = 1,
    k: Annotated[float, typer.Option(help="K, input width of the weight.")] = 4096,
    n: Annotated[float, typer.Option(help="N, output width of the weight.")] = 4096,
    bytes_per_value: Annotated[float, typer.Option(help="b, bytes per value (BF16: 2).")] = 2.0,
    peak_tflops: PeakTflops = H100_TFLOPS,
    bandwidth_gb_per_s: BandwidthGbPerS = H100_GB_PER_S,
    as_json: JsonFlag = False,
) -> None:
    """Projection F = 2MKN, V = b(MK + KN + MN), I = F/V; M* = I*·b·d/(2(d − b·I*)) if K = N (card 5)."""

    def compute() -> dict[str, Value]:
        flop = acc.projection_flop(rows, k=k, n=n)
        moved = acc.projection_bytes(rows, k=k, n=n, bytes_per_value=bytes_per_value)
        ridge = acc.ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
        intensity = flop / moved
        rows_star: Value = None
        if k == n and k > bytes_per_value * ridge:
            rows_star = acc.compute_bound_rows(ridge, hidden_size=k, bytes_per_value=bytes_per_value)
        return {
            "flop": flop,
            "bytes": moved,
            "intensity_flop_per_byte": intensity,
            "compute_us": flop / (peak_tflops * FLOP_PER_TFLOP) * US_PER_S,
            "memory_us": moved / (bandwidth_gb_per_s * BYTES_PER_GB) * US_PER_S,
            "bound": "compute" if acc.is_compute_bound(intensity, ridge_flop_per_byte=ridge) else "memory",
            "compute_bound_rows": rows_star,
        }

    _emit("Projection intensity (card 5)", _guard(compute), as_json)


def critical_batch(
    bytes_per_weight: Annotated[float, typer.Option(help="b_W, bytes per weight.")] = 2.0,
    peak_tflops: PeakTflops = H100_TFLOPS,
    bandwidth_gb_per_s: BandwidthGbPerS = H100_GB_PER_S,
    batch: Annotated[float, typer.Option(help="B, a batch to classify (decode I = 2B/b_W).")] = 1.0,
    as_json: JsonFlag = False,
) -> None:
    """Critical batch B* = b_W·Π/(2β); decode intensity I = 2B/b_W (cards 5 and 1, book ch01 §1.3)."""

    def compute() -> dict[str, Value]:
        ridge = acc.ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
        intensity = acc.decode_intensity_flop_per_byte(batch, bytes_per_weight=bytes_per_weight)
        return {
            "critical_batch_seqs": acc.critical_batch_seqs(
                bytes_per_weight, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
            ),
            "ridge_flop_per_byte": ridge,
            "decode_intensity_flop_per_byte": intensity,
            "bound": "compute" if acc.is_compute_bound(intensity, ridge_flop_per_byte=ridge) else "memory",
        }

    _emit("Critical batch (cards 5, 1)", _guard(compute), as_json)


def memory_parallelism(
    interface_gb_per_s: Annotated[float, typer.Option(help="R_interface, peak bandwidth, GB/s.")] = 1008.0,
    transaction_bytes: Annotated[float, typer.Option(help="s, bytes per memory transaction.")] = 128.0,
    latency_ns: Annotated[float, typer.Option(help="L_lat, memory latency, ns.")] = 500.0,
    outstanding: Annotated[float, typer.Option(help="N_outstanding, requests in flight.")] = 128.0,
    as_json: JsonFlag = False,
) -> None:
    """Little's law: R_eff = min(R_if, N·s/L_lat); N_needed = ceil(R_if·L_lat/s) (card 5, Example 4-2)."""

    def compute() -> dict[str, Value]:
        return {
            "effective_gb_per_s": acc.memory_parallelism_gb_per_s(
                outstanding,
                transaction_bytes=transaction_bytes,
                latency_ns=latency_ns,
                interface_gb_per_s=interface_gb_per_s,
            ),
            "outstanding_needed_requests": acc.outstanding_requests_needed(
                interface_gb_per_s, transaction_bytes=transaction_bytes, latency_ns=latency_ns
            ),
        }

    _emit("Memory-level parallelism (card 5)", _guard(compute), as_json)


def quantized_storage(
    values: Annotated[float, typer.Option(help="n, values in the tensor.")] = 4096.0**2,
    bits_per_value: Annotated[float, typer.Option(help="b, bits per stored value.")] = 4.0,
    group_size: Annotated[float | None, typer.Option(help="g, values per scale (omit: no scales).")] = 32.0,
    scale_bytes: Annotated[float, typer.Option(help="s, bytes per scale.")] = 1.0,
    as_json: JsonFlag = False,
) -> None:
    """Quantised storage V_W = n·b/8 + (n/g)·s (card 5, book ch04 §4.2.4)."""

    def compute() -> dict[str, Value]:
        stored = acc.quantized_storage_bytes(
            values,
            bits_per_value=bits_per_value,
            group_size=group_size,
            scale_bytes=scale_bytes if group_size is not None else 0.0,
        )
        return {
            "storage_bytes": stored,
            "storage_mib": stored / BYTES_PER_MIB,
            "effective_bits_per_value": stored * 8 / values,
        }

    _emit("Quantised storage (card 5)", _guard(compute), as_json)


def link_edge(
    message_bytes: Annotated[float, typer.Option(help="V, payload, B.")] = 8192.0,
    latency_us: Annotated[float, typer.Option(help="α, start-up latency, µs.")] = 3.76,
    bandwidth_gb_per_s: Annotated[float, typer.Option(help="R, link bandwidth per direction, GB/s.")] = 50.0,
    as_json: JsonFlag = False,
) -> None:
    """Link edge T = α + V/R; start-up equals transfer at V* = α·R (card 5, book ch04)."""

    def compute() -> dict[str, Value]:
        return {
            "time_us": acc.link_edge_s(
                message_bytes, latency_us=latency_us, bandwidth_gb_per_s=bandwidth_gb_per_s
            )
            * US_PER_S,
            "crossover_bytes": acc.startup_equal_payload_bytes(
                latency_us, bandwidth_gb_per_s=bandwidth_gb_per_s
            ),
        }

    _emit("Link edge (card 5)", _guard(compute), as_json)


# --- card 8 ----------------------------------------------------------------------------------------


def tp_memory(
    weights_gb: Annotated[float, typer.Option(help="W, weights sharded over the TP group, GB.")] = 65.52,
    tp: Annotated[int, typer.Option(help="p, tensor-parallel degree.")] = 2,
    kv_heads: Annotated[int, typer.Option(help="n_KV, KV heads (KV shards over min(p, n_KV)).")] = 8,
    kv_bytes_per_token: Annotated[float, typer.Option(help="c_KV, KV bytes per token.")] = 262_144.0,
    context_tokens: Annotated[float, typer.Option(help="Tokens of context per session.")] = 131_072.0,
    sessions: Annotated[int, typer.Option(help="Sessions held by the group.")] = 1,
    replicated_gb: Annotated[float, typer.Option(help="Weights every card holds in full, GB.")] = 0.0,
    workspace_gib: Annotated[float, typer.Option(help="Workspace reservation per card, GiB.")] = 2.0,
    capacity_gb: Annotated[float, typer.Option(help="C, memory per card, GB.")] = 80.0,
    as_json: JsonFlag = False,
) -> None:
    """TP per-card memory W/p + W_rep + KV/min(p, n_KV) + A ≤ C, and sessions per card (card 8, ch06 §6.2)."""

    def compute() -> dict[str, Value]:
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

    _emit("TP per-card memory (card 8)", _guard(compute), as_json)


def tp_step(
    local_ms: Annotated[float, typer.Option(help="T_local, single-card local step time, ms.")] = 29.35,
    tp: Annotated[int, typer.Option(help="p, tensor-parallel degree.")] = 8,
    layers: Annotated[int, typer.Option(help="L, transformer layers.")] = 64,
    allreduce_us: Annotated[float, typer.Option(help="T_AR(p), one all-reduce over p ranks, µs.")] = 11.57,
    allreduce_doubled_us: Annotated[
        float | None, typer.Option(help="T_AR(2p), µs; when given, apply the add-cards rule.")
    ] = None,
    kv_local_ms: Annotated[
        float, typer.Option(help="Single-card KV-read time, ms; it shards over min(p, n_KV) cards only.")
    ] = 0.0,
    kv_heads: Annotated[int | None, typer.Option(help="n_KV; required with --kv-local-ms.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """TP step T(p) = T_local/p + 2L·T_AR(p); add cards iff 2L·ΔT_AR < T_local/(2p) (card 8, ch06 §6.4)."""

    def compute() -> dict[str, Value]:
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

    _emit("TP decode step (card 8)", _guard(compute), as_json)


def pd_rate(
    prefill_cards: Annotated[float, typer.Option(help="n_P, prefill cards.")] = 4,
    prefill_gpu_s: Annotated[float, typer.Option(help="d_P, prefill card-seconds per request.")] = 0.8564,
    decode_cards: Annotated[float, typer.Option(help="n_D, decode cards.")] = 4,
    decode_gpu_s: Annotated[float, typer.Option(help="d_D, decode card-seconds per request.")] = 0.8782,
    link_gb_per_s: Annotated[float, typer.Option(help="B_net, handoff link, GB/s.")] = 25.0,
    kv_gib: Annotated[float, typer.Option(help="V_KV per request, GiB.")] = 1.125,
    arrival_per_s: Annotated[float | None, typer.Option(help="λ, to check stability λ·d_r < n_r.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """PD rate μ_PD = min(μ_P, μ_D, B_net/V_KV), μ_r = n_r/d_r, and the binding term (card 8, ch09 §9.2)."""

    def compute() -> dict[str, Value]:
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

    _emit("Prefill–decode rate (card 8)", _guard(compute), as_json)


def kv_handoff(
    tokens: Annotated[float, typer.Option(help="n, tokens of context handed over.")] = 8192.0,
    kv_bytes_per_token: Annotated[float, typer.Option(help="c_KV, KV bytes per token.")] = (
        QWEN3_8B_KV_BYTES_PER_TOKEN
    ),
    latency_us: Annotated[float, typer.Option(help="α, start-up latency, µs.")] = 5.0,
    link_gb_per_s: Annotated[float, typer.Option(help="B_link, per direction, GB/s.")] = 25.0,
    as_json: JsonFlag = False,
) -> None:
    """KV handoff V_KV = n·c_KV, T = α + V_KV/B, double buffering holds 2·V_KV per end (card 8, ch09 §9.2)."""

    def compute() -> dict[str, Value]:
        kv_bytes = dist.kv_handoff_bytes(tokens, kv_bytes_per_token=kv_bytes_per_token)
        return {
            "kv_bytes": kv_bytes,
            "kv_gib": kv_bytes / BYTES_PER_GIB,
            "handoff_ms": dist.kv_handoff_s(kv_bytes, latency_us=latency_us, link_gb_per_s=link_gb_per_s)
            * MS_PER_S,
            "buffer_bytes_per_end": dist.kv_handoff_buffer_bytes(kv_bytes),
            "link_rate_per_s": dist.kv_link_rate_per_s(link_gb_per_s, kv_bytes_per_request=kv_bytes),
        }

    _emit("KV handoff (card 8)", _guard(compute), as_json)


def af_handoff(
    layers: Annotated[int, typer.Option(help="L, layers (2L transfers per decode step).")] = 36,
    hidden_size: Annotated[float, typer.Option(help="d, hidden size.")] = 4096.0,
    latency_us: Annotated[float, typer.Option(help="α per transfer, µs.")] = 5.0,
    link_gb_per_s: Annotated[float, typer.Option(help="B, link bandwidth, GB/s.")] = 25.0,
    kv_gib: Annotated[float, typer.Option(help="V_KV of the PD handoff to compare with, GiB.")] = 1.125,
    as_json: JsonFlag = False,
) -> None:
    """AF per step 2L·(α + d·2/B); equal-time start-up α* = (V_KV − V_AF)/((2L − 1)·B) (card 8, Ex. 9.4)."""

    def compute() -> dict[str, Value]:
        af = dist.af_bytes_per_token(layers, hidden_size=hidden_size)
        return {
            "af_bytes_per_token": af,
            "af_step_ms": dist.af_step_s(
                layers, hidden_size=hidden_size, latency_us=latency_us, link_gb_per_s=link_gb_per_s
            )
            * MS_PER_S,
            "equal_time_latency_us": dist.af_equal_time_latency_us(
                kv_gib * BYTES_PER_GIB, af_bytes=af, transfers=2 * layers, link_gb_per_s=link_gb_per_s
            ),
        }

    _emit("Attention–FFN handoff (card 8)", _guard(compute), as_json)


def save_vs_recompute(
    kv_gib: Annotated[float, typer.Option(help="KV bytes of the prefix, GiB.")] = 1.125,
    recompute_ms: Annotated[float, typer.Option(help="T_recompute, prefill time of the prefix, ms.")] = 856.4,
    write_gb_per_s: Annotated[float, typer.Option(help="Store write bandwidth, GB/s.")] = 25.0,
    read_gb_per_s: Annotated[float, typer.Option(help="Store read bandwidth, GB/s.")] = 25.0,
    reuses: Annotated[float, typer.Option(help="k, expected reuses.")] = 1.0,
    as_json: JsonFlag = False,
) -> None:
    """Save iff T_write + k·T_read < k·T_recompute; critical bandwidth = KV production (card 8, ch09 §9.5)."""

    def compute() -> dict[str, Value]:
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

    _emit("Save vs recompute (card 8)", _guard(compute), as_json)


def ep_alltoall(
    tokens: Annotated[float, typer.Option(help="n, tokens in the batch.")] = 1024.0,
    top_k: Annotated[float, typer.Option(help="k, experts per token.")] = 8.0,
    token_bytes: Annotated[float, typer.Option(help="Bytes per routed token (d·b).")] = 8192.0,
    ranks: Annotated[float, typer.Option(help="R, sending ranks = receiving ranks.")] = 4.0,
    nic_gb_per_s: Annotated[float, typer.Option(help="Per-card injection/ejection bandwidth, GB/s.")] = 50.0,
    fabric_gb_per_s: Annotated[
        float | None,
        typer.Option(help="Bandwidth of the narrowest fabric cut, GB/s (default: no cut bound)."),
    ] = None,
    skew: Annotated[float, typer.Option(help="s, busiest receiver load / balanced load.")] = 1.0,
    as_json: JsonFlag = False,
) -> None:
    """EP dispatch bound max(send/B_send, recv/B_recv, cut/B_cut); rows n·k/R; skew s (card 8, Ex. 9.5)."""

    def compute() -> dict[str, Value]:
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

    _emit("Expert-parallel all-to-all (card 8)", _guard(compute), as_json)


def cache_routing(
    queue_ms: Annotated[float, typer.Option(help="Q, queueing delay on the replica, ms.")] = 80.0,
    compute_ms: Annotated[float, typer.Option(help="C, compute of the new part, ms.")] = 30.9,
    miss_fetch_ms: Annotated[float, typer.Option(help="R on a miss (recompute or fetch), ms.")] = 856.3,
    hit_prob: Annotated[float, typer.Option(help="p, probability of a prefix hit.")] = 0.9,
    parallel_fetch: Annotated[bool, typer.Option(help="Fetch while queued: max(Q, R) + C.")] = False,
    alternative_ms: Annotated[
        float | None, typer.Option(help="T of a certain alternative route, ms.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Routing T_first = Q + R + C or max(Q, R) + C; E[T] = T_miss − p·(T_miss − T_hit) (card 8, Ex. 9.7)."""

    def compute() -> dict[str, Value]:
        hit = dist.routed_first_token_s(
            queue_ms / MS_PER_S, fetch_s=0.0, compute_s=compute_ms / MS_PER_S, parallel_fetch=parallel_fetch
        )
        miss = dist.routed_first_token_s(
            queue_ms / MS_PER_S,
            fetch_s=miss_fetch_ms / MS_PER_S,
            compute_s=compute_ms / MS_PER_S,
            parallel_fetch=parallel_fetch,
        )
        out: dict[str, Value] = {
            "hit_ms": hit * MS_PER_S,
            "miss_ms": miss * MS_PER_S,
            "expected_ms": dist.expected_first_token_s(hit_prob, hit_s=hit, miss_s=miss) * MS_PER_S,
            "breakeven_hit_frac": None,
        }
        if alternative_ms is not None and miss > hit:
            out["breakeven_hit_frac"] = dist.breakeven_hit_frac(
                alternative_ms / MS_PER_S, hit_s=hit, miss_s=miss
            )
        return out

    _emit("Cache-aware routing (card 8)", _guard(compute), as_json)


def cost_per_request(
    cost_per_hour: Annotated[float, typer.Option(help="Fleet cost per hour (any currency).")] = 8.0,
    qualifying_per_s: Annotated[float, typer.Option(help="Qualifying (on-time, correct) requests/s.")] = 3.5,
    as_json: JsonFlag = False,
) -> None:
    """Cost per qualifying request = cost in the period / qualifying requests (card 8, ch09 §9.7)."""

    def compute() -> dict[str, Value]:
        per_request = dist.cost_per_request_at_rate(cost_per_hour, qualifying_per_s=qualifying_per_s)
        return {"cost_per_request": per_request, "cost_per_1000_requests": 1000 * per_request}

    _emit("Cost per qualifying request (card 8)", _guard(compute), as_json)


_COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("peak-compute", peak_compute),
    ("hbm-bandwidth", hbm_bandwidth),
    ("roofline", roofline),
    ("projection", projection),
    ("critical-batch", critical_batch),
    ("memory-parallelism", memory_parallelism),
    ("quantized-storage", quantized_storage),
    ("link-edge", link_edge),
    ("tp-memory", tp_memory),
    ("tp-step", tp_step),
    ("pd-rate", pd_rate),
    ("kv-handoff", kv_handoff),
    ("af-handoff", af_handoff),
    ("save-vs-recompute", save_vs_recompute),
    ("ep-alltoall", ep_alltoall),
    ("cache-routing", cache_routing),
    ("cost-per-request", cost_per_request),
)


def register(ledger_app: typer.Typer) -> None:
    """Add this module's formula subcommands to the ``planner ledger`` group."""
    for name, command in _COMMANDS:
        ledger_app.command(name, help=command.__doc__)(command)
