"""Prefix caching and speculative decoding as mechanisms of the engine step (card 3), and their break-even rules.

Prefix cache (hit fraction h, shared prefix S of the P prompt tokens, one resident copy per replica):

    new prompt tokens per request  P_new = P − h·S       (each still attends to the h·S cached tokens)
    KV per running sequence        c_KV(P + G − h·S)     (hits map the shared prefix pages)
    resident per replica           c_KV(S)               (the cached prefix, once)
    pays at all (ledger)           h > T_move / (T_recompute − T_fetch),
                                   T_recompute = prefill of S on this deployment, T_move = T_fetch = c_KV(S)
                                   per GPU over the GPU's host link (the book's retain-vs-recompute rule)

Speculative decoding (draft model on the same GPUs and TP/PP, k drafted tokens, acceptance a):

    E[N] = 1 + a + … + a^k = (1 − a^(k+1)) / (1 − a)    tokens per round (ledger spec_expected_tokens)
    T_round = T_mixed(B rows × (k + 1) verified, c) + T_draft_mixed(B, c) + (k − 1)·T_draft_decode(B)
                                   (the draft prefills the prompts too)
    TPOT = T_round / E[N];  a request needs G / E[N] rounds (so B = λ·(G/E[N])·T_round)
    memory: + draft weights per GPU, + draft KV per sequence
    pays at all (ledger)           E[N] > (k·T_draft + T_verify) / T_plain at one sequence

Both are offered as candidate variants only when the workload states the field and the rule says it can
pay on that deployment; the MILP then keeps the cheaper variant. With no optimization the functions fall
back to the plain step (:func:`planner.performance.mixed_step.mixed_step`), bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.ledgers import optimizations as card3
from planner.performance.memory import (
    engine_reserve_bytes,
    held_bytes_per_gpu,
    kv_bytes_per_gpu,
    kv_bytes_per_sequence,
    kv_room_bytes,
    max_batch,
    memory_per_gpu_bytes,
    weights_bytes_per_gpu,
)
from planner.performance.mixed_step import MixedStep
from planner.performance.steps import decode_step, prefill_step
from planner.performance.terms import DeploymentTerms, Num
from planner.units import BYTES_PER_GB


@dataclass(frozen=True)
class LoadOptimizations:
    """Optimizations of one deployment (floats, or (n, 1) columns next to stacked DeploymentTerms)."""

    cached_tokens: Num = 0.0
    """Mean prompt tokens per request served from the prefix cache, h·S."""
    resident_prefix_tokens: Num = 0.0
    """Tokens of the shared prefix held once per replica, S (0 when the cache is off)."""
    draft: DeploymentTerms | None = None
    """The draft model on the same GPUs/TP/PP (None: no speculation anywhere in the table)."""
    draft_tokens: Num = 0.0
    """Tokens drafted per round k (0: speculation off on this row)."""
    tokens_per_round: Num = 1.0
    """Expected tokens per round E[N] (1 when off)."""


def round_s(
    terms: DeploymentTerms,
    opt: LoadOptimizations | None,
    *,
    decode_batch: Num,
    decode_context_tokens: Num,
    prefill_tokens: Num,
    prompt_tokens: Num,
    own_tokens: Num = 0.0,
) -> Num:
    """One engine round: the target's mixed step (k + 1 verified rows per sequence, cached-prefix attention)
    plus k draft decode steps, s. ``prompt_tokens`` are the NEW prompt tokens P_new; ``own_tokens`` as
    :func:`round_step`."""
    return round_step(terms, opt, decode_context_tokens=decode_context_tokens, prompt_tokens=prompt_tokens)(
        decode_batch=decode_batch, prefill_tokens=prefill_tokens, own_tokens=own_tokens
    )


def round_step(
    terms: DeploymentTerms, opt: LoadOptimizations | None, *, decode_context_tokens: Num, prompt_tokens: Num
) -> Callable[..., Num]:
    """:func:`round_s` of fixed terms, history and prompts as a function of the load ``(decode_batch=,
    prefill_tokens=[, own_tokens=])``: its mixed steps prepared once (planner.performance.mixed_step.MixedStep;
    ``own_tokens``: one prompt's chunk in one micro-batch, its latency through the pipeline stages)."""
    if opt is None:
        return MixedStep(terms, decode_context_tokens=decode_context_tokens, prompt_tokens=prompt_tokens)
    target = MixedStep(
        terms, decode_context_tokens=decode_context_tokens, prompt_tokens=prompt_tokens,
        verify_tokens=opt.draft_tokens + 1.0, cached_tokens=opt.cached_tokens,
    )
    draft = opt.draft
    if draft is None:
        return target
    # the draft also prefills the round's prompt tokens (in its first step), then decodes k − 1 more
    first = MixedStep(
        draft, decode_context_tokens=decode_context_tokens, prompt_tokens=prompt_tokens,
        cached_tokens=opt.cached_tokens,
    )
    drafting = np.asarray(opt.draft_tokens) > 0

    def step(*, decode_batch: Num, prefill_tokens: Num, own_tokens: Num = 0.0) -> Num:
        rest = decode_step(draft, batch=decode_batch, context_tokens=decode_context_tokens).total_s
        head = target(decode_batch=decode_batch, prefill_tokens=prefill_tokens, own_tokens=own_tokens)
        drafted = first(decode_batch=decode_batch, prefill_tokens=prefill_tokens, own_tokens=own_tokens) + (
            opt.draft_tokens - 1.0
        ) * rest
        return head + np.where(drafting, drafted, 0.0)

    return step


def _draft_on(opt: LoadOptimizations) -> Num:
    return np.asarray(opt.draft_tokens) > 0


def resident_bytes_per_gpu(terms: DeploymentTerms, opt: LoadOptimizations) -> Num:
    """Bytes per GPU held regardless of the batch: the cached prefix's KV and the draft weights, B."""
    prefix = np.where(
        np.asarray(opt.resident_prefix_tokens) > 0,
        kv_bytes_per_gpu(terms, batch=1.0, context_tokens=opt.resident_prefix_tokens),
        0.0,
    )
    if opt.draft is None:
        return prefix
    return prefix + np.where(_draft_on(opt), weights_bytes_per_gpu(opt.draft), 0.0)


def kv_bytes_per_sequence_per_gpu(terms: DeploymentTerms, opt: LoadOptimizations, context_tokens: Num) -> Num:
    """KV bytes per GPU of one running sequence: target KV without the shared prefix pages of a hit, plus the
    draft model's KV, B."""
    target = kv_bytes_per_gpu(terms, batch=1.0, context_tokens=context_tokens - opt.cached_tokens)
    if opt.draft is None:
        return target
    return target + np.where(_draft_on(opt), kv_bytes_per_gpu(opt.draft, batch=1.0, context_tokens=context_tokens), 0.0)


def kv_cache_bytes_per_replica(
    terms: DeploymentTerms, opt: LoadOptimizations | None, *, batch: Num, context_tokens: Num
) -> Num:
    """KV bytes of ``batch`` running sequences at ``context_tokens`` over the replica's GPUs (no paging):
    batch·c(P + G − h·S) + c(S) under the prefix cache (hits map the shared prefix, held once), plus
    batch·c_draft(P + G) of the draft model under speculation; batch·c(P + G) when plain, B
    (planner.performance.memory.kv_bytes_per_sequence)."""
    if opt is None:
        return batch * kv_bytes_per_sequence(terms, context_tokens)
    target = batch * kv_bytes_per_sequence(terms, context_tokens - opt.cached_tokens) + np.where(
        np.asarray(opt.resident_prefix_tokens) > 0, kv_bytes_per_sequence(terms, opt.resident_prefix_tokens), 0.0
    )
    if opt.draft is None:
        return target
    return target + np.where(_draft_on(opt), batch * kv_bytes_per_sequence(opt.draft, context_tokens), 0.0)


def optimized_engine_reserve_bytes(terms: DeploymentTerms, opt: LoadOptimizations | None, *, workspace_bytes: float) -> Num:
    """The engine's reserve per GPU with the resident prefix pages and draft weights
    (planner.performance.memory.engine_reserve_bytes), B."""
    resident = 0.0 if opt is None else resident_bytes_per_gpu(terms, opt)
    return engine_reserve_bytes(terms, workspace_bytes=workspace_bytes, resident_bytes=resident)


def optimized_max_batch(
    terms: DeploymentTerms, opt: LoadOptimizations | None, *, context_tokens: Num, workspace_bytes: float
) -> Num:
    """Largest batch that fits: floor(KV room / KV per sequence), ≥ 0; the room is the engine's share less
    weights, workspace and resident bytes (planner.performance.memory.kv_room_bytes)."""
    if opt is None:
        return max_batch(terms, context_tokens=context_tokens, workspace_bytes=workspace_bytes)
    room = kv_room_bytes(terms, workspace_bytes=workspace_bytes, resident_bytes=resident_bytes_per_gpu(terms, opt))
    return np.maximum(np.floor(room / kv_bytes_per_sequence_per_gpu(terms, opt, context_tokens)), 0.0)


def optimized_memory_per_gpu_bytes(
    terms: DeploymentTerms, opt: LoadOptimizations | None, *, batch: Num, context_tokens: Num, workspace_bytes: float
) -> Num:
    """Bytes per GPU at ``batch``: planner.performance.memory.held_bytes_per_gpu of batch × KV per sequence,
    with the resident prefix pages and draft weights, B."""
    if opt is None:
        return memory_per_gpu_bytes(terms, batch=batch, context_tokens=context_tokens, workspace_bytes=workspace_bytes)
    return held_bytes_per_gpu(
        terms,
        kv_bytes=batch * kv_bytes_per_sequence_per_gpu(terms, opt, context_tokens),
        workspace_bytes=workspace_bytes,
        resident_bytes=resident_bytes_per_gpu(terms, opt),
    )


def prefix_recompute_and_fetch_s(
    terms: DeploymentTerms, *, prefix_tokens: float, host_link_gb_per_s: float
) -> tuple[float, float]:
    """(T_recompute, T_fetch) of a shared prefix on this deployment: its prefill, and its KV per GPU over the
    host link, s."""
    recompute = float(prefill_step(terms, prompt_tokens=float(prefix_tokens)).total_s)
    kv = float(kv_bytes_per_gpu(terms, batch=1.0, context_tokens=float(prefix_tokens)))
    return recompute, kv / (host_link_gb_per_s * BYTES_PER_GB)


def prefix_breakeven_frac(terms: DeploymentTerms, *, prefix_tokens: float, host_link_gb_per_s: float) -> float:
    """Hit fraction above which keeping the prefix pays (card 3: T_move / (T_recompute − T_fetch),
    T_move = T_fetch = the prefix KV over the host link); ``inf`` when fetching is not faster."""
    recompute, fetch = prefix_recompute_and_fetch_s(
        terms, prefix_tokens=prefix_tokens, host_link_gb_per_s=host_link_gb_per_s
    )
    return card3.prefix_breakeven_hit_frac(recompute, fetch_s=fetch, move_s=fetch)


def spec_tokens_per_round(acceptance_frac: float, *, draft_tokens: int) -> float:
    """E[N] = 1 + a + … + a^k tokens per verification round (ledger card 3)."""
    return card3.spec_expected_tokens(acceptance_frac, draft_tokens=draft_tokens)


def spec_breakeven_tokens(
    terms: DeploymentTerms, draft: DeploymentTerms, *, draft_tokens: int, prompt_tokens: float, context_tokens: float
) -> float:
    """Tokens per round above which speculation beats plain decoding for one sequence on this deployment:
    (k·T_draft + T_verify(k + 1 rows)) / T_plain (ledger spec_breakeven_tokens_per_round)."""
    opt = LoadOptimizations(draft=draft, draft_tokens=float(draft_tokens))
    step = {"decode_batch": 1.0, "decode_context_tokens": context_tokens, "prefill_tokens": 0.0,
            "prompt_tokens": prompt_tokens}
    spec_round = float(round_s(terms, opt, **step))
    plain = float(round_s(terms, None, **step))
    return card3.spec_breakeven_tokens_per_round(spec_round * 1e3, plain_ms_per_token=plain * 1e3)
