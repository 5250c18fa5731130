"""A deployment's reported decode step is the bare step at the batch its TPOT is taken at (a request's own
steps, performance.load.own_batch), so TPOT (= step + prefill interference; the step alone for a decode pool) is
never below it. The step was taken at ceil(batch) (a decode pool's at its resident sequences) while TPOT was at
the mean batch: buy_vs_rent's H200 decode pool showed a 30.09 ms step under a 30.07 ms TPOT, small_models_shared's
L40S 28.72 under 28.65. A replica serving nothing at the peak (buy_vs_rent's H200 decode pool, kept for
redundancy) shows its candidate's operating point, whose decode step was still at ceil(batch): 28.84 ms beside a
28.89 ms TPOT."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import Scenario, load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]


IDLE_AT_PEAK = "buy_vs_rent, H100 at MBU 0.65"
"""buy_vs_rent with the H100's decode MBU stated at 0.65 (its catalog figure before the ridge loss): the plan
keeps an H200 rented in quarter 8 only, a replica serving nothing at the peak (tests/plan/test_offpeak_row.py)."""


def _scenario(catalog: Catalog, example: str) -> Scenario:
    if example != IDLE_AT_PEAK:
        return load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    data = yaml.safe_load((ROOT / "examples/buy_vs_rent/scenario.yaml").read_text())
    data["hardware"]["efficiency"] = {"h100_sxm": {"decode_mbu_frac": 0.65, "prefill_mfu_frac": 0.6}}
    return parse_scenario(data)


@pytest.mark.parametrize("example", ["chat_70b_cloud", "buy_vs_rent", IDLE_AT_PEAK, "pd_card8", "small_models_shared"])
def test_tpot_is_at_least_the_bare_decode_step(catalog: Catalog, example: str) -> None:
    scenario = _scenario(catalog, example)
    checked, idle = 0, 0
    for d in plan(catalog, scenario, with_alternatives=False).deployments:
        if d.role == "prefill":
            continue
        idle += d.served_requests_per_s <= 0
        assert d.decode_step_ms <= d.tpot_ms * (1 + 1e-9), (d.gpu, d.role, d.decode_step_ms, d.tpot_ms)
        if d.role == "decode":  # a decode pool's TPOT is its step: no prompt shares it
            assert d.decode_step_ms == pytest.approx(d.tpot_ms, rel=1e-6)
        checked += 1
    assert checked >= 1
    assert idle == (1 if example == IDLE_AT_PEAK else 0)  # the idle replica is checked where there is one


def test_a_speculative_deployment_reports_its_decode_time_per_token(catalog: Catalog) -> None:
    """With speculation (E[N] = 3.36 tokens per round) TPOT is per output token; the reported decode step is too
    (the bare round over E[N]): it showed the plain target step, 20.0 ms under an 11.4 ms TPOT."""
    from planner.readout.optimizations import is_on
    from tests.plan.test_optimizations import _spec_scenario

    deployments = plan(catalog, _spec_scenario(catalog, 0.8), with_alternatives=False).deployments
    assert deployments and all(is_on(d.optimizations, "speculative") for d in deployments)
    for d in deployments:
        assert d.decode_step_ms <= d.tpot_ms * (1 + 1e-9), (d.decode_step_ms, d.tpot_ms)
        assert d.decode_step_ms > 0.8 * d.tpot_ms  # a few % of prefill interference at most
