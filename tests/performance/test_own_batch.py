"""A decoding request's own steps (planner.performance.load.own_batch / own_step_s): they hold the request itself
and the B others it finds, so TPOT is the step at min(B + 1, limit) — never the step of an engine emptier than
one sequence, and never below the engine's mean step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.performance.load import own_batch, serve_at_load
from planner.performance.mixed_step import mixed_step
from planner.performance.pools import decode_at_load
from planner.performance.steps import host_s

ENGINES = ("vllm", "vllm_v0", "vllm_v0_multistep", "sglang", "trtllm")


def _terms(catalog: Catalog, model: str, engine: str = "vllm", tp: int = 1) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model(model), gpu=catalog.gpu("h100_sxm"), weight_format=catalog.format("fp8"),
        kv_format=catalog.format("fp8"), tp=tp, engine=engine,
    )


def test_own_batch_is_one_more_up_to_the_limit() -> None:
    assert own_batch(np.array([0.0, 0.3, 7.5, 63.6, 64.0]), 64.0).tolist() == [1.0, 1.3, 8.5, 64.0, 64.0]
    assert float(own_batch(0.2, 0.5)) == 1.0  # a replica that holds less than one sequence still runs one


def test_a_lone_moe_request_reads_its_experts(catalog: Catalog) -> None:
    """Qwen3-30B-A3B at 0.01 req/s: the engine holds B ≈ 0.01 sequences on average, a step at that batch touches
    0.01·k of the experts, but the request's own steps touch k = 8 of 128: TPOT is the lone step T(1, 0)."""
    t = _terms(catalog, "qwen3_30b_a3b")
    pt = serve_at_load(t, requests_per_s=0.01, input_tokens=1000.0, output_tokens=200.0, max_batch=256.0)
    context = float(perf.mean_decode_context_tokens(1000.0, 200.0))
    lone = float(mixed_step(t, decode_batch=1.0, decode_context_tokens=context, prefill_tokens=0.0,
                            prompt_tokens=1000.0))
    at_mean = float(mixed_step(t, decode_batch=float(pt.running_batch), decode_context_tokens=context,
                               prefill_tokens=0.0, prompt_tokens=1000.0))
    assert float(pt.running_batch) < 0.05
    # + the mean-field prompt chunk the step carries (c = λ·P·T = 0.03 tokens, routed to experts of their own)
    assert lone <= float(pt.tpot_s) <= 1.01 * lone
    # the mean-batch step read a fraction of the experts: compared above the fixed time both steps carry (the
    # engine's step overhead, host time and the MoE layers' routing kernels, steps.host_s)
    def fixed(batch: float) -> float:
        return t.efficiency.step_overhead_s + float(host_s(t, batch))

    assert lone - fixed(1.0) > 1.3 * (at_mean - fixed(float(pt.running_batch)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    engine=st.sampled_from(ENGINES),
    model=st.sampled_from(["llama_3_1_8b", "qwen3_30b_a3b"]),
    p_tok=st.floats(16.0, 4096.0),
    g_tok=st.floats(16.0, 1024.0),
    lam=st.floats(1e-3, 20.0),
    more=st.floats(1.0, 3.0),
)
def test_tpot_holds_the_request_itself(
    catalog: Catalog, engine: str, model: str, p_tok: float, g_tok: float, lam: float, more: float
) -> None:
    """Over engines, a dense and an MoE model: TPOT ≥ the engine's mean step and ≥ a lone sequence's decode step;
    the own batch is min(B + 1, limit); more load never lowers TPOT."""
    t = _terms(catalog, model, engine)
    kw = {"input_tokens": p_tok, "output_tokens": g_tok, "max_batch": 64.0}
    pt = serve_at_load(t, requests_per_s=np.array([lam, lam * more]), **kw)
    stable = np.asarray(pt.stable)
    if not stable[0]:
        return
    lone = float(mixed_step(t, decode_batch=1.0, decode_context_tokens=perf.mean_decode_context_tokens(p_tok, g_tok),
                            prefill_tokens=0.0, prompt_tokens=p_tok))
    limit = min(64.0, float(t.max_running_sequences))
    assert float(pt.own_batch[0]) == pytest.approx(min(float(pt.running_batch[0]) + 1.0, limit), rel=1e-12)
    assert float(pt.tpot_s[0]) >= float(pt.step_s[0]) * (1 - 1e-12)
    assert float(pt.tpot_s[0]) >= lone * (1 - 1e-9)
    if stable[1]:
        assert float(pt.tpot_s[1]) >= float(pt.tpot_s[0]) * (1 - 1e-9)


def test_a_decode_pool_request_steps_with_the_others(catalog: Catalog) -> None:
    """A decode pool (no prompts in its steps): TPOT is exactly the bare decode step at min(B + 1, limit); at
    41.2 req/s B = 63.4 and the request's steps hold the full 64 (at 40 req/s B = 60.6 on the H100 at MBU 0.68;
    63.4 there at 0.65)."""
    t = _terms(catalog, "llama_3_1_8b")
    pt = decode_at_load(t, requests_per_s=np.array([0.01, 5.0, 41.2]), input_tokens=1000.0, output_tokens=200.0,
                        max_batch=64.0)
    assert np.all(pt.stable)
    context = perf.mean_decode_context_tokens(1000.0, 200.0)
    assert pt.own_batch.tolist() == pytest.approx(np.minimum(pt.running_batch + 1.0, 64.0).tolist(), rel=1e-12)
    assert float(pt.running_batch[2]) == pytest.approx(63.36, abs=0.01) and float(pt.own_batch[2]) == 64.0
    for i in range(3):
        bare = float(perf.decode_step(t, batch=float(pt.own_batch[i]), context_tokens=context).total_s)
        assert float(pt.tpot_s[i]) == pytest.approx(bare, rel=1e-9)
    assert float(pt.tpot_s[0]) > float(pt.step_s[0])


def test_predict_shows_the_request_s_own_steps() -> None:
    """``planner predict --requests-per-s`` shows the engine's mean step and a request's own batch beside TPOT:
    at 0.05 req/s a Qwen3-30B-A3B request decodes alone (own batch 1.03), slower than the mean-field step."""
    import json

    from typer.testing import CliRunner

    from planner.cli.main import app

    args = ["predict", "--model", "qwen3_30b_a3b", "--gpu", "h100_sxm", "--quant", "fp8", "--kv-dtype", "fp8",
            "--requests-per-s", "0.05", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    at = json.loads(res.stdout)["at_load"]
    assert at["own_batch"] == pytest.approx(at["running_batch"] + 1.0, rel=1e-12)
    assert at["running_batch"] < 0.05
    assert at["tpot_ms"] > 1.2 * at["step_ms"]
