"""Expert parallelism and the MoE terms (planner/performance/moe.py): worked examples, monotonicity, layouts."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from planner import performance as perf
from planner.candidates import build_candidates
from planner.catalog.loader import Catalog
from planner.cli.main import app
from planner.performance import moe
from planner.performance.load import capacity_at_slo
from planner.performance.mixed_step import mixed_step
from planner.scenario import load_scenario
from planner.units import BYTES_PER_GIB

MOE_MODELS = ("qwen3_235b_a22b", "deepseek_v3", "mixtral_8x22b", "llama_4_maverick")


def _terms(catalog: Catalog, model: str = "qwen3_235b_a22b", *, tp: int = 1, ep: int = 1, ideal: bool = False,
           gpu: str = "h200_sxm", pp: int = 1) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.models[model], gpu=catalog.accelerators[gpu], weight_format=catalog.formats["fp8"],
        kv_format=catalog.formats["fp8"], tp=tp, pp=pp, ep=ep, ideal=ideal,
    )


def test_imbalance_worked_example() -> None:
    """512 tokens × top-8 over EP8: μ = 512 per rank, λ = 1 + c_8·sqrt((7/8)/512) = 1.058851, c_8 = 1.423600
    (the expected maximum of 8 standard normals; tables give 1.42360)."""
    assert float(moe.max_normal_constant(8)) == pytest.approx(1.423600, abs=1e-6)
    assert float(moe.max_normal_constant(2)) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-9)
    assert float(moe.imbalance_factor(8, 512 * 8)) == pytest.approx(1 + 1.4236003 * math.sqrt(0.875 / 512))
    assert float(moe.imbalance_factor(8, 512 * 8)) == pytest.approx(1.058851, abs=1e-6)
    assert float(moe.imbalance_factor(1, 3.0)) == 1.0
    assert float(moe.imbalance_factor(8, 1e-6)) == 8.0  # capped: everything on one rank


def test_expert_weights_and_union_worked_example(catalog: Catalog) -> None:
    """Qwen3-235B FP8: one expert 3·4096·1536 = 18,874,368 B, 94·128 of them = 227,096,395,776 B.

    TP8: every GPU holds W/8; TP1·EP8: (W − X) + X/8. A 16-token step touches U = 128·(1 − (15/16)^16) =
    82.4225 experts per layer; with EP8 the busiest rank touches u + c_8·sqrt(u·(1 − U/128)) = 10.3028 +
    1.4236·sqrt(10.3028·0.35607) = 10.3028 + 2.7267 = 13.0295 of its 16 (u = U/8).
    """
    t8 = _terms(catalog, tp=8)
    e8 = _terms(catalog, tp=1, ep=8)
    experts = 94 * 128 * 18_874_368
    assert float(t8.expert_bytes) == 18_874_368
    assert float(moe.experts_bytes(e8)) == experts == 227_096_395_776
    w = float(t8.weights_bytes)
    assert float(perf.weights_bytes_per_gpu(t8)) == pytest.approx(w / 8)
    assert float(perf.weights_bytes_per_gpu(e8)) == pytest.approx(w - experts + experts / 8)
    union = 128 * (1 - (15 / 16) ** 16)
    assert float(moe.touched_experts(e8, 16.0)) == pytest.approx(union) == pytest.approx(82.4225, abs=1e-4)
    u = union / 8
    busiest = u + 1.4236003 * math.sqrt(u * (1 - union / 128))
    assert busiest == pytest.approx(13.0295, abs=1e-4)
    assert float(moe.weights_read_bytes(e8, 16.0)) == pytest.approx(
        float(e8.weights_read_fixed_bytes) * 8 + 94 * 8 * busiest * 18_874_368
    )
    # without EP the union is read as before: fixed + L·U·M_e
    assert float(moe.weights_read_bytes(t8, 16.0)) == pytest.approx(
        float(t8.weights_read_fixed_bytes) + 94 * union * 18_874_368
    )


def test_all_to_all_worked_example(catalog: Catalog) -> None:
    """EP8 on H200 NVLink, 256 tokens, ideal link: each GPU sends 32 tokens × 8 × 4096 × 2 B × 7/8 = 1,835,008 B.

    Per collective τ_e + 7·α + bytes/B; two per MoE layer, 94 layers.
    """
    t = _terms(catalog, tp=1, ep=8, ideal=True)
    t = replace(t, collective_launch_us=4.4)
    link = catalog.interconnect(catalog.accelerators["h200_sxm"].scale_up)  # type: ignore[arg-type]
    payload = 32 * 8 * 4096 * 2 * 7 / 8
    assert payload == 1_835_008
    one = 4.4e-6 + 7 * link.latency_us * 1e-6 + payload / (link.gb_per_s_per_direction * 1e9)
    assert float(moe.all_to_all_s(t, 256.0)) == pytest.approx(2 * 94 * one)
    assert float(moe.all_to_all_s(_terms(catalog, tp=8, ideal=True), 256.0)) == 0.0


def test_expert_gemm_efficiency_on_the_saturation_curve(catalog: Catalog) -> None:
    """η_e(m) = η_max·m/(m + m_half): rows per touched expert m = n·k/U(n) ≥ 1, m_half ≤ the family's n_half."""
    t = _terms(catalog, tp=8)
    eta = float(t.efficiency.prefill_mfu_frac)
    half = float(moe.expert_half_rows(t, eta))
    assert 0 < half <= float(t.efficiency.prefill_half_tokens)
    m = 8192 * 8 / float(moe.touched_experts(t, 8192.0))
    assert m == pytest.approx(512.0, rel=1e-6)  # all 128 experts touched: B·k/E
    assert float(moe.expert_gemm_efficiency_frac(t, 8192.0, eta)) == pytest.approx(eta * m / (m + half))
    effs = [float(moe.expert_gemm_efficiency_frac(t, n, eta)) for n in (1.0, 16.0, 256.0, 4096.0, 65536.0)]
    assert effs == sorted(effs) and effs[-1] < eta
    assert float(moe.rows_per_expert(t, 1.0)) == pytest.approx(1.0)
    # dense models have no expert GEMMs
    dense = perf.deployment_terms(
        catalog, model=catalog.models["llama_3_1_70b"], gpu=catalog.accelerators["h200_sxm"],
        weight_format=catalog.formats["fp8"], kv_format=catalog.formats["fp8"], tp=8,
    )
    assert float(moe.expert_gemm_s(dense, 512.0, peak_flop_per_s=1e15, eta_max=0.6)) == 0.0


