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
