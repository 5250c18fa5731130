"""What a scenario states that no plan can use (owned GPUs no workload may run on) is a JSON ``warnings``
line and a stderr line; the workbook and the HTML, which a reader may open alone, showed neither."""

from __future__ import annotations

from planner.readout.warnings import unused_inventory
from planner.report.html import build_html
from planner.report.workbook import build_workbook
from planner.report.workbook_summary import WARNING_LABEL
from planner.scenario_economics import InventoryItem
from tests.report import synthetic_plan as syn


def test_unused_inventory_is_shown_on_the_summary_and_in_the_html() -> None:
    base = syn.scenario()
    scenario = base.model_copy(
        update={
            "inventory": [InventoryItem(gpu="a100_sxm_80gb", count=4, site="dc1")],
            "hardware": base.hardware.model_copy(update={"gpus": ["h100_sxm", "h200_sxm", "mi300x"]}),
        }
    )
    result = syn.plan_result(scenario=scenario)
    (text,) = unused_inventory(scenario)
    assert text == (
        "inventory[0] (4 × a100_sxm_80gb at dc1) serves nothing: hardware.gpus leaves a100_sxm_80gb out — "
        "add it to hardware.gpus to use it"
    )
    assert result.to_json()["warnings"] == [text]
    summary = build_workbook(result)["Summary"]
    assert [r[1].value for r in summary.iter_rows() if r[0].value == WARNING_LABEL] == [text]
    assert f"<tr><td>{WARNING_LABEL}</td><td>{text}</td></tr>" in build_html(result)


def test_no_warning_row_without_warnings() -> None:
    result = syn.plan_result()
    assert result.to_json()["warnings"] == []
    summary = build_workbook(result)["Summary"]
    assert not any(r[0].value == WARNING_LABEL for r in summary.iter_rows())
    assert f"<td>{WARNING_LABEL}</td>" not in build_html(result)
