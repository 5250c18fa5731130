"""compare's reserved breakeven prices the rent-only plan's whole fleet reserved over the horizon; when the plan
itself reserves part of it for a term, the sentence says so. 60 req/s of 70B FP8 on b200 for 18 months said
only "reserving the rent_only plan's GPUs never pays … 9 × b200 … reserved 1 y $76.80/h for 2 × 8-GPU
instances …", while the rent_only plan reserves one 8-GPU node for months 0–11 (helper-81's finding)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app

SCENARIO = {
    "name": "resv-test",
    "horizon_months": 18,
    "workloads": [
        {
            "name": "chat", "models": ["llama_3_1_70b"], "quantizations": ["fp8"], "requests_per_s": 60,
            "input_tokens": 1500, "output_tokens": 300, "slo": {"ttft_ms": 2000, "tpot_ms": 50},
            "sites": ["us_east", "dc1"],
        }
    ],
    "hardware": {"gpus": ["b200"], "tp": [1, 2, 4, 8], "pp": [1]},
    "procurement": ["rent", "buy"],
    "rental_kinds": ["on_demand", "reserved_1y"],
    "period_months": 6,
    "economics": {"cost_of_capital_frac_per_year": 0.1},
}


def test_the_breakeven_names_what_the_rent_only_plan_reserves(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(SCENARIO), encoding="utf-8")
    res = CliRunner().invoke(app, ["compare", str(path), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    (flip,) = [f for f in data["flip_points"] if f["parameter"] == "utilization_frac"]
    assert flip["sentence"].startswith("reserving the rent_only plan's GPUs never pays at these quotes: 9 × b200")
    assert flip["sentence"].endswith("; the rent_only plan reserves 8 × b200 at us_east for months 0–11, where a term pays")
    assert data["breakeven_utilization_frac"] is None
