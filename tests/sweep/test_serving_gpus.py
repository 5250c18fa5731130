"""A sweep row's GPUs by type are the most serving at once, not the sum of each deployment's own peak
(planner.sweep.task.serving_gpus_by_type): two workloads peaking in different periods on one GPU type were
counted as if they peaked together."""

from __future__ import annotations

import pytest

from planner.sweep.task import serving_gpus_by_type


def _deployment(gpu: str, gpus_per_replica: float, per_period: list[int]) -> dict[str, object]:
    peak = max(per_period)
    return {"gpu": gpu, "gpus": gpus_per_replica * peak, "replicas": peak, "replicas_per_period": per_period}


def test_workloads_peaking_apart_are_counted_at_the_busiest_period() -> None:
    day = _deployment("h100_sxm", 2, [4, 1, 1])  # 8 GPUs in period 0
    night = _deployment("h100_sxm", 2, [1, 1, 3])  # 6 GPUs in period 2
    shared = _deployment("l40s", 0.5, [2, 2, 2])  # two half-GPU replicas: one GPU
    assert serving_gpus_by_type([day, night, shared]) == {"h100_sxm": 10.0, "l40s": 1.0}  # 8 + 2 in period 0
    # each deployment's own peak summed: 8 + 6 = 14, never serving at once


def test_a_plan_without_periods_counts_each_deployments_gpus() -> None:
    flat = [{"gpu": "b200", "gpus": 4, "replicas": 2}, {"gpu": "b200", "gpus": 8, "replicas": 1}]
    assert serving_gpus_by_type(flat) == pytest.approx({"b200": 12.0})
