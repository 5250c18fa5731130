"""The order the alternatives are handed to workers (planner.optimize.alternative_schedule): site
alternatives first, those the plan likely answers by itself (carried to its twins at no higher rent) after
the ones that need a search, then the GPU types. The order changes no answer (the forked tests check that
the records equal the serial loop's); these tests check the order itself, and that the caller's own work
(the plan's readout) is done once while the workers finish."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from planner import forked
from planner.candidates import CandidateTable
from planner.optimize.alternative_schedule import carried_sites, expensive_first
from planner.optimize.solver import Solution


def _row(cand: int, site: str, gpu: str, usd: float, workload: str = "chat") -> dict[str, Any]:
    return {
        "cand": cand, "workload": workload, "role": "colocated", "engine": "vllm", "model": "m", "quantization": "bf16",
        "kv_dtype": "bf16", "gpu": gpu, "tp": 1, "pp": 1, "ep": 1, "placement": "cloud", "gpus": 1.0,
        "share_frac": 1.0, "prefix_cache": False, "speculative": False, "chunk_tokens": float("nan"), "site": site,
        "usd_per_hour": usd, "feasible": True,
    }


def _table_and_plan(deployed: list[int]) -> tuple[CandidateTable, tuple[Solution, Any]]:
    """Four sites; the plan deploys candidates ``deployed`` (h100 at a 2 USD/h, l4 at b 1 USD/h)."""
    rows = [
        _row(0, "a", "h100", 2.0), _row(1, "b", "h100", 2.0), _row(2, "c", "h100", 3.0),  # d has no h100
        _row(3, "a", "l4", 1.0), _row(4, "b", "l4", 1.0), _row(5, "c", "l4", 1.0), _row(6, "d", "l4", 0.5),
    ]
    frame = pd.DataFrame(rows)
    table = CandidateTable(candidates=frame, points=pd.DataFrame(), sites={})
    sol = Solution("optimal", 0.0, None, 0.0, values={"n_rep": {(k, 0, 0): 2.0 for k in deployed}})
    return table, (sol, SimpleNamespace(cands=frame.set_index("cand", drop=False)))


def test_carried_sites_are_those_renting_every_deployed_configuration_for_no_more() -> None:
    table, main = _table_and_plan([0, 4])
    # a and b rent both for the plan's price; c's h100 costs more; d has no h100 twin
    assert carried_sites(table, main) == {"a", "b"}
    assert carried_sites(table, None) == set()
    assert carried_sites(table, _table_and_plan([])[1]) == set()


def test_sites_needing_a_search_are_handed_out_first() -> None:
    table, main = _table_and_plan([0, 4])
    tasks = [("gpu", "h100"), ("gpu", "l4"), ("site", "a"), ("site", "b"), ("site", "c"), ("site", "d")]
    order = [tasks[i] for i in expensive_first(table, tasks, main)]
    assert order == [("site", "c"), ("site", "d"), ("site", "a"), ("site", "b"), ("gpu", "l4"), ("gpu", "h100")]
    # without a plan: sites by candidates (ties in task order), then GPU types by candidates
    plain = [tasks[i] for i in expensive_first(table, tasks)]
    assert plain == [("site", "a"), ("site", "b"), ("site", "c"), ("site", "d"), ("gpu", "l4"), ("gpu", "h100")]


@pytest.mark.skipif(not forked.can_fork(), reason="needs fork() (Linux)")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_fork_map_calls_meanwhile_once(workers: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's own work runs once, forked (once no more tasks are left than workers) or serial; results
    unchanged."""
    monkeypatch.setitem(forked._STATE, "forbidden", False)
    monkeypatch.setenv(forked.WORKERS_ENV, workers)
    calls: list[int] = []
    assert forked.fork_map(lambda i: i * i, 5, order=[4, 3, 2, 1, 0], meanwhile=lambda: calls.append(1)) == [
        0, 1, 4, 9, 16
    ]
    assert calls == [1]
    assert forked.fork_map(lambda i: i, 0, meanwhile=lambda: calls.append(2)) == []
    assert calls == [1, 2]
