"""The bench's scaling table: the one-workload, one-month instance over the full catalog is checked against
exhaustive enumeration of single configurations (planner/cli/bench_scaling.py)."""

from __future__ import annotations

from planner.cli.bench_scaling import Instance, measure


def test_one_workload_one_month_matches_exhaustive_enumeration() -> None:
    """Every co-located candidate × operating point × rent option, replicas packed whole into rented units:
    the MILP's optimum is the cheapest of them (pool-only candidates serve nothing alone and are not counted)."""
    measured = measure(Instance("workloads", 1, 1))
    assert measured.status == "optimal"
    assert measured.enumeration.endswith("same optimum"), measured.enumeration
    assert measured.candidates > 1000 and measured.variables > 0
