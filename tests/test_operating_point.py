"""The engine scheduler at an offered load (planner/performance/load.py): worked values, fixed point, SLO capacity,
and the same numbers from ``planner predict --requests-per-s`` and the candidate table."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from planner import performance as perf
from planner.candidates import build_candidates
from planner.catalog.loader import Catalog
from planner.errors import InputError
from planner.performance.load import capacity_at_slo, serve_at_load
from planner.performance.mixed_step import mixed_step
from planner.scenario import load_scenario, parse_scenario


def _terms(catalog: Catalog, *, tp: int = 4, engine: str = "vllm") -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model("llama_3_3_70b"), gpu=catalog.gpu("h100_sxm"),
        weight_format=catalog.format("bf16"), kv_format=catalog.format("bf16"), tp=tp, engine=engine,
    )


def test_mixed_step_is_the_decode_step_and_the_prefill_at_its_ends(catalog: Catalog) -> None:
    t = _terms(catalog)
    decode = perf.decode_step(t, batch=24.0, context_tokens=1100.0).total_s
    assert mixed_step(t, decode_batch=24.0, decode_context_tokens=1100.0, prefill_tokens=0.0,
                      prompt_tokens=1000.0) == pytest.approx(float(decode), rel=1e-12)
    prefill = perf.prefill_step(t, prompt_tokens=2048.0).total_s
    assert mixed_step(t, decode_batch=0.0, decode_context_tokens=2048.0, prefill_tokens=2048.0,
                      prompt_tokens=2048.0) == pytest.approx(float(prefill), rel=1e-12)


def test_batched_prefill_reads_the_weights_once(catalog: Catalog) -> None:
    """Four 256-token prompts in one chunk cost less than four separate prefills (one weight pass, one host step)."""
    t = _terms(catalog)
    one = float(perf.prefill_step(t, prompt_tokens=256.0).total_s)
    four = float(mixed_step(t, decode_batch=0.0, decode_context_tokens=256.0, prefill_tokens=1024.0,
                            prompt_tokens=256.0))
    assert four < 4 * one
    # the saving is at least three weight reads and three host steps
    weights = float(perf.prefill_step(t, prompt_tokens=256.0).weights_read_s)
    assert 4 * one - four > 3 * weights


def test_steady_state_is_the_fixed_point_of_littles_law(catalog: Catalog) -> None:
    t = _terms(catalog)
    lam, p_tok, g_tok = 3.0, 1000.0, 200.0
    pt = serve_at_load(t, requests_per_s=lam, input_tokens=p_tok, output_tokens=g_tok, max_batch=256.0)
    assert bool(pt.stable)
    assert float(pt.running_batch) == pytest.approx(lam * g_tok * float(pt.step_s), rel=1e-12)
    assert float(pt.prefill_tokens_per_step) == pytest.approx(lam * p_tok * float(pt.step_s), rel=1e-12)
    again = mixed_step(t, decode_batch=pt.running_batch, decode_context_tokens=p_tok + g_tok / 2,
                       prefill_tokens=pt.prefill_tokens_per_step, prompt_tokens=p_tok)
    assert float(again) == pytest.approx(float(pt.step_s), rel=1e-6)
    # a request's own steps hold it and the B others it finds (load.own_step_s)
    own = mixed_step(t, decode_batch=float(pt.running_batch) + 1.0, decode_context_tokens=p_tok + g_tok / 2,
                     prefill_tokens=pt.prefill_tokens_per_step, prompt_tokens=p_tok)
    assert float(pt.tpot_s) == pytest.approx(float(own), rel=1e-12)
    assert float(pt.tpot_s) > float(pt.step_s)
    assert float(pt.output_tokens_per_s) == pytest.approx(lam * g_tok)
    # TTFT = M/D/1 wait + k chunk steps + half a step + network, k = ceil(P / (C − B)) = 1 here; the budget's
    # use ρ = λ·P·T_full / (C − B), T_full the step with a full budget of prompt tokens (load.budget_use)
    chunk = 8192.0 - float(pt.running_batch)
    full = mixed_step(t, decode_batch=pt.running_batch, decode_context_tokens=p_tok + g_tok / 2,
                      prefill_tokens=chunk, prompt_tokens=p_tok)
    rho = lam * p_tok * float(full) / chunk
    assert float(pt.prefill_utilization_frac) == pytest.approx(rho, rel=1e-9)
    assert rho > float(pt.prefill_tokens_per_step) / chunk  # full-budget steps last longer than the mean step
    service = float(pt.chunk_step_s)
    wait = rho * service / (2 * (1 - rho))
    assert float(pt.chunk_steps) == 1.0
    busy = 1.0 - math.exp(-(float(pt.running_batch) + lam * service))
    assert float(pt.ttft_s) == pytest.approx(wait + service + busy * float(pt.step_s) / 2, rel=1e-12)


def test_lone_request_sees_the_bare_steps(catalog: Catalog) -> None:
    t = _terms(catalog)
    pt = serve_at_load(t, requests_per_s=1e-9, input_tokens=1000.0, output_tokens=200.0, max_batch=256.0,
                       network_s=0.05)
    decode0 = mixed_step(t, decode_batch=0.0, decode_context_tokens=1100.0, prefill_tokens=0.0,
                         prompt_tokens=1000.0)
    lone = mixed_step(t, decode_batch=1.0, decode_context_tokens=1100.0, prefill_tokens=0.0,
                      prompt_tokens=1000.0)
    prefill = float(perf.prefill_step(t, prompt_tokens=1000.0).total_s)
    assert float(pt.step_s) == pytest.approx(float(decode0), rel=1e-6)  # the engine is empty almost always
    assert float(pt.tpot_s) == pytest.approx(float(lone), rel=1e-6)  # but a decoding request is in its steps
    assert float(lone) > float(decode0)
    # a lone request finds the engine idle (P(busy) = 1 − e^(−N) → 0): no step in flight to wait for
    assert float(pt.ttft_s) == pytest.approx(prefill + 0.05, rel=1e-6)


def test_long_prompts_span_chunk_steps(catalog: Catalog) -> None:
    """A 20k-token prompt under vLLM eager's 2048-token budget takes ⌈20000/2048⌉ = 10 chunk steps."""
    t = _terms(catalog, engine="vllm_eager")
    pt = serve_at_load(t, requests_per_s=1e-9, input_tokens=20000.0, output_tokens=100.0, max_batch=64.0)
    assert float(pt.chunk_steps) == 10.0


