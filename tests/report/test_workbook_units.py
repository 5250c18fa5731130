"""Units a finance reader needs on the plan workbook: what one unit of a Costs units column is, the delivery
month as a whole month, the idle GPUs' months, the Costs opex column's parts, and the training Summary's
parallelism units."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from planner.report.workbook import build_workbook
from planner.report.workbook_costs import OPEX, SUPPLY_HEADERS
from planner.report.workbook_idle import IDLE_HEADERS
from tests.report import synthetic_plan as syn
from tests.report.workbook_io import table_last_row


def _header(ws: object) -> list[object]:
    return [c.value for c in ws[1]]  # type: ignore[index]


def test_costs_units_columns_say_what_one_unit_is() -> None:
    """A bare "Units 1: mi300x @ us_east rent_on_demand" read as GPUs: it counts 8-GPU instances (1 unit
    = 8 GPUs, billed $9,849.60/month), and a bought h200 unit is an 8-GPU node."""
    costs = build_workbook(syn.plan_result())["Costs"]
    units = [h for h in _header(costs) if str(h).startswith("Units ")]
    assert units == [
        "Units 1: mi300x @ us_east rent_on_demand (8-GPU instances)",
        "Units 2: h100_sxm @ us_west rent_on_demand (GPUs)",
        "Units 3: h200_sxm @ dc1 buy (8-GPU nodes)",
    ]
    assert OPEX in _header(costs) and OPEX == "Opex: rent + running + discount (USD)"


def test_delivery_month_is_the_whole_month_running_starts(tmp_path: Path) -> None:
    """A 0.5-month lead time delivered "0.50" (month 0.5 is no month); the ledger starts the node's running
    cost in month ⌈0.5⌉ = 1, and the Supply sheet says 1, as a whole number."""
    supply = [*syn.SUPPLY[:2], dataclasses.replace(syn.SUPPLY[2], available_from_month=0.5)]
    ws = build_workbook(syn.plan_result(supply=supply))["Supply"]
    col = SUPPLY_HEADERS.index("Delivery month") + 1
    cells = [ws.cell(row=r, column=col) for r in (2, 3, 4)]
    assert [c.value for c in cells] == ["", "", syn.DELIVERY_C] and syn.DELIVERY_C == 1
    assert cells[2].number_format == "#,##0"
    # the Costs sheet's running cost of the bought nodes starts that month
    costs = build_workbook(syn.plan_result(supply=supply))["Costs"]
    units = _header(costs).index("Units 3: h200_sxm @ dc1 buy (8-GPU nodes)") + 1
    assert [costs.cell(row=m + 2, column=units).value for m in range(2)] == [0, syn.NODES_C]


def test_idle_gpus_name_their_months() -> None:
    """Periods are two months in the synthetic plan: period 2 is months 4-5; the bought H200 nodes, delivered
    in month 1, are paid idle there (period 0, month 1 alone)."""
    ws = build_workbook(syn.plan_result())["Supply"]
    rows = [[c.value for c in row] for row in ws.iter_rows()]
    header = next(i for i, row in enumerate(rows) if row[: len(IDLE_HEADERS)] == IDLE_HEADERS)
    assert IDLE_HEADERS[3] == "Months"
    assert [r[:4] for r in rows[header + 1 : header + 5]] == [
        ["h100_sxm", "us_west", 1, "2-3"],
        ["h200_sxm", "dc1", 0, "1"],
        ["h200_sxm", "dc1", 1, "2-3"],
        ["h200_sxm", "dc1", 2, "4-5"],
    ]


def test_training_summary_parallelism_units() -> None:
    """dp counts model replicas, not GPUs (8 replicas of tp × pp = 1 GPU each: 8 GPUs)."""
    from planner.report.training_workbook import SUMMARY_KEYS

    units = {key: unit for key, _fmt, unit, _formula in SUMMARY_KEYS}
    assert (units["tp"], units["pp"], units["dp"], units["gpus"]) == (
        "GPUs per stage",
        "stages",
        "model replicas",
        "GPUs",
    )


def test_whole_gpu_counts_read_as_whole_numbers() -> None:
    """16 GPUs printed "16.00" on the Deployments sheet and 8 paid GPUs "8.00" on the idle table; a half-GPU
    share keeps its decimals."""
    from planner.report.workbook_tables import DEPLOY_HEADERS

    shared = dataclasses.replace(syn.DEPLOYMENTS[0], gpu_share_frac=0.5, tp=1, ep=1, pp=1)
    wb = build_workbook(syn.plan_result(deployments=[shared, *syn.DEPLOYMENTS[1:]]))
    dep = wb["Deployments"]
    gpus = DEPLOY_HEADERS.index("GPUs") + 1
    workload, replicas = DEPLOY_HEADERS.index("Workload") + 1, DEPLOY_HEADERS.index("Replicas") + 1
    formats = {
        (
            dep.cell(row=r, column=workload).value,
            dep.cell(row=r, column=replicas).value,
            dep.cell(row=r, column=gpus).number_format,
        )
        for r in range(2, table_last_row(dep, "tbl_Deployments") + 1)  # below: the costs' total
    }
    # chat: 1 replica of half a GPU is 0.50 GPUs, 2 replicas 1 GPU
    assert formats == {("chat", 1, "#,##0.00"), ("chat", 2, "#,##0"), ("summarize", 1, "#,##0"),
                       ("summarize", 2, "#,##0")}  # fmt: skip
    ws = wb["Supply"]
    rows = list(ws.iter_rows())
    header = next(i for i, row in enumerate(rows) if [c.value for c in row[: len(IDLE_HEADERS)]] == IDLE_HEADERS)
    paid = rows[header + 1][IDLE_HEADERS.index("Paid GPUs")]
    assert paid.value == 3 and paid.number_format == "#,##0"


def test_supply_money_headers_say_what_they_are() -> None:
    """The buy line's unit price is its running cost, not a price; the average is the present value over the
    horizon (the Summary's "Average cost (USD/month, present value)")."""
    assert "Rent or running cost (USD/unit/month)" in SUPPLY_HEADERS
    assert "Average cost (USD/month, present value)" in SUPPLY_HEADERS
    ws = build_workbook(syn.plan_result())["Supply"]
    assert [c.value for c in ws[1]] == SUPPLY_HEADERS


def test_recommendation_says_how_the_gpus_come() -> None:
    """moe_ep read "rent (on_demand) 6x h200_sxm at us_east; rent (on_demand) 144x h200_sxm at us_east": two
    lines alike; one is billed per GPU, the other by the 8-GPU instance."""
    from planner.report.workbook_summary import recommendation_text

    text = recommendation_text(syn.plan_result())
    assert text.startswith(
        "Supply: rent (on_demand) 16x mi300x at us_east in 8-GPU instances; rent (on_demand) 3x h100_sxm at "
        "us_west; buy 16x h200_sxm at dc1 in 8-GPU nodes (ordered in month 0). Serve "
    )


def test_a_plan_of_many_deployments_is_summed_up_per_gpu_type() -> None:
    """The 20-workload bench plan's 30 deployments, each named, made a 3,000-character Recommendation cell.
    Past MAX_LISTED_DEPLOYMENTS the recommendation counts them per GPU type (most first) and leaves the
    list to Deployments; the supply and the money stay; up to the limit each is named as before."""
    from planner.report.workbook_summary import MAX_LISTED_DEPLOYMENTS, recommendation_text

    base = syn.DEPLOYMENTS[0]
    many = [
        dataclasses.replace(base, workload=f"w{i}", gpu="mi300x" if i % 3 else "h100_sxm")
        for i in range(MAX_LISTED_DEPLOYMENTS + 2)
    ]
    text = recommendation_text(syn.plan_result(deployments=many))
    assert " Serve 12 workloads with 12 deployments: 8 on mi300x, 4 on h100_sxm (each listed under Deployments). " in text
    assert text.startswith("Supply: rent (on_demand) 16x mi300x at us_east") and " Total $" in text
    assert " TP" not in text and "w3:" not in text
    listed = recommendation_text(syn.plan_result(deployments=many[:MAX_LISTED_DEPLOYMENTS]))
    assert "w3: " in listed and "deployments:" not in listed


def test_hour_weighted_gpus_paid_say_so() -> None:
    """With hourly rentals billed for the hours they run, the Summary's GPUs paid are a day's mean: one B200
    rented 13 h a day read "0.54" under "GPUs paid, busiest month" while the terminal and the Supply sheet say
    1 GPU. The header says what the figure is; whole units keep the plain header."""
    import dataclasses
    from typing import Any

    from planner.readout import PlanResult
    from planner.report.workbook import build_workbook
    from planner.report.workbook_summary import GPUS_BUSIEST_LABEL, GPUS_HOUR_WEIGHTED_LABEL
    from tests.report import synthetic_plan as syn

    def header(result: PlanResult) -> Any:
        ws = build_workbook(result)["Summary"]
        return next(r[1].value for r in ws.iter_rows() if r[0].value == "GPU type (procurement)")

    assert header(syn.plan_result()) == GPUS_BUSIEST_LABEL == "GPUs paid, busiest month"
    first = syn.SUPPLY[0]
    hourly = dataclasses.replace(first, units_per_month=[u * 13 / 24 for u in first.units_per_month])
    assert any(not float(u).is_integer() for u in hourly.units_per_month)
    assert header(syn.plan_result(supply=[hourly, *syn.SUPPLY[1:]])) == GPUS_HOUR_WEIGHTED_LABEL
    assert "hour-weighted" in GPUS_HOUR_WEIGHTED_LABEL
