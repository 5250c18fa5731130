"""Memory per GPU: weights, KV cache and the largest batch that fits (card 1 capacity rule, card 8 sharding)."""

from __future__ import annotations

import numpy as np

from planner.ledgers import efficiency as eff
from planner.performance import moe
from planner.performance.terms import DeploymentTerms, Num


def _min(a: Num, b: Num) -> Num:
    return (a + b - abs(a - b)) / 2


def kv_bytes_per_sequence(terms: DeploymentTerms, context_tokens: Num) -> Num:
    """KV bytes one sequence holds at ``context_tokens`` (windowed layers keep at most the window), B."""
    held = terms.full_attention_layers * context_tokens + terms.window_layers * _min(
        context_tokens, terms.window_tokens
    )
    return terms.kv_bytes_per_token_per_layer * held


def kv_bytes_per_gpu(terms: DeploymentTerms, *, batch: Num, context_tokens: Num) -> Num:
    """KV bytes on one GPU: B·c(H) / (s_kv·p) (KV heads split over TP up to n_KV; layers over PP), B (card 8)."""
    return kv_bytes_of(batch, kv_parts(terms, context_tokens))


def kv_parts(terms: DeploymentTerms, context_tokens: Num) -> tuple[Num, Num, Num]:
    """(c(H) KV bytes of one sequence, paging factor at H, s_kv·p): the parts of :func:`kv_bytes_per_gpu` that do
    not read the batch (a step table at many loads computes them once)."""
    return (
        kv_bytes_per_sequence(terms, context_tokens),
        eff.kv_paging_factor(terms.efficiency, context_tokens),
        terms.kv_shards * terms.pp,
    )


def kv_bytes_of(batch: Num, parts: tuple[Num, Num, Num]) -> Num:
    """:func:`kv_bytes_per_gpu` of ``batch`` sequences from its :func:`kv_parts`, B."""
    per_sequence, paging, shards = parts
    return batch * per_sequence * paging / shards


def weights_bytes_per_gpu(terms: DeploymentTerms) -> Num:
    """Weight bytes on one GPU: M_W / (t·p), B (card 8, TP/PP sharding); with expert parallelism the
    non-expert weights are held once per attention rank (:func:`planner.performance.moe.weights_bytes_per_gpu`)."""
    return moe.weights_bytes_per_gpu(terms)


def memory_per_gpu_bytes(
    terms: DeploymentTerms, *, batch: Num, context_tokens: Num, workspace_bytes: float
) -> Num:
    """Resident bytes per GPU: weights + KV + workspace (card 1 capacity rule)."""
    return (
        weights_bytes_per_gpu(terms)
        + kv_bytes_per_gpu(terms, batch=batch, context_tokens=context_tokens)
        + workspace_bytes
    )


def max_batch(terms: DeploymentTerms, *, context_tokens: Num, workspace_bytes: float) -> Num:
    """Largest batch whose KV fits next to the weights and workspace: floor(room / KV per sequence per GPU).

    Returns 0 where even the weights do not fit. Works on numpy arrays.
    """
    room = terms.memory_capacity_bytes - weights_bytes_per_gpu(terms) - workspace_bytes
    per_seq = kv_bytes_per_gpu(terms, batch=1.0, context_tokens=context_tokens)
    return np.maximum(np.floor(room / per_seq), 0.0)
