"""Chart axes a reader can trust: whole months (a 1-month plan drew -0.4 … 0.4), cumulative cost from $0
(a range cut at the first month's capex made rent look steep), and the workbook frontier chart's axes in
whole dollars and 0.1 ms (they took the cells' "$#,##0.00": "$1,200,000.00" per tick)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.report import charts
from planner.report.formatting import USD_AXIS_FORMAT
from planner.report.workbook import TPOT_AXIS_FORMAT, build_workbook
from tests.report import synthetic_plan as syn


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The matplotlib figures the chart functions draw (instead of saving them)."""
    import matplotlib.pyplot as plt

    drawn: list[Any] = []
    monkeypatch.setattr(charts, "_save", lambda fig, path: drawn.append(fig))
    yield drawn
    for fig in drawn:
        plt.close(fig)


def _visible_xticks(ax: Any) -> list[float]:
    low, high = ax.get_xlim()
    return [float(t) for t in ax.get_xticks() if low <= t <= high]


def test_one_month_plan_has_month_0_only(figures: list[Any], tmp_path: Path) -> None:
    charts.plot_cumulative_cost([857.23], tmp_path / "c.png")  # pd_card8: one month, $857.23
    ax = figures[0].axes[0]
    assert _visible_xticks(ax) == [0.0]
    assert ax.get_ylim()[0] == 0.0 and ax.get_ylim()[1] == pytest.approx(857.23 * 1.05)


def test_cumulative_cost_starts_at_zero_and_months_are_whole(figures: list[Any], tmp_path: Path) -> None:
    charts.plot_cumulative_cost([335_000.0] + [12_000.0] * 35, tmp_path / "c.png")
    ax = figures[0].axes[0]
    assert ax.get_ylim()[0] == 0.0
    assert all(t.is_integer() for t in _visible_xticks(ax)) and _visible_xticks(ax)[0] == 0.0


def test_compare_cumulative_starts_at_zero_with_whole_months(figures: list[Any], tmp_path: Path) -> None:
    charts.plot_compare_cumulative({"rent_only": [100.0, 100.0], "buy_only": [150.0, 10.0]}, 1, tmp_path / "c.png")
    ax = figures[0].axes[0]
    assert ax.get_ylim()[0] == 0.0
    assert _visible_xticks(ax) == [0.0, 1.0]


def test_negative_cumulative_cash_keeps_its_range(figures: list[Any], tmp_path: Path) -> None:
    """A resale larger than the costs (cumulative below $0) is not cut at $0."""
    charts.plot_cumulative_cost([100.0, -500.0], tmp_path / "c.png")
    assert figures[0].axes[0].get_ylim()[0] < -400.0


def test_frontier_chart_axes_are_whole_dollars_and_tenths_of_ms() -> None:
    wb = build_workbook(syn.plan_result())
    chart = wb["Alternatives"]._charts[0]
    assert chart.y_axis.numFmt.formatCode == USD_AXIS_FORMAT == '"$"#,##0'
    assert chart.x_axis.numFmt.formatCode == TPOT_AXIS_FORMAT == "0.0"
    assert chart.y_axis.numFmt.sourceLinked is False and chart.x_axis.numFmt.sourceLinked is False


def test_alternative_labels_of_one_point_do_not_overlap(figures: list[Any], tmp_path: Path) -> None:
    """moe_ep: the plan is both h200_sxm's and us_east's best; both names were drawn on one spot."""
    same = {"total_cost_usd": 5_886_432.0, "max_tpot_ms": 42.2}
    charts.plot_alternatives(
        [{"kind": "gpu", "gpu": "h200_sxm", **same}, {"kind": "site", "site": "us_east", **same}], tmp_path / "a.png"
    )
    labels = {t.get_text(): t.xyann for t in figures[0].axes[0].texts}
    assert set(labels) == {"h200_sxm", "us_east"}  # stacked one line apart (planner.report.chart_labels)
    assert abs(labels["h200_sxm"][1] - labels["us_east"][1]) >= 11