def test_tpot_and_ttft_grow_with_load_until_saturation(catalog: Catalog) -> None:
    t = _terms(catalog)
    lam = np.linspace(0.05, 12.0, 60)
    pt = serve_at_load(t, requests_per_s=lam, input_tokens=1000.0, output_tokens=200.0, max_batch=256.0)
    stable = np.asarray(pt.stable)
    assert stable[0] and not stable[-1]
    # stable loads form one interval starting at 0
    assert stable.tolist() == sorted(stable.tolist(), reverse=True)
    assert np.all(np.diff(pt.tpot_s[stable]) > 0)
    assert np.all(np.diff(pt.ttft_s[stable]) > 0)


def test_capacity_at_slo_is_the_largest_load_meeting_both_slos(catalog: Catalog) -> None:
    t = _terms(catalog)
    kw = dict(input_tokens=1000.0, output_tokens=200.0, max_batch=256.0, network_s=0.05)
    cap = float(capacity_at_slo(t, slo_ttft_s=2.0, slo_tpot_s=0.05, **kw))
    assert cap > 0
    at = serve_at_load(t, requests_per_s=cap, **kw)
    above = serve_at_load(t, requests_per_s=cap * 1.001, **kw)
    assert bool(at.stable) and float(at.tpot_s) <= 0.05 and float(at.ttft_s) <= 2.0
    assert not (bool(above.stable) and float(above.tpot_s) <= 0.05 and float(above.ttft_s) <= 2.0)
    # an SLO below the lone-request TPOT leaves no capacity
    assert float(capacity_at_slo(t, slo_ttft_s=2.0, slo_tpot_s=0.001, **kw)) == 0.0


