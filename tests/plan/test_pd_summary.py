"""The P:D summary of a plan (planner/readout/pd.py) reads every figure from one period: the one in which the
group serves the most."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from planner.catalog.loader import Catalog
from planner.plan import plan
from planner.readout.pd import pd_summary
from planner.scenario import load_scenario

CARD8 = Path(__file__).resolve().parents[2] / "examples" / "pd_card8" / "scenario.yaml"


def test_pd_card8_summary(catalog: Catalog) -> None:
    """4 A100 prefill : 4 H20 decode replicas serving 4.34 req/s (the decode pools' 4 × 1.085), 1.208 GB of KV
    per request."""
    deployments = plan(catalog, load_scenario(CARD8, catalog), with_alternatives=False).deployments
    (group,) = pd_summary(deployments)
    assert (group.pd_ratio, group.prefill_replicas, group.decode_replicas) == ("4:4", 4, 4)
    assert group.served_requests_per_s == pytest.approx(4.341, abs=1e-3)
    assert group.kv_link_load_gb_per_s == pytest.approx(group.served_requests_per_s * group.kv_gb_per_request)


def test_a_group_that_runs_outside_its_workloads_peak_is_read_where_it_runs(catalog: Catalog) -> None:
    """The pools as if planned over three periods, running only in the second with 3 and 2 replicas (half of
    the peak served): the summary counts the second period's replicas, GPUs, served requests and KV load (it
    said '4:4 GPUs (4:4 replicas), 0.00 req/s', replicas from one period and traffic from another)."""
    deployments = plan(catalog, load_scenario(CARD8, catalog), with_alternatives=False).deployments
    moved = []
    for d in deployments:
        running = 3 if d.role == "prefill" else 2
        moved.append(dataclasses.replace(
            d, served_requests_per_s=0.0, replicas_per_period=[0, running, 0],
            served_requests_per_s_per_period=[0.0, 2.0, 0.0],
            busiest_served_requests_per_s_per_period=[0.0, 2.0, 0.0],  # no hourly profile: the period's load
            busiest_served_per_replica_requests_per_s_per_period=[0.0, 2.0 / running, 0.0],
        ))
    (group,) = pd_summary(moved)
    assert (group.pd_ratio, group.prefill_replicas, group.decode_replicas) == ("3:2", 3, 2)
    assert group.served_requests_per_s == pytest.approx(2.0)
    assert group.kv_link_load_gb_per_s == pytest.approx(2.0 * group.kv_gb_per_request)
    link = {d.role: d.kv_link_gb_per_s for d in deployments}
    assert group.kv_link_capacity_gb_per_s == pytest.approx(min(3 * link["prefill"], 2 * link["decode"]))
