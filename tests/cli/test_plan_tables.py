"""The terminal plan's supply tables (planner/cli/plan_cmd.py)."""

from __future__ import annotations

import pytest

from planner.cli.plan_cmd import _print_rentals


def test_rentals_name_the_months_they_run(capsys: pytest.CaptureFixture[str]) -> None:
    """A rental bridging a purchase's two-month lead time showed '$608/month' (its $21,888 spread over 36
    months) with nothing saying when it runs: the table names the months ('0–1'), 'all' for a whole horizon."""
    bridge = {
        "kind": "rent_on_demand", "gpu": "h100_sxm", "site": "us_east", "gpus": 8, "source": "hyperstack",
        "cost_usd_per_month": 10_944 * 2 / 36, "units_per_month": [1.0, 1.0] + [0.0] * 34,
    }
    whole = {**bridge, "gpu": "l4", "units_per_month": [2.0] * 36}
    _print_rentals({"supply": [bridge, whole]})
    rows = [r for r in capsys.readouterr().out.splitlines() if "h100_sxm" in r or "│ l4" in r]
    assert "│ 0–1 " in rows[0] and "│     608 │" in rows[0]
    assert "│ all " in rows[1]


def test_plan_says_why_gpus_paid_exceed_those_running(capsys: pytest.CaptureFixture[str]) -> None:
    """The synthetic plan rents and buys more GPUs than its replicas run on: the terminal names why, per GPU type,
    as the workbook's Summary (a GPU type with nothing idle is left out)."""
    from planner.cli.plan_cmd import _print_gpu_use
    from tests.report import synthetic_plan as syn

    _print_gpu_use(syn.plan_result())
    out = capsys.readouterr().out
    assert "h200_sxm: at most 16 GPUs paid at once" in out and "delivered before the first period" in out
    assert "mi300x" not in out
