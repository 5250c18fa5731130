"""A replica that runs only in the day's quieter hour blocks is read at the load it serves while it runs.

With an hourly profile (8 req/s at the peak, 0.2-0.5 of it at night), the plan runs an H100 FP8 TP2 replica
only in the night blocks and serves up to 4.8 req/s on it there; at the peak it runs none. Its TTFT, TPOT,
batch and predict command were read at the daily mean (the hours it does not run counted as zero load), while
the replica runs at 4.8 req/s in its busiest block (TTFT 248 ms, TPOT 24.1 ms, batch 35, what `planner predict
--requests-per-s 4.8` gives; with the H100 at MBU 0.65 and the roofline max it served 4.0 req/s there, daily
mean 0.4).
"""

from __future__ import annotations

from typing import Any

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.readout import PlanResult
from planner.scenario import parse_scenario
from tests.plan.test_hand_served_load import _reproduces

NIGHT = [0.2] * 6 + [0.5, 0.8] + [1.0] * 10 + [0.8, 0.6, 0.4, 0.3, 0.2, 0.2]
SCENARIO: dict[str, Any] = {
    "name": "hourly-chat",
    "horizon_months": 12,
    "workloads": [
        {
            "name": "chat",
            "models": ["llama_3_1_70b"],
            "quantizations": ["fp8", "int4"],
            "requests_per_s": 8,
            "hourly_profile_frac": NIGHT,
            "input_tokens": 1500,
            "output_tokens": 300,
            "slo": {"ttft_ms": 2000, "tpot_ms": 50},
            "sites": ["us_east"],
        }
    ],
    "hardware": {"gpus": ["h100_sxm", "b200"], "tp": [1, 2, 4, 8], "pp": [1]},
    "procurement": ["rent"],
}


@pytest.fixture(scope="module")
def result(catalog: Catalog) -> PlanResult:
    return plan(catalog, parse_scenario(SCENARIO), with_alternatives=False)


def test_a_night_only_replica_is_read_at_its_busiest_hour_block(result: PlanResult) -> None:
    night = [d for d in result.deployments if d.served_requests_per_s == 0.0]
    assert [(d.gpu, d.quantization, d.tp, d.replicas) for d in night] == [("h100_sxm", "fp8", 2, 1)]
    d = night[0]
    assert d.served_requests_per_s_per_period[0] == pytest.approx(0.6, rel=1e-9)  # daily mean: 14.4 req/s-h / 24 h
    assert d.busiest_served_per_replica_requests_per_s_per_period == pytest.approx([4.8] * 12, rel=1e-9)
    assert d.read_load_per_replica_requests_per_s() == pytest.approx(4.8, rel=1e-9)
    assert d.served_per_replica_requests_per_s == pytest.approx(4.8, rel=1e-9)
    assert "--requests-per-s 4.8 " in d.predict_command
    assert d.batch == 35 and d.ttft_ms == pytest.approx(248.1, abs=0.1) and d.tpot_ms == pytest.approx(24.07, abs=0.01)
    assert d.served_per_replica_requests_per_s <= d.capacity_per_replica_requests_per_s
    _reproduces(d)


def test_replicas_serving_at_the_peak_keep_the_peak_load(result: PlanResult) -> None:
    for d in result.deployments:
        if d.served_requests_per_s > 0:
            assert d.served_per_replica_requests_per_s == pytest.approx(d.served_requests_per_s / d.replicas, rel=1e-12)
            _reproduces(d)


PD_SCENARIO: dict[str, Any] = {
    "name": "pd-hourly",
    "horizon_months": 12,
    "workloads": [
        {
            "name": "chat",
            "models": ["llama_3_1_70b"],
            "quantizations": ["fp8"],
            "requests_per_s": 20,
            "hourly_profile_frac": [0.3] * 6 + [0.5, 0.8] + [1.0] * 10 + [0.8, 0.6, 0.5, 0.4, 0.3, 0.3],
            "input_tokens": 4000,
            "output_tokens": 300,
            "slo": {"ttft_ms": 2000, "tpot_ms": 50},
            "sites": ["us_east"],
            "disaggregation": "on",
        }
    ],
    "hardware": {"gpus": ["h100_sxm"], "tp": [1, 2, 4, 8], "pp": [1]},
    "procurement": ["rent"],
}


def test_a_pd_groups_kv_link_carries_its_busiest_hour_block(catalog: Catalog) -> None:
    """The P:D line read the daily mean: "13.33 req/s; KV link 17.48 of 500 GB/s" for a group that serves the
    workload's 20 req/s at the peak (26.2 GB/s of 1.311 GB prompts' KV)."""
    result = plan(catalog, parse_scenario(PD_SCENARIO), with_alternatives=False)
    prefill = [d for d in result.deployments if d.role == "prefill"]
    assert sum(d.served_requests_per_s_per_period[0] for d in prefill) == pytest.approx(40 / 3, rel=1e-9)  # daily mean
    (group,) = result.to_json()["disaggregation"]
    assert group["served_requests_per_s"] == pytest.approx(20.0, rel=1e-9)
    assert group["kv_gb_per_request"] == pytest.approx(1.31072, rel=1e-9)
    assert group["kv_link_load_gb_per_s"] == pytest.approx(20.0 * 1.31072, rel=1e-9)
    assert group["kv_link_load_frac"] == pytest.approx(20.0 * 1.31072 / group["kv_link_capacity_gb_per_s"], rel=1e-9)
    # a decode pool that runs only off the peak is read at its busiest block (4.19 req/s), not the mean (0.35)
    (off,) = [d for d in result.deployments if d.served_requests_per_s == 0.0]
    assert off.role == "decode" and off.replicas == 1
    assert off.served_per_replica_requests_per_s == pytest.approx(4.1920, abs=1e-4)
    _reproduces(off)