def test_eager_engine_pays_launches_per_layer_and_per_collective(catalog: Catalog) -> None:
    """70B TP8 batch 1: eager vLLM adds 1.6 ms step + 80 × 60 µs launches + 160 × 4.1 µs collective start-up."""
    graphs = perf.decode_step(_terms(catalog, tp=8), batch=1.0, context_tokens=1000.0)
    eager = perf.decode_step(_terms(catalog, tp=8, engine="vllm_eager"), batch=1.0, context_tokens=1000.0)
    host_gap = (3.0 - 1.4) * 1e-3 + 80 * 60e-6 + (20 - 10) * 1e-6
    collective_gap = 160 * (8.5 - 4.4) * 1e-6
    assert float(eager.total_s - graphs.total_s) == pytest.approx(host_gap + collective_gap, rel=1e-9)


@pytest.mark.parametrize(("engine", "percentiles"), [("vllm", None), ("vllm_v0", None), ("vllm", (99, 90))])
def test_predict_at_load_returns_the_plans_numbers(
    catalog: Catalog, engine: str, percentiles: tuple[int, int] | None
) -> None:
    """The candidate table's operating point and ``planner predict --requests-per-s --site`` agree for one
    deployment, with a chunked-prefill engine, with a prefill-first one (vllm_v0,
    planner/performance/prefill_first.py), and with SLOs stated at p99 TTFT / p90 TPOT (``--ttft-percentile``,
    ``--tpot-percentile``: the plan reports the tails its SLOs are stated at)."""
    data = yaml.safe_load(Path("examples/chat_70b_cloud/scenario.yaml").read_text())
    for w in data["workloads"]:
        w["engine"] = engine
        if percentiles is not None:
            w["slo"].update(ttft_percentile=percentiles[0], tpot_percentile=percentiles[1])
    scenario = parse_scenario(data)
    table = build_candidates(catalog, scenario)
    feasible = table.feasible.iloc[0]
    point = table.points[table.points["cand"] == feasible["cand"]].iloc[-1]
    w = scenario.workloads[0]
    request = perf.PredictRequest(
        model=str(feasible["model"]), gpu=str(feasible["gpu"]), tp=int(feasible["tp"]), pp=int(feasible["pp"]),
        quant=str(feasible["quantization"]), kv_dtype=str(feasible["kv_dtype"]), input_tokens=w.input_tokens,
        output_tokens=w.output_tokens, workspace_gib=scenario.workspace_gib, engine=str(feasible["engine"]),
        requests_per_s=float(point["capacity_requests_per_s"]), site=str(feasible["site"]),
        ttft_percentile=w.slo.ttft_percentile, tpot_percentile=w.slo.tpot_percentile,
    )
    assert feasible["engine"] == engine
    at = perf.predict(catalog, request).to_json()["at_load"]
    assert at is not None and at["stable"]
    # the printed TTFT parts add up: queue wait + prefill (chunks, or one pass) + the scheduler's admission wait
    # + the site's RTT and prompt upload (--site; the candidate's network_ms)
    parts = at["queue_wait_ms"] + at["prefill_chunks_ms"] + at["scheduler_wait_ms"] + at["network_ms"]
    if percentiles is None:
        assert at["ttft_ms"] == pytest.approx(parts, rel=1e-9)
    else:  # the p99 tail is above the mean the parts add up to
        assert at["ttft_ms"] > parts * 1.05
    assert at["network_ms"] == pytest.approx(float(feasible["network_ms"]), rel=1e-12) and at["network_ms"] > 10
    assert at["tpot_ms"] == pytest.approx(float(point["tpot_ms"]), rel=1e-9)
    assert at["ttft_ms"] == pytest.approx(float(point["ttft_ms"]), rel=1e-9)
    # without --site: no network time
    bare = perf.predict(catalog, dataclasses.replace(request, site=None)).to_json()["at_load"]
    assert bare["network_ms"] == 0.0 and bare["ttft_ms"] == pytest.approx(at["ttft_ms"] - at["network_ms"], rel=1e-9)
    if percentiles is not None:  # the means, as predict gives them without the options, are below the tails
        means = perf.predict(
            catalog, dataclasses.replace(request, ttft_percentile=None, tpot_percentile=None)
        ).to_json()["at_load"]
        assert means["ttft_ms"] < at["ttft_ms"] and means["tpot_ms"] < at["tpot_ms"]


