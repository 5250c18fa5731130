"""A deployment that serves nothing in its workload's peak period (buy_vs_rent's H200, rented in quarter 8
only) shows its largest period's replicas and is read at that period's load: its TTFT, TPOT and predict
command were at its capacity (250 ms / 17.7 ms at 5.11 req/s) while it serves 5.08 req/s there."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import load_scenario
from tests.plan.test_hand_served_load import _reproduces

ROOT = Path(__file__).resolve().parents[2]


def test_an_off_peak_deployment_is_read_at_the_load_of_the_period_it_shows(catalog: Catalog) -> None:
    result = plan(catalog, load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog), with_alternatives=False)
    h200 = next(d for d in result.deployments if d.gpu == "h200_sxm")
    assert h200.served_requests_per_s == 0.0 and h200.replicas == 1  # none at the peak: quarter 8's one replica
    assert [t for t, r in enumerate(h200.replicas_per_period) if r] == [8]
    load = h200.served_requests_per_s_per_period[8]
    assert load == pytest.approx(5.078, abs=1e-3) and load < h200.capacity_per_replica_requests_per_s
    assert h200.served_per_replica_requests_per_s == pytest.approx(load, rel=1e-12)
    assert h200.read_load_per_replica_requests_per_s() == pytest.approx(load, rel=1e-12)
    assert "--requests-per-s 5.0777" in h200.predict_command
    assert h200.ttft_ms is not None and h200.ttft_ms < 249.0  # 250.0 at its capacity
    _reproduces(h200)
