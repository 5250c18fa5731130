"""PNG charts (matplotlib, Agg backend): the same charts as the workbooks' native ones.

Plan: cost over the horizon by procurement (present value), cumulative cash, alternatives' total cost vs
TPOT. Compare: cumulative cash per option (with the crossover month) and total cost per option. Every
figure is the plan's cost ledger's (the callers pass CostLedger sums).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

from planner.report.chart_labels import cluster_ranks, label_offsets_pt
from planner.report.files import atomic_write

COST_BY_CATEGORY_PNG = "cost_by_category.png"
CUMULATIVE_COST_PNG = "cumulative_cost.png"
ALTERNATIVES_PNG = "alternatives_cost_vs_tpot.png"
COMPARE_CUMULATIVE_PNG = "compare_cumulative_cost.png"
COMPARE_OPTIONS_PNG = "compare_options_cost.png"


def _figure() -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    return fig, ax


def usd_label(value: float, digits: int = 3) -> str:
    """Compact dollars for an axis tick or a bar label, ``digits`` significant: $950, $12.5k, $1.25M, $2.1B."""
    sign, v = ("-" if value < 0 else ""), abs(value)
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if v >= size:
            return f"{sign}${v / size:.{digits}g}{suffix}"
    return f"{sign}${v:.0f}"


def distinct_usd_labels(values: Sequence[float]) -> list[str]:
    """:func:`usd_label` of each tick with the fewest significant digits (3 at least) that keep neighbouring
    ticks apart: ticks $2.4k apart near $176k read "$176k" each at 3 digits, "$175.2k $177.6k" at 4."""
    labels = [usd_label(v) for v in values]
    for digits in range(4, 10):
        if len(set(labels)) == len(labels):
            break
        labels = [usd_label(v, digits) for v in values]
    return labels


def _usd_axis(axis: Any) -> None:
    """Tick labels in dollars (no '1e6' offset), as many digits as the ticks need to differ."""
    from matplotlib.ticker import Formatter

    class UsdFormatter(Formatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return usd_label(x)

        def format_ticks(self, values: Sequence[float]) -> list[str]:
            return distinct_usd_labels(values)

    axis.set_major_formatter(UsdFormatter())


def _month_axis(ax: Any, months: int) -> None:
    """Whole months on the x axis: 0, 1, 2 … (a 1-month plan read -0.4 … 0.4: matplotlib's integer locator
    falls back to fractions below two whole ticks)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if months == 1:
        ax.set_xlim(-0.5, 0.5)


def _from_zero(ax: Any, values: Sequence[float]) -> None:
    """A cumulative cost axis starts at $0 (as the workbook's chart): a range cut at the first month's cost
    made a flat run of rent look steep."""
    if values and min(values) >= 0:
        ax.set_ylim(bottom=0, top=max(values) * 1.05 or 1.0)


def _label_bars(ax: Any, bars: Any) -> None:
    for bar in bars:
        height = bar.get_height()
        ax.annotate(
            usd_label(height),
            (bar.get_x() + bar.get_width() / 2, height),
            ha="center",
            va="bottom",
            textcoords="offset points",
            xytext=(0, 2),
            fontsize=8,
        )


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    def writer(tmp: Path) -> None:
        fig.savefig(tmp, format="png", bbox_inches="tight")

    try:
        atomic_write(path, writer)
    finally:
        plt.close(fig)


def plot_cost_by_category(categories_usd: Mapping[str, float], path: Path) -> None:
    """Bar chart of the cost over the horizon per category (procurement; USD, present value)."""
    fig, ax = _figure()
    names = list(categories_usd)
    _label_bars(ax, ax.bar(names, [categories_usd[n] for n in names], color="#1F4E78"))
    ax.set_title("Cost over the horizon by procurement (present value)")
    ax.set_ylabel("USD")
    _usd_axis(ax.yaxis)
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)


def plot_cumulative_cost(monthly_usd: Sequence[float], path: Path) -> None:
    """Line chart of the cumulative cash (USD) by month (0 = start, as in the JSON and the workbooks)."""
    fig, ax = _figure()
    months = list(range(len(monthly_usd)))
    cumulative = list(accumulate(monthly_usd))
    ax.plot(months, cumulative, marker="o", color="#1F4E78")
    ax.set_title("Cumulative cash")
    ax.set_xlabel("Month")
    _month_axis(ax, len(months))
    ax.set_ylabel("USD")
    _usd_axis(ax.yaxis)
    _from_zero(ax, cumulative)
    ax.grid(alpha=0.3)
    _save(fig, path)


