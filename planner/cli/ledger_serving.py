"""`planner ledger ...` subcommands for card 3 (inference optimisations), card 7 (operators & runtime),
card 9 (GPU utilisation, cost per success) and card 12 (edge–cloud, buy vs rent).

Each command evaluates one formula family of ``planner.ledgers.optimizations``, ``operators``,
``utilization`` or ``edge_cloud``; ``--json`` prints a JSON object with unit-suffixed keys, otherwise a
small table. Defaults are the book's worked-example inputs, so every command runs bare.
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
from planner.ledgers import edge_cloud as ec
from planner.ledgers import operators as op
from planner.ledgers import optimizations as opt
from planner.ledgers import utilization as ut
from planner.ledgers.optimizations import littles_law_concurrency
from planner.units import (
    BYTES_PER_GB,
    BYTES_PER_GIB,
    BYTES_PER_KIB,
    BYTES_PER_MB,
    BYTES_PER_MIB,
    MS_PER_S,
    US_PER_S,
)

QWEN3_8B_KV_BYTES_PER_TOKEN = 147_456.0


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise typer.BadParameter(f"expected comma-separated integers, got {text!r}") from err


# --- card 3 ----------------------------------------------------------------------------------------


def kv_pool_capacity(
    prompt_tokens: Annotated[int, typer.Option(help="Prompt tokens P.")] = 2048,
    output_tokens: Annotated[int, typer.Option(help="Returned tokens G (the last is never cached).")] = 256,
    kv_bytes_per_token: Annotated[float, typer.Option(help="c_KV, KV bytes per token (Qwen3-8B BF16).")] = (
        QWEN3_8B_KV_BYTES_PER_TOKEN
    ),
    pool_gib: Annotated[float, typer.Option(help="KV pool size, GiB.")] = 12.0,
    block_tokens: Annotated[int, typer.Option(help="KV block size, tokens.")] = opt.KV_BLOCK_TOKENS,
    as_json: JsonFlag = False,
) -> None:
    """Requests in a KV pool: footprint = ceil((P + G − 1)/16)·16 × c_KV, n = floor(pool/footprint)
    (card 3, book ch08 §8.1)."""

    def compute() -> dict[str, Value]:
        tokens = opt.kv_footprint_tokens(
            prompt_tokens, output_tokens=output_tokens, block_tokens=block_tokens
        )
        footprint = opt.kv_footprint_bytes(
            prompt_tokens,
            output_tokens=output_tokens,
            kv_bytes_per_token=kv_bytes_per_token,
            block_tokens=block_tokens,
        )
        requests = opt.kv_pool_capacity_requests(pool_gib * BYTES_PER_GIB, footprint_bytes=footprint)
        return {
            "footprint_tokens": tokens,
            "footprint_mib": footprint / BYTES_PER_MIB,
            "capacity_requests": requests,
        }

    _emit("KV pool capacity (card 3)", _guard(compute), as_json)


def paging_waste(
    lengths: Annotated[str, typer.Option(help="Comma-separated sequence lengths, tokens.")] = "9,13,5,15",
    page_tokens: Annotated[int, typer.Option(help="Page size p, tokens.")] = 4,
    max_tokens: Annotated[int, typer.Option(help="Full reservation per sequence, tokens.")] = 16,
    shared_prefix_tokens: Annotated[int, typer.Option(help="Prefix shared by two requests, tokens.")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """Paging waste p·ceil(L/p) − L per sequence vs full reservation n·L_max (card 3, book ch08 §8.3.1)."""

    def compute() -> dict[str, Value]:
        seqs = _int_list(lengths)
        paged = opt.paged_slots(seqs, page_tokens=page_tokens)
        reserved = opt.reserved_slots(seqs, max_tokens=max_tokens)
        saved = opt.shared_prefix_saved_slots(
            shared_prefix_tokens, page_tokens=page_tokens, sharing_requests=2
        )
        used = sum(seqs)
        return {
            "used_slots": used,
            "reserved_slots": reserved,
            "reserved_waste_slots": reserved - used,
            "paged_slots": paged,
            "paged_waste_slots": paged - used,
            "paged_with_sharing_slots": paged - saved,
        }

    _emit("Paging waste (card 3)", _guard(compute), as_json)


def prefix_cache(
    prefix_tokens: Annotated[int, typer.Option(help="Prefix length, tokens.")] = 6144,
    kv_bytes_per_token: Annotated[
        float, typer.Option(help="c_KV, bytes per token.")
    ] = QWEN3_8B_KV_BYTES_PER_TOKEN,
    link_gb_per_s: Annotated[float, typer.Option(help="Fetch / move link, GB/s (PCIe Gen5 x16: 64).")] = 64.0,
    recompute_s: Annotated[float, typer.Option(help="Time to recompute the prefix, s.")] = 0.3089,
    hit_frac: Annotated[float, typer.Option(help="Reuse probability p_h, 0..1.")] = 0.1,
    as_json: JsonFlag = False,
) -> None:
    """Prefix retention: V_h = p_h·(T_recompute − T_fetch) − T_move; retain iff p_h > T_move/(T_recompute −
    T_fetch), with T_move = T_fetch = KV bytes / link (card 3, book ch08 §8.3)."""

    def compute() -> dict[str, Value]:
        move_s = op.host_copy_s(prefix_tokens * kv_bytes_per_token, bandwidth_gb_per_s=link_gb_per_s)
        return {
            "fetch_s": move_s,
            "breakeven_hit_frac": opt.prefix_breakeven_hit_frac(recompute_s, fetch_s=move_s, move_s=move_s),
            "retention_value_s": opt.prefix_retention_value_s(
                hit_frac, recompute_s=recompute_s, fetch_s=move_s, move_s=move_s
            ),
        }

    _emit("Prefix cache (card 3)", _guard(compute), as_json)


def kv_quant(
    saved_mib: Annotated[float, typer.Option(help="ΔD, KV bytes no longer read per step, MiB.")] = 540.0,
    bandwidth_gb_per_s: Annotated[float, typer.Option(help="β, effective bandwidth, GB/s.")] = 1163.0,
    convert_ms: Annotated[float, typer.Option(help="T_convert, conversion time per step, ms.")] = 0.2,
    as_json: JsonFlag = False,
) -> None:
    """KV quantisation net saving ΔT = ΔD/β − T_convert; worth it iff positive (card 3, book ch08 §8.4.2)."""

    def compute() -> dict[str, Value]:
        saved = saved_mib * BYTES_PER_MIB
        read = opt.kv_quant_net_saving_s(saved, bandwidth_gb_per_s=bandwidth_gb_per_s, convert_s=0.0)
        net = opt.kv_quant_net_saving_s(
            saved, bandwidth_gb_per_s=bandwidth_gb_per_s, convert_s=convert_ms / MS_PER_S
        )
        return {"read_saving_ms": read * MS_PER_S, "net_saving_ms": net * MS_PER_S, "pays": net > 0}

    _emit("KV quantisation (card 3)", _guard(compute), as_json)


def spec_decode(
    acceptance_frac: Annotated[float, typer.Option(help="Per-position acceptance a, 0..1.")] = 0.75,
    draft_tokens: Annotated[int, typer.Option(help="Drafted tokens per round K.")] = 4,
    verify_ms: Annotated[float, typer.Option(help="Verification round T_verify, ms.")] = 26.36,
    draft_forward_ms: Annotated[float, typer.Option(help="One draft forward, ms (0: prompt lookup).")] = 0.0,
    parallel: Annotated[bool, typer.Option(help="All drafts from one forward (parallel heads).")] = False,
    plain_ms_per_token: Annotated[
        float, typer.Option(help="Time per token without speculation, ms.")
    ] = 26.26,
    as_json: JsonFlag = False,
) -> None:
    """Speculative decoding: E[N] = 1 + a + … + a^K; time per token = (T_draft + T_verify)/E[N]
    (card 3, book ch08 §8.5)."""

    def compute() -> dict[str, Value]:
        n = opt.spec_expected_tokens(acceptance_frac, draft_tokens=draft_tokens)
        draft = opt.draft_phase_ms(draft_forward_ms, draft_tokens=draft_tokens, parallel=parallel)
        per_token = opt.spec_ms_per_token(verify_ms, tokens_per_round=n, draft_ms=draft)
        return {
            "expected_tokens_per_round": n,
            "draft_ms": draft,
            "ms_per_token": per_token,
            "speedup_x": plain_ms_per_token / per_token,
            "breakeven_tokens_per_round": opt.spec_breakeven_tokens_per_round(
                draft + verify_ms, plain_ms_per_token=plain_ms_per_token
            ),
        }

    _emit("Speculative decoding (card 3)", _guard(compute), as_json)


def round_time(
    new_tokens: Annotated[int, typer.Option(help="Chunk tokens c processed in the round.")] = 2048,
    history_tokens: Annotated[int, typer.Option(help="Cached history h before the chunk, tokens.")] = 0,
    fixed_ms: Annotated[float, typer.Option(help="Fixed part of the fit, ms.")] = opt.ROUND_FIXED_MS,
    us_per_new_token: Annotated[float, typer.Option(help="Per new token, µs.")] = opt.ROUND_US_PER_NEW_TOKEN,
    ns_per_pair: Annotated[float, typer.Option(help="Per causal pair, ns.")] = opt.ROUND_NS_PER_PAIR,
    as_json: JsonFlag = False,
) -> None:
    """Fitted round time T_round = 26.22 ms + 30.4 µs × new tokens + 3 ns × pairs, pairs = c·h + c(c + 1)/2
    (card 3, book ch08 §8.2)."""

    def compute() -> dict[str, Value]:
        pairs = opt.chunk_causal_pairs(new_tokens, history_tokens=history_tokens)
        ms = opt.round_time_ms(
            new_tokens,
            causal_pairs=pairs,
            fixed_ms=fixed_ms,
            us_per_new_token=us_per_new_token,
            ns_per_pair=ns_per_pair,
        )
        return {"causal_pairs": pairs, "round_ms": ms}

    _emit("Round time (card 3)", _guard(compute), as_json)


# --- card 7 ----------------------------------------------------------------------------------------


def host_copy(
    mib: Annotated[float, typer.Option(help="Bytes copied, MiB (8192 × 4096 BF16 = 64 MiB).")] = 64.0,
    bandwidth_gb_per_s: Annotated[
        float, typer.Option(help="Link per direction, GB/s (PCIe Gen5 x16).")
    ] = 64.0,
    latency_us: Annotated[float, typer.Option(help="Start-up latency, µs.")] = 0.0,
    chunks: Annotated[int, typer.Option(help="Equal chunks the copy is split into.")] = 1,
    as_json: JsonFlag = False,
) -> None:
    """Host→device copy T = α + bytes/B (card 7, book ch05 Example 5-1)."""

    def compute() -> dict[str, Value]:
        if chunks < 1:
            raise ValueError(f"chunks must be >= 1, got {chunks}")
        per_chunk = op.host_copy_s(
            mib * BYTES_PER_MIB / chunks,
            bandwidth_gb_per_s=bandwidth_gb_per_s,
            latency_s=latency_us / US_PER_S,
        )
        return {"copy_ms_per_chunk": per_chunk * MS_PER_S, "copy_ms_total": chunks * per_chunk * MS_PER_S}

    _emit("Host copy (card 7)", _guard(compute), as_json)


def gemm_tiles(
    m: Annotated[int, typer.Option(help="GEMM rows M.")] = 1024,
    n: Annotated[int, typer.Option(help="GEMM columns N.")] = 12288,
    k: Annotated[int, typer.Option(help="Inner dimension K.")] = 4096,
    tile: Annotated[int, typer.Option(help="Square output tile m = n.")] = 128,
    k_step: Annotated[int, typer.Option(help="K slice per step.")] = 32,
    peak_tflops: Annotated[float, typer.Option(help="Π, dense TFLOP/s (H100 SXM BF16).")] = 989.4,
    bandwidth_gb_per_s: Annotated[float, typer.Option(help="β, GB/s (H100 SXM).")] = 3350.0,
    as_json: JsonFlag = False,
) -> None:
    """Tiled GEMM: buffer S = 2mk + 2kn + 4mn, traffic V = 2MK·N/n + 2KN·M/m + 2MN, intensity 2MNK/V
    and the MFU ceiling min(1, I·β/Π) (card 7, book ch05 Example 5-3)."""

    def compute() -> dict[str, Value]:
        traffic = op.gemm_tiled_traffic_bytes(m, n=n, k=k, tile_m=tile, tile_n=tile)
        intensity = op.arithmetic_intensity_flop_per_byte(
            acc.projection_flop(m, k=k, n=n), traffic_bytes=traffic
        )
        return {
            "tile_buffer_kib": op.gemm_tile_buffer_bytes(tile, tile_n=tile, k_step=k_step) / BYTES_PER_KIB,
            "traffic_mib": traffic / BYTES_PER_MIB,
            "intensity_flop_per_byte": intensity,
            "mfu_ceiling_frac": acc.mfu_ceiling_frac(
                intensity, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
            ),
        }

    _emit("Tiled GEMM (card 7)", _guard(compute), as_json)


def flash_attention_io(
    seq_tokens: Annotated[int, typer.Option(help="Sequence length L, tokens.")] = 8192,
    head_dim: Annotated[int, typer.Option(help="Head dimension d.")] = 128,
    as_json: JsonFlag = False,
) -> None:
    """FlashAttention I/O for one head: naive 4·L·d·2 + 4·L²·4 bytes (S and P written and re-read) vs fused
    4·L·d·2 bytes (card 7, book ch05 §5.3.3)."""

    def compute() -> dict[str, Value]:
        naive = op.attention_naive_bytes(seq_tokens, head_dim=head_dim)
        flash = op.attention_io_bytes(seq_tokens, head_dim=head_dim)
        return {
            "score_matrix_mib": op.attention_score_bytes(seq_tokens) / BYTES_PER_MIB,
            "naive_mib": naive / BYTES_PER_MIB,
            "flash_mib": flash / BYTES_PER_MIB,
            "traffic_ratio_x": naive / flash,
        }

    _emit("FlashAttention I/O (card 7)", _guard(compute), as_json)


def double_buffer(
    blocks: Annotated[int, typer.Option(help="Blocks n.")] = 4,
    load_us: Annotated[float, typer.Option(help="Load time per block t_m, µs.")] = 1.29,
    compute_us: Annotated[float, typer.Option(help="Compute time per block t_c, µs.")] = 0.28,
    as_json: JsonFlag = False,
) -> None:
    """Double buffering T = t_m + (n − 1)·max(t_m, t_c) + t_c vs serial n·(t_m + t_c)
    (card 7, book ch05 Example 5-5)."""

    def compute() -> dict[str, Value]:
        load_s, compute_s = load_us / US_PER_S, compute_us / US_PER_S
        serial = op.serial_blocks_s(blocks, load_s=load_s, compute_s=compute_s)
        piped = acc.double_buffered_pipeline_s(blocks, load_s=load_s, compute_s=compute_s)
        return {
            "serial_us": serial * US_PER_S,
            "pipelined_us": piped * US_PER_S,
            "saving_frac": 1 - piped / serial if serial else 0.0,
        }

    _emit("Double buffering (card 7)", _guard(compute), as_json)


def occupancy(
    threads_per_block: Annotated[int, typer.Option(help="Threads per block.")] = 256,
    registers_per_thread: Annotated[int, typer.Option(help="Registers per thread.")] = 128,
    shared_kib: Annotated[float, typer.Option(help="Shared memory per block, KiB.")] = 97.0,
    bandwidth_gb_per_s: Annotated[float, typer.Option(help="Memory bandwidth, GB/s (H100).")] = 3350.0,
    latency_ns: Annotated[float, typer.Option(help="Memory latency, ns.")] = 600.0,
    sms: Annotated[int, typer.Option(help="SM count.")] = op.H100_SMS,
    as_json: JsonFlag = False,
) -> None:
    """Occupancy (tightest of registers, shared memory, threads per SM) and in-flight bytes per SM
    β × latency / SMs (card 7, book ch05 §5.2; H100 limits)."""

    def compute() -> dict[str, Value]:
        blocks = op.blocks_per_sm(
            threads_per_block,
            registers_per_thread=registers_per_thread,
            shared_bytes_per_block=shared_kib * BYTES_PER_KIB,
        )
        return {
            "blocks_per_sm": blocks,
            "occupancy_frac": op.occupancy_frac(threads_per_block, resident_blocks=blocks),
            "inflight_kb_per_sm": op.inflight_bytes_per_sm(bandwidth_gb_per_s, latency_ns=latency_ns, sms=sms)
            / 1e3,
        }

    _emit("Occupancy (card 7)", _guard(compute), as_json)


# --- card 9 ----------------------------------------------------------------------------------------


def agent_platform(
    tasks_per_s: Annotated[float, typer.Option(help="Task arrival rate λ, tasks/s.")] = 10.0,
    rounds: Annotated[int, typer.Option(help="Model-call rounds per task.")] = 3,
    model_s: Annotated[float, typer.Option(help="Model call time per round, s.")] = 9.0,
    tool_s: Annotated[float, typer.Option(help="Tool time per round (1 core), s.")] = 1.0,
    gib_per_env: Annotated[float, typer.Option(help="Environment memory, GiB (microVM).")] = 2.0,
    host_gb: Annotated[float, typer.Option(help="Host memory, GB (m5d.metal 384 GB).")] = 384.0,
    host_cores: Annotated[int, typer.Option(help="Host cores.")] = 48,
    model_slots: Annotated[int, typer.Option(help="Concurrent model-call slots (replicas × slots).")] = 320,
    as_json: JsonFlag = False,
) -> None:
    """Agent platform sizing: T_task = Σ(model + tool), resource rate = λ × demand, N = λ·T (Little),
    utilisation = demand/capacity (card 9, book ch11 §11.1)."""

    def compute() -> dict[str, Value]:
        task_s = ut.task_time_s(rounds, model_s_per_round=model_s, tool_s_per_round=tool_s)
        calls = ut.resource_rate_per_s(tasks_per_s, demand_per_task=rounds)
        concurrent = littles_law_concurrency(calls, residence_s=model_s)
        cores = ut.resource_rate_per_s(tasks_per_s, demand_per_task=rounds * tool_s)
        memory = ut.environment_memory_gib(tasks_per_s, task_s=task_s, gib_per_env=gib_per_env)
        host_gib = host_gb * BYTES_PER_GB / BYTES_PER_GIB
        envs = ut.max_environments(host_gib, gib_per_env=gib_per_env)
        return {
            "task_s": task_s,
            "model_calls_per_s": calls,
            "concurrent_calls": concurrent,
            "model_slot_utilization_frac": ut.utilization_frac(concurrent, capacity=model_slots),
            "cpu_cores": cores,
            "cpu_utilization_frac": ut.utilization_frac(cores, capacity=host_cores),
            "environment_memory_gib": memory,
            "memory_utilization_frac": ut.utilization_frac(memory, capacity=host_gib),
            "max_environments": envs,
            "memory_capped_tasks_per_s": min(tasks_per_s, envs / task_s),
        }

    _emit("Agent platform (card 9)", _guard(compute), as_json)


def cost_per_success(
    gpu_s: Annotated[float, typer.Option(help="GPU time per attempt, GPU·s.")] = 4.5,
    usd_per_gpu_hour: Annotated[float, typer.Option(help="GPU price, USD/GPU-h (B200 Pod).")] = 6.79,
    cpu_s: Annotated[float, typer.Option(help="CPU time per attempt, CPU·s.")] = 3.3,
    usd_per_cpu_s: Annotated[float, typer.Option(help="CPU price, USD/CPU·s (E2B).")] = ut.E2B_USD_PER_CPU_S,
    gib_s: Annotated[float, typer.Option(help="Environment memory-time per attempt, GiB·s.")] = 18.0,
    usd_per_gib_s: Annotated[
        float, typer.Option(help="Memory price, USD/GiB·s (E2B).")
    ] = ut.E2B_USD_PER_GIB_S,
    success_frac: Annotated[
        float, typer.Option(help="Share of attempts that qualify (quality and deadline).")
    ] = 0.95,
    as_json: JsonFlag = False,
) -> None:
    """Cost per qualifying task C_q = C_all/N_qualified with C = GPU + CPU + memory per attempt
    (card 9, book ch11 Example 11-9)."""

    def compute() -> dict[str, Value]:
        attempt = ut.task_cost_usd(
            gpu_s,
            usd_per_gpu_hour=usd_per_gpu_hour,
            cpu_s=cpu_s,
            usd_per_cpu_s=usd_per_cpu_s,
            gib_s=gib_s,
            usd_per_gib_s=usd_per_gib_s,
        )
        per_1000 = 1000 * attempt
        return {
            "cost_per_attempt_usd": attempt,
            "usd_per_1000_attempts": per_1000,
            "usd_per_1000_successes": 1000 * ut.cost_per_success_usd(per_1000, successes=1000 * success_frac),
        }

    _emit("Cost per success (card 9)", _guard(compute), as_json)


def api_call_cost(
    uncached_input_tokens: Annotated[float, typer.Option(help="Input tokens at the plain price.")] = 10_000,
    output_tokens: Annotated[float, typer.Option(help="Output tokens, thinking included.")] = 1200,
    usd_per_m_input: Annotated[float, typer.Option(help="Input price, USD/M tokens (Sonnet 5).")] = 2.0,
    usd_per_m_output: Annotated[float, typer.Option(help="Output price, USD/M tokens.")] = 10.0,
    cache_write_tokens: Annotated[float, typer.Option(help="Tokens written to the prompt cache.")] = 0.0,
    usd_per_m_cache_write: Annotated[float, typer.Option(help="Cache write price, USD/M tokens.")] = 2.5,
    cache_hit_tokens: Annotated[float, typer.Option(help="Tokens read from the prompt cache.")] = 0.0,
    usd_per_m_cache_hit: Annotated[float, typer.Option(help="Cache hit price, USD/M tokens.")] = 0.2,
    success_frac: Annotated[float, typer.Option(help="Success probability per call.")] = 1.0,
    as_json: JsonFlag = False,
) -> None:
    """API call cost C = (I_u·p_u + I_w·p_w + I_h·p_h + O·p_o)/10^6 and C/p per success
    (card 9, book ch11 Examples 11-5, 11-7)."""

    def compute() -> dict[str, Value]:
        cost = ut.api_call_cost_usd(
            uncached_input_tokens,
            output_tokens=output_tokens,
            usd_per_m_input=usd_per_m_input,
            usd_per_m_output=usd_per_m_output,
            cache_write_tokens=cache_write_tokens,
            usd_per_m_cache_write=usd_per_m_cache_write,
            cache_hit_tokens=cache_hit_tokens,
            usd_per_m_cache_hit=usd_per_m_cache_hit,
        )
        return {
            "cost_per_call_usd": cost,
            "cost_per_success_usd": ut.expected_cost_per_success_usd(cost, success_frac=success_frac),
        }

    _emit("API call cost (card 9)", _guard(compute), as_json)


# --- card 12 ---------------------------------------------------------------------------------------


def remote_exec(
    upload_mb: Annotated[float, typer.Option(help="Upload S_up, MB.")] = 30.0,
    uplink_mbit_per_s: Annotated[float, typer.Option(help="Uplink B_up, Mbit/s.")] = 20.0,
    rtt_s: Annotated[float, typer.Option(help="Round-trip time, s.")] = 0.1,
    compute_s: Annotated[float, typer.Option(help="Remote compute, s.")] = 0.3,
    download_mb: Annotated[float, typer.Option(help="Download S_down, MB.")] = 5.0,
    downlink_mbit_per_s: Annotated[float, typer.Option(help="Downlink B_down, Mbit/s.")] = 100.0,
    local_s: Annotated[float, typer.Option(help="Local compute time to compare with, s.")] = math.inf,
    as_json: JsonFlag = False,
) -> None:
    """Remote execution T = S_up/B_up + RTT + T_compute + S_down/B_down; remote wins iff T < local
    (card 12, book ch12 §12.1)."""

    def compute() -> dict[str, Value]:
        remote = ec.remote_exec_s(
            upload_mb * BYTES_PER_MB,
            uplink_mbit_per_s=uplink_mbit_per_s,
            rtt_s=rtt_s,
            compute_s=compute_s,
            download_bytes=download_mb * BYTES_PER_MB,
            downlink_mbit_per_s=downlink_mbit_per_s,
        )
        return {"remote_s": remote, "local_s": local_s, "remote_wins": remote < local_s}

    _emit("Remote execution (card 12)", _guard(compute), as_json)


def rtt_crossover(
    deadline_s: Annotated[float, typer.Option(help="Deadline D for the remaining rounds, s.")] = 45.0,
    rounds: Annotated[int, typer.Option(help="Remaining rounds.")] = 20,
    other_s: Annotated[float, typer.Option(help="Other work per round, s.")] = 0.3,
    model_s: Annotated[float, typer.Option(help="Remote model time per round, s (H100: 45 × 5.47 GB).")] = (
        45 * 5.47 / 3350.0
    ),
    prep_s: Annotated[float, typer.Option(help="Remote preparation (prefill), s.")] = 133.6 / 989.4,
    rtt_s: Annotated[float, typer.Option(help="Round trip to the remote site, s.")] = 0.20,
    upload_mb_per_round: Annotated[float, typer.Option(help="Upload per round, MB (6.4 Mb = 0.8 MB).")] = 0.8,
    uplink_mbit_per_s: Annotated[float, typer.Option(help="Uplink to evaluate T_cloud(b) at, Mbit/s.")] = 6.4,
    as_json: JsonFlag = False,
) -> None:
    """§12.5 deployment model T_cloud(b) = prep + rounds·(t_other + t_model + RTT) + rounds·S_up/b; required
    uplink b ≥ rounds·S_up/(D − fixed) (card 12, book ch12 §12.5)."""

    def compute() -> dict[str, Value]:
        common = {
            "other_s_per_round": other_s,
            "model_s_per_round": model_s,
            "prep_s": prep_s,
            "rtt_s": rtt_s,
        }
        fixed = ec.deployment_completion_s(rounds, **common)
        at_b = ec.deployment_completion_s(
            rounds,
            upload_bytes_per_round=upload_mb_per_round * BYTES_PER_MB,
            uplink_mbit_per_s=uplink_mbit_per_s,
            **common,
        )
        required = ec.required_uplink_mbit_per_s(
            deadline_s, fixed_s=fixed, upload_bytes=rounds * upload_mb_per_round * BYTES_PER_MB
        )
        return {
            "fixed_s": fixed,
            "completion_s": at_b,
            "on_time": at_b <= deadline_s,
            "required_uplink_mbit_per_s": required,
        }

    _emit("Required uplink, §12.5 (card 12)", _guard(compute), as_json)


def buy_vs_rent(
    reserved_usd_per_gpu_hour: Annotated[
        float, typer.Option(help="Reserved price, USD/GPU-h (B200 Pod).")
    ] = 6.79,
    gpus: Annotated[float, typer.Option(help="Reserved GPUs.")] = 4,
    payg_usd_per_task: Annotated[float, typer.Option(help="Pay-per-use price per task c, USD.")] = 0.0081,
    marginal_usd_per_task: Annotated[
        float, typer.Option(help="Marginal self-host cost per task v, USD.")
    ] = 0.0,
    tasks_per_month: Annotated[float, typer.Option(help="Monthly volume N to price.")] = 1e6,
    as_json: JsonFlag = False,
) -> None:
    """Self-host / reserve vs pay-as-you-go: cheaper iff N > F/(c − v), F = 720 h × price × GPUs; if c ≤ v
    pay-as-you-go always wins (card 12, book ch11 §11.4.4)."""

    def compute() -> dict[str, Value]:
        fixed = ec.monthly_rent_usd(reserved_usd_per_gpu_hour, cards=gpus)
        selfhost = ec.selfhost_monthly_usd(
            tasks_per_month, fixed_usd=fixed, marginal_usd_per_task=marginal_usd_per_task
        )
        payg = ec.payg_monthly_usd(tasks_per_month, usd_per_task=payg_usd_per_task)
        return {
            "fixed_usd_per_month": fixed,
            "breakeven_tasks_per_month": ec.selfhost_breakeven_tasks(
                fixed, payg_usd_per_task=payg_usd_per_task, marginal_usd_per_task=marginal_usd_per_task
            ),
            "selfhost_usd_per_month": selfhost,
            "payg_usd_per_month": payg,
            "cheaper": "self-host" if selfhost < payg else "pay-as-you-go",
        }

    _emit("Buy vs rent (card 12)", _guard(compute), as_json)


def breakeven_utilization(
    reserved_usd_per_hour: Annotated[float, typer.Option(help="Reserved price per GPU-hour, USD.")] = 6.79,
    on_demand_usd_per_hour: Annotated[
        float, typer.Option(help="Pay-per-use price per used GPU-hour, USD.")
    ] = 8.64,
    as_json: JsonFlag = False,
) -> None:
    """Break-even utilisation u* = reserved price / on-demand price (card 12, book ch11 §11.4.4)."""
    values = _guard(
        lambda: {
            "breakeven_utilization_frac": ec.breakeven_utilization_frac(
                reserved_usd_per_hour, on_demand_usd_per_hour=on_demand_usd_per_hour
            )
        }
    )
    _emit("Break-even utilisation (card 12)", values, as_json)


def fixed_investment(
    fixed_cost: Annotated[float, typer.Option(help="Extra fixed investment F_0 (currency).")] = 20e6,
    saving_per_m_units: Annotated[float, typer.Option(help="Saving Δc per million units of output.")] = 0.5,
    units_per_s_per_machine: Annotated[float, typer.Option(help="Output per machine, units/s.")] = 10_000.0,
    utilization_frac: Annotated[float, typer.Option(help="Average utilisation, 0..1.")] = 0.5,
    lifetime_years: Annotated[float, typer.Option(help="Useful life, years (365 days).")] = 1.0,
    delivery_delay_years: Annotated[
        float, typer.Option(help="Delivery delay shortening the life, years.")
    ] = 0.0,
    as_json: JsonFlag = False,
) -> None:
    """Fixed investment / lifecycle break-even V* = F_0/Δc (= Q* = ΔC_0/Δc) and the machines whose lifetime
    output reaches it (card 12, book ch04 §4.8.4, ch03 §3.6)."""
    year_s = 365 * 86_400.0

    def compute() -> dict[str, Value]:
        v_star = ec.breakeven_volume_units(fixed_cost, saving_per_unit=saving_per_m_units / 1e6)
        machines = ec.breakeven_machines(
            v_star,
            units_per_s_per_machine=units_per_s_per_machine,
            utilization_frac=utilization_frac,
            lifetime_s=lifetime_years * year_s,
            delivery_delay_s=delivery_delay_years * year_s,
        )
        return {"breakeven_units": v_star, "breakeven_machines": machines}

    _emit("Fixed investment (card 12)", _guard(compute), as_json)


def rent_vs_api(
    tokens_per_s: Annotated[float, typer.Option(help="Per-user decode speed r, tok/s.")] = 39.5,
    usd_per_card_hour: Annotated[float, typer.Option(help="Rent, USD per card-hour (B200 Pod).")] = 6.79,
    cards: Annotated[float, typer.Option(help="Cards in the GPU group.")] = 4,
    users: Annotated[float, typer.Option(help="Users sharing the group.")] = 32,
    overhead_s_per_hour: Annotated[float, typer.Option(help="Non-overlappable overhead, s per hour.")] = 0.0,
    history_tokens: Annotated[float, typer.Option(help="History tokens per call L.")] = 200_000,
    output_tokens: Annotated[float, typer.Option(help="Output tokens per call O.")] = 4096,
    new_tokens: Annotated[float, typer.Option(help="Further new tokens per call T.")] = 1024,
    cache_hit_frac: Annotated[
        float, typer.Option(help="API cache-hit ratio h_c of the cacheable part.")
    ] = 1.0,
    usd_per_m_hit: Annotated[
        float, typer.Option(help="API cache-hit input price, USD/M (V4-Flash).")
    ] = 0.008497,
    usd_per_m_miss: Annotated[float, typer.Option(help="API cache-miss input price, USD/M.")] = 0.267056,
    usd_per_m_output: Annotated[float, typer.Option(help="API output price, USD/M.")] = 0.801167,
    as_json: JsonFlag = False,
) -> None:
    """24 × 7 rent vs API: output = 2.592·r M tok/month, rent = 720·h·cards/B, GPU $/M = rent/output,
    API $/M = p_out + (I_hit·p_hit + I_miss·p_miss)/O, break-even rent = rent × API/GPU
    (card 12, experiment ch13 13-06)."""

    def compute() -> dict[str, Value]:
        output = ec.monthly_output_tokens(tokens_per_s, overhead_s_per_hour=overhead_s_per_hour)
        rent = ec.monthly_rent_usd(usd_per_card_hour, cards=cards, users=users)
        gpu = ec.gpu_usd_per_m_output(rent, output_tokens_per_month=output)
        prices = {
            "usd_per_m_hit": usd_per_m_hit,
            "usd_per_m_miss": usd_per_m_miss,
            "usd_per_m_output": usd_per_m_output,
        }
        call = {"output_tokens": output_tokens, "new_tokens": new_tokens}
        api = ec.api_usd_per_m_output(history_tokens, cache_hit_frac=cache_hit_frac, **call, **prices)
        hit = ec.api_cache_hit_tokens(history_tokens, cache_hit_frac=cache_hit_frac, **call)
        return {
            "output_m_tokens_per_user_month": output / 1e6,
            "rent_usd_per_user_month": rent,
            "gpu_usd_per_m_output": gpu,
            "api_usd_per_m_output": api,
            "api_usd_per_user_month": api * output / 1e6,
            "whole_input_hit_frac": hit / history_tokens,
            "breakeven_rent_usd_per_card_hour": ec.breakeven_rent_usd_per_card_hour(
                usd_per_card_hour, gpu_usd_per_m=gpu, api_usd_per_m=api
            ),
            "api_breakeven_cache_hit_frac": ec.api_breakeven_cache_hit_frac(
                gpu, history_tokens=history_tokens, **call, **prices
            ),
            "cheaper": "gpu" if gpu < api else "api",
        }

    _emit("Rent vs API (card 12)", _guard(compute), as_json)


_COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("kv-pool-capacity", kv_pool_capacity),
    ("paging-waste", paging_waste),
    ("prefix-cache", prefix_cache),
    ("kv-quant", kv_quant),
    ("spec-decode", spec_decode),
    ("round-time", round_time),
    ("host-copy", host_copy),
    ("gemm-tiles", gemm_tiles),
    ("flash-attention-io", flash_attention_io),
    ("double-buffer", double_buffer),
    ("occupancy", occupancy),
    ("agent-platform", agent_platform),
    ("cost-per-success", cost_per_success),
    ("api-call-cost", api_call_cost),
    ("remote-exec", remote_exec),
    ("rtt-crossover", rtt_crossover),
    ("buy-vs-rent", buy_vs_rent),
    ("breakeven-utilization", breakeven_utilization),
    ("fixed-investment", fixed_investment),
    ("rent-vs-api", rent_vs_api),
)


def register(ledger_app: typer.Typer) -> None:
    """Add this module's formula subcommands to the ``planner ledger`` group."""
    for name, command in _COMMANDS:
        ledger_app.command(name, help=command.__doc__)(command)
