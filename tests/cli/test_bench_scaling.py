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
