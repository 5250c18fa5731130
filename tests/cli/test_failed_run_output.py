"""A failed run never changes an existing output: an infeasible plan (exit 3) leaves --json-out as it was;
its causes on stderr are headed by the scenario file."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _infeasible(tmp_path: Path) -> Path:
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    data["workloads"][0]["slo"]["tpot_ms"] = 1  # no GPU decodes a 70B token in 1 ms
    path = tmp_path / "impossible.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_infeasible_plan_leaves_an_existing_json_out_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text('{"previous": true}\n')
    before = target.read_bytes()
    res = runner.invoke(app, ["plan", str(_infeasible(tmp_path)), "--json", "--json-out", str(target),
                              "--no-alternatives"])
    assert res.exit_code == 3, res.output
    assert target.read_bytes() == before
    assert json.loads(res.stdout)["status"] == "infeasible"  # --json still prints the explanation
    assert f"not written: {target}" in res.stderr


def test_infeasible_plan_does_not_create_the_json_out(tmp_path: Path) -> None:
    target = tmp_path / "fresh.json"
    scenario = _infeasible(tmp_path)
    res = runner.invoke(app, ["plan", str(scenario), "--json-out", str(target), "--no-alternatives"])
    assert res.exit_code == 3, res.output
    assert not target.exists()
    assert f"{scenario}: infeasible" in res.stderr  # the solver-side causes are headed by the file
    assert "lowest TPOT" in res.stderr
