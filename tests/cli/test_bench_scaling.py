"""The bench's scaling table: the one-workload, one-month instance over the full catalog is checked against
exhaustive enumeration of single configurations (planner/cli/bench_scaling.py)."""

from __future__ import annotations

import pytest

from planner.cli import bench_scaling as bs
from planner.cli.bench_scaling import Instance, measure


def test_one_workload_one_month_matches_exhaustive_enumeration() -> None:
    """Every co-located candidate × operating point × rent option, replicas packed whole into rented units:
    the MILP's optimum is the cheapest of them (pool-only candidates serve nothing alone and are not counted)."""
    measured = measure(Instance("workloads", 1, 1))
    assert measured.status == "optimal"
    assert measured.enumeration.endswith("same optimum"), measured.enumeration
    assert measured.candidates > 1000 and measured.variables > 0


def test_peak_memory_of_a_spawned_instance_is_its_own() -> None:
    """A spawned child reports its own peak, not the peak of the process that forked it (ru_maxrss would)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from planner.cli.bench_scaling import peak_rss_mb

    ballast = bytearray(400 * 2**20)  # 400 MB, touched below so that it is resident
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])
    parent_mb = peak_rss_mb()
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        child_mb = pool.submit(peak_rss_mb).result()
    assert parent_mb > 400
    assert child_mb < parent_mb - 300
    del ballast


def test_issue_17_targets_carry_the_measured_values_and_verdicts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The targets block reads the scaling rows it was given: 20 workloads in 14.9 s / 700 MB is met, a plan
    with alternatives in 4.2 s is MISSED, a 2.5 s buy solve is MISSED, a 30 s sweep is met."""
    monkeypatch.setattr(bs, "_plan_with_alternatives_cold", lambda: (4.2, 5.0, "2.00 / 0.10 / 0.60 / 1.50"))

    def row(evaluation_s: float, solve_s: float, peak_mb: float) -> bs.Measured:
        return bs.Measured(1, 1, 1, evaluation_s, 0.4, solve_s, peak_mb, "optimal", None, "n/a")

    rows: list[tuple[bs.Instance, bs.Measured | str]] = [
        (bs.Instance("workloads", 20, 1), row(7.0, 7.5, 700.0)),
        (bs.Instance("months", 5, 1), row(2.6, 2.5, 300.0)),
        (bs.Instance("months", 5, 12), "TimeoutError: x"),
    ]
    bs.print_targets(rows, 30.0)
    out = capsys.readouterr().out
    assert "| 4.20 s (5.00 s CPU incl. workers; evaluation+readout / build / solve / alternatives 2.00 / 0.10 / 0.60 / 1.50) | MISSED |" in out
    assert "| 14.90 s (7.00 + 0.40 + 7.50), 700 MB, optimal | met |" in out
    assert "| 2.50 s (optimal) | MISSED |" in out
    assert "| 30.0 s | met |" in out
