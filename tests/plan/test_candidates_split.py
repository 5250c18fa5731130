"""A candidate table evaluated in two parts of its workloads is the table evaluated at once
(planner.candidates_split): the same rows, ids, columns and points, to the last bit."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from planner.candidates import _estimated_rows, _evaluated, _in_two_parts
from planner.candidates_split import SCHEDULE_ROWS, merged, schedules_hold, two_parts
from planner.catalog import Catalog
from planner.cli.bench import bench_scenario
from planner.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _same(a: tuple[pd.DataFrame, pd.DataFrame], b: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pd.testing.assert_frame_equal(a[0], b[0], check_exact=True)
    pd.testing.assert_frame_equal(a[1], b[1], check_exact=True)


def _sub(scenario: Scenario, part: list[int]) -> Scenario:
    return scenario.model_copy(update={"workloads": [scenario.workloads[i] for i in part]})


def test_the_bench_table_in_two_parts_is_the_table_at_once(catalog: Catalog) -> None:
    """The 5-workload bench (prefill/decode rows, GPU shares, 4 sites): the forked split build_candidates takes."""
    scenario = bench_scenario()
    parts = two_parts(_estimated_rows(catalog, scenario))
    assert parts == ([1, 2], [0, 3, 4])  # assistant + code, chat + rag + batch: 13,104 estimated rows each
    split = _in_two_parts(catalog, scenario, parts)
    assert split is not None
    whole = _evaluated(catalog, scenario)[0]
    assert len(whole.candidates) == 68_952 and (whole.candidates["role"] != "colocated").any()
    assert (whole.candidates["share_frac"] < 1).any()
    _same((split.candidates, split.points), (whole.candidates, whole.points))


@pytest.mark.parametrize(("example", "parts"), [("mixed_fleet", ([0, 2], [1])), ("moe_ep", ([3, 0], [2, 1])),
                                                 ("small_models_shared", ([1], [0]))])
def test_any_split_of_an_examples_workloads_merges_into_its_table(
    catalog: Catalog, example: str, parts: tuple[list[int], list[int]]
) -> None:
    """Parts in any order (merged orders the rows by share segment and workload), with the schedule the parts
    are evaluated with on both sides (these tables are smaller than SCHEDULE_ROWS)."""
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    evaluated = [_evaluated(catalog, _sub(scenario, p), schedule_floor=SCHEDULE_ROWS)[0] for p in parts]
    whole = _evaluated(catalog, scenario, schedule_floor=SCHEDULE_ROWS)[0]
    _same(merged(scenario, [(t.candidates, t.points) for t in evaluated]), (whole.candidates, whole.points))


def test_parts_balance_the_estimated_rows_and_small_scenarios_stay_whole() -> None:
    assert two_parts([30_000, 10_000, 12_000, 9_000]) == ([0], [1, 2, 3])
    assert two_parts([15_000, 14_000]) == ([0], [1])
    assert two_parts([19_999]) is None
    assert two_parts([9_000, 9_000]) is None  # 18,000 < SPLIT_MIN_ROWS: one evaluation


def test_the_parts_schedule_must_hold_for_the_whole_table() -> None:
    """A part evaluates its bisections as a table of SCHEDULE_ROWS rows or more; two parts whose pools add up to
    fewer rows than that would give other numbers than one evaluation, so their table is not taken."""
    big = SCHEDULE_ROWS
    assert schedules_hold([{"colocated": big, "prefill": 3000, "decode": 3000}, {"colocated": 10, "prefill": 1097, "decode": 1097}])
    assert not schedules_hold([{"colocated": big, "prefill": 2000}, {"colocated": big, "prefill": 2000}])
    assert schedules_hold([{"colocated": big, "prefill": 0}, {"colocated": 1, "prefill": 0}])


def test_a_split_whose_schedule_fails_is_evaluated_at_once(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """mixed_fleet split in two (SPLIT_MIN_ROWS lowered): its tables are smaller than SCHEDULE_ROWS, so the parts'
    schedule is not the whole table's; build_candidates drops them and gives the table of one evaluation."""
    import planner.candidates as candidates
    import planner.candidates_split as split

    scenario = load_scenario(ROOT / "examples" / "mixed_fleet" / "scenario.yaml", catalog)
    monkeypatch.setattr(split, "SPLIT_MIN_ROWS", 1)
    parts = two_parts(_estimated_rows(catalog, scenario))
    assert parts is not None
    assert _in_two_parts(catalog, scenario, parts) is None
    calls: list[int] = []  # workloads of each evaluation in this process (a forked part's is in its child;
    # where none can be forked, both parts are evaluated here)
    evaluated = candidates._evaluated

    def counted(catalog: Catalog, scenario: Scenario, **kwargs: object) -> object:
        calls.append(len(scenario.workloads))
        return evaluated(catalog, scenario, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(candidates, "_evaluated", counted)
    monkeypatch.setattr(candidates, "workers_for", lambda _n: 2)  # split even where no child can be forked
    table = candidates.build_candidates(catalog, scenario)
    whole = evaluated(catalog, scenario)[0]
    _same((table.candidates, table.points), (whole.candidates, whole.points))
    assert calls[-1] == 3 and len(calls) >= 2  # a part, then the whole table
