"""A plan that needs more GPUs than the largest AI cluster publicly known at one site (xAI Colossus, 100,000
H100, 2024: planner.readout.warnings.LARGEST_SITE_GPUS) says so in the JSON ``warnings`` and on stderr, and
still exits 0: examples/chat_70b_cloud at 1e5 × its demand printed "repl 279,150" with no word of doubt."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.readout.warnings import LARGEST_SITE_GPUS, fleet_gpus, huge_fleet
from planner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = (
    "the plan holds 279,152 GPUs, more than the 100,000 of the largest AI cluster publicly known at one site (xAI "
    "Colossus, 2024) — check the workloads' requests_per_s and token counts before renting or buying it"
)


def _huge(tmp_path: Path) -> Path:
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    assert data["workloads"][0]["requests_per_s"] == 8
    data["workloads"][0]["requests_per_s"] = 800_000  # 1e5 × the example's 8 req/s
    path = tmp_path / "huge.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_fleet_beyond_the_largest_site_is_warned_of_with_exit_0(tmp_path: Path) -> None:
    path = _huge(tmp_path)
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives", "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    # 279,150 MI300X replicas (TP1) on 34,894 whole 8-GPU nodes
    assert sum(d["gpus"] for d in data["deployments"]) == 279_150
    assert sum(s["gpus"] for s in data["supply"]) == 279_152
    assert data["warnings"] == [SENTENCE]
    shown = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives"])
    assert shown.exit_code == 0 and f"warning: {SENTENCE}" in " ".join(shown.stderr.split())


def test_the_threshold_is_strict_and_the_examples_fleet_is_not_warned_of(catalog: Catalog) -> None:
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    result = plan(catalog, parse_scenario(data), with_alternatives=False)
    assert fleet_gpus(result.supply) == 2 and result.to_json()["warnings"] == []
    line = result.supply[0]
    assert huge_fleet([replace(line, gpus=LARGEST_SITE_GPUS)]) == []
    (warning,) = huge_fleet([replace(line, gpus=LARGEST_SITE_GPUS - 1), replace(line, gpus=2)])
    assert warning.startswith("the plan holds 100,001 GPUs, more than the 100,000 ")
