"""Optimization variants of a candidate configuration (prefix cache, speculative decoding; card 3).

A configuration (workload, model, formats, GPU, TP, PP) always has its plain variant. When the workload
states ``prefix_cache`` / ``speculative``, an "on" variant is added if card 3's break-even rule says it can
pay on that deployment (:mod:`planner.performance.optimizations`); the MILP picks between the variants by
cost, so an optimization that costs more than it saves (memory for the cached prefix, verification and
draft time at the planned load) is simply not chosen. At most 4 variants per configuration.

Every variant carries ``why`` sentences for the plan readout, e.g. "prefix cache on: 80 % hit rate > 4.1 %
break-even (6,144-token prefix: recompute 310 ms vs 14.2 ms over pcie_gen5)".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, NumericFormat
from planner.performance.optimizations import (
    LoadOptimizations,
    prefix_breakeven_frac,
    prefix_recompute_and_fetch_s,
    spec_breakeven_tokens,
    spec_tokens_per_round,
)
from planner.scenario_optimizations import PrefixCache, Speculative


class OptimizedWorkload(Protocol):
    """What the variants read of a workload: planner.scenario.Workload, or ``planner predict``'s request."""

    @property
    def name(self) -> str: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def engine_key(self) -> str: ...
    @property
    def prefix_cache(self) -> PrefixCache | None: ...
    @property
    def speculative(self) -> Speculative | None: ...


@dataclass(frozen=True)
class Variant:
    """One optimization variant of a configuration."""

    prefix_cache: bool
    speculative: bool
    opt: LoadOptimizations
    why: dict[str, str] = field(default_factory=dict)
    """Readout sentence per stated optimization ('prefix_cache', 'speculative')."""


def _pct(frac: float) -> str:
    return f"{100 * frac:.1f} %" if 0 < frac < 0.1 else f"{100 * frac:.0f} %"


def _prefix(catalog: Catalog, w: OptimizedWorkload, terms: perf.DeploymentTerms, gpu: Accelerator) -> tuple[bool, str, str]:
    """(gate passed, why if on, why if off) of the prefix cache on this deployment."""
    assert w.prefix_cache is not None
    h, s = w.prefix_cache.hit_frac, w.prefix_cache.prefix_tokens
    gb_per_s = catalog.interconnect(gpu.host_link).gb_per_s_per_direction
    be = prefix_breakeven_frac(terms, prefix_tokens=s, host_link_gb_per_s=gb_per_s)
    rec, fetch = prefix_recompute_and_fetch_s(terms, prefix_tokens=s, host_link_gb_per_s=gb_per_s)
    detail = f"({s:,}-token prefix: recompute {rec * 1e3:.0f} ms vs {fetch * 1e3:.1f} ms over {gpu.host_link})"
    if not h > be:
        return False, "", f"prefix cache off: {_pct(h)} hit rate ≤ {_pct(be)} break-even {detail}"
    on = f"prefix cache on: {_pct(h)} hit rate > {_pct(be)} break-even {detail}"
    off = (
        f"prefix cache off: {_pct(h)} hit rate > {_pct(be)} break-even {detail}, but the variant holding "
        "the prefix (its KV once per replica) was not cheaper in this plan"
    )
    return True, on, off


def _speculative(
    catalog: Catalog,
    w: OptimizedWorkload,
    terms: perf.DeploymentTerms,
    *,
    model_id: str,
    gpu: Accelerator,
    fmt: NumericFormat,
    kfmt: NumericFormat,
    tp: int,
    pp: int,
) -> tuple[perf.DeploymentTerms | None, float, str, str]:
    """(draft terms if the gate passed, E[N], why if on, why if off) of speculative decoding here."""
    spec = w.speculative
    assert spec is not None
    draft_model = catalog.models[spec.draft_model]
    target = catalog.models[model_id]
    e_n = spec_tokens_per_round(spec.acceptance_frac, draft_tokens=spec.draft_tokens)
    what = f"{spec.draft_tokens} drafts of {spec.draft_model} at {_pct(spec.acceptance_frac)} acceptance"
    if draft_model.vocab_size != target.vocab_size:
        return None, e_n, "", (
            f"speculative off: {spec.draft_model} has another tokenizer than {model_id} "
            f"(vocab {draft_model.vocab_size:,} vs {target.vocab_size:,})"
        )
    try:
        draft = perf.deployment_terms(
            catalog, model=draft_model, gpu=gpu, weight_format=fmt, kv_format=kfmt, tp=tp, pp=pp, engine=w.engine_key
        )
    except perf.UnsupportedDeployment as exc:
        return None, e_n, "", f"speculative off: the draft does not run here ({exc})"
    be = spec_breakeven_tokens(
        terms, draft, draft_tokens=spec.draft_tokens, prompt_tokens=float(w.input_tokens),
        context_tokens=float(perf.mean_decode_context_tokens(w.input_tokens, w.output_tokens)),
    )
    if not e_n > be:
        return None, e_n, "", f"speculative off: {e_n:.2f} tokens/round ≤ {be:.2f} break-even ({what})"
    on = f"speculative on: {e_n:.2f} tokens/round > {be:.2f} break-even ({what})"
    off = (
        f"speculative off: {e_n:.2f} tokens/round > {be:.2f} break-even at one sequence ({what}), but "
        "at the planned load the variant with it (verification + draft steps, draft memory) was not cheaper"
    )
    return draft, e_n, on, off


