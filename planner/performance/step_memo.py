"""The zero-load engine round T₀ of a deployment table, evaluated once per table instead of once per load;
the table's prepared engine round (:func:`kept_round_step`) likewise.

:func:`planner.performance.load.serve_at_load` starts its fixed point T = T_mixed(λGT, λPT) at
T₀ = T_mixed(0, 0) (no decoding sequence, no prompt token: :func:`round_s` at decode batch 0 and prefill 0),
which does not depend on the load λ. The capacity bisections (``capacity_at_slo`` and the pools') ask the
same table at BISECTION_ITERATIONS (17) loads in a row, so the last few T₀ are kept, keyed by the terms and
optimization objects (held, so their ids cannot be reused; both are frozen and never changed in place) and
the bytes of the context and prompt columns. A kept T₀ is the array :func:`round_s` returned for the same inputs: the same
numbers, one mixed step fewer per load.

:func:`kept_round_step` keeps the last few prepared rounds (:func:`round_step`: the mixed steps' parts that do
not read the load) under the same key: a bisection's loads, its fixed point and its chunk steps share one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from planner.performance.optimizations import LoadOptimizations, round_s, round_step
from planner.performance.terms import DeploymentTerms, Num

KEPT = 4
"""Zero-load rounds kept per thread (the latest first)."""

_LOCAL = threading.local()


def _column_key(value: Num) -> tuple[Any, ...]:
    array = np.asarray(value)
    return array.dtype.str, array.shape, array.tobytes()


def zero_load_round_s(
    terms: DeploymentTerms, opt: LoadOptimizations | None, *, context_tokens: Num, prompt_tokens: Num
) -> Num:
    """T₀ = :func:`round_s` at decode batch 0 and no prompt tokens, s (one per table: module docstring)."""
    key = (_column_key(context_tokens), _column_key(prompt_tokens))
    kept: list[tuple[DeploymentTerms, LoadOptimizations | None, tuple[Any, ...], Num]] = getattr(_LOCAL, "kept", [])
    for held_terms, held_opt, held_key, t0 in kept:
        if held_terms is terms and held_opt is opt and held_key == key:
            return t0
    t0 = round_s(terms, opt, decode_batch=0.0, decode_context_tokens=context_tokens, prefill_tokens=0.0,
                 prompt_tokens=prompt_tokens)
    _LOCAL.kept = [(terms, opt, key, t0), *kept][:KEPT]
    return t0


def kept_round_step(
    terms: DeploymentTerms, opt: LoadOptimizations | None, *, context_tokens: Num, prompt_tokens: Num
) -> Callable[..., Num]:
    """:func:`round_step` of the table (module docstring: kept per terms and optimization objects and the bytes
    of the context and prompt columns)."""
    key = (_column_key(context_tokens), _column_key(prompt_tokens))
    kept: list[tuple[DeploymentTerms, LoadOptimizations | None, tuple[Any, ...], Callable[..., Num]]] = getattr(
        _LOCAL, "steps", []
    )
    for i, (held_terms, held_opt, held_key, step) in enumerate(kept):
        if held_terms is terms and held_opt is opt and held_key == key:
            if i:  # the latest first
                _LOCAL.steps = [kept[i], *kept[:i], *kept[i + 1:]]
            return step
    step = round_step(terms, opt, decode_context_tokens=context_tokens, prompt_tokens=prompt_tokens)
    _LOCAL.steps = [(terms, opt, key, step), *kept][:KEPT]
    return step
