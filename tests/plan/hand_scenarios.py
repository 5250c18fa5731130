"""Small scenarios whose plans are checked by hand (tests/plan/test_hand_*.py), and the independent arithmetic:
catalog quotes, a GPU's running cost and a replica's saturation, each computed here from the catalog figures
(not read from the plan)."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.scenario import parse_scenario

HOURS = 720.0
"""The book's rental month (README: rent per month = USD per GPU-hour × 720 h)."""
S_PER_MONTH = HOURS * 3600.0
HEADROOM = 0.9
"""The scenario default max_utilization_frac: replicas are loaded to 90 % of their capacity at the SLO."""

BASE: dict[str, Any] = {
    "name": "hand",
    "horizon_months": 12,
    "objective": "min_cost",
    "workloads": [
        {
            "name": "chat",
            "models": ["qwen3_8b"],
            "quantizations": ["bf16"],
            "kv_dtypes": ["bf16"],
            "requests_per_s": 20,
            "input_tokens": 1000,
            "output_tokens": 250,
            "slo": {"ttft_ms": 1500, "tpot_ms": 60},
            "sites": ["us_east"],
            "disaggregation": "off",
        }
    ],
    "hardware": {"gpus": ["h100_sxm"], "tp": [1], "pp": [1], "gpu_share_fracs": []},
    "procurement": ["rent"],
    "rental_kinds": ["on_demand"],
}
"""Qwen3-8B BF16 on whole H100s, TP1, rented on demand in us_east: one configuration, so every figure of
the plan follows from one replica's capacity and the catalog's quotes."""


def scenario(catalog: Catalog, **changes: Any) -> Any:
    """BASE with top-level ``changes`` and ``chat=...`` changes of the workload, parsed."""
    data = copy.deepcopy(BASE)
    for k, v in changes.items():
        if k == "chat":
            data["workloads"][0].update(v)
        else:
            data[k] = v
    return parse_scenario(data, catalog=catalog)


def plan_json(catalog: Catalog, **changes: Any) -> dict[str, Any]:
    """The plan JSON of :func:`scenario` (no alternatives)."""
    return plan(catalog, scenario(catalog, **changes), with_alternatives=False).to_json()


def cheapest_quote(
    catalog: Catalog, gpu: str, site: str, kind: str, size: int, providers: tuple[str, ...] | None = None
) -> float:
    """USD per GPU-hour of the cheapest ``kind`` quote for ``size``-GPU instances of ``gpu`` at ``site``."""
    node = catalog.accelerators[gpu].gpus_per_node
    where = catalog.sites[site]
    usd = [
        p.usd_per_gpu_hour
        for p in catalog.prices
        if p.gpu == gpu and p.kind == kind
        and (site in p.sites if p.sites else p.provider in where.providers)
        and (p.gpus_per_instance and size in p.gpus_per_instance or not p.gpus_per_instance and size == node)
        and (providers is None or p.provider in providers)
    ]  # fmt: skip
    return min(usd)


def running_usd_per_gpu_month(catalog: Catalog, gpu: str, site: str, *, utilization: float = 0.7,
                              ops: float = 0.1) -> float:
    """An owned GPU's running cost: (draw × PUE × USD/kWh × 720 h + TDP kW × colocation) × (1 + ops), with
    draw = idle + u·(TDP − idle) (README: capex, then power, colocation and ops from delivery)."""
    g, s = catalog.accelerators[gpu], catalog.sites[site]
    draw_kw = (g.idle_w + utilization * (g.tdp_w - g.idle_w)) / 1e3
    power = draw_kw * s.pue * s.electricity_usd_per_kwh * HOURS
    colocation = g.tdp_w / 1e3 * s.colocation_usd_per_kw_month
    return (power + colocation) * (1 + ops)


def replicas_for(demand: float, capacity_at_slo: float) -> int:
    """Whole replicas serving ``demand`` at 90 % of each one's capacity at the SLO."""
    return math.ceil(demand / (HEADROOM * capacity_at_slo) - 1e-12)


def output_tokens(requests_per_s: float, output_tokens_per_request: int, months: float) -> float:
    """Output tokens served at a constant rate over ``months`` of 720 h."""
    return requests_per_s * output_tokens_per_request * S_PER_MONTH * months


def saturation_qwen3_8b_h100() -> float:
    """Requests/s one Qwen3-8B BF16 H100 replica sustains (1,000 in / 250 out, vLLM; `planner predict`); no SLO
    of BASE binds at it (TTFT 58 ms, TPOT 11 ms at 10 req/s), so it is the replica's capacity at the SLO."""
    out = CliRunner().invoke(app, [
        "predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--input-tokens", "1000", "--output-tokens", "250",
        "--requests-per-s", "10", "--site", "us_east", "--json",
    ])  # fmt: skip
    assert out.exit_code == 0, out.output
    return float(json.loads(out.stdout)["at_load"]["saturation_requests_per_s"])
