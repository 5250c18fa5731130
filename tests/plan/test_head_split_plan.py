"""`planner plan` offers only TP degrees that shard the model's attention heads — the rule `planner predict`
applies (planner/head_split.py). With `hardware.tp: [3]` it planned Llama-3.1-70B (64 query / 8 KV heads) as
MI300X TP3xPP2, $354,586, a layout `planner predict --tp 3` refuses."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.candidates import build_candidates
from planner.catalog import default_catalog
from planner.cli.main import app
from planner.scenario import parse_scenario, validate_against_catalog

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "chat_70b_cloud" / "scenario.yaml"


def _scenario(tp: list[int]) -> dict[str, object]:
    data = yaml.safe_load(CHAT.read_text())
    data["hardware"] = {"gpus": ["mi300x", "h100_sxm"], "tp": tp, "pp": [1, 2]}
    data["workloads"][0]["quantizations"] = ["fp8"]
    return data


def test_candidates_refuse_a_tp_that_does_not_split_the_heads() -> None:
    catalog = default_catalog()
    scenario = parse_scenario(_scenario([3, 4]))
    validate_against_catalog(scenario, catalog)
    cands = build_candidates(catalog, scenario).candidates
    tp3 = cands[cands["tp"] == 3]
    assert len(tp3) > 0 and not tp3["feasible"].any()
    assert tp3["reason"].str.contains("TP3 does not divide the 64 attention heads").all()
    assert cands[cands["tp"] == 4]["feasible"].any()


def test_plan_with_only_such_a_tp_is_infeasible_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(_scenario([3])))
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives"])
    assert res.exit_code == 3, res.stdout
    assert "attention heads" in res.stderr
