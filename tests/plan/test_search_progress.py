"""Progress lines of a running search (planner/search_progress.py): what they say, and that watching a
search does not change the plan it finds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import planner.search_progress as search_progress
from planner.catalog import Catalog
from planner.plan import plan
from planner.readout.result import PlanResult
from planner.scenario import load_scenario
from planner.search_progress import reporting, search_text

ROOT = Path(__file__).resolve().parents[2]


def test_the_line_states_the_best_plan_the_floor_and_the_gap() -> None:
    assert search_text(48_096.2, 46_897.4, 411) == "best $48,096, proven floor $46,897 (gap 2.5%), 411 nodes"
    assert search_text(100.0, 100.0, 1_234) == "best $100, proven floor $100 (gap 0.0%), 1,234 nodes"
    assert search_text(math.inf, -math.inf, 0, "part 2 of 3: ") == "part 2 of 3: no plan yet, no floor yet, 0 nodes"
    assert search_text(250.0, -math.inf, 7) == "best $250, no floor yet, 7 nodes"


def test_a_watched_search_finds_the_same_plan(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """chat_70b_cloud with a report at every callback: its last report names the plan's cost, the block ends
    with an empty line (the search is over), and the JSON is the unwatched plan's, byte for byte."""
    scenario = load_scenario(ROOT / "examples/chat_70b_cloud/scenario.yaml", catalog)
    quiet = plan(catalog, scenario, with_alternatives=False)
    monkeypatch.setattr(search_progress, "REPORT_EVERY_S", 0.0)
    lines: list[str] = []
    with reporting(lines.append):
        watched = plan(catalog, scenario, with_alternatives=False)
    assert lines[-1] == ""
    shown = [line for line in lines if line.startswith("best $")]
    assert shown, lines
    assert quiet.ledger is not None
    assert shown[-1].startswith(f"best ${quiet.ledger.total_usd:,.0f}, proven floor $")
    timings = {"solve_seconds", "total_seconds", "optimizer_seconds"}

    def stable(result: PlanResult) -> str:
        return json.dumps({k: v for k, v in result.to_json().items() if k not in timings}, sort_keys=True)

    assert stable(watched) == stable(quiet)


def test_no_reporter_no_callback(catalog: Catalog) -> None:
    """Outside :func:`reporting` nothing is reported (a sweep's worker or a library call stays silent)."""
    assert search_progress._REPORTER.get() is None


def test_the_large_paths_sub_problems_stay_silent(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """planner.optimize.decompose solves its period, seed and shortlist problems through the same HiGHS path as
    the exact solve, but their best plan and bound are not the plan's: none is reported. The same problem
    solved as the exact solve is reported."""
    from planner.candidate_cache import candidates_for
    from planner.optimize import decompose
    from planner.optimize.build import build_problem
    from planner.optimize.components import solve_parts, whole
    from planner.problem.context import build_context

    monkeypatch.setattr(search_progress, "REPORT_EVERY_S", 0.0)
    scenario = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    lines: list[str] = []
    for reported in (False, True):
        ctx = build_context(catalog, scenario, candidates_for(catalog, scenario))
        build_problem(ctx)
        with reporting(lines.append):
            if reported:
                split = whole(ctx)
                assert split is not None
                solve_parts(ctx, split, time_limit_s=None)
            else:
                assert decompose._solve(ctx, "highs", 10**6, None)[0]
        assert bool(lines) == reported
