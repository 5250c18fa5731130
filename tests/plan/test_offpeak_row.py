"""A deployment that serves nothing in its workload's peak period (buy_vs_rent's H200, rented in quarter 8
only) shows its largest period's replicas and is read at that period's load: its TTFT, TPOT and predict
command were at its capacity (247.1 ms / 17.64 ms at 5.057 req/s) while it serves 5.051 req/s there.

The H100's decode MBU is stated at 0.65 (its catalog figure before the ridge-loss change, which made the
H100 at 0.68 cheap enough that the shipped example rents no H200): with it the plan is the one this test was
written on, $820,966, the H200 rented in quarter 8 only."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import parse_scenario
from tests.plan.test_hand_served_load import _reproduces

ROOT = Path(__file__).resolve().parents[2]


def test_an_off_peak_deployment_is_read_at_the_load_of_the_period_it_shows(catalog: Catalog) -> None:
    data = yaml.safe_load((ROOT / "examples/buy_vs_rent/scenario.yaml").read_text())
    data["hardware"]["efficiency"] = {"h100_sxm": {"decode_mbu_frac": 0.65, "prefill_mfu_frac": 0.6}}
    result = plan(catalog, parse_scenario(data), with_alternatives=False)
    assert result.total_cost_usd == pytest.approx(820_966.44, rel=1e-6)
    h200 = next(d for d in result.deployments if d.gpu == "h200_sxm")
    assert h200.served_requests_per_s == 0.0 and h200.replicas == 1  # none at the peak: quarter 8's one replica
    assert [t for t, r in enumerate(h200.replicas_per_period) if r] == [8]
    load = h200.served_requests_per_s_per_period[8]
    assert load == pytest.approx(5.051, abs=1e-3) and load < h200.capacity_per_replica_requests_per_s
    assert h200.served_per_replica_requests_per_s == pytest.approx(load, rel=1e-12)
    assert h200.read_load_per_replica_requests_per_s() == pytest.approx(load, rel=1e-12)
    assert "--requests-per-s 5.0514" in h200.predict_command
    assert h200.ttft_ms is not None and h200.ttft_ms < 247.0  # 247.1 at its capacity
    _reproduces(h200)
