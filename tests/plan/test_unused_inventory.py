"""Owned GPUs no workload can use are named beside the plan (JSON ``warnings`` and stderr): a plan rented 8 H100s
while 8 owned ones sat at dc1, a site the workload did not list, and said nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.readout.warnings import unused_inventory
from planner.scenario import Scenario
from tests.plan.helpers import starter


def _scenario(catalog: Catalog, **top: Any) -> Scenario:
    data = starter(hardware={"gpus": ["h100_sxm"], "tp": [1], "pp": [1]}, procurement=["rent", "owned"], **top)
    return Scenario.model_validate(data, context={"catalog": catalog})


def test_inventory_at_a_site_no_workload_lists_is_named(catalog: Catalog, tmp_path: Path) -> None:
    inventory = [{"gpu": "h100_sxm", "count": 8, "site": "dc1"}, {"gpu": "h100_sxm", "count": 2, "site": "us_east"}]
    (warning,) = unused_inventory(_scenario(catalog, inventory=inventory))
    assert warning == (
        "inventory[0] (8 × h100_sxm at dc1) serves nothing: no workload may run at dc1 (their sites: us_east) — "
        "add dc1 to a workload's sites to use it"
    )
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_scenario(catalog, inventory=inventory).model_dump(mode="json", exclude_none=True)))
    res = CliRunner().invoke(app, ["plan", str(path), "--json", "--no-alternatives"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["warnings"] == [warning]
    assert f"warning: {warning}" in " ".join(res.stderr.split())


def test_inventory_of_a_gpu_type_left_out_is_named(catalog: Catalog) -> None:
    (warning,) = unused_inventory(_scenario(catalog, inventory=[{"gpu": "a100_sxm_80gb", "count": 4, "site": "us_east"}]))
    assert "hardware.gpus leaves a100_sxm_80gb out — add it to hardware.gpus to use it" in warning


def test_usable_inventory_warns_nothing(catalog: Catalog) -> None:
    assert unused_inventory(_scenario(catalog, inventory=[{"gpu": "h100_sxm", "count": 4, "site": "us_east"}])) == []