def test_predict_at_load_returns_an_optimized_deployments_numbers(catalog: Catalog) -> None:
    """A plan's prefix-cached deployment (rag_prefix_cache: 7 x H100 TP2 at 1.71 req/s each, 80 % of requests
    hit a 6,144-token prefix) and ``planner predict --requests-per-s --site --prefix-hit-frac --prefix-tokens``
    give the same TTFT, TPOT and decode step: one computation (the variant's optimizations, serve_at_load)."""
    from planner.plan import plan
    from planner.readout.optimizations import is_on

    scenario = load_scenario("examples/rag_prefix_cache/scenario.yaml", catalog)
    w = scenario.workloads[0]
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert deployments
    for d in deployments:
        assert is_on(d.optimizations, "prefix_cache") and not is_on(d.optimizations, "speculative")
        request = perf.PredictRequest(
            model=d.model, gpu=d.gpu, tp=d.tp, pp=d.pp, quant=d.quantization, kv_dtype=d.kv_dtype,
            input_tokens=w.input_tokens, output_tokens=w.output_tokens, engine=d.engine,
            requests_per_s=d.served_per_replica_requests_per_s, site=d.site, prefix_cache=w.prefix_cache,
        )
        at = perf.predict(catalog, request).to_json()["at_load"]
        assert at["cached_prompt_tokens"] == pytest.approx(0.8 * 6144, rel=1e-12)
        for key in ("ttft_ms", "tpot_ms", "decode_step_ms"):
            assert at[key] == pytest.approx(getattr(d, key), rel=1e-9), key
        plain = perf.predict(catalog, dataclasses.replace(request, prefix_cache=None)).to_json()["at_load"]
        # the cached prefix is not prefilled again: without the cache the same load is much slower, or overloads
        assert plain["stable"] is False or plain["ttft_ms"] > 1.5 * at["ttft_ms"]


def test_predict_at_load_holds_the_batch_limit(catalog: Catalog) -> None:
    """TensorRT-LLM runs up to 2,048 sequences, but a replica is planned at max_batch (256 by default) at most;
    ``--max-batch`` sets it, as a scenario's max_batch does: at 6 req/s the replica runs 96 sequences, within
    256 but not within 64."""
    base = perf.PredictRequest(
        model="llama_3_1_8b", gpu="h200_sxm", quant="fp8", engine="trtllm", input_tokens=200, output_tokens=2000,
        requests_per_s=6.0,
    )
    at = perf.predict(catalog, base).to_json()["at_load"]
    assert at["batch_limit"] == 256.0 and at["stable"] and 64 < at["running_batch"] < 256
    small = perf.predict(catalog, dataclasses.replace(base, batch_limit=64)).to_json()["at_load"]
    assert small["batch_limit"] == 64.0 and not small["stable"]


def test_predict_at_load_returns_a_disaggregated_pairs_numbers(catalog: Catalog) -> None:
    """chat_70b_cloud at 32 req/s: 4 MI300X TP1 prefill replicas and 1 TP2 decode replica beside co-located
    ones. ``planner predict --role prefill|decode --requests-per-s --site`` gives each pool's figures as the plan
    reports them: the prefill replica's TTFT with the KV handoff and the network, the decode replica's TPOT
    and decode step with no prompt in its steps."""
    from planner.plan import plan

    data = yaml.safe_load(Path("examples/chat_70b_cloud/scenario.yaml").read_text())
    data["workloads"][0]["requests_per_s"] = 32
    scenario = parse_scenario(data)
    w = scenario.workloads[0]
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert {d.role for d in deployments} == {"colocated", "decode", "prefill"}
    for d in deployments:
        request = perf.PredictRequest(
            model=d.model, gpu=d.gpu, tp=d.tp, pp=d.pp, quant=d.quantization, kv_dtype=d.kv_dtype,
            input_tokens=w.input_tokens, output_tokens=w.output_tokens, engine=d.engine, role=d.role,
            requests_per_s=d.served_per_replica_requests_per_s, site=d.site,
        )
        at = perf.predict(catalog, request).to_json()["at_load"]
        checked = {"colocated": ("ttft_ms", "tpot_ms", "decode_step_ms"), "prefill": ("ttft_ms",),
                   "decode": ("tpot_ms", "decode_step_ms")}[d.role]
        for key in checked:
            assert at[key] == pytest.approx(getattr(d, key), rel=1e-9), (d.role, key)
        assert (at["handoff_ms"] > 0) == (d.role == "prefill")
        # a pool reports its own half only, None (JSON null) for the other, as the plan's pools do
        for key in {"colocated": (), "prefill": ("tpot_ms", "decode_step_ms"), "decode": ("ttft_ms",)}[d.role]:
            assert at[key] is None and getattr(d, key) is None, (d.role, key)
    with pytest.raises(InputError, match="--ttft-percentile: a plan's decode pools"):
        perf.predict(catalog, dataclasses.replace(request, role="decode", ttft_percentile=99))
    with pytest.raises(InputError, match="--role: must be one of colocated, prefill, decode"):
        perf.predict(catalog, dataclasses.replace(request, role="pool"))


