"""Every deployment of every bundled example carries the ``planner predict`` command that reproduces it
(planner/readout/predict_command.py), and that command, run, gives the plan's TTFT, TPOT and decode step (one
computation): co-located replicas and pools, shared GPUs, the prefix cache, SLO percentiles, stated
efficiencies, and replicas serving nothing at the peak (at their operating point)."""

from __future__ import annotations

import html
import json
import math
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.scenario import load_scenario, merged_sites

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/scenario.yaml"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_deployments_predict_command_reproduces_it(catalog: Catalog, example: str) -> None:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    sites = merged_sites(catalog, scenario)
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert deployments
    for d in deployments:
        assert sites[d.site] == catalog.sites[d.site]  # predict knows the catalog's sites only
        words = shlex.split(d.predict_command)
        assert words[:2] == ["planner", "predict"] and f"--site {d.site}" in d.predict_command
        res = CliRunner().invoke(app, [*words[1:], "--json"])
        assert res.exit_code == 0, (d.predict_command, res.stderr)
        at = json.loads(res.stdout)["at_load"]
        for key in ("ttft_ms", "tpot_ms", "decode_step_ms"):
            assert math.isclose(at[key], getattr(d, key), rel_tol=1e-9, abs_tol=1e-9), (d.predict_command, key)


def test_the_slos_sheet_and_page_show_each_deployments_command(catalog: Catalog) -> None:
    from planner.report.workbook import build_workbook
    from planner.report.workbook_tables import REPRODUCE_HEADER, SLO_HEADERS

    result = plan(catalog, load_scenario(ROOT / "examples/chat_70b_cloud/scenario.yaml", catalog), with_alternatives=False)
    ws = build_workbook(result)["SLOs"]
    col = SLO_HEADERS.index(REPRODUCE_HEADER) + 1
    assert [ws.cell(row=2 + k, column=col).value for k in range(len(result.deployments))] == [
        d.predict_command for d in result.deployments
    ]
    assert ws.cell(row=2, column=col).alignment.wrap_text
    from planner.report.html import build_html

    page = build_html(result)
    assert all(html.escape(d.predict_command) in page for d in result.deployments)
