"""A replica on a share of a GPU reports the figures of its share: the audit and readout built its terms on the
whole GPU, so small_models_shared's half-L40S helpdesk showed TPOT 29 ms (52 % headroom) where its half GPU
runs 58.9 ms against a 60 ms SLO; `planner predict --gpu-share-frac` reproduces the plan's figures."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.scenario import load_scenario

EXAMPLE = "examples/small_models_shared/scenario.yaml"


def _at_load(command: str, *extra: str) -> dict[str, float]:
    res = CliRunner().invoke(app, [*shlex.split(command)[1:], *extra, "--json"])
    assert res.exit_code == 0, res.output
    data: dict[str, float] = json.loads(res.stdout)["at_load"]
    return data


def test_half_gpu_replicas_report_their_half(catalog: Catalog) -> None:
    scenario = load_scenario(EXAMPLE, catalog)
    shared = [d for d in plan(catalog, scenario, with_alternatives=False).deployments if d.gpu_share_frac < 1]
    assert {d.workload for d in shared} == {"helpdesk", "summarizer"}
    for d in shared:
        assert d.gpu_share_frac == 0.5 and d.tpot_ms is not None and d.tpot_slo_ms is not None
        assert d.tpot_ms <= d.tpot_slo_ms
        assert "--gpu-share-frac 0.5" in d.predict_command
        half = _at_load(d.predict_command)
        # the command writes the load to 12 digits (0.2, not 0.19999999999999998): the same figures to ~1e-12
        assert half["tpot_ms"] == pytest.approx(d.tpot_ms, rel=1e-9) and half["ttft_ms"] == pytest.approx(d.ttft_ms, rel=1e-9)
        # the whole GPU at the same load: twice the bandwidth, so a weight-bound step well under the half's
        whole = _at_load(d.predict_command.replace("--gpu-share-frac 0.5", "--gpu-share-frac 1"))
        assert whole["tpot_ms"] < 0.7 * d.tpot_ms


def test_a_share_runs_tp1_only() -> None:
    args = ["predict", "--model", "qwen3_8b", "--gpu", "l40s", "--tp", "2", "--gpu-share-frac", "0.5"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "--gpu-share-frac: a share of one GPU runs TP1" in res.stderr
    res = CliRunner().invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "l40s", "--gpu-share-frac", "0.3"])
    assert res.exit_code == 2 and "must be 1, 0.5 or 0.25" in res.stderr
