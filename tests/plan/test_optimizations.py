"""Prefix caching and speculative decoding as optimizer decisions with card 3's break-even rules."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from planner import performance as perf
from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.cli.main import app
from planner.errors import ScenarioError
from planner.ledgers.efficiency import EfficiencyTerms
from planner.performance.load import capacity_at_slo, serve_at_load
from planner.performance.optimizations import (
    LoadOptimizations,
    prefix_breakeven_frac,
    prefix_recompute_and_fetch_s,
    spec_tokens_per_round,
)
from planner.plan import plan
from planner.scenario import load_scenario, parse_scenario, validate_against_catalog

ROOT = Path(__file__).resolve().parents[2]
RAG = ROOT / "examples" / "rag_prefix_cache" / "scenario.yaml"


def _rag(catalog: Catalog, hardware: dict[str, Any] | None = None, **workload: Any) -> Any:
    data = yaml.safe_load(RAG.read_text())
    if hardware is not None:
        data["hardware"] = hardware
    data["workloads"][0].update(workload)
    data["workloads"][0] = {k: v for k, v in data["workloads"][0].items() if v is not None}
    scenario = parse_scenario(data)
    validate_against_catalog(scenario, catalog)
    return scenario


def _spec_scenario(catalog: Catalog, acceptance_frac: float) -> Any:
    data = {
        "name": "spec",
        "horizon_months": 12,
        "workloads": [
            {
                "name": "chat",
                "models": ["llama_3_1_70b"],
                "quantizations": ["fp8"],
                "requests_per_s": 10,
                "input_tokens": 1000,
                "output_tokens": 500,
                "slo": {"ttft_ms": 2000, "tpot_ms": 12},
                "speculative": {"draft_model": "llama_3_1_8b", "acceptance_frac": acceptance_frac, "draft_tokens": 4},
            }
        ],
        "hardware": {"gpus": ["h100_sxm"], "tp": [1, 2, 4, 8], "pp": [1]},
        "procurement": ["rent"],
    }
    scenario = parse_scenario(data)
    validate_against_catalog(scenario, catalog)
    return scenario


def _opt(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(o for o in d["optimizations"] if o["name"] == name)


# ---------------------------------------------------------------- card 3 worked examples through the planner


def test_card3_prefix_breakeven_through_the_planner(catalog: Catalog) -> None:
    """C3 decision rule: a 6,144-token Qwen3-8B prefix on an RTX PRO 6000, recomputed at the book's 62 % MFU,
    pays above 4.8 % hits on PCIe Gen5 and 10.1 % on Gen4 (book ch08 §8.3)."""
    terms = perf.deployment_terms(
        catalog,
        model=catalog.models["qwen3_8b"],
        gpu=catalog.accelerators["rtx_pro_6000"],
        weight_format=catalog.formats["bf16"],
        kv_format=catalog.formats["bf16"],
        ideal=True,
    )
    book = dataclasses.replace(EfficiencyTerms.ideal(), prefill_mfu_frac=0.62, prefill_half_tokens=0.0)
    terms = dataclasses.replace(terms, efficiency=book, peak_tflops=503.8)
    _, fetch_s = prefix_recompute_and_fetch_s(terms, prefix_tokens=6144, host_link_gb_per_s=64.0)
    assert fetch_s == pytest.approx(6144 * 147_456 / 64e9, rel=1e-3)  # 906 MB of KV over 64 GB/s
    for gb_per_s, expected in ((64.0, 0.048), (32.0, 0.101)):
        assert prefix_breakeven_frac(terms, prefix_tokens=6144, host_link_gb_per_s=gb_per_s) == pytest.approx(
            expected, abs=5e-4
        )


def test_card3_speculative_yield() -> None:
    """C3.7: 4 drafts at a = 1/4 → E[N] = 1.33, a = 3/4 → 3.05; E[N] = (1 − a^(k+1))/(1 − a)."""
    assert spec_tokens_per_round(0.25, draft_tokens=4) == pytest.approx(1.33, abs=5e-3)
    assert spec_tokens_per_round(0.75, draft_tokens=4) == pytest.approx(3.05, abs=5e-3)
    for a in (0.1, 0.5, 0.9):
        assert spec_tokens_per_round(a, draft_tokens=6) == pytest.approx((1 - a**7) / (1 - a))


def test_plain_optimizations_are_the_plain_model_bit_for_bit(catalog: Catalog) -> None:
    terms = perf.deployment_terms(
        catalog,
        model=catalog.models["llama_3_1_70b"],
        gpu=catalog.accelerators["h100_sxm"],
        weight_format=catalog.formats["fp8"],
        kv_format=catalog.formats["bf16"],
        tp=2,
    )
    args = {"input_tokens": 8000.0, "output_tokens": 300.0, "max_batch": 64.0, "network_s": 0.05}
    plain = serve_at_load(terms, requests_per_s=1.0, **args)
    off = serve_at_load(terms, requests_per_s=1.0, opt=LoadOptimizations(), **args)
    assert (plain.ttft_s, plain.tpot_s, plain.running_batch) == (off.ttft_s, off.tpot_s, off.running_batch)


# ---------------------------------------------------------------- prefix cache


def test_rag_with_80_percent_hits_costs_clearly_less(catalog: Catalog) -> None:
    hit = plan(catalog, load_scenario(RAG, catalog), with_alternatives=False).to_json()
    miss = plan(
        catalog, _rag(catalog, prefix_cache={"hit_frac": 0.0, "prefix_tokens": 6144}), with_alternatives=False
    ).to_json()
    # 12 req/s of 8,000-token prompts: 5 × H100 TP2 (1.98 req/s each, rented per card) + 1 × H200 TP2 (2.22)
    # with the cache vs 12 × H100 TP2 (1.09) without
    assert hit["total_cost_usd"] == pytest.approx(257_126.4, rel=1e-6)
    assert miss["total_cost_usd"] == pytest.approx(393_984.0, rel=1e-6)
    assert hit["total_cost_usd"] < 0.7 * miss["total_cost_usd"]
    for d in hit["deployments"]:
        o = _opt(d, "prefix_cache")
        assert o["on"] and o["why"].startswith("prefix cache on: 80 % hit rate > ") and "break-even" in o["why"]
    for d in miss["deployments"]:
        o = _opt(d, "prefix_cache")
        assert not o["on"] and "0 % hit rate ≤" in o["why"]
    # speculation passes its one-sequence break-even here but the MILP keeps the plain variant at this load
    for d in hit["deployments"]:
        o = _opt(d, "speculative")
        assert not o["on"] and "2.77 tokens/round > " in o["why"] and "at the planned load" in o["why"]


def test_workbook_shows_the_optimizations(catalog: Catalog) -> None:
    from openpyxl.utils import get_column_letter

    from planner.report.workbook import build_workbook
    from planner.report.workbook_tables import DEPLOY_HEADERS, WHY_WIDTH
    from planner.report.xlsx import POINTS_PER_LINE

    result = plan(catalog, load_scenario(RAG, catalog), with_alternatives=False)
    ws = build_workbook(result)["Deployments"]
    on = ws.cell(row=2, column=DEPLOY_HEADERS.index("Optimizations on") + 1).value
    why_col = DEPLOY_HEADERS.index("Optimizations: why (card 3)") + 1
    why = ws.cell(row=2, column=why_col).value
    assert on == "prefix_cache, chunked_prefill"
    assert "prefix cache on: 80 % hit rate > 3.3 % break-even" in why and "speculative off" in why
    # the reasons wrap within their column, on a row tall enough for their lines (they ran past it in print)
    assert len(why) > WHY_WIDTH and ws.cell(row=2, column=why_col).alignment.wrap_text
    assert ws.column_dimensions[get_column_letter(why_col)].width == WHY_WIDTH
    assert ws.row_dimensions[2].height >= POINTS_PER_LINE * -(-len(why) // WHY_WIDTH)


def test_higher_hit_frac_never_costs_more(catalog: Catalog) -> None:
    """Per configuration the best capacity over its variants never falls as hit_frac rises, so neither
    does the plan's cost."""
    hw = {"gpus": ["h100_sxm", "h200_sxm"], "tp": [2, 4], "pp": [1]}
    best: list[Any] = []
    for h in (0.0, 0.3, 0.9, 1.0):
        table = build_candidates(
            catalog, _rag(catalog, hw, prefix_cache={"hit_frac": h, "prefix_tokens": 6144}, speculative=None)
        )
        c = table.candidates
        key = ["gpu", "tp", "site"]
        best.append(c.groupby(key)["best_capacity_requests_per_s"].max().sort_index())
    for lo, hi in zip(best, best[1:], strict=False):
        assert (hi.to_numpy() >= lo.to_numpy() * (1 - 1e-9)).all()
    costs = [
        plan(catalog, _rag(catalog, hw, prefix_cache={"hit_frac": h, "prefix_tokens": 6144}, speculative=None),
             with_alternatives=False).total_cost_usd
        for h in (0.0, 0.5, 0.9)
    ]
    assert costs[0] >= costs[1] >= costs[2]
    assert costs[2] < costs[0]


