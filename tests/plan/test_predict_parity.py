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
import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.readout.types import Deployment
from planner.scenario import load_scenario, merged_sites, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/scenario.yaml"))


def _reproduces(d: Deployment) -> list[str]:
    """Run deployment ``d``'s predict command; assert its TTFT, TPOT and decode step are the plan's; its words."""
    words = shlex.split(d.predict_command)
    res = CliRunner().invoke(app, [*words[1:], "--json"])
    assert res.exit_code == 0, (d.predict_command, res.stderr)
    at = json.loads(res.stdout)["at_load"]
    for key in ("ttft_ms", "tpot_ms", "decode_step_ms"):
        mine = getattr(d, key)
        if mine is None or at[key] is None:  # a pool's other half: null in both
            assert mine is None and at[key] is None, (d.predict_command, key)
            continue
        assert math.isclose(at[key], mine, rel_tol=1e-9, abs_tol=1e-9), (d.predict_command, key)
    return words


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_deployments_predict_command_reproduces_it(catalog: Catalog, example: str) -> None:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    sites = merged_sites(catalog, scenario)
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert deployments
    for d in deployments:
        assert sites[d.site] == catalog.sites[d.site]  # the examples' sites are the catalog's: --site alone
        words = _reproduces(d)
        assert words[:2] == ["planner", "predict"] and f"--site {d.site}" in d.predict_command
        assert "--rtt-ms" not in words


def test_a_scenarios_site_figures_travel_in_the_command(catalog: Catalog) -> None:
    """A scenario that overrides a catalog site's round trip and uplink (chat_70b_cloud's us_east and us_west at
    80 ms and 2 Mbit/s) gets --rtt-ms / --uplink-mbit-per-s beside --site, and the command reproduces the plan's
    slower TTFT; a site of the scenario's own (assistant_8b_edge's store as 'kiosk', 7 ms) gets them without
    --site, which the catalog would refuse."""
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    plain = plan(catalog, parse_scenario(data), with_alternatives=False).deployments
    data["sites"] = [{"name": s, "rtt_ms": 80, "uplink_mbit_per_s": 2} for s in ("us_east", "us_west")]
    far = plan(catalog, parse_scenario(data), with_alternatives=False).deployments
    assert far and min(d.ttft_ms for d in far) > min(d.ttft_ms for d in plain) + 65  # 80 − 15 ms RTT, slower upload
    for d in far:
        words = _reproduces(d)
        assert f"--site {d.site} --rtt-ms 80 --uplink-mbit-per-s 2" in shlex.join(words)
    data = yaml.safe_load((ROOT / "examples/assistant_8b_edge/scenario.yaml").read_text())
    data["workloads"][0]["sites"] = ["kiosk"]
    data["sites"] = [{"name": "kiosk", "kind": "edge", "rtt_ms": 7, "devices": {"rtx_4090": 4}}]
    kiosk = plan(catalog, parse_scenario(data), with_alternatives=False).deployments
    assert kiosk and {d.site for d in kiosk} == {"kiosk"} and "kiosk" not in catalog.sites
    for d in kiosk:
        words = _reproduces(d)
        assert "--site" not in words and "--rtt-ms 7 --uplink-mbit-per-s 100" in shlex.join(words)


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
