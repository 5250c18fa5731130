"""The workbook showed GPUs paid and GPUs serving without the reason (buy_vs_rent: more GPUs paid than its
replicas run on). The Summary now says, per GPU type, how many GPU-months are paid and run replicas, and why
the rest are idle — read from the plan (planner.readout.gpu_use): whole nodes beyond their replicas, nodes
held through months of lower demand, a node delivered before it serves; spare replicas for redundancy."""

from __future__ import annotations

import html

from planner.readout.gpu_use import BEFORE_FIRST_USE, LOWER_DEMAND, WHOLE_UNITS, gpu_use
from planner.report.gpu_use_text import GPU_USE_TITLE, gpu_use_lines
from planner.report.workbook import build_workbook
from tests.report import synthetic_plan as syn


def test_idle_gpu_months_by_cause_from_the_plan() -> None:
    uses = {u.gpu: u for u in gpu_use(syn.plan_result())}
    # mi300x: rented 8-GPU instances, one per replica: nothing idle
    assert uses["mi300x"].paid_per_month == uses["mi300x"].running_per_month == [8, 8, 16, 16, 8, 8]
    # h200_sxm: two bought 8-GPU nodes paid from delivery (month 1), one GPU runs a replica from month 2
    h200 = uses["h200_sxm"]
    assert h200.paid_per_month == [0, 16, 16, 16, 16, 16] and h200.running_per_month == [0, 0, 1, 1, 1, 1]
    assert h200.idle_gpu_months == {BEFORE_FIRST_USE: 16, WHOLE_UNITS: 60}
    assert h200.idle_months[BEFORE_FIRST_USE] == [1]
    # h100_sxm: 3 one-GPU rentals for 2 GPUs of replicas in months 2-3: a whole unit idle
    assert uses["h100_sxm"].idle_gpu_months == {LOWER_DEMAND: 2}
    for u in uses.values():  # every paid GPU-month is running or idle for a named cause
        assert abs(u.paid_gpu_months - u.running_gpu_months - sum(u.idle_gpu_months.values())) < 1e-9


def test_summary_explains_the_difference() -> None:
    lines = dict(gpu_use_lines(syn.plan_result()))
    assert lines["mi300x"].endswith("Every GPU paid runs a replica in every month.")
    assert "80 GPU-months are paid and 4 run replicas" in lines["h200_sxm"]
    assert "16 in bought nodes delivered before the first period they serve (month 1)" in lines["h200_sxm"]
    assert "at most 1 GPU running replicas" in lines["h200_sxm"]
    ws = build_workbook(syn.plan_result())["Summary"]
    cells = {ws.cell(row=r, column=1).value: ws.cell(row=r, column=2).value for r in range(1, ws.max_row + 1)}
    assert cells["GPU type"] == GPU_USE_TITLE and cells["h200_sxm"] == lines["h200_sxm"]
    from planner.report.html import build_html

    assert html.escape(lines["h200_sxm"]) in build_html(syn.plan_result())


def test_spare_replicas_of_redundancy_are_named() -> None:
    from dataclasses import replace

    from planner.scenario_base import Redundancy

    result = syn.plan_result()
    workloads = [
        w.model_copy(update={"redundancy": Redundancy()}) if w.name == "chat" else w for w in result.scenario.workloads
    ]
    chat = next(d for d in result.deployments if d.workload == "chat")
    spare_chat = replace(chat, replicas_per_period=[2, 3, 2])  # 8 req/s needs one 10.45 req/s replica
    deployments = [spare_chat if d is chat else d for d in result.deployments]
    result = syn.plan_result(
        scenario=result.scenario.model_copy(update={"workloads": workloads}), deployments=deployments
    )
    mi300x = next(u for u in gpu_use(result) if u.gpu == "mi300x")
    assert mi300x.spare_per_month == [8, 8, 8, 8, 8, 8]
    assert "redundancy (replica domain) keeps the SLO" in dict(gpu_use_lines(result))["mi300x"]


def test_an_hourly_profile_plan_gets_no_month_by_month_comparison() -> None:
    """An hourly profile's rentals are billed by the hour (0.5 of a b200 rented 12 h a day) and its replicas are
    the busiest block's: the sentence read "at most 0.50 GPUs paid at once …, at most 1 GPU running replicas"."""
    from planner.readout import ScheduleEntry
    from planner.readout.types import HourBlock

    result = syn.plan_result()
    block = HourBlock(12.0, {"mi300x@us_east": 8}, {"chat": 8.0})
    schedule = [ScheduleEntry(**{**e.__dict__, "hour_blocks": [block]}) for e in result.schedule]
    assert gpu_use(syn.plan_result(schedule=schedule)) == []
