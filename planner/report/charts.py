"""PNG charts of a plan (matplotlib, Agg backend): the same three charts as the workbook's native ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

from planner.report.files import atomic_write

COST_BY_CATEGORY_PNG = "cost_by_category.png"
CUMULATIVE_COST_PNG = "cumulative_cost.png"
ALTERNATIVES_PNG = "alternatives_cost.png"


def _figure() -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    return fig, ax


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    def writer(tmp: Path) -> None:
        fig.savefig(tmp, format="png", bbox_inches="tight")

    try:
        atomic_write(path, writer)
    finally:
        plt.close(fig)


def plot_cost_by_category(categories_usd: Mapping[str, float], path: Path) -> None:
    """Bar chart of the cost over the horizon per category (USD)."""
    fig, ax = _figure()
    names = list(categories_usd)
    ax.bar(names, [categories_usd[n] for n in names], color="#1F4E78")
    ax.set_title("Cost by category over the horizon")
    ax.set_ylabel("USD")
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)


def plot_cumulative_cost(monthly_usd: Sequence[float], path: Path) -> None:
    """Line chart of the cumulative cost (USD) by month."""
    fig, ax = _figure()
    months = list(range(1, len(monthly_usd) + 1))
    ax.plot(months, list(accumulate(monthly_usd)), marker="o", color="#1F4E78")
    ax.set_title("Cumulative cost")
    ax.set_xlabel("Month")
    ax.set_ylabel("USD")
    ax.grid(alpha=0.3)
    _save(fig, path)


def plot_alternatives(alternatives: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Horizontal bars of the total cost (USD) of each feasible alternative (best GPU type / site)."""
    fig, ax = _figure()
    feasible = [a for a in alternatives if a.get("total_cost_usd") is not None]
    labels = [f"{a['kind']}: {a.get(a['kind'], '')}" for a in feasible]
    ax.barh(labels, [float(a["total_cost_usd"]) for a in feasible], color="#2E75B6")
    ax.set_title("Alternatives: total cost over the horizon")
    ax.set_xlabel("USD")
    if not feasible:
        ax.text(0.5, 0.5, "no feasible alternative", ha="center", va="center", transform=ax.transAxes)
    ax.grid(axis="x", alpha=0.3)
    _save(fig, path)


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
