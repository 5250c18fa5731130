"""Card 3 (inference optimisations) subcommands of `planner ledger`: ``planner.ledgers.optimizations``.

Defaults are the book's worked examples (Qwen3-8B BF16 on H100, ch08) so every command runs bare.
"""

from __future__ import annotations

import re

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import operators as op
from planner.ledgers import optimizations as opt
from planner.number_hints import option_hint
from planner.units import BYTES_PER_GIB, BYTES_PER_MIB, MS_PER_S

QWEN3_8B_KV_BYTES_PER_TOKEN = 147_456.0


def _int_list(text: str, option: str) -> list[int]:
    """The whole numbers of ``text`` ("9,13,5,15"); one that is not (``--lengths 4k,8k``) is a usage error
    naming ``option`` with the number to write (a sequence length's 4k is 4,096: planner.number_hints)."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    for part in parts:
        if not re.fullmatch(r"[-+]?\d+", part):
            raise ValueError(
                f"--{option.replace('_', '-')} {text}: expected comma-separated whole numbers; "
                f"{part!r} is not one{option_hint(part, option)}"
            )
    return [int(part) for part in parts]


def kv_pool_capacity(
    prompt_tokens: int, output_tokens: int, kv_bytes_per_token: float, pool_gib: float, block_tokens: int
) -> dict[str, Value]:
    request = {"output_tokens": output_tokens, "block_tokens": block_tokens}
    tokens = opt.kv_footprint_tokens(prompt_tokens, **request)
    footprint = opt.kv_footprint_bytes(prompt_tokens, kv_bytes_per_token=kv_bytes_per_token, **request)
    return {
        "footprint_tokens": tokens,
        "footprint_mib": footprint / BYTES_PER_MIB,
        "capacity_requests": opt.kv_pool_capacity_requests(
            pool_gib * BYTES_PER_GIB, footprint_bytes=footprint
        ),
    }


def paging_waste(
    lengths: str, page_tokens: int, max_tokens: int, shared_prefix_tokens: int
) -> dict[str, Value]:
    seqs = _int_list(lengths, "lengths")
    paged = opt.paged_slots(seqs, page_tokens=page_tokens)
    reserved = opt.reserved_slots(seqs, max_tokens=max_tokens)
    saved = opt.shared_prefix_saved_slots(shared_prefix_tokens, page_tokens=page_tokens, sharing_requests=2)
    used = sum(seqs)
    return {
        "used_slots": used,
        "reserved_slots": reserved,
        "reserved_waste_slots": reserved - used,
        "paged_slots": paged,
        "paged_waste_slots": paged - used,
        "paged_with_sharing_slots": paged - saved,
    }


def prefix_cache(
    prefix_tokens: int, kv_bytes_per_token: float, link_gb_per_s: float, recompute_s: float, hit_frac: float
) -> dict[str, Value]:
    move_s = op.host_copy_s(prefix_tokens * kv_bytes_per_token, bandwidth_gb_per_s=link_gb_per_s)
    return {
        "fetch_s": move_s,
        "breakeven_hit_frac": opt.prefix_breakeven_hit_frac(recompute_s, fetch_s=move_s, move_s=move_s),
        "retention_value_s": opt.prefix_retention_value_s(
            hit_frac, recompute_s=recompute_s, fetch_s=move_s, move_s=move_s
        ),
    }


def kv_quant(saved_mib: float, bandwidth_gb_per_s: float, convert_ms: float) -> dict[str, Value]:
    saved = saved_mib * BYTES_PER_MIB
    read = opt.kv_quant_net_saving_s(saved, bandwidth_gb_per_s=bandwidth_gb_per_s, convert_s=0.0)
    net = opt.kv_quant_net_saving_s(
        saved, bandwidth_gb_per_s=bandwidth_gb_per_s, convert_s=convert_ms / MS_PER_S
    )
    return {"read_saving_ms": read * MS_PER_S, "net_saving_ms": net * MS_PER_S, "pays": net > 0}


def spec_decode(
    acceptance_frac: float,
    draft_tokens: int,
    verify_ms: float,
    draft_forward_ms: float,
    parallel: bool,
    plain_ms_per_token: float,
) -> dict[str, Value]:
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


def round_time(
    new_tokens: int, history_tokens: int, fixed_ms: float, us_per_new_token: float, ns_per_pair: float
) -> dict[str, Value]:
    pairs = opt.chunk_causal_pairs(new_tokens, history_tokens=history_tokens)
    ms = opt.round_time_ms(
        new_tokens,
        causal_pairs=pairs,
        fixed_ms=fixed_ms,
        us_per_new_token=us_per_new_token,
        ns_per_pair=ns_per_pair,
    )
    return {"causal_pairs": pairs, "round_ms": ms}


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "kv-pool-capacity",
        3,
        "KV pool capacity",
        "Requests in a KV pool: footprint = ceil((P + G − 1)/16)·16 × c_KV, n = floor(pool/footprint)",
        source="book ch08 §8.1",
        formulas=(opt.kv_footprint_tokens, opt.kv_footprint_bytes, opt.kv_pool_capacity_requests),
        params=(
            Param("prompt_tokens", int, 2048, "Prompt tokens P"),
            Param("output_tokens", int, 256, "Returned tokens G (the last is never cached)"),
            Param(
                "kv_bytes_per_token",
                float,
                QWEN3_8B_KV_BYTES_PER_TOKEN,
                "c_KV, KV cache per token (Qwen3-8B BF16)",
                "B/token",
            ),
            Param("pool_gib", float, 12.0, "KV pool size", "GiB"),
            Param("block_tokens", int, opt.KV_BLOCK_TOKENS, "KV block size", "tokens"),
        ),
        outputs=("footprint_tokens", "footprint_mib", "capacity_requests"),
        compute=kv_pool_capacity,
    ),
    LedgerCommand(
        "paging-waste",
        3,
        "Paging waste",
        "Paging waste p·ceil(L/p) − L per sequence vs full reservation n·L_max",
        source="book ch08 §8.3.1",
        formulas=(opt.paged_slots, opt.reserved_slots, opt.shared_prefix_saved_slots),
        params=(
            Param("lengths", str, "9,13,5,15", "Comma-separated sequence lengths", "tokens"),
            Param("page_tokens", int, 4, "Page size p", "tokens"),
            Param("max_tokens", int, 16, "Full reservation per sequence", "tokens"),
            Param("shared_prefix_tokens", int, 0, "Prefix shared by two requests", "tokens"),
        ),
        outputs=(
            "used_slots",
            "reserved_slots",
            "reserved_waste_slots",
            "paged_slots",
            "paged_waste_slots",
            "paged_with_sharing_slots",
        ),
        compute=paging_waste,
    ),
    LedgerCommand(
        "prefix-cache",
        3,
        "Prefix cache",
        "Prefix retention: V_h = p_h·(T_recompute − T_fetch) − T_move; retain iff p_h > T_move/(T_recompute − T_fetch), with T_move = T_fetch = KV bytes / link",
        source="book ch08 §8.3",
        formulas=(op.host_copy_s, opt.prefix_breakeven_hit_frac, opt.prefix_retention_value_s),
        params=(
            Param("prefix_tokens", int, 6144, "Prefix length", "tokens"),
            Param(
                "kv_bytes_per_token",
                float,
                QWEN3_8B_KV_BYTES_PER_TOKEN,
                "c_KV, KV cache per token",
                "B/token",
            ),
            Param("link_gb_per_s", float, 64.0, "Fetch / move link (PCIe Gen5 x16: 64)", "GB/s"),
            Param("recompute_s", float, 0.3089, "Time to recompute the prefix", "s", min=0.0),
            Param("hit_frac", float, 0.1, "Reuse probability p_h, 0..1"),
        ),
        outputs=("fetch_s", "breakeven_hit_frac", "retention_value_s"),
        compute=prefix_cache,
    ),
    LedgerCommand(
        "kv-quant",
        3,
        "KV quantisation",
        "KV quantisation net saving ΔT = ΔD/β − T_convert; worth it iff positive",
        source="book ch08 §8.4.2",
        formulas=(opt.kv_quant_net_saving_s,),
        params=(
            Param("saved_mib", float, 540.0, "ΔD, KV bytes no longer read per step", "MiB", min=0.0),
            Param("bandwidth_gb_per_s", float, 1163.0, "β, effective bandwidth", "GB/s", min=0.0),
            Param("convert_ms", float, 0.2, "T_convert, conversion time per step", "ms", min=0.0),
        ),
        outputs=("read_saving_ms", "net_saving_ms", "pays"),
        compute=kv_quant,
    ),
    LedgerCommand(
        "spec-decode",
        3,
        "Speculative decoding",
        "Speculative decoding: E[N] = 1 + a + … + a^K; time per token = (T_draft + T_verify)/E[N]",
        source="book ch08 §8.5",
        formulas=(
            opt.spec_expected_tokens,
            opt.draft_phase_ms,
            opt.spec_ms_per_token,
            opt.spec_breakeven_tokens_per_round,
        ),
        params=(
            Param("acceptance_frac", float, 0.75, "Per-position acceptance a, 0..1"),
            Param("draft_tokens", int, 4, "Drafted tokens per round K"),
            Param("verify_ms", float, 26.36, "Verification round T_verify", "ms", min=0.0),
            Param("draft_forward_ms", float, 0.0, "One draft forward (0: prompt lookup)", "ms"),
            Param("parallel", bool, False, "All drafts from one forward (parallel heads)"),
            Param("plain_ms_per_token", float, 26.26, "Time per token without speculation", "ms"),
        ),
        outputs=(
            "expected_tokens_per_round",
            "draft_ms",
            "ms_per_token",
            "speedup_x",
            "breakeven_tokens_per_round",
        ),
        compute=spec_decode,
    ),
    LedgerCommand(
        "round-time",
        3,
        "Round time",
        "Fitted round time T_round = 26.22 ms + 30.4 µs × new tokens + 3 ns × pairs, pairs = c·h + c(c + 1)/2",
        source="book ch08 §8.2",
        formulas=(opt.chunk_causal_pairs, opt.round_time_ms),
        params=(
            Param("new_tokens", int, 2048, "Chunk tokens c processed in the round", min=0),
            Param("history_tokens", int, 0, "Cached history h before the chunk", "tokens", min=0),
            Param("fixed_ms", float, opt.ROUND_FIXED_MS, "Fixed part of the fit", "ms", min=0.0),
            Param("us_per_new_token", float, opt.ROUND_US_PER_NEW_TOKEN, "Per new token", "µs", min=0.0),
            Param("ns_per_pair", float, opt.ROUND_NS_PER_PAIR, "Per causal pair", "ns", min=0.0),
        ),
        outputs=("causal_pairs", "round_ms"),
        compute=round_time,
    ),
)
