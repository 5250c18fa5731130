"""Figures an example's README quotes are the ones the planner prints: examples/pd_card8's co-located answer
read "3.00 req/s" while `planner plan` with `disaggregation: off` prints "serves 0.859× the stated demand
(3.01 req/s)" (3.005 req/s)."""

from __future__ import annotations

from pathlib import Path

import yaml

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_pd_card8_readme_quotes_the_colocated_and_disaggregated_answers(catalog: Catalog) -> None:
    readme = (ROOT / "examples/pd_card8/README.md").read_text()
    data = yaml.safe_load((ROOT / "examples/pd_card8/scenario.yaml").read_text())
    pd = plan(catalog, parse_scenario(data), with_alternatives=False)
    data["workloads"][0]["disaggregation"] = "off"
    colocated = plan(catalog, parse_scenario(data), with_alternatives=False)
    pd_total = pd.served_requests_per_s()["total"]
    colocated_total = colocated.served_requests_per_s()["total"]
    assert f"{colocated_total:.2f}" == "2.97"
    assert f"**{colocated_total:.2f} req/s** (book 3.02)" in readme
    assert f"**{pd_total:.2f} req/s**" in readme and f"{pd_total:.2f}" == "4.34"
    assert f"PD wins by {pd_total / colocated_total:.2f}×" in readme
