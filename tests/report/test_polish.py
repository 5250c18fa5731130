"""Workbook and chart polish: paid-but-idle GPUs, the budget rows of the Summary, dollar axes."""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook

from planner.catalog import Catalog
from planner.report.charts import usd_label, write_plan_plots
from planner.report.workbook import write_plan_outputs
from planner.report.workbook_idle import IDLE_HEADERS, idle_gpus
from planner.report.workbook_summary import budget_rows
from tests.report import synthetic_plan as syn


def test_idle_gpus_are_paid_minus_used_per_gpu_site_and_period() -> None:
    # synthetic plan: mi300x 8-GPU nodes fully used; 3 h100 rented in period 1 for 2 replicas of TP1;
    # two 8-GPU h200 nodes bought for one TP1 replica, paid from their delivery in month 1 (idle there)
    assert idle_gpus(syn.plan_result()) == [
        ["h100_sxm", "us_west", 1, "2-3", 3.0, 2.0, 1.0],  # period 1 is months 2-3
        ["h200_sxm", "dc1", 0, "1", 16.0, 0.0, 16.0],
        ["h200_sxm", "dc1", 1, "2-3", 16.0, 1.0, 15.0],
        ["h200_sxm", "dc1", 2, "4-5", 16.0, 1.0, 15.0],
    ]


def test_supply_sheet_lists_the_idle_gpus(tmp_path: Path) -> None:
    path = tmp_path / "plan.xlsx"
    write_plan_outputs(syn.plan_result(), None, workbook=path, plots_dir=None)
    supply = load_workbook(path)["Supply"]
    values = [[c.value for c in row] for row in supply.iter_rows()]
    header = next(i for i, row in enumerate(values) if row[: len(IDLE_HEADERS)] == IDLE_HEADERS)
    assert values[header + 2][:7] == ["h200_sxm", "dc1", 0, "1", 16, 0, 16]
    assert values[header + 3][:7] == ["h200_sxm", "dc1", 1, "2-3", 16, 1, 15]


def test_budget_rows_only_for_budget_plans() -> None:
    assert budget_rows(syn.plan_result(), syn.plan_result().to_json()) == []


@pytest.mark.parametrize(
    ("usd", "label"), [(950, "$950"), (12_500, "$12.5k"), (1_250_000, "$1.25M"), (-2_100_000_000, "-$2.1B")]
)
def test_dollar_labels(usd: float, label: str) -> None:
    assert usd_label(usd) == label


def test_png_axes_use_dollars(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    captured = []
    original = plt.Figure.savefig

    def capture(fig, *args, **kwargs):  # type: ignore[no-untyped-def]
        fig.canvas.draw()
        captured.append([t.get_text() for t in fig.axes[0].get_yticklabels()])
        return original(fig, *args, **kwargs)

    plt.Figure.savefig = capture  # type: ignore[method-assign]
    try:
        write_plan_plots(
            tmp_path,
            categories_usd={"rent": 1_200_000.0, "buy": 800_000.0},
            monthly_usd=[100_000.0] * 12,
            alternatives=[{"kind": "gpu", "gpu": "h100_sxm", "total_cost_usd": 2e6, "max_tpot_ms": 30.0}],
        )
    finally:
        plt.Figure.savefig = original  # type: ignore[method-assign]
    assert len(captured) == 3
    for labels in captured:
        shown = [t for t in labels if t]
        assert shown and all(t.lstrip("-").startswith("$") for t in shown), labels


def test_horizons_are_counted_in_words(catalog: Catalog) -> None:
    """One helper words every horizon: the plan title, the workbook/HTML recommendation, compare's sentence."""
    from planner.plan import plan
    from planner.report.formatting import months_text
    from planner.report.workbook_summary import recommendation_text
    from planner.scenario import load_scenario

    assert (months_text(1), months_text(36)) == ("1 month", "36 months")
    one = plan(catalog, load_scenario("examples/pd_card8/scenario.yaml", catalog), with_alternatives=False)
    assert " over 1 month: capex " in recommendation_text(one)


def test_recommendation_names_prefill_and_decode_pools() -> None:
    """Two pools of one workload, GPU and site read alike without the role, and the recommendation listed them
    once (examples/buy_vs_rent: 'h200_sxm at dc1 (datacenter, 1 replica)' for a prefill and a decode pool)."""
    import dataclasses

    from planner.report.workbook_summary import recommendation_text

    first = syn.DEPLOYMENTS[0]
    pools = [dataclasses.replace(first, role="prefill"), dataclasses.replace(first, role="decode")]
    text = recommendation_text(syn.plan_result(deployments=pools))
    assert "prefill pool" in text and "decode pool" in text
    assert "pool" not in recommendation_text(syn.plan_result())  # co-located deployments read as before


def test_recommendation_names_the_engine_and_its_settings() -> None:
    """Two plans that differ only in a workload's engine settings read differently in the Summary sheet's
    recommendation (the settings were only in the Deployments sheet's Engine column and the JSON)."""
    import dataclasses

    from planner.report.workbook_summary import recommendation_text

    first = syn.DEPLOYMENTS[0]
    tuned = dataclasses.replace(first, engine="vllm[memory_claim_frac=0.95]")
    assert f"on {first.gpu} at {first.site} with {first.engine} (" in recommendation_text(syn.plan_result())
    text = recommendation_text(syn.plan_result(deployments=[tuned]))
    assert "with vllm[memory_claim_frac=0.95] (" in text
