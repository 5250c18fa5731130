"""HiGHS's threads (planner.highs_threads): the concurrent search's answer does not depend on the cores it
runs on, one-thread and concurrent solves run side by side from several threads of one process (HiGHS keeps
one scheduler per process and fails a solve asking for another thread count), a forked child solves after
its parent's concurrent solve, and a large plan's exact solves are the concurrent ones."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from planner import highs_threads
from planner.catalog import Catalog
from planner.highs_threads import (
    CONCURRENT_MIN_INTEGER_COLUMNS,
    CONCURRENT_THREADS,
    ONE_SEARCH_THREADS,
    new_highs,
    option_value,
    run_highs,
    search_concurrently,
)
from planner.plan import plan
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]



def knapsack(concurrent: bool = True, seed: int = 7) -> tuple[int, float, int, list[int]]:
    """A multi-knapsack that HiGHS branches on (tens of nodes, so both concurrent searches take part), solved
    through run_highs: (this process's id, objective, nodes, solution)."""
    rng = np.random.default_rng(seed)
    n, m = 40, 6
    h = new_highs()
    if concurrent:
        h.setOptionValue("threads", CONCURRENT_THREADS)
    h.setOptionValue("random_seed", 1)
    h.addVars(n, np.zeros(n), np.ones(n))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -rng.integers(10, 60, n).astype(float))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.ones(n, dtype=np.uint8))
    for row in rng.integers(5, 40, (m, n)).astype(float):
        h.addRow(-np.inf, float(row.sum() / 3), n, np.arange(n, dtype=np.int32), row)
    status = run_highs(h)
    assert str(status).endswith("kOk"), status  # a solve whose thread count the scheduler refuses: kError
    x = [round(v) for v in h.getSolution().col_value]
    return os.getpid(), h.getInfo().objective_function_value, h.getInfo().mip_node_count, x


KNAPSACK = """
import json, os, sys
from tests.plan.test_highs_threads import knapsack as solve
"""

FORK = KNAPSACK + """
from planner.forked import Background
first = solve()
with Background(solve) as child:
    other = child.result()
print(json.dumps({"me": os.getpid(), "parent": first, "child": other}))
"""

PINNED = KNAPSACK + """
if sys.argv[1:] == ["one-core"]:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
print(json.dumps(solve()[1:]))
"""


def _run(code: str, *args: str, timeout_s: float = 60) -> str:
    """The last line ``code`` prints (highspy prints its banner first); a run past ``timeout_s`` is killed
    with its children (a hung child spins) and raises TimeoutExpired."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLANNER_WORKERS": "2"}  # Background forks on any machine
    with subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    assert proc.returncode == 0, err
    return out.strip().splitlines()[-1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() only")
def test_a_forked_child_solves_after_its_parent_has() -> None:
    """The parent solves concurrently (HiGHS's worker starts), then a forked child solves the same MIP: it
    answers, the same answer. With the worker left alive the child waits forever on a thread that did not
    come with it (6 runs of 6 on a quiet machine; under load the worker may still be awake at the fork and
    the child then does the work itself)."""
    out = json.loads(_run(FORK))
    assert out["parent"][0] == out["me"] and out["child"][0] != out["me"]  # the child did solve it
    assert out["child"][1:] == out["parent"][1:]
    assert out["parent"][2] > 1  # branched: the searches ran


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity: Linux only")
def test_the_concurrent_search_gives_one_answer_on_one_core_and_on_all() -> None:
    """The same objective, node count and solution pinned to one core as on every core of this machine."""
    assert _run(PINNED, "one-core") == _run(PINNED)


def test_one_thread_and_concurrent_solves_run_side_by_side() -> None:
    """Twelve solves, one-thread and concurrent alternately, from four threads at once (as compare's flip
    searches and the large path's period problems run): each succeeds with the answer it has alone."""
    pytest.importorskip("highspy")
    jobs = [(i % 2 == 1, 7 + i % 3) for i in range(12)]
    alone = [knapsack(*job)[1:] for job in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda job: knapsack(*job)[1:], jobs))
    assert together == alone


def test_only_large_models_search_concurrently() -> None:
    """search_concurrently asks for two threads from CONCURRENT_MIN_INTEGER_COLUMNS integer columns on."""
    pytest.importorskip("highspy")
    small, large = new_highs(), new_highs()
    search_concurrently(small, CONCURRENT_MIN_INTEGER_COLUMNS - 1)
    search_concurrently(large, CONCURRENT_MIN_INTEGER_COLUMNS)
    assert [option_value(small, "threads"), option_value(large, "threads")] == [ONE_SEARCH_THREADS, CONCURRENT_THREADS]


@pytest.mark.parametrize("concurrent_from", [CONCURRENT_MIN_INTEGER_COLUMNS, 0])
def test_the_exact_solves_of_a_plan_search_concurrently_when_large(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, concurrent_from: int
) -> None:
    """Two plans with their alternatives: the examples are small, so every solve keeps one thread (and the
    answer it had); counted as large, their exact solves (the plans' and the site alternatives') search
    concurrently and the others (first plans, GPU-type restrictions, flows) keep one thread."""
    highspy = pytest.importorskip("highspy")
    monkeypatch.setattr(highs_threads, "CONCURRENT_MIN_INTEGER_COLUMNS", concurrent_from)
    asked: list[int] = []
    run = highspy.Highs.run

    def recording(h: Any) -> Any:
        asked.append(option_value(h, "threads"))
        return run(h)

    monkeypatch.setattr(highspy.Highs, "run", recording)
    monkeypatch.setenv("PLANNER_WORKERS", "1")  # the alternatives solved here, where they are recorded
    for example in ("buy_vs_rent", "mixed_fleet"):
        plan(catalog, load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog), with_alternatives=True)
    assert len(asked) >= 20  # the plans, their first plans and the GPU-type and site alternatives
    if concurrent_from:
        assert set(asked) == {ONE_SEARCH_THREADS}
    else:
        assert set(asked) == {ONE_SEARCH_THREADS, CONCURRENT_THREADS}
        assert asked.count(CONCURRENT_THREADS) >= 2