@pytest.mark.parametrize("model", MOE_MODELS)
def test_more_ep_never_adds_expert_weights_per_gpu(catalog: Catalog, model: str) -> None:
    """At a fixed attention TP, expert bytes per GPU fall as EP grows (X/(t·e)); over the same GPUs they are equal."""
    experts = catalog.models[model].moe.experts_routed  # type: ignore[union-attr]
    eps = [e for e in (1, 2, 4, 8) if experts % e == 0]
    per_gpu = [float(moe.experts_bytes(t) / (t.tp * t.pp)) for t in (_terms(catalog, model, tp=1, ep=e) for e in eps)]
    assert all(b < a for a, b in zip(per_gpu, per_gpu[1:], strict=False))
    same_gpus = [float(moe.experts_bytes(t) / (t.tp * t.pp))
                 for t in (_terms(catalog, model, tp=8 // e, ep=e) for e in eps)]
    assert max(same_gpus) == pytest.approx(min(same_gpus))


def test_imbalance_is_monotone() -> None:
    """λ grows with EP, shrinks with tokens, stays in [1, e]."""
    for tokens in (8.0, 64.0, 512.0, 8192.0):
        lams = [float(moe.imbalance_factor(e, tokens)) for e in (1, 2, 4, 8, 16, 32)]
        assert lams == sorted(lams) and lams[0] == 1.0
        assert all(1.0 <= lam <= e for lam, e in zip(lams, (1, 2, 4, 8, 16, 32), strict=True))
    for e in (2, 8, 64):
        lams = [float(moe.imbalance_factor(e, n)) for n in (1.0, 10.0, 100.0, 1e4)]
        assert lams == sorted(lams, reverse=True)


@pytest.mark.parametrize("model", MOE_MODELS)
def test_more_bandwidth_is_never_slower_with_ep(catalog: Catalog, model: str) -> None:
    """Faster links or memory never slow an EP decode, prefill or mixed step."""
    base = _terms(catalog, model, tp=1, ep=8)
    for factor in (1.5, 2.0, 4.0):
        faster = replace(base, ep_link_gb_per_s=base.ep_link_gb_per_s * factor,
                         bandwidth_gb_per_s=base.bandwidth_gb_per_s * factor)
        for batch in (1.0, 32.0, 512.0):
            slow = float(perf.decode_step(base, batch=batch, context_tokens=1500.0).total_s)
            fast = float(perf.decode_step(faster, batch=batch, context_tokens=1500.0).total_s)
            assert fast <= slow
            mixed = dict(decode_batch=batch, decode_context_tokens=1500.0, prefill_tokens=256.0, prompt_tokens=1000.0)
            assert float(mixed_step(faster, **mixed)) <= float(mixed_step(base, **mixed))  # type: ignore[arg-type]
        assert float(moe.all_to_all_s(faster, 512.0)) < float(moe.all_to_all_s(base, 512.0))
        assert float(perf.prefill_step(faster, prompt_tokens=2000.0).total_s) <= float(
            perf.prefill_step(base, prompt_tokens=2000.0).total_s
        )


@pytest.mark.parametrize("model", MOE_MODELS)
def test_ep_beats_tp_on_eight_h200(catalog: Catalog, model: str) -> None:
    """8 × H200 FP8, 512 running sequences at 1,500 tokens of history: some EP layout (attention DP = EP) runs a
    shorter decode step than TP8 over the same GPUs.

    Where it comes from: no TP all-reduces of the full batch (two all-to-alls of 1/8 of it instead), KV not
    replicated across TP ranks (Qwen3 has 4 KV heads, DeepSeek's MLA 1 latent), host work split over DP ranks.
    """
    def step_s(tp: int, ep: int) -> float:
        return float(perf.decode_step(_terms(catalog, model, tp=tp, ep=ep), batch=512.0, context_tokens=1500.0).total_s)

    assert min(step_s(8 // e, e) for e in (2, 4, 8)) < 0.98 * step_s(8, 1)


def test_ep_serves_more_qwen3_on_eight_h200_within_the_slo(catalog: Catalog) -> None:
    """Qwen3-235B-A22B FP8 on 8 × H200, 1000/1000 tokens, TPOT ≤ 100 ms: TP1·DP8·EP8 sustains more req/s than TP8
    (the layout AIConfigurator picks for this case, issue 13)."""
    def capacity(tp: int, ep: int) -> float:
        t = _terms(catalog, tp=tp, ep=ep)
        limit = min(float(perf.max_batch(t, context_tokens=2000.0, workspace_bytes=2 * BYTES_PER_GIB)), 1024.0)
        return float(capacity_at_slo(t, input_tokens=1000.0, output_tokens=1000.0, max_batch=limit, network_s=0.0,
                                     slo_ttft_s=5.0, slo_tpot_s=0.1))

    assert capacity(1, 8) > 1.1 * capacity(8, 1) > 0


def test_dense_models_never_get_ep(catalog: Catalog) -> None:
    """Dense models: EP 1 only (layouts, deployment terms, candidate table); MoE: EP divides E and t·e is a TP width."""
    assert moe.moe_layouts(catalog.models["llama_3_1_70b"], [1, 2, 4, 8]) == [(1, 1), (2, 1), (4, 1), (8, 1)]
    with pytest.raises(perf.UnsupportedDeployment, match="dense"):
        perf.deployment_terms(
            catalog, model=catalog.models["llama_3_1_70b"], gpu=catalog.accelerators["h200_sxm"],
            weight_format=catalog.formats["fp8"], kv_format=catalog.formats["fp8"], tp=1, ep=2,
        )
    with pytest.raises(perf.UnsupportedDeployment, match="divide"):
        _terms(catalog, "mixtral_8x22b", tp=1, ep=16)
    assert moe.moe_layouts(catalog.models["mixtral_8x22b"], [1, 2, 4, 8]) == [
        (1, 1), (1, 2), (1, 4), (1, 8), (2, 1), (2, 2), (2, 4), (4, 1), (4, 2), (8, 1)
    ]
    # hardware.ep limits the EP degrees > 1; [1] is tensor parallelism only
    assert moe.moe_layouts(catalog.models["mixtral_8x22b"], [1, 2, 4, 8], [4]) == [
        (1, 1), (1, 4), (2, 1), (2, 4), (4, 1), (8, 1)
    ]
    assert {e for _, e in moe.moe_layouts(catalog.models["deepseek_v3"], [1, 2, 4, 8], [1])} == {1}
    dense = load_scenario("examples/assistant_8b_edge/scenario.yaml", catalog)
    table = build_candidates(catalog, dense)
    assert set(table.candidates["ep"]) == {1}


def test_moe_plan_picks_ep_and_reports_it(catalog: Catalog, tmp_path: Path) -> None:
    """A Qwen3-235B workload on rented H200 with 8-GPU stages (TP8 or TP1·EP8; TP1 alone does not fit) plans
    the EP layout (12.3 vs 9.9 req/s per replica); the JSON deployment carries ``ep`` and its GPUs. (With
    every width allowed, 2-GPU TP2 instances serve the most per GPU at this SLO.)"""
    from planner.plan import plan

    doc = {
        "name": "moe-qwen", "horizon_months": 1, "objective": "min_cost",
        "workloads": [{
            "name": "chat", "models": ["qwen3_235b_a22b"], "quantizations": ["fp8"], "kv_dtypes": ["fp8"],
            "requests_per_s": 40, "input_tokens": 1000, "output_tokens": 1000,
            "slo": {"ttft_ms": 5000, "tpot_ms": 100}, "sites": ["us_east"],
        }],
        "hardware": {"gpus": ["h200_sxm"], "tp": [1, 8], "pp": [1]},
        "procurement": ["rent"],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = plan(catalog, load_scenario(path, catalog), with_alternatives=False)
    deps = result.to_json()["deployments"]
    # per-card instances may serve a remainder without EP; the bulk of the traffic runs on an EP layout
    ep_served = sum(d["served_requests_per_s"] for d in deps if d["ep"] > 1)
    assert deps and ep_served > 0.5 * sum(d["served_requests_per_s"] for d in deps)
    assert all(d["gpus"] == d["replicas"] * d["tp"] * d["ep"] * d["pp"] for d in deps)


def test_moe_example_ep_never_costs_more_than_tp_only(catalog: Catalog) -> None:
    """examples/moe_ep: allowing EP (default) is never dearer than ``hardware.ep: [1]``; DeepSeek-V3 needs
    fewer GPUs on EP (6 × TP2·EP4 = 48) than tensor-parallel (7 × TP8 = 56), so the plan is strictly cheaper."""
    from planner.plan import plan

    scenario = load_scenario("examples/moe_ep/scenario.yaml", catalog)
    tp_only = scenario.model_copy(update={"hardware": scenario.hardware.model_copy(update={"ep": [1]})})
    with_ep, without = (plan(catalog, s, with_alternatives=False).to_json() for s in (scenario, tp_only))
    assert all(d["ep"] == 1 for d in without["deployments"])
    assert with_ep["total_cost_usd"] < without["total_cost_usd"]

    def gpus(result: dict[str, Any], workload: str) -> int:
        return sum(d["gpus"] for d in result["deployments"] if d["workload"] == workload)

    deepseek = [d for d in with_ep["deployments"] if d["workload"] == "deepseek_chat"]
    assert all(d["ep"] > 1 for d in deepseek)
    assert gpus(with_ep, "deepseek_chat") < gpus(without, "deepseek_chat")


def test_predict_cli_takes_ep() -> None:
    """``planner predict --ep 8`` runs 8 GPUs; a dense model with --ep 2 is refused with one line."""
    runner = CliRunner()
    args = ["predict", "--model", "qwen3_235b_a22b", "--gpu", "h200_sxm", "--quant", "fp8", "--kv-dtype", "fp8",
            "--batch", "64", "--ep", "8", "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ep"] == 8 and data["gpus"] == 8 and data["tp"] == 1
    terms = data["breakdown"]["moe"]
    assert terms["ep"] == 8 and terms["rows_per_touched_expert"] == pytest.approx(64 * 8 / terms["experts_touched_per_layer"])
    assert terms["load_imbalance"] == pytest.approx(1 + 1.4236003 * math.sqrt(0.875 / 64))
    assert terms["all_to_all_ms"] > 0
    bad = runner.invoke(app, ["predict", "--model", "llama_3_1_8b", "--gpu", "h200_sxm", "--ep", "2"])
    assert bad.exit_code in (2, 3) and "dense" in bad.output
