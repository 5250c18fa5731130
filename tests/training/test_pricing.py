"""The run's cash lines: rent = GPU-hours × the cheapest on-demand quote; buy = capex − resale·book
value + running months; owned = running only; the plan's total is the sum of its lines; lead time delays
the start of a bought cluster."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog
from planner.costs import colocation_usd_per_month, power_usd_per_month
from planner.scenario import Economics
from planner.training.plan import plan_training
from planner.training.pricing import cost_lines
from tests.training.helpers import scenario


def test_rent_is_gpu_hours_times_the_quote(catalog: Catalog) -> None:
    gpu, site = catalog.gpu("h100_sxm"), catalog.site("us_east")
    (line,) = cost_lines(catalog, gpu, site, "rent", gpus=64, days=20, econ=Economics()) or []
    assert line.kind == "rent" and line.usd == pytest.approx(1.90 * 64 * 20 * 24)  # hyperstack $1.90/GPU-h
    (half,) = (
        cost_lines(catalog, gpu, site, "rent", gpus=64, days=20, econ=Economics(rent_price_scale=0.5)) or []
    )
    assert half.usd == pytest.approx(line.usd / 2)


def test_buy_lines_capex_running_resale(catalog: Catalog) -> None:
    gpu, site = catalog.gpu("h100_sxm"), catalog.site("dc1")
    econ = Economics()
    lines = {c.kind: c.usd for c in cost_lines(catalog, gpu, site, "buy", gpus=16, days=45, econ=econ) or []}
    capex = 325_000 / 8  # per GPU, 8-GPU node
    running = (
        power_usd_per_month(gpu, site, utilization_frac=0.7)
        + colocation_usd_per_month(gpu, site, utilization_frac=0.7)
    ) * 1.1
    assert lines["capex"] == pytest.approx(16 * capex)
    assert lines["running"] == pytest.approx(16 * 2 * running)  # 45 days → 2 whole months
    assert lines["resale"] == pytest.approx(
        -16 * 0.5 * capex * (1 - 2 / 48)
    )  # 50 % of the book value after 2 of 48 months
    owned = cost_lines(catalog, gpu, site, "owned", gpus=16, days=45, econ=econ) or []
    assert [c.kind for c in owned] == ["running"] and owned[0].usd == pytest.approx(16 * running * 45 / 30)


def test_owned_inventory_plan_pays_running_only(catalog: Catalog) -> None:
    sc = scenario(
        catalog,
        procurement=["owned"],
        sites=["dc1"],
        inventory=[{"gpu": "h100_sxm", "count": 8, "site": "dc1"}],
        hardware={"gpus": ["h100_sxm"], "max_gpus": 64, "pp": [1], "micro_batches": [1]},
    )
    plan = plan_training(catalog, sc)
    assert plan.chosen is not None
    assert plan.chosen.evaluation.layout.gpus <= 8 and plan.chosen.site == "dc1"
    data = plan.to_json()
    assert [c["kind"] for c in data["cost_lines"]] == ["running"]
    assert data["total_cost_usd"] == pytest.approx(sum(c["usd"] for c in data["cost_lines"]))


def test_buying_waits_for_delivery(catalog: Catalog) -> None:
    """H100 nodes arrive after 2 months (60 days): a 30-day deadline cannot be met by buying; 120 days can."""
    base = {
        "procurement": ["buy"],
        "sites": ["dc1"],
        "hardware": {"gpus": ["h100_sxm"], "max_gpus": 16, "pp": [1]},
    }
    tight = plan_training(catalog, scenario(catalog, **base))
    assert tight.status == "infeasible"
    assert tight.reasons == (
        "h100_sxm: delivery (60 days) and setup (0 days) leave no time before the 30-day deadline",
    )
    loose = plan_training(catalog, scenario(catalog, **base, deadline_days=120))
    assert loose.chosen is not None
    assert loose.chosen.start_delay_days == pytest.approx(60.0)
    assert loose.chosen.finish_days == pytest.approx(60.0 + loose.chosen.evaluation.days)


def test_site_power_limits_the_gpu_count(catalog: Catalog) -> None:
    """dc1: 500 kW at PUE 1.4 → ⌊500,000/(700 W × 1.4)⌋ = 510 H100 (the serving site_capacity rule)."""
    from planner.training.search import site_limit

    sc = scenario(
        catalog, procurement=["buy"], sites=["dc1"], hardware={"gpus": ["h100_sxm"], "max_gpus": 4096}
    )
    assert site_limit(catalog.site("dc1"), catalog.gpu("h100_sxm"), "buy", sc) == 510
    assert site_limit(catalog.site("us_east"), catalog.gpu("h100_sxm"), "rent", sc) == 4096
