"""`planner predict --requests-per-s` above the saturation load: no steady state, so the figures that need one
are null; the replica emits its saturation load's tokens. It printed 12,800 output tokens/s where saturation
(10.1 req/s × 256) allows 2,590, a running batch of 1.28e7 against a limit of 157 and a TPOT of 2.5e6 ms."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.performance.predict_load import UNSTABLE_FIGURES

ARGS = ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--json", "--requests-per-s"]


def _at_load(requests_per_s: float) -> dict[str, object]:
    res = CliRunner().invoke(app, [*ARGS, str(requests_per_s)])
    assert res.exit_code == 0, res.output
    data: dict[str, object] = json.loads(res.stdout)["at_load"]
    return data


def test_an_overloaded_replica_reports_no_steady_state_figures() -> None:
    over = _at_load(50)
    saturation = over["saturation_requests_per_s"]
    assert over["stable"] is False and isinstance(saturation, float) and saturation < 50
    assert all(over[key] is None for key in UNSTABLE_FIGURES)
    assert over["output_tokens_per_s"] == pytest.approx(saturation * 256)  # predict's default 256 output tokens


def test_below_saturation_every_figure_is_there() -> None:
    under = _at_load(2)
    assert under["stable"] is True
    assert all(isinstance(under[key], float) for key in UNSTABLE_FIGURES)
    assert under["output_tokens_per_s"] == pytest.approx(2 * 256)
