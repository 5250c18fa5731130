"""Readout figures found wrong by hand: a deployment's ``limited_by`` (read at its capacity at the SLO, not at
the 90 % load it runs at) and the P:D summary of a group the optimizer left with a decode pool only."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from planner.catalog import Catalog
from planner.performance.load import serve_at_load
from planner.plan import plan
from planner.readout.pd import pd_summary
from planner.scenario import load_scenario, parse_scenario
from tests.plan.hand_scenarios import BASE

CHAT70 = Path(__file__).resolve().parents[2] / "examples" / "chat_70b_cloud" / "scenario.yaml"


def test_a_tpot_bound_replica_says_so(catalog: Catalog) -> None:
    """chat_70b_cloud (12 months): B200 FP8 TP1 and H100 INT4 TP1 replicas. Each one's capacity at the SLO is
    where its TPOT reaches 50 ms (B200: 7.454 req/s; 0.1 % above it TPOT is 53.5 ms, TTFT 273 ms, and the queue
    still drains up to 7.47 req/s: at batch 110-130 the B200's decode GEMMs near the ridge, so the step grows
    steeply with the batch), so the TPOT SLO limits it; at the 90 % it runs at TPOT is 19 ms, and the label read
    there said 'throughput_peak'."""
    from planner.audit import deployment_terms_and_optimizations
    from planner.candidates import network_s

    sc = load_scenario(CHAT70, catalog)
    result = plan(catalog, sc, with_alternatives=False)
    w = sc.workloads[0]
    assert result.deployments
    for d in result.deployments:
        terms, opt = deployment_terms_and_optimizations(catalog, sc, d)
        cap = d.capacity_at_slo_requests_per_s
        above = serve_at_load(
            terms, requests_per_s=cap * 1.001, input_tokens=float(w.input_tokens),
            output_tokens=float(w.output_tokens), max_batch=float(sc.max_batch),
            network_s=network_s(w, catalog.sites[d.site]), opt=opt,
        )  # fmt: skip
        assert bool(above.stable) and float(above.ttft_s) * 1e3 < w.slo.ttft_ms
        assert float(above.tpot_s) * 1e3 > w.slo.tpot_ms  # just above C the TPOT SLO is what fails
        assert d.limited_by == "tpot_slo", (d.gpu, d.quantization)


def test_a_saturated_replica_stays_throughput_peak(catalog: Catalog) -> None:
    """Qwen3-8B on an H100 at TTFT 1.5 s / TPOT 60 ms: its capacity is the engine's saturation (18.4 req/s,
    TPOT 11 ms at 10 req/s)."""
    result = plan(catalog, parse_scenario(copy.deepcopy(BASE), catalog=catalog), with_alternatives=False)
    assert [d.limited_by for d in result.deployments] == ["throughput_peak"]


def test_a_decode_pool_without_its_prefill_pool_is_listed_idle(catalog: Catalog) -> None:
    """chat_70b_cloud on MI300X only at 3 req/s: one 8-GPU node (the smallest MI300X rental) holds four INT4
    half-GPU replicas serving the 3 req/s and, at no extra cost, a TP2 FP8 decode pool with no prefill pool.
    The P:D summary raised IndexError on it (every `planner plan` output failed, exit 4); it now lists the
    group at 0 req/s, 0:2 GPUs."""
    data = yaml.safe_load(CHAT70.read_text())
    data.update(horizon_months=12, hardware={"gpus": ["mi300x"], "tp": [1, 2, 4, 8], "pp": [1, 2]})
    data["workloads"][0]["requests_per_s"] = 3
    sc = parse_scenario(data, catalog=catalog)
    result = plan(catalog, sc, with_alternatives=False)
    assert result.ledger is not None
    assert result.ledger.total_usd == pytest.approx(12 * 8 * 1.71 * 720)  # one tensorwave node, $1.71/GPU-h
    groups = pd_summary(result.deployments)
    idle = [g for g in groups if {d.role for d in result.deployments if d.pd_group == g.pd_group} == {"decode"}]
    for g in idle:  # one today; an optimizer that drops idle replicas leaves none (then the test below holds)
        assert g.served_requests_per_s == 0.0 and g.prefill_replicas == 0 and g.kv_link_load_frac == 0.0
        assert g.pd_ratio == f"0:{g.decode_gpus}" and g.decode_replicas > 0
    assert result.to_json()["disaggregation"] == [g.to_json() for g in groups]


def test_a_memory_bound_replica_says_memory(catalog: Catalog) -> None:
    """mixed_fleet's summarizer (Llama-3.1-8B FP8, 4,000-token prompts, H100 TP1): at its capacity at the SLO
    the running batch fills the KV cache's sequences while TTFT and TPOT stay well under their SLOs."""
    from planner.audit import deployment_terms_and_optimizations
    from planner.candidates import network_s
    from planner.performance.optimizations import optimized_max_batch
    from planner.units import BYTES_PER_GIB

    sc = load_scenario(CHAT70.parents[1] / "mixed_fleet" / "scenario.yaml", catalog)
    result = plan(catalog, sc, with_alternatives=False)
    (d,) = [x for x in result.deployments if x.workload == "summarize"]
    w = next(x for x in sc.workloads if x.name == "summarize")
    terms, opt = deployment_terms_and_optimizations(catalog, sc, d)
    context = float(w.input_tokens + w.output_tokens)
    fit = float(optimized_max_batch(terms, opt, context_tokens=context, workspace_bytes=sc.workspace_gib * BYTES_PER_GIB))
    assert fit < sc.max_batch
    at = serve_at_load(
        terms, requests_per_s=d.capacity_at_slo_requests_per_s, input_tokens=float(w.input_tokens),
        output_tokens=float(w.output_tokens), max_batch=fit, network_s=network_s(w, catalog.sites[d.site]), opt=opt,
    )  # fmt: skip
    assert float(at.running_batch) >= 0.97 * fit
    assert float(at.tpot_s) * 1e3 < 0.97 * w.slo.tpot_ms and float(at.ttft_s) * 1e3 < 0.97 * w.slo.ttft_ms
    assert d.limited_by == "memory"


def test_a_group_with_one_stage_only_serves_nothing(catalog: Catalog) -> None:
    """pd_card8's plan with its prefill pools taken out: the decode pools alone are listed at 0 req/s, their
    replicas and GPUs in the period they hold the most, and no KV link load."""
    import dataclasses

    card8 = CHAT70.parents[1] / "pd_card8" / "scenario.yaml"
    deployments = plan(catalog, load_scenario(card8, catalog), with_alternatives=False).deployments
    decode = [dataclasses.replace(d, replicas_per_period=[0, d.replicas, 0], served_requests_per_s_per_period=[0.0] * 3)
              for d in deployments if d.role == "decode"]  # fmt: skip
    assert decode
    (group,) = pd_summary(decode)
    assert (group.served_requests_per_s, group.prefill_replicas, group.prefill_gpus) == (0.0, 0, 0)
    assert group.decode_replicas == sum(d.replicas for d in decode)
    assert group.pd_ratio == f"0:{group.decode_gpus}" and group.kv_link_load_frac == 0.0