def test_prefix_memory_is_held_once_per_replica(catalog: Catalog) -> None:
    terms = perf.deployment_terms(
        catalog,
        model=catalog.models["llama_3_1_70b"],
        gpu=catalog.accelerators["h100_sxm"],
        weight_format=catalog.formats["fp8"],
        kv_format=catalog.formats["bf16"],
        tp=2,
    )
    opt = LoadOptimizations(cached_tokens=0.8 * 6144, resident_prefix_tokens=6144)
    from planner.performance.optimizations import optimized_memory_per_gpu_bytes

    def mem(batch: float, o: LoadOptimizations | None) -> float:
        return float(optimized_memory_per_gpu_bytes(terms, o, batch=batch, context_tokens=8300.0, workspace_bytes=0.0))

    prefix_kv = float(perf.kv_bytes_per_gpu(terms, batch=1.0, context_tokens=6144.0))
    # one resident copy; each sequence holds its own pages minus the shared ones on a hit
    assert mem(0.0, opt) - mem(0.0, None) == pytest.approx(prefix_kv, rel=1e-9)
    per_seq_saved = (mem(10.0, None) - mem(0.0, None)) / 10 - (mem(10.0, opt) - mem(0.0, opt)) / 10
    assert per_seq_saved > 0.75 * prefix_kv
    # the cache also shortens TTFT at the same load
    args = {"input_tokens": 8000.0, "output_tokens": 300.0, "max_batch": 64.0, "network_s": 0.0}
    assert float(serve_at_load(terms, requests_per_s=1.0, opt=opt, **args).ttft_s) < float(
        serve_at_load(terms, requests_per_s=1.0, **args).ttft_s
    )


