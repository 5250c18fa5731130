"""`planner budget --total-usd`: the total line binds in whole units when the money left is less than one more
replica's supply over the months the plan pays for it (the served scale grows in every month at once). The
step was one period's rent, a lower bound: chat_70b_cloud with $300,000 spent $278,899 on two TP2 H100
replicas and, with $21,101 left — less than the $139,450 two more H100s cost over 36 months, more than one
month's $3,874 — said "no budget line binds"."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.ledgers.economics import discount_factor
from planner.readout.budget import _total_per_unit
from tests.report import synthetic_plan as syn
from tests.report.conftest import ROOT

H100_USD_PER_MONTH = 2.69 * 720  # runpod on-demand H100 SXM, $2.69/GPU-h × 720 h


def test_total_short_of_one_more_replica_over_the_horizon_binds_in_whole_units() -> None:
    scenario = ROOT / "examples/chat_70b_cloud/scenario.yaml"
    res = CliRunner().invoke(app, ["budget", str(scenario), "--total-usd", "300000", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    use = data["budget_used"]
    h100 = next(s for s in data["supply"] if s["gpu"] == "h100_sxm")
    assert h100["usd_per_unit_month"] == pytest.approx(H100_USD_PER_MONTH)
    assert h100["units_per_month"] == [4] * 36  # two TP2 replicas on 1-GPU instances, every month
    left = 300_000 - data["total_cost_usd"]
    assert left == pytest.approx(21_100.80, abs=0.01)
    step = use["whole_units"]["total_usd"]
    # one more TP2 replica: 2 instances × 36 months (no cost of capital in the example)
    assert step["usd"] == pytest.approx(2 * 36 * H100_USD_PER_MONTH) == pytest.approx(139_449.60)
    assert step["left_usd"] == pytest.approx(left)
    assert use["binding_limit"] == (
        "total_usd in whole units: the $21,101 left is less than 2 1-GPU h100_sxm instances at us_east for one "
        "2-GPU replica of chat for the 36 months whose capacity the plan uses up ($139,450)"
    )


def test_rent_step_is_the_present_value_of_the_months_without_spare_capacity() -> None:
    """The synthetic plan at 10 %/year with summarize's replicas serving their capacity (7 req/s each: two on
    h100_sxm, one on h200_sxm) in periods 1 and 2 (months 2-5): one more 1-GPU instance is paid in those
    months, discounted; chat keeps spare capacity, so it adds no month."""
    h100, h200 = (
        dataclasses.replace(d, served_requests_per_s_per_period=[0.0, 7.0 * n, 7.0 * n])
        for d, n in ((syn.DEPLOYMENTS[1], 2), (syn.DEPLOYMENTS[2], 1))
    )
    result = syn.plan_result(deployments=[syn.DEPLOYMENTS[0], h100, h200])
    line = next(s for s in result.supply if s.id == syn.ID_B)
    usd, held = _total_per_unit(result, line)
    months = [2, 3, 4, 5]
    assert usd == pytest.approx(
        sum(syn.PRICE_B * discount_factor(m, cost_of_capital_frac_per_year=syn.RATE) for m in months),
        rel=1e-12,
    )
    assert usd == pytest.approx(5_322.19, abs=0.01)  # 1,368 × (0.98424 + 0.97645 + 0.96873 + 0.96107)
    assert held == " for the 4 months whose capacity the plan uses up"
    # a replica with room in a period leaves it not used up (the h200 one serves 4 of 7 req/s in period 1):
    # one period's rent, the least a unit adds
    usd, held = _total_per_unit(
        syn.plan_result(deployments=[syn.DEPLOYMENTS[0], h100, syn.DEPLOYMENTS[2]]), line
    )
    assert (usd, held) == (pytest.approx(syn.PRICE_B * syn.PERIOD_MONTHS), " for one 2-month period")
