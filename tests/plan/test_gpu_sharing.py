"""GPU sharing and rental granularity: instances of 1/2/4/8 GPUs with their own quotes, several small
models on one GPU (planner/performance/sharing.py, constraints/instance_packing.py)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.catalog.loader import load_catalog
from planner.costs import RentQuote
from planner.errors import CatalogError
from planner.optimize.solver import solve_context
from planner.performance import decode_step, deployment_terms
from planner.performance.sharing import shared_accelerator, shared_terms
from planner.plan import plan
from planner.problem.context import build_context
from planner.problem.instances import bound_small_instances, useful_instances
from planner.problem.supply import SupplyKind, SupplyOption, instance_families
from planner.scenario import merged_sites, parse_scenario
from planner.units import HOURS_PER_MONTH
from tests.plan.helpers import scenario, table

ROOT = Path(__file__).resolve().parents[2]
L40S_RUNPOD_USD_PER_GPU_HOUR = 1.4  # catalogs/prices.yaml, runpod on_demand, instances of 1/2/4/8 GPUs
MI300X_VULTR_USD_PER_GPU_HOUR = 1.85  # catalogs/prices.yaml, vultr on_demand, whole 8-GPU nodes


def two_small_models(**extra: Any) -> dict[str, Any]:
    """Two 8B assistants at 0.2 req/s each for one month (the issue's case)."""
    data: dict[str, Any] = {
        "name": "two-small",
        "horizon_months": 1,
        "workloads": [
            {
                "name": "helpdesk",
                "models": ["qwen3_8b"],
                "quantizations": ["bf16"],
                "requests_per_s": 0.2,
                "input_tokens": 1000,
                "output_tokens": 200,
                "slo": {"ttft_ms": 1500, "tpot_ms": 60},
                "sites": ["us_east"],
            },
            {
                "name": "summarizer",
                "models": ["llama_3_1_8b"],
                "quantizations": ["bf16"],
                "requests_per_s": 0.2,
                "input_tokens": 2000,
                "output_tokens": 150,
                "slo": {"ttft_ms": 2000, "tpot_ms": 60},
                "sites": ["us_east"],
            },
        ],
        "hardware": {"gpus": ["l40s", "mi300x"], "tp": [1], "pp": [1]},
        "procurement": ["rent"],
        "rental_kinds": ["on_demand"],
    }
    data.update(extra)
    return data


def test_two_8b_models_at_0_2_req_s_share_one_rented_gpu(catalog: Catalog) -> None:
    result = plan(catalog, parse_scenario(two_small_models()), with_alternatives=False).to_json()
    # one L40S for one month: 1.4 USD/GPU-h × 720 h = 1,008 USD (a whole 8-GPU node before: 8,064 USD)
    assert result["total_cost_usd"] == pytest.approx(L40S_RUNPOD_USD_PER_GPU_HOUR * HOURS_PER_MONTH, rel=1e-6)
    deps = {d["workload"]: d for d in result["deployments"]}
    assert {d["gpu_share_frac"] for d in deps.values()} == {0.5}
    assert deps["helpdesk"]["gpus"] == 0.5 and deps["helpdesk"]["instance_gpus"] == [1]
    assert deps["helpdesk"]["shares_gpu_with"] == ["summarizer/llama_3_1_8b"]
    assert deps["summarizer"]["shares_gpu_with"] == ["helpdesk/qwen3_8b"]
    assert [(s["id"], s["units"]) for s in result["supply"]] == [("l40s@us_east:rent_on_demand:x1-8", 1)]
    for d in deps.values():  # each model's SLO holds on its half, co-resident included
        assert d["tpot_ms"] <= d["tpot_slo_ms"] and d["ttft_ms"] <= d["ttft_slo_ms"]


def test_without_sharing_each_model_gets_its_own_gpu(catalog: Catalog) -> None:
    data = two_small_models(hardware={"gpus": ["l40s"], "tp": [1], "pp": [1], "gpu_share_fracs": []})
    result = plan(catalog, parse_scenario(data), with_alternatives=False).to_json()
    assert result["total_cost_usd"] == pytest.approx(2 * L40S_RUNPOD_USD_PER_GPU_HOUR * HOURS_PER_MONTH, rel=1e-6)


def test_a_provider_that_rents_whole_nodes_still_bills_the_node(catalog: Catalog) -> None:
    """Vultr's MI300X quote has no instance sizes: a whole 8-GPU node, shared or not (≈ $10.7k/month)."""
    data = two_small_models(hardware={"gpus": ["mi300x"], "tp": [1], "pp": [1]}, rent_providers=["vultr"])
    result = plan(catalog, parse_scenario(data), with_alternatives=False).to_json()
    assert result["total_cost_usd"] == pytest.approx(8 * MI300X_VULTR_USD_PER_GPU_HOUR * HOURS_PER_MONTH, rel=1e-6)


def test_a_share_runs_every_step_1_over_share_as_long(catalog: Catalog) -> None:
    """Time-slicing: on half a GPU every term of a step (weights, KV, host, floor) takes twice as long."""
    kw = {
        "model": catalog.models["qwen3_8b"],
        "weight_format": catalog.formats["bf16"],
        "kv_format": catalog.formats["bf16"],
        "tp": 1,
        "pp": 1,
    }
    gpu = catalog.accelerators["h100_sxm"]
    whole = deployment_terms(catalog, gpu=gpu, **kw)
    half = shared_terms(deployment_terms(catalog, gpu=shared_accelerator(gpu, 0.5), **kw), 0.5)
    for batch in (1, 8, 32):
        t_whole = float(decode_step(whole, batch=batch, context_tokens=1000).total_s)
        t_half = float(decode_step(half, batch=batch, context_tokens=1000).total_s)
        assert t_half == pytest.approx(2 * t_whole, rel=1e-9)
    assert shared_accelerator(gpu, 0.25).memory_gb == pytest.approx(20.0)


def test_a_tp_group_must_fit_in_one_instance(catalog: Catalog) -> None:
    """AWS rents A10G as g5.xlarge (1 GPU): a TP2 replica cannot span two instances."""
    scen = scenario(requests_per_s=5.0, rent_providers=["aws"], rental_kinds=["on_demand"])
    cands = [{"gpu": "a10g", "tp": 2, "gpus": 2, "cap": 10.0}, {"gpu": "a10g", "cap": 2.0}]
    points = [{"cand": 0, "cap": 10.0}, {"cand": 1, "cap": 2.0}]
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    sol = solve_context(ctx)
    reps = {k: sum(v for (c, _p, _t), v in sol.values["n_rep"].items() if c == k) for k in (0, 1)}
    assert reps == {0: 0, 1: 3}  # 3 × TP1 on three 1-GPU instances, not 1 × TP2 (2 GPUs)
    units = {ctx.supply[i].id: v for (i, _t), v in sol.values["units"].items() if v > 0.5}
    assert units == {"a10g@us_east:rent_on_demand:x1": 3}


def test_instance_sizes_must_divide_the_node(tmp_path: Path) -> None:
    src = ROOT / "catalogs"
    shutil.copytree(src, tmp_path / "catalogs")
    path = tmp_path / "catalogs" / "prices.yaml"
    data = yaml.safe_load(path.read_text())
    data["prices"][0]["gpus_per_instance"] = [3]
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    with pytest.raises(CatalogError, match=r"gpus_per_instance\[0\]: 3 GPUs does not divide .* 1, 2, 4, 8"):
        load_catalog(tmp_path / "catalogs")


def _oracle_usd(ctx: Any, demand: dict[str, float]) -> float:
    """Brute force: per workload every minimal cover of its demand by replicas of its candidates (best
    point each), then per GPU type ⌈Σ GPUs⌉ GPUs at the cheapest per-GPU instance (1-GPU instances exist)."""
    best_cap = ctx.points.groupby("cand")["capacity_requests_per_s"].max()
    per_gpu_month = {}
    for o in ctx.supply:
        per_gpu_month[o.gpu] = min(per_gpu_month.get(o.gpu, math.inf), o.usd_per_unit_month / o.unit_gpus)
    covers: dict[str, list[dict[int, int]]] = {}
    for w, need in demand.items():
        ks = [int(k) for k in ctx.cands_of_workload(w)]
        bounds = [math.ceil(need / best_cap[k] - 1e-9) for k in ks]
        found = []
        for n in itertools.product(*(range(b + 1) for b in bounds)):
            served = sum(n_i * best_cap[k] for n_i, k in zip(n, ks, strict=True))
            minimal = all(served - best_cap[k] < need - 1e-9 for n_i, k in zip(n, ks, strict=True) if n_i)
            if served >= need - 1e-9 and minimal:
                found.append(dict(zip(ks, n, strict=True)))
        covers[w] = found
    best = math.inf
    for combo in itertools.product(*covers.values()):
        gpus: dict[str, float] = {}
        for cover in combo:
            for k, n in cover.items():
                g = str(ctx.cands.at[k, "gpu"])
                gpus[g] = gpus.get(g, 0.0) + n * float(ctx.cands.at[k, "gpus"])
        best = min(best, sum(math.ceil(v - 1e-9) * per_gpu_month[g] for g, v in gpus.items()))
    return best


@pytest.mark.parametrize("rates", [(0.2, 0.2, 0.2), (1.0, 0.6, 0.35)])
def test_sharing_matches_a_brute_force_oracle(catalog: Catalog, rates: tuple[float, float, float]) -> None:
    """Three small workloads on L40S / H100 rented by the GPU (runpod): the MILP's cost equals the cheapest
    assignment of whole and shared replicas found by enumeration."""
    base = two_small_models()
    third = {**base["workloads"][0], "name": "faq", "models": ["llama_3_1_8b"], "requests_per_s": rates[2]}
    base["workloads"] = [
        {**base["workloads"][0], "requests_per_s": rates[0]},
        {**base["workloads"][1], "requests_per_s": rates[1]},
        third,
    ]
    base["hardware"] = {"gpus": ["l40s", "h100_sxm"], "tp": [1], "pp": [1]}
    base["rent_providers"] = ["runpod"]
    scen = parse_scenario(base)
    ctx = build_context(catalog, scen, build_candidates(catalog, scen))
    assert (ctx.cands["share_frac"] < 1).any()
    oracle = _oracle_usd(ctx, {w.name: w.requests_per_s for w in scen.workloads})
    result = plan(catalog, scen, with_alternatives=False).to_json()
    assert result["total_cost_usd"] == pytest.approx(oracle, rel=1e-6)


def _rent(unit: int, top: int, usd_per_gpu_month: float, node: int = 8) -> SupplyOption:
    return SupplyOption(
        "h100_sxm", "us_east", SupplyKind.RENT_ON_DEMAND, unit, usd_per_gpu_month * unit, None, "test",
        node_gpus=node, max_instance_gpus=top,
    )


def test_instance_sizes_sold_at_one_quote_form_one_option_billed_per_card() -> None:
    runpod = RentQuote("h100_sxm", "us_east", "on_demand", 2.69, "runpod", "s", "2026")
    hyperstack = RentQuote("h100_sxm", "us_east", "on_demand", 1.9, "hyperstack", "s", "2026")
    families = instance_families({1: runpod, 2: runpod, 4: runpod, 8: hyperstack})
    assert [(lo, hi, q.provider) for lo, hi, q in families] == [(1, 4, "runpod"), (8, 8, "hyperstack")]
    assert _rent(1, 4, 2.0).id == "h100_sxm@us_east:rent_on_demand:x1-4"
    assert _rent(8, 8, 2.0).id == "h100_sxm@us_east:rent_on_demand"  # a whole node keeps its id


@pytest.mark.parametrize(
    ("groups", "options", "kept"),
    [
        ({2.0, 4.0, 8.0}, [(1, 4, 2.69), (8, 8, 1.9)], [0, 1]),  # finer but dearer: both useful
        ({8.0}, [(1, 4, 2.69), (8, 8, 1.9)], [1]),  # 4-GPU instances cannot hold a TP8 group
        ({1.0, 2.0}, [(1, 8, 2.0), (8, 8, 2.0)], [0]),  # per card at the node's price: the node adds nothing
        ({0.5, 2.0}, [(1, 1, 1.5), (8, 8, 2.0)], [0, 1]),  # TP2 groups need the node
        ({0.5}, [(1, 1, 1.5), (2, 2, 1.5)], [0]),  # the 2-GPU instance hosts nothing more
    ],
)
def test_rent_instances_that_cannot_lower_the_cost_are_dropped(
    groups: set[float], options: list[tuple[int, int, float]], kept: list[int]
) -> None:
    supply = [_rent(*o) for o in options]
    assert useful_instances(supply, {("h100_sxm", "us_east"): groups}) == [supply[i] for i in kept]


def test_every_price_row_with_instance_sizes_cites_them(catalog: Catalog) -> None:
    rows = [p for p in catalog.prices if p.gpus_per_instance]
    assert {p.provider for p in rows} >= {"aws", "gcp", "coreweave", "runpod", "book_runpod"}
    assert all("instance" in p.source for p in rows)
    a10g = next(p for p in rows if p.gpu == "a10g")
    assert a10g.gpus_per_instance == (1,) and a10g.offers_instance(1, 8) and not a10g.offers_instance(8, 8)


def test_small_instances_are_bounded_where_a_node_is_cheaper_per_gpu(catalog: Catalog) -> None:
    """8 × 1.9 / 2.69 = 5.65: more than 5 one-GPU instances at 2.69 never beat one node at 1.9 per GPU."""
    scen = scenario()
    supply = [_rent(1, 4, 2.69), _rent(8, 8, 1.9)]
    sites = merged_sites(catalog, scen)
    bounded = bound_small_instances(supply, scen, sites)
    assert [o.max_units for o in bounded] == [5, None]
    limited = {**sites, "us_east": sites["us_east"].model_copy(update={"max_gpus": 16})}
    assert [o.max_units for o in bound_small_instances(supply, scen, limited)] == [None, None]
    reserved = [dataclasses.replace(o, kind=SupplyKind.RENT_RESERVED_1Y) for o in supply]
    assert [o.max_units for o in bound_small_instances(reserved, scen, sites)] == [None, None]
