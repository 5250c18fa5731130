"""`planner compare` with no feasible option: exit 3, the causes with their smallest relaxation on stderr (as
`planner plan` prints them), the JSON answer still on stdout with --json, and no output file changed."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app
from tests.plan.helpers import starter

runner = CliRunner()


def _scenario(tmp_path: Path) -> Path:
    data = starter()
    data["workloads"][0]["slo"]["tpot_ms"] = 1  # below any GPU's decode step
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_json_answer_and_the_relaxation_of_an_infeasible_comparison(tmp_path: Path) -> None:
    res = runner.invoke(app, ["compare", str(_scenario(tmp_path)), "--json", "--no-flip-points"])
    assert res.exit_code == 3
    data = json.loads(res.stdout)  # it printed nothing
    assert [o["status"] for o in data["options"]] == ["infeasible"] * 3 and data["recommendation"] is None
    assert "smallest relaxation: raise chat.slo.tpot_ms to 3" in " ".join(res.stderr.split())


def test_an_infeasible_comparison_leaves_existing_outputs(tmp_path: Path) -> None:
    kept, workbook = tmp_path / "kept.json", tmp_path / "c.xlsx"
    kept.write_text("x\n")
    res = runner.invoke(app, ["compare", str(_scenario(tmp_path)), "--json-out", str(kept), "-o", str(workbook)])
    assert res.exit_code == 3
    assert kept.read_text() == "x\n" and not workbook.exists()
    assert "not written:" in res.stderr
