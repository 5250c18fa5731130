"""Local-process sweeps: every row equals a direct plan of its variant, ledger figures unchanged, failed
variants are rows, lost workers are retried, and --resume solves only what is missing."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.readout.sweep import Choice
from planner.report.formatting import binding_rows
from planner.scenario import parse_scenario
from planner.sweep import LocalEngine, SweepResult, run_sweep
from planner.sweep.spec import Variant
from planner.sweep.task import SweepContext, row_from_plan, solve_variant
from tests.sweep.helpers import chat_sweep, die


def test_every_row_is_the_plan_of_its_variant(catalog: Catalog, local_result: SweepResult) -> None:
    sweep = chat_sweep(catalog)
    assert [r.index for r in local_result.rows] == list(range(8))
    for variant, row in zip(sweep.variants, local_result.rows, strict=True):
        assert row.key == variant.key and row.values == dict(variant.values)
        direct = plan(catalog, parse_scenario(sweep.variant_data(variant)), with_alternatives=False).to_json()
        assert row.status == direct["status"] == "optimal"
        for name in (
            "total_cost_usd",
            "capex_usd",
            "opex_usd_per_month",
            "cost_usd_per_million_output_tokens",
        ):
            assert getattr(row, name) == direct[name], name
        assert sum(row.gpus_by_type.values()) == sum(d["gpus"] for d in direct["deployments"])
        assert [(c.gpu, c.tp, c.ep, c.quantization, c.site, c.role) for c in row.choices] == [
            (d["gpu"], d["tp"], d["ep"], d["quantization"], d["site"], d["role"]) for d in direct["deployments"]
        ]
        # as the terminal names them: the periods a row's slice stands for (chat_70b_cloud: one slice, 36 months)
        assert row.binding_constraints == [
            f"{family}:{key}" for family, key in binding_rows(direct["binding_constraints"], direct["schedule"])
        ]
        assert "demand_coverage:chat/0–35" in row.binding_constraints


def test_a_disaggregated_plans_pools_read_apart_from_its_colocated_replicas(catalog: Catalog) -> None:
    """chat_70b_cloud at 32 req/s: six co-located MI300X TP1 replicas beside a disaggregated pair (two H100 TP2
    prefill replicas, one MI300X TP2 decode replica). The sweep's choice showed a co-located replica and a
    pool of the same shape alike, "mi300x TP1xPP1 fp8" twice (role, site and replicas left out)."""
    import yaml

    data = yaml.safe_load(Path("examples/chat_70b_cloud/scenario.yaml").read_text())
    data["workloads"][0]["requests_per_s"] = 32
    direct = plan(catalog, parse_scenario(data), with_alternatives=False).to_json()
    row = row_from_plan(Variant(0, (("workloads.chat.requests_per_s", 32),)), direct)
    labels = [c.label for c in row.choices]
    assert labels == [
        "6× mi300x TP1xPP1 fp8 at us_east",
        "2× h100_sxm TP2xPP1 fp8 at us_east (prefill pool)",
        "1× mi300x TP2xPP1 fp8 at us_east (decode pool)",
    ]
    # a co-located replica and a pool of the same shape read apart
    same = [
        Choice(
            workload="chat", model="llama_3_1_70b", gpu="mi300x", tp=1, pp=1, quantization="fp8", replicas=4,
            site="us_east", role=role,
        ).label
        for role in ("colocated", "prefill")
    ]
    assert same == ["4× mi300x TP1xPP1 fp8 at us_east", "4× mi300x TP1xPP1 fp8 at us_east (prefill pool)"]
    # a resume file written before role, EP and site were recorded still reads, as co-located
    old = {k: v for k, v in row.choices[2].__dict__.items() if k not in ("ep", "site", "role")}
    assert Choice(**old).label == "1× mi300x TP2xPP1 fp8"


def test_rent_only_cost_scales_with_the_rent_price(local_result: SweepResult) -> None:
    """The example rents only, so halving every rent price halves the optimum (same deployment)."""
    by_key = {r.key: r for r in local_result.rows}
    for row in local_result.rows:
        if row.values["economics.rent_price_scale"] != 0.5:
            continue
        full = by_key[row.key.replace("economics.rent_price_scale=0.5", "economics.rent_price_scale=1")]
        assert row.total_cost_usd is not None and full.total_cost_usd is not None
        assert math.isclose(row.total_cost_usd * 2, full.total_cost_usd, rel_tol=1e-9)
        assert row.choices == full.choices
    # a tighter TPOT SLO never makes the plan cheaper
    for row in local_result.rows:
        if row.values["workloads.chat.slo.tpot_ms"] == 30:
            loose = by_key[row.key.replace("tpot_ms=30", "tpot_ms=50")]
            assert row.total_cost_usd >= loose.total_cost_usd  # type: ignore[operator]


def test_an_infeasible_variant_is_a_row_with_its_cause(catalog: Catalog) -> None:
    sweep = chat_sweep(catalog, ["workloads.chat.slo.tpot_ms=50,1"])
    result = run_sweep(catalog, sweep, LocalEngine(1))
    ok, impossible = result.rows
    assert ok.status == "optimal" and ok.error is None
    assert impossible.status == "infeasible" and impossible.total_cost_usd is None
    assert impossible.error is not None and "the SLO is 1 ms" in impossible.error
    assert result.failed == []


def test_a_variant_that_raises_is_an_error_row(catalog: Catalog) -> None:
    """The task turns any exception into a row: here a variant whose data no longer parses."""
    sweep = chat_sweep(catalog, ["economics.rent_price_scale=1"])
    broken = Variant(5, (("economics.rent_price_scale", 1),))
    bad_plan = replace(sweep, base={**sweep.base, "horizon_months": 0})
    row = solve_variant(SweepContext(catalog, bad_plan), broken)
    assert row.status == "error" and row.index == 5
    assert row.error is not None and "horizon_months" in row.error
    assert row.total_cost_usd is None


@dataclass
class DyingFirst:
    """An engine whose first pool loses its processes at start (each task raises BrokenProcessPool)."""

    workers: int = 1
    sessions: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "dying-first"

    @contextmanager
    def session(self, context: SweepContext) -> Iterator[tuple[Executor, SweepContext | None]]:
        self.sessions.append("session")
        if len(self.sessions) == 1:
            pool = ProcessPoolExecutor(max_workers=1, initializer=die)
            try:
                yield pool, None
            finally:
                pool.shutdown(wait=True)
        else:
            with LocalEngine(self.workers).session(context) as opened:
                yield opened


def test_tasks_lost_with_their_worker_are_retried(catalog: Catalog, local_result: SweepResult) -> None:
    sweep = chat_sweep(catalog, ["economics.rent_price_scale=0.5,1", "workloads.chat.slo.tpot_ms=50"])
    engine = DyingFirst()
    result = run_sweep(catalog, sweep, engine)
    assert len(engine.sessions) == 2
    assert [r.status for r in result.rows] == ["optimal", "optimal"]
    gave_up = run_sweep(catalog, sweep, DyingFirst(), retries=0)
    assert [r.status for r in gave_up.rows] == ["error", "error"]
    assert all("worker lost 1 times" in (r.error or "") for r in gave_up.rows)


class BreaksOnSecondSubmit(Executor):
    """A local pool whose worker dies after the first task is submitted: ``submit`` of the next raises
    BrokenProcessPool, as a real pool does when its worker dies while the sweep is still submitting."""

    def __init__(self, pool: Executor) -> None:
        self.pool, self.submitted = pool, 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.submitted += 1
        if self.submitted > 1:
            raise BrokenProcessPool("a child process terminated abruptly")
        return self.pool.submit(fn, *args, **kwargs)


@dataclass
class BreakingWhileSubmitting:
    """An engine whose first pool breaks between two submissions (the race a loaded machine hit in
    test_tasks_lost_with_their_worker_are_retried: BrokenProcessPool came out of run_sweep)."""

    workers: int = 1
    sessions: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "breaking-while-submitting"

    @contextmanager
    def session(self, context: SweepContext) -> Iterator[tuple[Executor, SweepContext | None]]:
        self.sessions.append("session")
        with LocalEngine(self.workers).session(context) as (pool, shared):
            yield (BreaksOnSecondSubmit(pool) if len(self.sessions) == 1 else pool), shared


def test_a_pool_that_breaks_while_tasks_are_submitted_retries_the_unsent(catalog: Catalog) -> None:
    sweep = chat_sweep(catalog, ["economics.rent_price_scale=0.5,1", "workloads.chat.slo.tpot_ms=50"])
    engine = BreakingWhileSubmitting()
    result = run_sweep(catalog, sweep, engine)
    assert len(engine.sessions) == 2
    assert [r.status for r in result.rows] == ["optimal", "optimal"]


def test_resume_solves_only_the_missing_variants(
    catalog: Catalog, tmp_path: Path, local_result: SweepResult
) -> None:
    log = tmp_path / "rows.jsonl"
    small = chat_sweep(catalog, ["economics.rent_price_scale=0.5,1", "workloads.chat.slo.tpot_ms=30"])
    first = run_sweep(catalog, small, LocalEngine(1), resume=log)
    assert first.resumed == 0
    lines = log.read_text().splitlines()
    assert len(lines) == 3 and "scenario_sha256" in json.loads(lines[0])
    seen: list[str] = []
    wider = chat_sweep(catalog, ["economics.rent_price_scale=0.5,1,2", "workloads.chat.slo.tpot_ms=30"])
    second = run_sweep(catalog, wider, LocalEngine(1), resume=log, on_row=lambda r: seen.append(r.key))
    assert second.resumed == 2
    assert seen == ["economics.rent_price_scale=2; workloads.chat.slo.tpot_ms=30"]
    assert [r.comparable() for r in second.rows[:2]] == [r.comparable() for r in first.rows]
    dearer, base = second.rows[2].total_cost_usd, second.rows[1].total_cost_usd
    assert dearer is not None and base is not None and dearer == pytest.approx(2 * base)
    assert len(log.read_text().splitlines()) == 4


def test_a_resume_file_of_another_scenario_is_refused(catalog: Catalog, tmp_path: Path) -> None:
    from planner.errors import InputError

    log = tmp_path / "rows.jsonl"
    log.write_text(json.dumps({"scenario": "other", "scenario_sha256": "0" * 64}) + "\n")
    with pytest.raises(InputError, match="written for another scenario"):
        run_sweep(catalog, chat_sweep(catalog), LocalEngine(1), resume=log)