@pytest.mark.parametrize("role", ["colocated", "prefill", "decode"])
def test_predict_names_the_load_a_replica_saturates_at(catalog: Catalog, role: str) -> None:
    """``saturation_requests_per_s`` is the most a replica sustains with no SLO: 1 % below it the scheduler
    is stable, 1 % above it is not (the figures at load then grow without bound)."""
    base = perf.PredictRequest(model="qwen3_8b", gpu="h100_sxm", role=role, requests_per_s=1.0)
    top = perf.predict(catalog, base).to_json()["at_load"]["saturation_requests_per_s"]
    assert top > 1.0
    below = perf.predict(catalog, dataclasses.replace(base, requests_per_s=0.99 * top)).to_json()["at_load"]
    above = perf.predict(catalog, dataclasses.replace(base, requests_per_s=1.01 * top)).to_json()["at_load"]
    assert below["stable"] and not above["stable"]
    assert below["saturation_requests_per_s"] == above["saturation_requests_per_s"] == top


def test_predict_takes_a_scenarios_stated_efficiencies(catalog: Catalog) -> None:
    """pd_card8 states MFU = MBU = 0.5 for both GPUs (hardware.efficiency): with ``--prefill-mfu-frac 0.5
    --decode-mbu-frac 0.5`` predict gives its A100 prefill and H20 decode replicas' figures as the plan reports
    them; without them it does not."""
    from planner.plan import plan

    scenario = load_scenario("examples/pd_card8/scenario.yaml", catalog)
    w = scenario.workloads[0]
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert sorted(d.role for d in deployments) == ["decode", "prefill"]
    for d in deployments:
        request = perf.PredictRequest(
            model=d.model, gpu=d.gpu, tp=d.tp, pp=d.pp, quant=d.quantization, kv_dtype=d.kv_dtype,
            input_tokens=w.input_tokens, output_tokens=w.output_tokens, engine=d.engine, role=d.role,
            requests_per_s=d.served_per_replica_requests_per_s, site=d.site, prefill_mfu_frac=0.5,
            decode_mbu_frac=0.5,
        )
        key = "ttft_ms" if d.role == "prefill" else "tpot_ms"
        at = perf.predict(catalog, request).to_json()["at_load"]
        assert at[key] == pytest.approx(getattr(d, key), rel=1e-9)
        catalogs = perf.predict(
            catalog, dataclasses.replace(request, prefill_mfu_frac=None, decode_mbu_frac=None)
        ).to_json()["at_load"]
        assert catalogs[key] < 0.95 * at[key]  # the catalog's efficiencies are above the book's 0.5
    with pytest.raises(InputError, match="--prefill-mfu-frac: --ideal"):
        perf.predict(catalog, dataclasses.replace(request, ideal=True))
    with pytest.raises(InputError, match=r"--prefill-mfu-frac: must be in \[0.01, 1\]"):
        perf.predict(catalog, dataclasses.replace(request, prefill_mfu_frac=0.0))
