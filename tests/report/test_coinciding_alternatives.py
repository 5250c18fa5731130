"""Alternatives on one spot stay readable: buy_vs_rent's best h100_sxm plan and best us_east plan are one
deployment (25.2 ms, $824k and $847k on a $0–1.2M axis); the circle and the square drew on one spot and
neither name could be read. Now every point carries its name as a data label, a cluster's names go to
different sides (highest on top), and the PNG stacks them one line apart."""

from __future__ import annotations

from openpyxl import Workbook

from planner.report.chart_labels import cluster_ranks, clusters, label_offsets_pt, label_positions
from planner.report.workbook import _frontier_chart
from planner.report.workbook_tables import ALT_COST_HEADER, ALT_HEADERS, ALT_TPOT_HEADER

BUY_VS_RENT = [("gpu", "h100_sxm", 824_379.0, 25.23), ("gpu", "h200_sxm", 1_017_750.0, 28.89)]
BUY_VS_RENT += [("site", "dc1", None, None), ("site", "us_east", 846_720.0, 25.23)]


def test_points_on_one_spot_form_a_cluster_and_label_on_different_sides() -> None:
    points = [(25.23, 824_379.0), (28.89, 1_017_750.0), (25.23, 846_720.0)]
    assert clusters(points, y_from_zero=True) == [[0, 2], [1]]
    # us_east, the higher, takes the right; h100_sxm's name would cover us_east's marker on top, so below
    names = ["h100_sxm (gpu)", "h200_sxm (gpu)", "us_east (site)"]
    sides = label_positions(points, names, y_from_zero=True)
    assert sides[2] == "r" and sides[0] not in ("r", "t")
    assert cluster_ranks(points, y_from_zero=True) == [0, 0, 0]  # $22k apart on $0-1.2M: two markers
    assert cluster_ranks([(25.23, 824_379.0), (25.23, 824_379.0)]) == [0, 1]  # one spot: the later is larger
    # the PNG's y axis is not from zero ($824k to $1.02M): the pair is still one spot, h200_sxm apart
    assert clusters(points) == [[0, 2], [1]]
    # chat_70b_cloud: h200_sxm and mi300x 2 ms and $5k apart on a 24 ms, $0-890k chart: their names collided
    near = [(29.0, 355_000.0), (31.0, 350_000.0), (43.5, 280_000.0), (30.0, 890_000.0)]
    assert clusters(near, y_from_zero=True) == [[0, 1], [2], [3]]
    sides = label_positions(near, ["h200_sxm (gpu)", "mi300x (gpu)", "h100_sxm (gpu)", "a100 (gpu)"], y_from_zero=True)
    assert sides[0] != "r"  # h200_sxm's name on its right would run over mi300x's marker


def test_png_labels_of_identical_points_are_one_line_apart() -> None:
    offsets = label_offsets_pt([(10.0, 5.0), (10.0, 5.0), (10.0, 5.0), (50.0, 9.0)])
    ys = sorted(y for _, y in offsets[:3])
    assert ys[1] - ys[0] >= 11 and ys[2] - ys[1] >= 11
    assert offsets[3] == (4.0, 4.0)


def test_workbook_chart_labels_each_point_and_separates_the_pair() -> None:
    ws = Workbook().active
    for c, header in enumerate(ALT_HEADERS, start=1):
        ws.cell(row=1, column=c, value=header)
    cost_col, tpot_col = ALT_HEADERS.index(ALT_COST_HEADER) + 1, ALT_HEADERS.index(ALT_TPOT_HEADER) + 1
    for r, (kind, option, cost, tpot) in enumerate(BUY_VS_RENT, start=2):
        ws.cell(row=r, column=1, value=kind)
        ws.cell(row=r, column=2, value=option)
        ws.cell(row=r, column=cost_col, value=cost)
        ws.cell(row=r, column=tpot_col, value=tpot)
    _frontier_chart(ws, len(BUY_VS_RENT) + 1)
    (chart,) = ws._charts
    by_name = {s.tx.v: s for s in chart.series}
    assert set(by_name) == {"h100_sxm (gpu)", "h200_sxm (gpu)", "us_east (site)"}
    assert all(s.dLbls is not None and s.dLbls.showSerName for s in chart.series)
    h100, us_east = by_name["h100_sxm (gpu)"], by_name["us_east (site)"]
    assert h100.dLbls.dLblPos != us_east.dLbls.dLblPos
    assert chart.legend is None  # the points name themselves; the legend's room went to the plot

