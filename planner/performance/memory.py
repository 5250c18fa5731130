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
    """KV bytes on one GPU: B·c(H)·ℓ / s_kv (KV heads split over TP up to n_KV; ℓ = the busiest stage's share
    of the layers, ``stage_layers_frac``, 1/p at an even split), B (card 8)."""
    return kv_bytes_of(batch, kv_parts(terms, context_tokens))


def kv_parts(terms: DeploymentTerms, context_tokens: Num) -> tuple[Num, Num, Num]:
    """(c(H) KV bytes of one sequence, paging factor at H, s_kv/ℓ): the parts of :func:`kv_bytes_per_gpu` that do
    not read the batch (a step table at many loads computes them once)."""
    return (
        kv_bytes_per_sequence(terms, context_tokens),
        eff.kv_paging_factor(terms.efficiency, context_tokens),
        terms.kv_shards / terms.stage_layers_frac,
    )


def kv_bytes_of(batch: Num, parts: tuple[Num, Num, Num]) -> Num:
    """:func:`kv_bytes_per_gpu` of ``batch`` sequences from its :func:`kv_parts`, B."""
    per_sequence, paging, shards = parts
    return batch * per_sequence * paging / shards


def weights_bytes_per_gpu(terms: DeploymentTerms) -> Num:
    """Weight bytes on one GPU: M_W / (t·p), B (card 8, TP/PP sharding); with expert parallelism the
    non-expert weights are held once per attention rank (:func:`planner.performance.moe.weights_bytes_per_gpu`)."""
    return moe.weights_bytes_per_gpu(terms)


def _left_in_share(terms: DeploymentTerms, weights_bytes: Num, workspace_bytes: float, resident_bytes: Num) -> Num:
    """u·M − W − A − R: what the engine's share of the GPU holds beyond weights, workspace and resident bytes, B."""
    return terms.memory_claim_frac * terms.memory_capacity_bytes - weights_bytes - workspace_bytes - resident_bytes


def _reserve_of(terms: DeploymentTerms, left: Num) -> Num:
    """(1 − u)·M + (1 − k)·max(left, 0), B (:func:`engine_reserve_bytes` from its :func:`_left_in_share`)."""
    unclaimed = (1.0 - terms.memory_claim_frac) * terms.memory_capacity_bytes
    return unclaimed + (1.0 - terms.kv_free_memory_frac) * np.maximum(left, 0.0)


def kv_room_bytes(terms: DeploymentTerms, *, workspace_bytes: float, resident_bytes: Num = 0.0) -> Num:
    """Bytes per GPU the serving engine gives its KV cache: k·(u·M − W − A − R), B; negative where the
    weights do not fit in the engine's share.

    M: the GPU's memory; u: the share the engine allocates (``memory_claim_frac``, vLLM
    gpu_memory_utilization 0.9); W: weights per GPU; A: the activation workspace (scenario ``workspace_gib``);
    R: other resident bytes (a draft model, pinned prefix pages); k: the share of what is left that becomes
    KV cache (``kv_free_memory_frac``, TensorRT-LLM free_gpu_memory_fraction 0.9). Works on numpy arrays.
    """
    left = _left_in_share(terms, weights_bytes_per_gpu(terms), workspace_bytes, resident_bytes)
    return terms.kv_free_memory_frac * left


def engine_reserve_bytes(terms: DeploymentTerms, *, workspace_bytes: float, resident_bytes: Num = 0.0) -> Num:
    """Bytes per GPU the engine keeps out of weights, workspace and KV cache: (1 − u)·M + (1 − k)·max(u·M −
    W − A − R, 0), B (:func:`kv_room_bytes`); W + A + R + KV + this ≤ M exactly when the KV fits its room."""
    return _reserve_of(terms, _left_in_share(terms, weights_bytes_per_gpu(terms), workspace_bytes, resident_bytes))


def held_bytes_per_gpu(
    terms: DeploymentTerms, *, kv_bytes: Num, workspace_bytes: float, resident_bytes: Num = 0.0
) -> Num:
    """Bytes per GPU a deployment holds with ``kv_bytes`` of KV cache: weights + KV + workspace + resident
    bytes + the engine's reserve (card 1 capacity rule; :func:`engine_reserve_bytes`), B."""
    weights = weights_bytes_per_gpu(terms)
    return (
        weights
        + kv_bytes
        + workspace_bytes
        + resident_bytes
        + _reserve_of(terms, _left_in_share(terms, weights, workspace_bytes, resident_bytes))
    )


def memory_per_gpu_bytes(
    terms: DeploymentTerms, *, batch: Num, context_tokens: Num, workspace_bytes: float
) -> Num:
    """Bytes per GPU the deployment holds at ``batch``: :func:`held_bytes_per_gpu` of its KV, B."""
    kv = kv_bytes_per_gpu(terms, batch=batch, context_tokens=context_tokens)
    return held_bytes_per_gpu(terms, kv_bytes=kv, workspace_bytes=workspace_bytes)


def max_batch(terms: DeploymentTerms, *, context_tokens: Num, workspace_bytes: float) -> Num:
    """Largest batch whose KV fits the engine's KV room: floor(:func:`kv_room_bytes` / KV per sequence per GPU).

    Returns 0 where even the weights do not fit. Works on numpy arrays.
    """
    per_seq = kv_bytes_per_gpu(terms, batch=1.0, context_tokens=context_tokens)
    return np.maximum(np.floor(kv_room_bytes(terms, workspace_bytes=workspace_bytes) / per_seq), 0.0)


def no_fit_reason(terms: DeploymentTerms, engine: str) -> str:
    """Why a deployment holds no sequence (:func:`max_batch` 0), naming the engine's memory share when it
    keeps some of the GPU back (:func:`kv_room_bytes`)."""
    claim, kv_free = float(terms.memory_claim_frac), float(terms.kv_free_memory_frac)
    if claim < 1:
        share = f"{claim:g} of GPU memory (the {engine} engine's share)"
    elif kv_free < 1:
        share = f"GPU memory ({engine} gives its KV cache {kv_free:g} of what is free)"
    else:
        share = "GPU memory"
    return f"does not fit: weights + workspace + one sequence's KV exceed {share}"
