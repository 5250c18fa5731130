"""GPU-type alternatives solved in a forked child while the plan is (planner.optimize.early_alternatives), and
the one-computation child behind it and behind the candidate table's co-located curves
(planner.forked.Background): the same answers as the serial loop, no child left behind."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner import forked
from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.cli.bench_identity import without_timing
from planner.optimize import alternative_schedule, early_alternatives, solve
from planner.optimize import alternatives as alt_module
from planner.optimize.restricted_model import PlanModel
from planner.plan import plan
from planner.problem.context import build_context
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="needs fork() (Linux)")


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(forked._STATE, "forbidden", False)
    monkeypatch.setattr(early_alternatives, "EARLY_MIN_CANDIDATES", 0)  # the examples are small
    signal.alarm(120)
    yield
    signal.alarm(0)


def _reaped(pids: list[int]) -> bool:
    """True when none of ``pids`` is still a child of this process (running or a zombie)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def _plan_json(catalog: Catalog, example: str) -> dict[str, Any]:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    data: dict[str, Any] = without_timing(json.loads(json.dumps(plan(catalog, scenario).to_json())))
    return data


@pytest.mark.parametrize("example", ["mixed_fleet", "long_context_rag"])
def test_plan_with_early_alternatives_equals_the_serial_plan(
    catalog: Catalog, example: str, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """Two workers (GPU alternatives in a child during the solve, then the forked loop) give the serial
    plan's JSON, alternatives included, and leave no child behind."""
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    serial = _plan_json(catalog, example)
    assert forks == []
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    started: list[early_alternatives.EarlyAlternatives] = []
    real_start = early_alternatives.start

    def spying(*args: Any, **kwargs: Any) -> early_alternatives.EarlyAlternatives:
        made = real_start(*args, **kwargs)
        started.append(made)
        return made

    monkeypatch.setattr(early_alternatives, "start", spying)
    parallel = _plan_json(catalog, example)
    assert len(started) == 1 and started[0].outcomes is not None  # the early child did run
    assert forks
    assert parallel == serial
    assert len(serial["alternatives"]) >= 5
    assert _reaped(forks)


def test_sites_start_while_the_gpu_restrictions_finish(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """mixed_fleet with two workers: the site alternatives are handed to workers before the early child's
    answers are taken (the plan's solve may end first), the GPU types it answered are probed without a
    worker, and the alternatives are the serial loop's."""
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    serial = _plan_json(catalog, "mixed_fleet")
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    calls: list[tuple[int, bool]] = []  # (tasks, the early answers taken already)
    taken: list[bool] = []
    real_map, real_take = alternative_schedule.fork_map, early_alternatives.EarlyAlternatives.take

    def spying_map(fn: Any, n_tasks: int, order: Any = None, meanwhile: Any = None) -> Any:
        calls.append((n_tasks, bool(taken)))
        return real_map(fn, n_tasks, order, meanwhile)

    def spying_take(self: Any, model: Any, ctx: Any) -> None:
        taken.append(True)
        real_take(self, model, ctx)

    monkeypatch.setattr(alternative_schedule, "fork_map", spying_map)
    monkeypatch.setattr(early_alternatives.EarlyAlternatives, "take", spying_take)
    parallel = _plan_json(catalog, "mixed_fleet")
    sites = sum(1 for a in serial["alternatives"] if a["kind"] == "site")
    assert calls[0] == (sites, False)  # the sites first, before the GPU types' answers were taken
    assert all(n < len(serial["alternatives"]) - sites + 1 for n, _ in calls[1:])
    assert parallel == serial
    assert _reaped(forks)


def test_early_restrictions_are_the_plan_models(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every GPU type's restriction solved before the plan equals PlanModel.solve of the solved plan, where
    the plan does not answer it itself (mixed_fleet: 9 GPU types)."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    scenario = load_scenario(ROOT / "examples" / "mixed_fleet" / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    ctx = build_context(catalog, scenario, table)
    with early_alternatives.start(ctx, table, "highs", time_limit_s=None, wanted=True) as early:
        assert early.built is ctx and early.outcomes is not None and early.outcomes.forked
        sol, solved_ctx = solve(ctx, "highs", None, built=early.built)
        assert solved_ctx is ctx and sol.status == "optimal"
        model = PlanModel.of(ctx, sol, table)
        assert model is not None
        early.take(model, ctx)
    serial = PlanModel.of(ctx, sol, table)
    assert serial is not None and serial.early == {}
    assert len(model.early) >= 5
    compared = 0
    for (column, gpu), outcome in model.early.items():
        if model.plan_only[column] == gpu:
            continue
        mine = serial.solve(column, gpu, time_limit_s=None, max_nodes=alt_module.ALTERNATIVE_MAX_NODES)
        if outcome is None:
            assert mine is None
            continue
        assert mine is not None
        assert (outcome.status, outcome.cost_usd, outcome.used) == (mine.status, mine.cost_usd, mine.used)
        compared += 1
    assert compared >= 3


def test_nothing_started_with_a_deadline_or_without_alternatives(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """A --time-limit (the solves share it), no alternatives asked, one worker, or another solver: nothing
    is built ahead or forked."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    scenario = load_scenario(ROOT / "examples" / "mixed_fleet" / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    cases = [
        dict(solver="highs", time_limit_s=30.0, wanted=True),
        dict(solver="highs", time_limit_s=None, wanted=False),
        dict(solver="cbc", time_limit_s=None, wanted=True),
    ]
    for kw in cases:
        made = early_alternatives.start(build_context(catalog, scenario, table), table, **kw)  # type: ignore[arg-type]
        assert made.built is None and made.outcomes is None
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    made = early_alternatives.start(build_context(catalog, scenario, table), table, "highs", time_limit_s=None, wanted=True)
    assert made.built is None and made.outcomes is None
    assert forks == []


def test_background_gives_the_function_value(monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> None:
    """The child's answer, computed in the child (its pid differs from ours)."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parent = os.getpid()
    with forked.Background(lambda: (os.getpid(), [i * i for i in range(5)])) as job:
        assert job.forked
        pid, squares = job.result()
    assert pid != parent and squares == [0, 1, 4, 9, 16]
    assert len(forks) == 1 and _reaped(forks)


@pytest.mark.parametrize("how", ["killed", "raises", "unpicklable"])
def test_background_lost_child_is_computed_here(monkeypatch: pytest.MonkeyPatch, how: str, forks: list[int]) -> None:
    """A child killed, raising or answering what cannot be pickled: computed again here, same value."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    parent = os.getpid()

    def fn() -> Any:
        if os.getpid() != parent:
            if how == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            if how == "raises":
                raise MemoryError("child only")
            return lambda: None
        return "here"

    assert forked.Background(fn).result() == "here"
    assert len(forks) == 1 and _reaped(forks)


def test_background_error_raises_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error in every process surfaces here with its type."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")

    def fn() -> int:
        raise KeyError("nope")

    with pytest.raises(KeyError, match="nope"):
        forked.Background(fn).result()


def test_background_without_fork(monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> None:
    """fork=False, one worker, or inside a forked child: computed here, lazily, nothing forked."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    calls: list[int] = []

    def counted() -> int:
        calls.append(1)
        return 7

    job = forked.Background(counted, fork=False)
    assert not job.forked and calls == []
    assert job.result() == 7 and calls == [1]
    monkeypatch.setenv(forked.WORKERS_ENV, "1")
    assert forked.Background(lambda: 8).result() == 8
    monkeypatch.setenv(forked.WORKERS_ENV, "2")
    forked.forbid_forking()
    assert forked.Background(lambda: 9).result() == 9
    assert forks == []


def test_background_cancel_stops_the_child(monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> None:
    """Leaving the context (an infeasible plan, an exception) kills a child still working and reaps it."""
    monkeypatch.setenv(forked.WORKERS_ENV, "2")

    def slow() -> int:
        signal.pause()  # until killed
        return 0

    with forked.Background(slow) as job:
        assert job.forked
    assert not job.forked
    assert len(forks) == 1 and _reaped(forks)
