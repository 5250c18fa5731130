"""A plan's capacity, checked with its own `predict_command`: a deployment limited by an SLO meets that SLO at
its capacity at the SLO (the binding figure within 0.5 % of the target) and no longer does 3 % above it; the
capacity it counts is the scenario's utilisation share of that (0.9 by default). Besides the bundled examples,
a scenario with every option a command carries: engine settings, a stated MBU, a site override, SLO
percentiles, max_batch, workspace_gib, a shared GPU."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.readout.types import Deployment
from planner.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]

COMBO = """
name: qa-combo
horizon_months: 12
workloads:
  - name: chat
    models: [llama_3_1_70b]
    quantizations: [fp8]
    requests_per_s: 6
    input_tokens: 1800
    output_tokens: 400
    slo: {ttft_ms: 1500, tpot_ms: 30, ttft_percentile: 95}
    sites: [us_east]
    engine_settings: {memory_claim_frac: 0.92, max_running_sequences: 128}
  - name: small
    models: [qwen3_8b]
    quantizations: [bf16]
    requests_per_s: 0.3
    input_tokens: 700
    output_tokens: 150
    slo: {ttft_ms: 3000, tpot_ms: 80, tpot_percentile: 99}
    sites: [us_east]
hardware: {gpus: [h100_sxm, l40s], tp: [1, 2, 4], pp: [1], efficiency: {h100_sxm: {decode_mbu_frac: 0.6}}}
sites:
  - {name: us_east, rtt_ms: 37.5}
max_batch: 200
workspace_gib: 3
procurement: [rent]
"""


def _at(d: Deployment, requests_per_s: float) -> dict[str, Any]:
    words = shlex.split(d.predict_command)[2:]
    words[words.index("--requests-per-s") + 1] = repr(requests_per_s)
    res = CliRunner().invoke(app, ["predict", *words, "--json"])
    assert res.exit_code == 0, (d.predict_command, res.stderr)
    at: dict[str, Any] = json.loads(res.stdout)["at_load"]
    return at


def _check_capacity(deployments: list[Deployment], utilization: float) -> int:
    checked = 0
    for d in deployments:
        assert d.capacity_per_replica_requests_per_s == pytest.approx(utilization * d.capacity_at_slo_requests_per_s)
        if d.limited_by not in ("ttft_slo", "tpot_slo") or d.role != "colocated":
            continue
        key = "ttft_ms" if d.limited_by == "ttft_slo" else "tpot_ms"
        target = d.ttft_slo_ms if key == "ttft_ms" else d.tpot_slo_ms
        at = _at(d, d.capacity_at_slo_requests_per_s)
        assert at["stable"] and at[key] == pytest.approx(target, rel=5e-3), (d.predict_command, at[key], target)
        above = _at(d, 1.03 * d.capacity_at_slo_requests_per_s)
        assert not above["stable"] or above[key] > target, (d.predict_command, above[key], target)
        checked += 1
    return checked


@pytest.mark.parametrize("example", ["chat_70b_cloud", "long_context_rag", "small_models_shared"])
def test_an_examples_capacity_is_where_its_binding_slo_is_met(catalog: Catalog, example: str) -> None:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert _check_capacity(deployments, scenario.max_utilization_frac) >= 1


def test_a_scenario_with_every_command_option_keeps_capacity_and_figures(catalog: Catalog) -> None:
    scenario = parse_scenario(yaml.safe_load(COMBO))
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert {d.workload for d in deployments} == {"chat", "small"}
    for d in deployments:  # the figures at the served load
        served = d.served_per_replica_requests_per_s or d.capacity_per_replica_requests_per_s
        at = _at(d, served)
        for key in ("ttft_ms", "tpot_ms", "decode_step_ms"):
            assert at[key] == pytest.approx(getattr(d, key), rel=1e-6), (d.predict_command, key)
        assert "--rtt-ms 37.5" in d.predict_command and "--max-batch 200" in d.predict_command
        assert "--workspace-gib 3" in d.predict_command
    chat = next(d for d in deployments if d.workload == "chat")
    assert "'vllm[max_running_sequences=128,memory_claim_frac=0.92]'" in chat.predict_command
    assert "--ttft-percentile 95" in chat.predict_command and "--decode-mbu-frac 0.6" in chat.predict_command
    assert _check_capacity(deployments, scenario.max_utilization_frac) >= 1