# ---------------------------------------------------------------- speculative decoding


def test_speculative_chosen_only_where_it_pays(catalog: Catalog) -> None:
    high = plan(catalog, _spec_scenario(catalog, 0.8), with_alternatives=False).to_json()
    low = plan(catalog, _spec_scenario(catalog, 0.2), with_alternatives=False).to_json()
    # a = 0.8: E[N] = 3.36 lets a TP2 replica carry 2.77 req/s within a 12 ms TPOT → 4 × TP2, eight GPUs, all
    # speculating; a = 0.2: E[N] = 1.25 is below the break-even on every deployment → plain 1 × TP4 co-located
    # and a prefill/decode pair (1 × TP2 prefill, 3 × TP4 decode). (With the H100 at MBU 0.65 and the roofline
    # max: 2.45 req/s per TP2, ten GPUs, $177,811; 2 × TP4 + 1 × TP2 prefill + 4 × TP4 decode, $440,467: the
    # 12 ms TPOT sits just above the 70B's weight-read floor, so 4.6 % more bandwidth buys a much larger batch.)
    assert all(_opt(d, "speculative")["on"] for d in high["deployments"])
    assert all(not _opt(d, "speculative")["on"] for d in low["deployments"])
    assert all("1.25 tokens/round ≤" in _opt(d, "speculative")["why"] for d in low["deployments"])
    assert "3.36 tokens/round >" in _opt(high["deployments"][0], "speculative")["why"]
    assert [(d["tp"], d["replicas"]) for d in high["deployments"]] == [(2, 4)]
    assert high["total_cost_usd"] == pytest.approx(131_328.0, rel=1e-6)
    assert low["total_cost_usd"] == pytest.approx(309_139.2, rel=1e-6)


def test_speculation_costs_draft_memory_and_verification(catalog: Catalog) -> None:
    kw: dict[str, Any] = {"weight_format": catalog.formats["fp8"], "kv_format": catalog.formats["bf16"], "tp": 2}
    gpu = catalog.accelerators["h100_sxm"]
    terms = perf.deployment_terms(catalog, model=catalog.models["llama_3_1_70b"], gpu=gpu, **kw)
    draft = perf.deployment_terms(catalog, model=catalog.models["llama_3_1_8b"], gpu=gpu, **kw)
    args = {"input_tokens": 1000.0, "output_tokens": 500.0, "max_batch": 64.0, "network_s": 0.0}
    zero = LoadOptimizations(draft=draft, draft_tokens=4.0, tokens_per_round=1.0)  # nothing accepted
    plain = serve_at_load(terms, requests_per_s=0.5, **args)
    useless = serve_at_load(terms, requests_per_s=0.5, opt=zero, **args)
    assert float(useless.tpot_s) > float(plain.tpot_s)
    slo = {"slo_ttft_s": 2.0, "slo_tpot_s": 0.03}
    cap_args = {k: v for k, v in args.items()}
    assert float(capacity_at_slo(terms, opt=zero, **cap_args, **slo)) < float(capacity_at_slo(terms, **cap_args, **slo))
    assert np.isfinite(float(useless.ttft_s))


