"""Alternatives in forked worker processes (planner.forked): the same records as the serial loop,
serial where a pool must not be made, a lost child costs no answer and no hang, nothing on stdout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from planner import forked
from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.cli.bench_identity import without_timing
from planner.optimize import alternatives as alt_module
from planner.optimize import solve
from planner.optimize.alternatives import AlternativeSet, alternatives
from planner.problem.context import build_context
from planner.scenario import load_scenario
from planner.sweep.spec import SweepPlan, Variant
from planner.sweep.task import SweepContext, solve_variant

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="needs fork() (Linux)")


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forking allowed at the start of each test, and whatever a test forbids is undone after it."""
    monkeypatch.setitem(forked._STATE, "forbidden", False)
    monkeypatch.setattr(alt_module, "FORK_MIN_SOLVE_S", 0.0)  # the examples' plans solve in < 0.1 s
    signal.alarm(120)  # a hang fails the test instead of the suite
    yield
    signal.alarm(0)


def _alternatives(catalog: Catalog, example: str, deadline: float | None = None) -> AlternativeSet:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    main = solve(build_context(catalog, scenario, table), "highs", None)
    return alternatives(catalog, scenario, table, main[0].cost_usd, "highs", deadline=deadline, main=main)


@pytest.mark.parametrize("example", ["chat_70b_cloud", "long_context_rag", "rag_prefix_cache"])
def test_forked_alternatives_equal_serial_ones(
    catalog: Catalog, example: str, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """Two workers give the serial loop's records (every field, in the same order) and no ``cheaper``."""
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    serial = _alternatives(catalog, example)
    assert forks == []
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parallel = _alternatives(catalog, example)
    assert len(forks) == 2
    assert len(parallel.items) >= 3
    assert parallel.items == serial.items
    assert parallel.cheaper is None and serial.cheaper is None


def test_a_quick_plan_does_not_fork(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """A plan that solved in under FORK_MIN_SOLVE_S has its few small alternatives solved here."""
    monkeypatch.setattr(alt_module, "FORK_MIN_SOLVE_S", 1e9)
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    assert len(_alternatives(catalog, "chat_70b_cloud").items) >= 3
    assert forks == []


def test_deadline_and_sweep_task_run_serially(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """With a --time-limit deadline the alternatives are solved in this process (the skip logic needs the
    clock); after a sweep task ran here no pool is made either; the records are the same."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parallel = _alternatives(catalog, "chat_70b_cloud")
    assert len(forks) == 2
    forks.clear()
    timed = _alternatives(catalog, "chat_70b_cloud", deadline=time.perf_counter() + 1e4)
    assert forks == []
    assert timed.items == parallel.items
    empty = SweepPlan(scenario_name="empty", base={}, axes=(), mode="grid", variants=(), resolved=())
    row = solve_variant(SweepContext(catalog, empty), Variant(index=0, values=()))
    assert row.status == "error"  # an empty scenario: what matters is that a sweep task ran here
    assert not forked.can_fork() and forked.workers_for(26) == 1
    assert _alternatives(catalog, "chat_70b_cloud").items == parallel.items
    assert forks == []


def test_workers_for_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """PLANNER_WORKERS wins (capped by the tasks); unset: the CPUs this process may use; 1 or junk: serial."""
    monkeypatch.setenv(forked.WORKERS_ENV, "3")
    assert forked.workers_for(26) == 3
    assert forked.workers_for(2) == 2
    assert forked.workers_for(1) == 1
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    assert forked.workers_for(26) == 1
    monkeypatch.setenv(forked.WORKERS_ENV, "many")
    assert forked.workers_for(26) == 1
    monkeypatch.delenv(forked.WORKERS_ENV)
    assert forked.workers_for(1000) == len(os.sched_getaffinity(0))
    in_thread: list[int] = []
    worker = threading.Thread(target=lambda: in_thread.append(forked.workers_for(1000)))
    worker.start()
    worker.join()
    assert in_thread == [1]  # not from a thread: its siblings may hold locks


def _in_child(parent: int) -> bool:
    return os.getpid() != parent


def test_results_in_task_order_whatever_the_completion_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Task 0 is the slowest and handed out first; the results are still in task order."""
    monkeypatch.setenv(forked.WORKERS_ENV, "3")

    def fn(i: int) -> tuple[int, int]:
        time.sleep(0.3 if i == 0 else 0.01)
        return i, i * i

    assert forked.fork_map(fn, 8, order=[0, 7, 6, 5, 4, 3, 2, 1]) == [(i, i * i) for i in range(8)]


@pytest.mark.parametrize("how", ["killed", "raises", "unpicklable"])
def test_a_lost_task_is_run_in_the_parent(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """A child killed by a signal, a task raising in its child or a result that cannot be sent back: the
    task is run again in this process, the others' results are kept, and the call returns."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parent = os.getpid()
    ran_here: list[int] = []

    def fn(i: int) -> Any:
        if not _in_child(parent):
            ran_here.append(i)
            return i * 10
        if i == 3 and how == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if i == 3 and how == "raises":
            raise MemoryError("child only")
        if i == 3 and how == "unpicklable":
            return lambda: None
        return i * 10

    assert forked.fork_map(fn, 6) == [i * 10 for i in range(6)]
    assert ran_here == [3]


def test_every_child_killed_still_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """All children die on their first task: every task is run in this process."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parent = os.getpid()

    def fn(i: int) -> int:
        if _in_child(parent):
            os.kill(os.getpid(), signal.SIGKILL)
        return i + 1

    assert forked.fork_map(fn, 5) == [1, 2, 3, 4, 5]


def test_an_error_raises_here_with_its_type(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task that fails everywhere raises in this process, as the serial loop would."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")

    def fn(i: int) -> int:
        if i == 2:
            raise KeyError("nope")
        return i

    with pytest.raises(KeyError, match="nope"):
        forked.fork_map(fn, 4)


def test_killed_alternative_child_falls_back(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """The child solving a site alternative is killed: that alternative is solved here, the other child
    solves the rest, same records."""
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    serial = _alternatives(catalog, "chat_70b_cloud")
    victim = ("site", min(a.value for a in serial.items if a.kind == "site"))
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parent = os.getpid()
    real: Callable[..., Any] = alt_module._probe
    ran_here: list[tuple[str, str]] = []

    def dying(*args: Any) -> Any:
        if _in_child(parent) and args[4] == victim:
            os.kill(os.getpid(), signal.SIGKILL)
        if not _in_child(parent):
            ran_here.append(args[4])
        return real(*args)

    monkeypatch.setattr(alt_module, "_probe", dying)
    assert _alternatives(catalog, "chat_70b_cloud").items == serial.items
    assert len(forks) == 2
    assert ran_here == [victim]


CHILD_PRINTS = """
import os, sys
from planner.forked import fork_map
print("before", end="")  # still in the parent's buffer at fork time: written once
def fn(i):
    print("child", i)
    os.write(1, b"raw child output\\n")
    return i
print(fork_map(fn, 4))
"""


def test_children_write_nothing_on_stdout() -> None:
    """stdout holds the parent's output only (children: fd 1 on /dev/null, no flush of inherited buffers)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), forked.WORKERS_ENV: "2"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD_PRINTS], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "before[0, 1, 2, 3]\n"


FORKING_CLI = (
    "import planner.optimize.alternatives as a; a.FORK_MIN_SOLVE_S = 0.0\n"
    "from planner.cli.main import app; app()"
)


def _plan_json(workers: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), forked.WORKERS_ENV: workers}
    cmd = [sys.executable, "-c", FORKING_CLI, "plan", "examples/chat_70b_cloud/scenario.yaml", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = without_timing(json.loads(out.stdout))  # stdout: one JSON document, nothing else
    return data


def test_cli_json_is_the_same_with_workers() -> None:
    """`planner plan --json` with 2 workers prints the document of the serial run (timings aside)."""
    parallel, serial = _plan_json("2"), _plan_json("1")
    assert len(parallel["alternatives"]) >= 3
    assert parallel == serial


def test_fork_with_a_thread_alive_does_not_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python >= 3.12 warns when fork() runs with other threads alive (a spinner, OpenBLAS): fork_map
    suppresses exactly that warning (tests run with filterwarnings=error)."""
    import warnings

    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    stop = threading.Event()
    spinner = threading.Thread(target=stop.wait, daemon=True)
    spinner.start()
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert forked.fork_map(lambda i: i + 1, 3) == [1, 2, 3]
    finally:
        stop.set()
        spinner.join()
    assert [w for w in seen if "fork" in str(w.message)] == []
