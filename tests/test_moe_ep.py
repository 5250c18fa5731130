"""Expert parallelism inside the TP group (``ep_in_tp``), the load imbalance against a routing simulation, the
ML.ENERGY DeepSeek-V3.1 "EP8" rows, and the MoE terms of the plan JSON (planner/performance/moe.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.cli.main import app
from planner.performance import moe
from planner.scenario import load_scenario
from planner.validate.sources import build_cases

DEEPSEEK_EXPERT_BYTES = 3 * 7168 * 2048  # FP8, 1 B per parameter: gate, up and down of one routed expert


def _deepseek_b200(catalog: Catalog, *, tp: int, ep: int = 1, ep_in_tp: bool = False) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.models["deepseek_v3"], gpu=catalog.accelerators["b200"],
        weight_format=catalog.formats["fp8"], kv_format=catalog.formats["fp8"], tp=tp, ep=ep, ep_in_tp=ep_in_tp,
        engine="vllm",
    )


def _simulate(n: int, *, experts: int, k: int, groups: int, trials: int, seed: int = 7) -> tuple[float, float]:
    """Uniform top-k routing of n tokens (k distinct experts each) over ``groups`` groups of E/groups experts:
    the mean over trials of (busiest group's token-expert pairs / mean, busiest group's touched experts)."""
    rng = np.random.default_rng(seed)
    per = experts // groups
    tokens, touched = [], []
    for _ in range(trials):
        chosen = np.argpartition(rng.random((n, experts)), k, axis=1)[:, :k].ravel()
        counts = np.bincount(chosen, minlength=experts).reshape(groups, per)
        tokens.append(counts.sum(axis=1).max() / (n * k / groups))
        touched.append((counts > 0).sum(axis=1).max())
    return float(np.mean(tokens)), float(np.mean(touched))


@pytest.mark.parametrize(("n", "trials"), [(8, 400), (64, 300), (512, 60)])
def test_imbalance_matches_a_routing_simulation(n: int, trials: int) -> None:
    """DeepSeek-V3 routing (E = 256, k = 8) over 8 groups: λ = 1 + c_8·sqrt((7/8)/μ) is within 5 % of the simulated
    busiest group's token load, U_max = min(u + c_8·sqrt(u(1 − U/E)), 32) within 3 % of its touched experts
    (simulated 1.52/1.18/1.06 and 10.6/30.4/32 at n = 8/64/512; the former bound sqrt(2 ln 8) gave 1.67/1.24/1.08
    and 12.0/32/32)."""
    lam_sim, touched_sim = _simulate(n, experts=256, k=8, groups=8, trials=trials)
    spread = moe.imbalance_spread(8)
    union = 256 * (1 - (1 - 8 / 256) ** n)
    assert float(moe.imbalance_at(spread, n * 8)) == pytest.approx(lam_sim, rel=0.05)
    assert float(moe.busiest_touched(spread, union, 256)) == pytest.approx(touched_sim, rel=0.03)
    old_bound = 1 + math.sqrt(2 * math.log(8) * 0.875 / n)
    assert abs(float(moe.imbalance_at(spread, n * 8)) - lam_sim) < abs(old_bound - lam_sim)


def test_busiest_group_is_bounded_and_monotone() -> None:
    """U_max: U at e = 1, never above E/e, never below the mean U/e; more groups → no fewer experts per group
    over the mean; more tokens → more experts touched."""
    for union in (1.0, 8.0, 57.4, 200.0, 256.0):
        assert float(moe.busiest_touched(moe.imbalance_spread(1), union, 256)) == pytest.approx(union)
        for e in (2, 4, 8, 16, 32):
            busiest = float(moe.busiest_touched(moe.imbalance_spread(e), union, 256))
            assert union / e - 1e-12 <= busiest <= 256 / e + 1e-12
    unions = [256 * (1 - (1 - 8 / 256) ** n) for n in (1, 2, 8, 32, 128)]
    per_group = [float(moe.busiest_touched(moe.imbalance_spread(8), u, 256)) for u in unions]
    assert per_group == sorted(per_group)
    consts = [float(moe.max_normal_constant(e)) for e in (1, 2, 4, 8, 16, 64)]
    assert consts == sorted(consts) and consts[0] == 0.0
    assert all(c <= math.sqrt(2 * math.log(e)) for c, e in zip(consts[1:], (2, 4, 8, 16, 64), strict=True))


def test_ep_inside_tp_worked_decode_step(catalog: Catalog) -> None:
    """DeepSeek-V3.1 FP8 on 8 × B200, vLLM ``-tp 8 --enable-expert-parallel``, B = 8 (the ML.ENERGY max_num_seqs=8
    row), by hand:

    U(8) = 256·(1 − (31/32)^8) = 57.4208 experts touched per MoE layer; TP8 reads 1/8 of each: u = 7.1776 expert
    sizes per GPU. Inside TP each GPU holds 32 whole experts; the busiest touches U_max = u + c_8·sqrt(u·(1 −
    U/256)) = 7.1776 + 1.4236·sqrt(7.1776·0.77570) = 10.5367. Weights per GPU per step: 17,224,945,664/8 (non-
    expert, sharded 8 ways either way) + 58·U_max·44,040,192 = 29.067 GB (TP8: 20.487 GB) → 29.067 GB /
    (8,000 GB/s · 0.65) = 5.590 ms (TP8 3.940 ms). Same memory, KV (one MLA latent per GPU), all-reduces as TP8;
    no all-to-all (tokens are on every GPU).
    """
    inside = _deepseek_b200(catalog, tp=8, ep=8, ep_in_tp=True)
    tp8 = _deepseek_b200(catalog, tp=8)
    assert (inside.tp, inside.attention_dp, inside.expert_parallel, inside.kv_shards) == (8, 1, 8, 1)
    assert float(inside.expert_bytes) == DEEPSEEK_EXPERT_BYTES == 44_040_192
    assert float(inside.weights_read_fixed_bytes) == 17_224_945_664
    union = 256 * (1 - (31 / 32) ** 8)
    u = union / 8
    busiest = u + 1.4236003 * math.sqrt(u * (1 - union / 256))
    assert (union, u, busiest) == pytest.approx((57.4208, 7.1776, 10.5367), abs=1e-4)
    by_hand = 17_224_945_664 / 8 + 58 * busiest * DEEPSEEK_EXPERT_BYTES
    assert by_hand == pytest.approx(29.067e9, rel=1e-4)
    assert float(perf.weights_read_bytes(inside, 8.0)) / 8 == pytest.approx(by_hand, rel=1e-6)
    step, step_tp8 = (perf.decode_step(t, batch=8.0, context_tokens=678.5) for t in (inside, tp8))
    assert float(step.weights_read_s) == pytest.approx(by_hand / (8000e9 * 0.65), rel=1e-6)
    assert float(step.weights_read_s) * 1e3 == pytest.approx(5.590, abs=1e-3)
    assert float(step_tp8.weights_read_s) * 1e3 == pytest.approx(3.940, abs=1e-3)
    assert float(moe.all_to_all_s(inside, 8.0)) == 0.0
    assert float(step.tp_comm_s) == pytest.approx(float(step_tp8.tp_comm_s))
    assert float(perf.weights_bytes_per_gpu(inside)) == pytest.approx(float(perf.weights_bytes_per_gpu(tp8)))
    assert float(step.total_s) > float(step_tp8.total_s)  # whole experts: the busiest GPU reads more at B = 8
    with pytest.raises(perf.UnsupportedDeployment, match="divides the TP degree"):
        _deepseek_b200(catalog, tp=4, ep=8, ep_in_tp=True)


def test_mlenergy_ep8_rows_run_ep_inside_tp(catalog: Catalog) -> None:
    """The ML.ENERGY DeepSeek-V3.1 "EP8" rows are predicted with EP inside TP8 and stay unfitted; every row of
    the source has throughput × median ITL ≤ max_num_seqs (one engine's limit, not eight DP engines')."""
    import csv

    from planner.validate.cases import measurements_dir

    path = measurements_dir() / "mlenergy_vllm.csv"
    if not path.exists():
        pytest.skip("public measurements not present")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        running = float(row["output_tokens_per_s"]) * float(row["median_itl_ms"]) / 1e3
        assert 0.6 * float(row["max_num_seqs"]) <= running <= float(row["max_num_seqs"])
    cases, _skipped = build_cases(catalog)
    ep_rows = [c for c in cases if c.source == "mlenergy_vllm" and " EP8 " in c.label]
    assert len(ep_rows) == 4
    for c in ep_rows:
        assert c.terms is not None and not c.fitted
        assert (int(c.terms.tp), int(c.terms.attention_dp), int(c.terms.expert_parallel)) == (8, 1, 8)


def test_plan_json_carries_the_moe_terms_predict_reports(catalog: Catalog, tmp_path: Path) -> None:
    """examples/moe_ep: every MoE deployment of the plan JSON has the decode step's MoE terms at its batch, the
    numbers ``planner predict --json`` gives for the same layout and batch (EP, attention DP, imbalance ≥ 1,
    all-to-all > 0 with EP)."""
    from planner.plan import plan

    deps = plan(catalog, load_scenario("examples/moe_ep/scenario.yaml", catalog), with_alternatives=False).to_json()[
        "deployments"
    ]
    assert deps
    runner = CliRunner()
    for d in deps:
        terms = d["moe"]
        assert terms is not None and terms["ep"] == d["ep"] and terms["load_imbalance"] >= 1.0
        assert (terms["all_to_all_ms"] > 0.0) == (d["ep"] > 1)
        assert terms["experts_touched_busiest_group"] <= terms["experts_touched_per_layer"]
        res = runner.invoke(app, [
            "predict", "--model", d["model"], "--gpu", d["gpu"], "--quant", d["quantization"], "--kv-dtype",
            d["kv_dtype"], "--tp", str(d["tp"]), "--pp", str(d["pp"]), "--ep", str(d["ep"]), "--batch",
            str(d["batch"]), "--engine", d["engine"], "--json",
        ])
        assert res.exit_code == 0, res.output
        predicted = json.loads(res.stdout)["breakdown"]["moe"]
        assert terms == pytest.approx({k: round(v, 6) for k, v in predicted.items()}, abs=2e-6)


@pytest.mark.parametrize("model", ["deepseek_v3", "qwen3_235b_a22b", "mixtral_8x22b"])
def test_ep_inside_tp_is_never_faster_than_tp(catalog: Catalog, model: str) -> None:
    """EP inside the TP group holds the same bytes per GPU as TP and sends the same all-reduces; only the busiest
    expert group's load (λ ≥ 1, U_max ≥ U/e) differs, so its steps are never shorter: the plan, which enumerates
    TP and attention-DP EP layouts (moe.moe_layouts), loses nothing by leaving it out."""
    def terms(ep: int) -> perf.DeploymentTerms:
        return perf.deployment_terms(
            catalog, model=catalog.models[model], gpu=catalog.accelerators["h200_sxm"],
            weight_format=catalog.formats["fp8"], kv_format=catalog.formats["fp8"], tp=8, ep=ep, ep_in_tp=ep > 1,
        )

    tp8 = terms(1)
    for ep in (2, 4, 8):
        inside = terms(ep)
        assert float(perf.weights_bytes_per_gpu(inside)) == pytest.approx(float(perf.weights_bytes_per_gpu(tp8)))
        for batch in (1.0, 8.0, 64.0, 512.0):
            assert float(perf.decode_step(inside, batch=batch, context_tokens=1500.0).total_s) >= float(
                perf.decode_step(tp8, batch=batch, context_tokens=1500.0).total_s
            )
        assert float(perf.prefill_step(inside, prompt_tokens=2000.0).total_s) >= float(
            perf.prefill_step(tp8, prompt_tokens=2000.0).total_s
        )