def config_variants(
    catalog: Catalog,
    w: OptimizedWorkload,
    terms: perf.DeploymentTerms,
    *,
    model_id: str,
    gpu: Accelerator,
    fmt: NumericFormat,
    kfmt: NumericFormat,
    tp: int,
    pp: int,
) -> list[Variant]:
    """The plain variant, and the 'on' variants whose break-even rule passes (at most 4)."""
    prefix_opts: list[tuple[bool, float, float, str]] = [(False, 0.0, 0.0, "")]
    if w.prefix_cache is not None:
        gate, on_why, off_why = _prefix(catalog, w, terms, gpu)
        prefix_opts = [(False, 0.0, 0.0, off_why)]
        if gate:
            resident = float(min(w.prefix_cache.prefix_tokens, w.input_tokens - 1))
            prefix_opts.append((True, w.prefix_cache.hit_frac * resident, resident, on_why))
    spec_opts: list[tuple[bool, perf.DeploymentTerms | None, float, float, str]] = [(False, None, 0.0, 1.0, "")]
    if w.speculative is not None:
        draft, e_n, on_why, off_why = _speculative(
            catalog, w, terms, model_id=model_id, gpu=gpu, fmt=fmt, kfmt=kfmt, tp=tp, pp=pp
        )
        spec_opts = [(False, None, 0.0, 1.0, off_why)]
        if draft is not None:
            spec_opts.append((True, draft, float(w.speculative.draft_tokens), e_n, on_why))
    out: list[Variant] = []
    for p_on, cached, resident, p_why in prefix_opts:
        for s_on, draft, k, e_n, s_why in spec_opts:
            why = {}
            if w.prefix_cache is not None:
                why["prefix_cache"] = p_why
            if w.speculative is not None:
                why["speculative"] = s_why
            opt = LoadOptimizations(
                cached_tokens=cached, resident_prefix_tokens=resident, draft=draft, draft_tokens=k,
                tokens_per_round=e_n,
            )
            out.append(Variant(p_on, s_on, opt, why))
    return out


def stack_optimizations(
    opts: Sequence[LoadOptimizations],
    targets: Sequence[perf.DeploymentTerms],
    stack_terms: Callable[[list[perf.DeploymentTerms]], perf.DeploymentTerms],
) -> LoadOptimizations | None:
    """(n, 1) columns of the rows' optimizations; None when no row has one (the plain code path).

    Rows without a draft use their own target terms as a placeholder draft (its k = 0 masks it out).
    """
    if all(o.cached_tokens == 0 and o.resident_prefix_tokens == 0 and o.draft is None for o in opts):
        return None

    def col(name: str) -> Any:
        return np.array([float(getattr(o, name)) for o in opts], dtype=float)[:, None]

    any_draft = any(o.draft is not None for o in opts)
    draft = (
        stack_terms([o.draft if o.draft is not None else t for o, t in zip(opts, targets, strict=True)])
        if any_draft
        else None
    )
    return LoadOptimizations(
        cached_tokens=col("cached_tokens"),
        resident_prefix_tokens=col("resident_prefix_tokens"),
        draft=draft,
        draft_tokens=col("draft_tokens"),
        tokens_per_round=col("tokens_per_round"),
    )


def deployment_load_optimizations(
    catalog: Catalog,
    w: OptimizedWorkload,
    terms: perf.DeploymentTerms,
    *,
    model_id: str,
    gpu: Accelerator,
    fmt: NumericFormat,
    kfmt: NumericFormat,
    tp: int,
    pp: int,
    prefix_cache: bool,
    speculative: bool,
) -> LoadOptimizations | None:
    """The optimizations of one chosen variant (for the audit's scalar re-evaluation); None when plain."""
    if not (prefix_cache or speculative):
        return None
    for v in config_variants(catalog, w, terms, model_id=model_id, gpu=gpu, fmt=fmt, kfmt=kfmt, tp=tp, pp=pp):
        if v.prefix_cache == prefix_cache and v.speculative == speculative:
            return v.opt
    raise ValueError(f"{w.name}: no variant with prefix_cache={prefix_cache}, speculative={speculative} on {gpu.id}")
