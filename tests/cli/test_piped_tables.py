"""Tables printed to a pipe or file (issue 16: a wide plan wrapped into blank lines and truncated headers
such as "p…", "r…" when stdout was not a terminal): natural width, one line per row, whole headers."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from planner.cli.common import PIPED_COLUMN_MAX_WIDTH
from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _table_rows(lines: list[str], header_word: str) -> tuple[str, list[str]]:
    """The header line holding ``header_word`` and the body lines of that table."""
    start = next(i for i, line in enumerate(lines) if line.startswith("┃") and header_word in line)
    body_start = next(i for i in range(start, len(lines)) if lines[i].startswith("┡")) + 1
    end = next(i for i in range(body_start, len(lines)) if lines[i].startswith("└"))
    return lines[start], lines[body_start:end]


def test_piped_plan_table_has_whole_headers_and_one_line_per_deployment() -> None:
    res = runner.invoke(app, ["plan", str(ROOT / "examples/buy_vs_rent/scenario.yaml"), "--no-alternatives"])
    assert res.exit_code == 0, res.output
    header, rows = _table_rows(res.stdout.splitlines(), "workload")
    for name in ("placement", "batch", "TTFT/SLO ms", "req/s cap", "$/month", "replicas per period"):
        assert f" {name} " in header, header
    assert "…" not in header
    assert len(rows) == 2  # chat on H100 at us_east and dc1: no continuation lines
    assert all(row.startswith("│ chat") for row in rows), rows
    assert "5 1 2×2 4×3 5×2 6 8×2" in rows[0]  # the us_east H100 replicas per period, whole on its line


def test_piped_prose_column_wraps_at_its_cap_instead_of_widening_the_table() -> None:
    res = runner.invoke(app, ["plan", str(ROOT / "examples/buy_vs_rent/scenario.yaml"), "--no-alternatives"])
    header, rows = _table_rows(res.stdout.splitlines(), "quote")
    quote_width = len(header.split("┃")[-2]) - 2  # the last column, less its padding
    assert quote_width == PIPED_COLUMN_MAX_WIDTH
    assert len(rows) > 2  # two rentals, their quotes wrapped over several lines
    assert max(len(line) for line in res.stdout.splitlines()) < 240


def test_plan_title_counts_the_horizon_in_words() -> None:
    one = runner.invoke(app, ["plan", str(ROOT / "examples/pd_card8/scenario.yaml"), "--no-alternatives"])
    many = runner.invoke(app, ["plan", str(ROOT / "examples/buy_vs_rent/scenario.yaml"), "--no-alternatives"])
    assert one.exit_code == many.exit_code == 0
    assert "— $857 over 1 month ($857/month;" in one.stdout
    assert " over 36 months (" in many.stdout
    # a max_throughput plan's answer is the served share: the title says it first; a min-cost title does not
    assert ": optimal, serves 1.24× the stated demand (4.34 req/s) — $857" in " ".join(one.stdout.split())
    assert "serves" not in many.stdout.splitlines()[0]


def test_a_multi_period_plan_says_which_period_repl_counts() -> None:
    """buy_vs_rent's chat on H100 runs 5 1 0 2 0 4×3 5 1 2 8 replicas per quarter and the table's repl says 8:
    the caption names the period it counts (the peak) — a one-period plan's caption does not need it."""
    multi = runner.invoke(app, ["plan", str(ROOT / "examples/buy_vs_rent/scenario.yaml"), "--no-alternatives"])
    single = runner.invoke(app, ["plan", str(ROOT / "examples/pd_card8/scenario.yaml"), "--no-alternatives"])
    assert multi.exit_code == 0 and single.exit_code == 0
    flat = " ".join(multi.stdout.split())
    assert "repl, GPUs, req/s cap: in the workload's peak period" in flat
    assert "$/month: its share of its GPUs' supply over the horizon" in flat
    assert "repl, GPUs" not in " ".join(single.stdout.split())  # one month, one period
