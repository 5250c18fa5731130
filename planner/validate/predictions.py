"""Predicting a case with given efficiency terms (same code path as ``planner predict`` and ``planner plan``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.ledgers import efficiency as eff
from planner.units import MS_PER_S
from planner.validate.cases import Case
from planner.validate.scores import ResultRow

PREFILL_TOKEN_BUDGET = 8192.0
"""Tokens per batched prefill (TensorRT-LLM / vLLM default max_num_tokens)."""


def case_efficiency(
    catalog: Catalog, case: Case, parameters: Mapping[str, float] | None = None
) -> eff.EfficiencyTerms:
    """Efficiency terms of a case: the catalog's calibration, or ``parameters`` for its family."""
    if case.gpu is None or case.weight_format is None:
        return eff.EfficiencyTerms.ideal()
    if parameters is None:
        return perf.efficiency_terms(catalog, case.gpu, case.weight_format)
    merged = {**catalog.calibration[case.family].parameters, **parameters}
    return eff.calibrated_efficiency_terms(
        merged,
        decode_mbu_frac=case.gpu.efficiency.decode_mbu_frac,
        prefill_mfu_frac=case.gpu.efficiency.prefill_mfu_frac,
        link_efficiency_frac=case.gpu.efficiency.link_efficiency_frac,
        weight_only=case.weight_format.weight_only,
    )


def predict_case(case: Case, efficiency: eff.EfficiencyTerms) -> float:
    """Predicted value of a case with the given efficiency terms (units of the case's metric)."""
    if case.fixed_prediction is not None:
        return case.fixed_prediction
    if case.terms is None:
        raise ValueError(f"case {case.label} has neither terms nor a fixed prediction")
    t = replace(case.terms, efficiency=efficiency)
    if case.metric == "tpot_itl" and case.serving:
        rate = throughput_tokens_per_s(
            t, batch=case.batch, prompt_tokens=case.prompt_tokens, output_tokens=case.output_tokens
        )
        return case.batch / rate * MS_PER_S
    if case.metric == "tpot_itl":
        return (
            float(perf.decode_step(t, batch=case.batch, context_tokens=case.context_tokens).total_s)
            * MS_PER_S
        )
    if case.metric == "ttft_or_prefill":
        return float(perf.prefill_step(t, prompt_tokens=case.prompt_tokens).total_s) * MS_PER_S
    if case.metric == "throughput":
        return throughput_tokens_per_s(
            t,
            batch=case.batch,
            prompt_tokens=case.prompt_tokens,
            output_tokens=case.output_tokens,
            context_tokens=case.context_tokens,
        )
    raise ValueError(f"unknown metric {case.metric}")


def throughput_tokens_per_s(
    terms: perf.DeploymentTerms,
    *,
    batch: float,
    prompt_tokens: float,
    output_tokens: float,
    context_tokens: float = 0.0,
) -> float:
    """Continuous-batching output rate: B·G / (G·T_dec(B, P + G/2) + B·T_pre(P)/b_pre), tokens/s.

    With ``output_tokens`` 0 it is a decode-only rate B / T_dec(B, context_tokens).
    """
    if output_tokens <= 0:
        step = float(perf.decode_step(terms, batch=batch, context_tokens=context_tokens).total_s)
        return batch / step
    ctx = perf.mean_decode_context_tokens(prompt_tokens, output_tokens)
    step = float(perf.decode_step(terms, batch=batch, context_tokens=ctx).total_s)
    pre_batch = max(min(math.floor(PREFILL_TOKEN_BUDGET / prompt_tokens), batch), 1.0)
    prefill = (
        float(perf.prefill_step(terms, prompt_tokens=prompt_tokens, batch=pre_batch).total_s) / pre_batch
    )
    return batch * output_tokens / (output_tokens * step + batch * prefill)


def evaluate(
    catalog: Catalog, cases: Sequence[Case], parameters: Mapping[str, Mapping[str, float]] | None = None
) -> list[ResultRow]:
    """Predict every case (with the catalog calibration, or per-family ``parameters`` where given)."""
    rows = []
    for c in cases:
        fam_params = None if parameters is None else parameters.get(c.family)
        value = predict_case(c, case_efficiency(catalog, c, fam_params))
        rows.append(ResultRow(c.source, c.metric, c.label, c.family, value, c.measured, c.note))
    return rows