def plot_alternatives(alternatives: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Scatter of total cost (USD) vs worst deployed TPOT (ms) of each feasible alternative, labelled."""
    fig, ax = _figure()
    feasible = [
        a for a in alternatives if a.get("total_cost_usd") is not None and a.get("max_tpot_ms") is not None
    ]
    # one label placement over both kinds: the best h100_sxm plan and the best us_east plan of buy_vs_rent sit
    # on one spot (planner.report.chart_labels); their names are stacked beside them, never on each other
    points = [(float(a["max_tpot_ms"]), float(a["total_cost_usd"])) for a in feasible]
    offsets = label_offsets_pt(points)
    ranks = cluster_ranks(points)
    for kind, marker in (("gpu", "o"), ("site", "s")):
        members = [i for i, a in enumerate(feasible) if a["kind"] == kind]
        if not members:
            continue
        ax.scatter(
            [points[i][0] for i in members],
            [points[i][1] for i in members],
            marker=marker,
            s=[36 + 40 * ranks[i] for i in members],  # a later point on a spot: larger, hollow
            facecolors=["none" if ranks[i] else f"C{0 if kind == 'gpu' else 1}" for i in members],
            edgecolors=f"C{0 if kind == 'gpu' else 1}",
            label=f"best plan per {kind}",
            alpha=0.8,
        )
        for i in members:
            ax.annotate(
                str(feasible[i].get(kind, "")),
                points[i],
                textcoords="offset points",
                xytext=offsets[i],
                fontsize=7,
            )
    ax.set_title("Alternatives: total cost vs TPOT")
    ax.set_xlabel("Max TPOT at capacity (ms)")
    ax.set_ylabel("Total cost over the horizon (USD)")
    _usd_axis(ax.yaxis)
    if feasible:
        ax.legend(loc="best", fontsize=8)
    else:  # an empty chart: no axis numbers (matplotlib's default 0-1 range read "$1 $1 $0")
        empty = "no feasible alternative" if alternatives else "alternatives not computed (--no-alternatives)"
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
    ax.grid(alpha=0.3)
    _save(fig, path)


def plot_compare_cumulative(
    monthly_usd: Mapping[str, Sequence[float]], crossover_month: int | None, path: Path
) -> None:
    """Cumulative cash out (USD) per option by month (0 = start), with the crossover month marked."""
    fig, ax = _figure()
    everything: list[float] = []
    for name, flow in monthly_usd.items():
        cumulative = list(accumulate(flow))
        everything += cumulative
        ax.plot(range(len(flow)), cumulative, marker="o", markersize=3, label=name)
    if crossover_month is not None:
        ax.axvline(crossover_month, color="grey", linestyle="--", label=f"crossover: month {crossover_month}")
    ax.set_title("Cumulative cash by option")
    ax.set_xlabel("Month")
    _month_axis(ax, max((len(f) for f in monthly_usd.values()), default=0))
    ax.set_ylabel("USD")
    _usd_axis(ax.yaxis)
    _from_zero(ax, everything)
    if monthly_usd:
        ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    _save(fig, path)


def plot_compare_options(totals_usd: Mapping[str, float | None], path: Path) -> None:
    """Bars of the total cost (USD) over the horizon per feasible option."""
    fig, ax = _figure()
    names = [n for n, v in totals_usd.items() if v is not None]
    _label_bars(ax, ax.bar(names, [float(totals_usd[n] or 0.0) for n in names], color="#1F4E78"))
    ax.set_title("Total cost over the horizon by option")
    ax.set_ylabel("USD")
    _usd_axis(ax.yaxis)
    if not names:
        ax.text(0.5, 0.5, "no feasible option", ha="center", va="center", transform=ax.transAxes)
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)


def write_compare_plots(
    plots_dir: Path,
    *,
    monthly_usd: Mapping[str, Sequence[float]],
    totals_usd: Mapping[str, float | None],
    crossover_month: int | None,
) -> list[Path]:
    """Write the two comparison PNG charts into ``plots_dir`` (created if missing); return their paths."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    paths = [plots_dir / COMPARE_CUMULATIVE_PNG, plots_dir / COMPARE_OPTIONS_PNG]
    plot_compare_cumulative(monthly_usd, crossover_month, paths[0])
    plot_compare_options(totals_usd, paths[1])
    return paths


def write_plan_plots(
    plots_dir: Path,
    *,
    categories_usd: Mapping[str, float],
    monthly_usd: Sequence[float],
    alternatives: Sequence[Mapping[str, Any]],
) -> list[Path]:
    """Write the three PNG charts into ``plots_dir`` (created if missing); return their paths."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    paths = [plots_dir / COST_BY_CATEGORY_PNG, plots_dir / CUMULATIVE_COST_PNG, plots_dir / ALTERNATIVES_PNG]
    plot_cost_by_category(categories_usd, paths[0])
    plot_cumulative_cost(monthly_usd, paths[1])
    plot_alternatives(alternatives, paths[2])
    return paths
