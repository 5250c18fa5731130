"""A stated MFU / MBU below 1 % of the peak is refused (planner.limits.MIN_EFFICIENCY_FRAC): 1e-300 passed as
(0, 1] and predict answered a TTFT of 4.6e300 ms with exit 0."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.errors import ScenarioError
from planner.scenario import parse_scenario
from tests.plan.helpers import starter


@pytest.mark.parametrize("field", ["prefill_mfu_frac", "decode_mbu_frac"])
def test_a_scenario_states_at_least_one_percent(field: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(starter(hardware={"gpus": ["l40s"], "efficiency": {"l40s": {field: 1e-300}}}), path="s.yaml")
    assert str(err.value) == f"s.yaml: hardware.efficiency.l40s.{field}: must be in [0.01, 1] (got 1e-300)"
    parse_scenario(starter(hardware={"gpus": ["l40s"], "efficiency": {"l40s": {field: 0.01}}}))  # the floor itself


@pytest.mark.parametrize("option", ["--prefill-mfu-frac", "--decode-mbu-frac"])
def test_predict_states_at_least_one_percent(option: str) -> None:
    res = CliRunner().invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", option, "1e-300"])
    assert res.exit_code == 2
    assert res.stderr.strip() == f"error: {option}: must be in [0.01, 1] (got 1e-300)"
