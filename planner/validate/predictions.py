"""Predicting a case with given efficiency terms (same code path as ``planner predict`` and ``planner plan``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.ledgers import efficiency as eff
from planner.performance.load import LoadPoint
from planner.units import MS_PER_S
from planner.validate.cases import Case
from planner.validate.load_cases import closed_loop_point, open_loop_point
from planner.validate.scores import ResultRow

PREFILL_TOKEN_BUDGET = 8192.0
"""Tokens per batched prefill (TensorRT-LLM / vLLM default max_num_tokens)."""


def case_efficiency(
    catalog: Catalog, case: Case, parameters: Mapping[str, float] | None = None
) -> eff.EfficiencyTerms:
    """Efficiency terms of a case: the catalog's calibration, or fitted ``parameters`` (its engine's group)."""
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
        weight_only=perf.format_as_run(case.gpu, case.weight_format).weight_only,
    )


def predict_case(case: Case, efficiency: eff.EfficiencyTerms) -> float:
    """Predicted value of a case with the given efficiency terms (units of the case's metric)."""
    if case.fixed_prediction is not None:
        return case.fixed_prediction
    if case.terms is None:
        raise ValueError(f"case {case.label} has neither terms nor a fixed prediction")
    t = replace(case.terms, efficiency=efficiency)
    if case.requests_per_s > 0 or case.concurrency > 0:
        return _load_prediction(t, case)
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


@functools.lru_cache(maxsize=4096)
def _load_point(
    terms: perf.DeploymentTerms, rate: float, concurrency: float, p_tok: float, g_tok: float, batch: float,
    percentile: float | None = None,
) -> LoadPoint:
    """One load point per (deployment, efficiency, load, statistic): the TTFT and TPOT rows of one measurement
    and the uncalibrated / calibrated evaluations share it (the scheduler solve is the slow part); its TTFT and
    TPOT are means, or at ``percentile`` (a row's median columns)."""
    common = {"input_tokens": p_tok, "output_tokens": g_tok, "max_batch": batch}
    if concurrency > 0:
        return closed_loop_point(terms, concurrency=concurrency, percentile=percentile, **common)
    return open_loop_point(terms, requests_per_s=rate, percentile=percentile, **common)


def _load_prediction(terms: perf.DeploymentTerms, case: Case) -> float:
    """TTFT / TPOT (ms) or output tokens/s of a row measured at a load (planner.validate.load_cases)."""
    percentile = None if case.metric == "throughput" else case.percentile
    pt = _load_point(terms, case.requests_per_s, case.concurrency, case.prompt_tokens, case.output_tokens,
                     case.batch, percentile)
    if case.metric == "ttft_or_prefill":
        return float(pt.ttft_s) * MS_PER_S
    if case.metric == "tpot_itl":
        return float(pt.tpot_s) * MS_PER_S
    return float(pt.output_tokens_per_s)


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
    """Predict every case (with the catalog calibration, or per-engine fitted ``parameters`` where given)."""
    rows = []
    for c in cases:
        group = None if parameters is None else parameters.get(c.engine)
        value = predict_case(c, case_efficiency(catalog, c, group))
        rows.append(ResultRow(c.source, c.metric, c.label, c.family, value, c.measured, c.note))
    return rows