# ---------------------------------------------------------------- validation (exit 2, one line)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("speculative", {"draft_model": "llama31_8b", "acceptance_frac": 0.7}, "did you mean llama_3_1_8b"),
        ("speculative", {"draft_model": "llama_3_1_405b", "acceptance_frac": 0.7}, "is not smaller than"),
        ("speculative", {"draft_model": "llama_3_1_8b", "acceptance_frac": 1.5}, "acceptance_frac"),
        ("prefix_cache", {"hit_frac": -0.1, "prefix_tokens": 6144}, "hit_frac"),
        ("prefix_cache", {"hit_frac": 0.5, "prefix_tokens": 9000}, "exceeds input_tokens 8000"),
    ],
)
def test_bad_optimization_fields_exit_2(tmp_path: Path, field: str, value: dict[str, Any], message: str) -> None:
    data = yaml.safe_load(RAG.read_text())
    data["workloads"][0][field] = value
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(app, ["plan", str(path)])
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert message in err and str(path) in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("draft", ["llama_3_1_405b", "llama_3_1_70b", "llama_2_70b"])
def test_refused_draft_suggests_a_draft_that_is_accepted(catalog: Catalog, draft: str) -> None:
    """The "e.g. X" of a refused draft (too large, or another tokenizer) is itself a valid draft of the target
    (it once suggested llama_2_70b for llama_3_1_70b: smaller, but vocab 32,000 vs 128,256, so refused)."""
    with pytest.raises(ScenarioError) as refused:
        _rag(catalog, speculative={"draft_model": draft, "acceptance_frac": 0.7})
    suggested = str(refused.value).rsplit("e.g. ", 1)[1].strip()
    assert suggested in catalog.models
    _rag(catalog, speculative={"draft_model": suggested, "acceptance_frac": 0.7})


def test_scenario_error_names_the_field(catalog: Catalog) -> None:
    with pytest.raises(ScenarioError, match=r"workloads\[0\]\.speculative\.draft_model"):
        _rag(catalog, speculative={"draft_model": "qwen3_32b", "acceptance_frac": 0.5})


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h1=st.floats(0.0, 1.0), h2=st.floats(0.0, 1.0), prefix=st.integers(256, 7999))
def test_more_hits_never_lower_capacity_or_raise_ttft(catalog: Catalog, h1: float, h2: float, prefix: int) -> None:
    lo, hi = sorted((h1, h2))
    terms = perf.deployment_terms(
        catalog,
        model=catalog.models["llama_3_1_70b"],
        gpu=catalog.accelerators["h100_sxm"],
        weight_format=catalog.formats["fp8"],
        kv_format=catalog.formats["bf16"],
        tp=2,
    )
    args: dict[str, Any] = {"input_tokens": 8000.0, "output_tokens": 300.0, "max_batch": 64.0, "network_s": 0.0}
    slo = {"slo_ttft_s": 3.0, "slo_tpot_s": 0.05}

    def at(h: float) -> tuple[float, float]:
        opt = LoadOptimizations(cached_tokens=h * prefix, resident_prefix_tokens=float(prefix))
        cap = float(capacity_at_slo(terms, opt=opt, **args, **slo))
        ttft = float(serve_at_load(terms, requests_per_s=0.5, opt=opt, **args).ttft_s)
        return cap, ttft

    (cap_lo, ttft_lo), (cap_hi, ttft_hi) = at(lo), at(hi)
    assert cap_hi >= cap_lo * (1 - 1e-6)
    assert ttft_hi <= ttft_lo * (1 + 1e-9)


def test_other_workloads_keep_their_candidates_bit_for_bit(catalog: Catalog) -> None:
    """One workload stating both optimizations does not move any number of the others' candidates."""
    data = yaml.safe_load((ROOT / "examples" / "mixed_fleet" / "scenario.yaml").read_text())
    data["hardware"] = {"gpus": ["h100_sxm", "l40s"], "tp": [1, 2, 4], "pp": [1]}
    base = build_candidates(catalog, parse_scenario(data)).candidates
    data["workloads"][0]["prefix_cache"] = {"hit_frac": 0.5, "prefix_tokens": 800}
    data["workloads"][0]["speculative"] = {"draft_model": "llama_3_1_8b", "acceptance_frac": 0.7}
    scenario = parse_scenario(data)
    validate_against_catalog(scenario, catalog)
    mixed = build_candidates(catalog, scenario).candidates
    cols = ["model", "quantization", "gpu", "tp", "site", "max_batch", "prefill_ms", "best_capacity_requests_per_s"]
    others = [w["name"] for w in data["workloads"][1:]]
    a = base[base["workload"].isin(others)][cols].reset_index(drop=True)
    b = mixed[mixed["workload"].isin(others)][cols].reset_index(drop=True)
    assert a.equals(b)
    chat = mixed[mixed["workload"] == "chat"]
    assert chat["prefix_cache"].any() and chat["speculative"].any()
    assert len(chat) <= 4 * len(base[base["workload"] == "chat"])
