"""Imperfect compute/memory overlap of an operator group (ledgers.efficiency.overlapped_stage_s) and its use in
the decode, prefill and chunked (mixed) steps."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from planner import performance as perf
from planner.catalog import Catalog
from planner.ledgers import efficiency as eff
from planner.performance.mixed_step import MixedStep

Q = 2.5


def _terms(catalog: Catalog, q: float, **kw: object) -> perf.DeploymentTerms:
    base = dict(model=catalog.model("llama_3_1_70b"), gpu=catalog.gpu("h100_sxm"),
                weight_format=catalog.format("fp8"), kv_format=catalog.format("fp8"), tp=2)
    base.update(kw)
    terms = perf.deployment_terms(catalog, **base)  # type: ignore[arg-type]
    return replace(terms, efficiency=replace(terms.efficiency, overlap_exponent=q))


def test_worked_values_and_bounds() -> None:
    e = replace(eff.EfficiencyTerms.ideal(), overlap_exponent=Q)
    # at the ridge T = 2^(1/q)·max: 2^0.4 = 1.3195 (76 % of the roofline)
    assert float(eff.overlapped_stage_s(e, 1.0, 1.0)) == pytest.approx(2**0.4, rel=1e-12)
    # 3 ms compute against 1 ms memory: 3·(1 + 3^-2.5)^0.4 = 3·1.06415^0.4 = 3.0755 ms
    assert float(eff.overlapped_stage_s(e, 3e-3, 1e-3)) == pytest.approx(3e-3 * (1 + 3**-2.5) ** 0.4, rel=1e-12)
    assert float(eff.overlapped_stage_s(e, 3e-3, 1e-3)) == pytest.approx(3.0755e-3, rel=1e-4)
    assert float(eff.overlap_loss_s(e, 3e-3, 1e-3)) == pytest.approx(0.0755e-3, rel=1e-3)
    # q = 1 is the sum (no overlap); the ideal terms (q = ∞) are the card 7 max; zero stays zero
    assert float(eff.overlapped_stage_s(replace(e, overlap_exponent=1.0), 3e-3, 1e-3)) == pytest.approx(4e-3)
    ideal = eff.EfficiencyTerms.ideal()
    assert ideal.overlap_exponent == math.inf
    assert float(eff.overlapped_stage_s(ideal, 3e-3, 1e-3)) == 3e-3
    assert float(eff.overlapped_stage_s(ideal, 2e-3, 2e-3)) == 2e-3
    assert float(eff.overlapped_stage_s(e, 0.0, 0.0)) == 0.0


def test_monotone_in_both_times_and_between_max_and_sum() -> None:
    """More FLOP/s or bandwidth (a smaller time) is never slower; max ≤ T ≤ sum for every q ≥ 1."""
    grid = np.geomspace(1e-6, 1e-1, 41)
    c, m = np.meshgrid(grid, grid)
    for q in (1.0, 1.5, Q, 4.0, math.inf):
        e = replace(eff.EfficiencyTerms.ideal(), overlap_exponent=q)
        t = eff.overlapped_stage_s(e, c, m)
        assert np.all(np.diff(t, axis=0) >= -1e-18) and np.all(np.diff(t, axis=1) >= -1e-18)
        assert np.all(t >= np.maximum(c, m) * (1 - 1e-12)) and np.all(t <= (c + m) * (1 + 1e-12))


def test_decode_step_is_the_mixed_step_without_prompt_tokens(catalog: Catalog) -> None:
    """decode_step and MixedStep at c = 0 charge the same overlap on both operator groups, at small and
    large batch; at B = 256 the 70B TP2 projections sit near the ridge and lose time to the overlap."""
    t = _terms(catalog, Q)
    ideal_overlap = _terms(catalog, math.inf)
    for batch in (1.0, 64.0, 512.0):
        step = MixedStep(t, decode_context_tokens=1152.0, prompt_tokens=128.0)(decode_batch=batch, prefill_tokens=0.0)
        dec = perf.decode_step(t, batch=batch, context_tokens=1152.0)
        assert float(step) == pytest.approx(float(dec.total_s), rel=1e-9)
    near_ridge = perf.decode_step(t, batch=256.0, context_tokens=1152.0)
    roofline = perf.decode_step(ideal_overlap, batch=256.0, context_tokens=1152.0)
    lin_c = float(near_ridge.compute_s - near_ridge.attention_compute_s)
    lin_m = float(near_ridge.weights_read_s)
    assert 0.5 < lin_c / lin_m < 2.0
    assert float(near_ridge.linear_ops_s) == pytest.approx((lin_c**Q + lin_m**Q) ** (1 / Q), rel=1e-12)
    assert float(near_ridge.total_s) > 1.08 * float(roofline.total_s)
    # batch 1 is memory-bound: the overlap costs < 0.1 %
    one, one_max = (perf.decode_step(x, batch=1.0, context_tokens=1152.0) for x in (t, ideal_overlap))
    assert float(one.total_s) == pytest.approx(float(one_max.total_s), rel=1e-3)


def test_prompt_chunks_keep_the_roofline(catalog: Catalog) -> None:
    """Prefill (far above the ridge) and the prompt part of a chunked step are charged at the max: a single
    prefill is unchanged by q, and MixedStep at B = 0, c = P is that prefill; the overlap loss of a mixed
    step is its decode rows' alone (a light load's prompt tokens spread over decode steps are an average,
    not a GEMM near the ridge)."""
    t, ideal_overlap = _terms(catalog, Q), _terms(catalog, math.inf)
    for p in (128.0, 2048.0, 8192.0):
        pre = float(perf.prefill_step(t, prompt_tokens=p).total_s)
        assert pre == float(perf.prefill_step(ideal_overlap, prompt_tokens=p).total_s)
        mixed = MixedStep(t, decode_context_tokens=p + 1.0, prompt_tokens=p)(decode_batch=0.0, prefill_tokens=p)
        assert float(mixed) == pytest.approx(pre, rel=1e-6)
    ms, ms_max = (MixedStep(x, decode_context_tokens=2300.0, prompt_tokens=2048.0) for x in (t, ideal_overlap))
    for b, c in ((4.0, 300.0), (256.0, 2048.0)):
        loss = float(ms(decode_batch=b, prefill_tokens=c)) - float(ms_max(decode_batch=b, prefill_tokens=c))
        dec_loss = float(ms(decode_batch=b, prefill_tokens=0.0)) - float(ms_max(decode_batch=b, prefill_tokens=0.0))
        assert loss == pytest.approx(dec_loss, rel=0.05, abs=1e-6)
