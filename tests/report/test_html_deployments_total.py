"""The HTML Deployments table ends with the plan's USD/month, which its rows add up to (the workbook's
Deployments sheet has the same total under its cost column)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.report.html import build_html
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_the_deployments_table_totals_the_plans_cost_per_month(catalog: Catalog) -> None:
    result = plan(catalog, load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog), with_alternatives=False)
    page = build_html(result)
    section = page[page.index("<h2>Deployments</h2>") : page.index("<h2>", page.index("<h2>Deployments</h2>") + 5)]
    rows = re.findall(r"<tr>(.*?)</tr>", section)
    last = re.findall(r"<td[^>]*>(.*?)</td>", rows[-1])
    assert last[0] == "Total (the plan&#x27;s average USD/month)"
    total = float(last[-1].replace(",", "").replace("$", ""))
    assert total == pytest.approx(result.cost_usd_per_month, abs=0.01)
    assert total == pytest.approx(sum(d.cost_usd_per_month for d in result.deployments), abs=0.01)  # 22,804.62
