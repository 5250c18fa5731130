"""Synthetic candidate tables for MILP tests (small, fully controlled coefficients)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from planner.candidates import CandidateTable
from planner.catalog import Catalog
from planner.scenario import Scenario, merged_sites, parse_scenario

PEAK_PROFILE = [0.3] * 8 + [1.0] * 8 + [0.3] * 8
"""Hourly profile: 8 peak hours at the stated rate, 16 hours at 30 % of it."""

CAND_COLUMNS = [
    "cand",
    "workload",
    "model",
    "quantization",
    "kv_dtype",
    "gpu",
    "tp",
    "pp",
    "site",
    "placement",
    "gpus",
    "quality_tier",
    "weights_per_gpu_gb",
    "max_batch",
    "prefill_ms",
    "network_ms",
    "tpot_floor_ms",
    "best_batch",
    "best_capacity_requests_per_s",
    "usd_per_hour",
    "feasible",
    "reason",
]


def starter(workload: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    """`planner init`'s starter, trimmed (Qwen3-8B bf16 at 5 req/s, 1,000 + 250 tokens, TTFT 1.5 s, TPOT 60 ms,
    us_east, 12 months), as a fresh dict with ``workload`` fields and ``top``-level fields replaced."""
    chat: dict[str, Any] = {
        "name": "chat",
        "models": ["qwen3_8b"],
        "quantizations": ["bf16"],
        "requests_per_s": 5,
        "input_tokens": 1000,
        "output_tokens": 250,
        "slo": {"ttft_ms": 1500, "tpot_ms": 60},
        "sites": ["us_east"],
    }
    chat.update(workload or {})
    data: dict[str, Any] = {"name": "starter", "horizon_months": 12, "workloads": [chat]}
    data.update(top)
    return data


def scenario(requests_per_s: float = 5.0, **extra: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "synthetic",
        "horizon_months": 1,
        "workloads": [
            {
                "name": "w",
                "models": ["llama_3_1_8b"],
                "requests_per_s": requests_per_s,
                "input_tokens": 1000,
                "output_tokens": 200,
                "slo": {"ttft_ms": 2000, "tpot_ms": 50},
                "sites": ["us_east"],
            }
        ],
        "procurement": ["rent"],
    }
    data.update(extra)
    return parse_scenario(data)


def table(
    catalog: Catalog, scen: Scenario, cands: list[dict[str, Any]], points: list[dict[str, Any]]
) -> CandidateTable:
    """cands: dicts with at least gpu, tp, best capacity; points: cand, batch, capacity, memory."""
    rows = []
    for i, c in enumerate(cands):
        row = {
            "cand": i,
            "workload": "w",
            "model": "llama_3_1_8b",
            "quantization": "bf16",
            "kv_dtype": "bf16",
            "gpu": c["gpu"],
            "tp": c.get("tp", 1),
            "pp": 1,
            "site": c.get("site", "us_east"),
            "placement": "cloud",
            "gpus": c.get("tp", 1),
            "quality_tier": 0,
            "weights_per_gpu_gb": 16.0,
            "max_batch": 64,
            "prefill_ms": 50.0,
            "network_ms": 20.0,
            "tpot_floor_ms": 10.0,
            "best_batch": 8,
            "best_capacity_requests_per_s": c["cap"],
            "usd_per_hour": 1.0,
            "feasible": True,
            "reason": "",
        }
        row.update({k: v for k, v in c.items() if k in CAND_COLUMNS})
        rows.append(row)
    pts = pd.DataFrame(
        [
            {
                "cand": p["cand"],
                "batch": p.get("batch", 8),
                "tpot_ms": p.get("tpot_ms", 20.0),
                "decode_step_ms": 10.0,
                "ttft_ms": p.get("ttft_ms", 200.0),
                "capacity_requests_per_s": p["cap"],
                "memory_per_gpu_gb": p.get("memory_per_gpu_gb", 20.0),
            }
            for p in points
        ]
    )
    return CandidateTable(
        candidates=pd.DataFrame(rows, columns=CAND_COLUMNS), points=pts, sites=merged_sites(catalog, scen)
    )


def relaxation_usd(catalog: Catalog, example: str, *, leave_out: str | None = None) -> float:
    """The optimum of the linear relaxation of ``examples/<example>``'s plan MILP (every variable continuous),
    built with every constraint family, or without the family ``leave_out`` — how much a family of valid rows
    lifts the bound. Callers that need a family forced on (size thresholds) monkeypatch that first."""
    from pathlib import Path
    from unittest import mock

    import pulp

    import planner.optimize.build as build
    from constraints import FAMILIES
    from planner.candidate_cache import candidates_for
    from planner.optimize.solver import make_solver, objective_usd, solve_status
    from planner.problem.context import build_context
    from planner.scenario import load_scenario

    families = tuple(f for f in FAMILIES if f.name != leave_out)
    scenario = load_scenario(Path(f"examples/{example}/scenario.yaml"), catalog)
    ctx = build_context(catalog, scenario, candidates_for(catalog, scenario))
    with mock.patch.object(build, "FAMILIES", families):
        build.build_problem(ctx)
    for v in ctx.prob.variables():
        v.cat = pulp.LpContinuous
    _status, has, optimal = solve_status(ctx.prob, make_solver("highs", time_limit_s=None))
    assert has and optimal
    return objective_usd(ctx)
