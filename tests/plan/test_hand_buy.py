"""Bought, owned and edge supply checked by hand from the catalog: an 8 × H100 node at $325,000 delivered 2 months
after the order, running (power + colocation) × 1.1 from delivery, resold at the horizon for half its
straight-line book value (4-year life), all discounted monthly at the cost of capital; the buy/rent choice
and the budget's most-served scale against the same cash flows."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from tests.plan.hand_scenarios import (
    BASE,
    HEADROOM,
    HOURS,
    cheapest_quote,
    output_tokens,
    plan_json,
    replicas_for,
    running_usd_per_gpu_month,
    saturation_qwen3_8b_h100,
)

REL = 1e-9
NODE_USD, LEAD, LIFE_MONTHS = 325_000.0, 2, 48
RAMP = [0.0, 0.0] + [100.0] * 22
"""24 months, no demand until the first purchase can arrive (100 req/s = 7 replicas: one node)."""


def _pv(month: float, rate: float) -> float:
    return float((1 + rate) ** (-month / 12))


def _bought_node(catalog: Catalog, horizon: int, rate: float, order: int = 0) -> float:
    """Present value of one node ordered at ``order``: capex, running from delivery, resale at the horizon."""
    running = 8 * running_usd_per_gpu_month(catalog, "h100_sxm", "dc1")
    resale = 0.5 * NODE_USD * max(0.0, 1 - (horizon - order) / LIFE_MONTHS)
    return (
        NODE_USD * _pv(order, rate)
        + sum(running * _pv(m, rate) for m in range(order + LEAD, horizon))
        - resale * _pv(horizon, rate)
    )


def test_catalog_figures_this_file_assumes(catalog: Catalog) -> None:
    g = catalog.accelerators["h100_sxm"]
    assert g.purchase is not None
    assert (g.purchase.usd_per_node, g.purchase.lead_time_months, g.purchase.lifetime_years) == (NODE_USD, LEAD, 4)
    # 517 W × 1.4 × $0.08 × 720 h + 0.7 kW × $184.06, × 1.1 → $187.59 per GPU-month
    assert running_usd_per_gpu_month(catalog, "h100_sxm", "dc1") == pytest.approx(187.586168, rel=1e-9)


@pytest.mark.parametrize("rate", [0.0, 0.1])
def test_buy_only_cash_flow(catalog: Catalog, rate: float) -> None:
    """100 req/s from month 2 at dc1, buy only: one node (7 replicas), $325,000 + 22 months' running − $81,250
    resale ($276,765.17 undiscounted); $/Mtok over the 22 months served."""
    d = plan_json(
        catalog, horizon_months=24, chat={"requests_per_s": RAMP, "sites": ["dc1"]}, procurement=["buy"],
        economics={"cost_of_capital_frac_per_year": rate},
    )  # fmt: skip
    total = _bought_node(catalog, 24, rate)
    assert d["total_cost_usd"] == pytest.approx(total, rel=REL)
    assert (d["capex_usd"], d["residual_value_usd"]) == pytest.approx((NODE_USD, 81_250.0))
    assert replicas_for(100, saturation_qwen3_8b_h100()) == 7
    assert d["deployments"][0]["replicas_per_period"] == [0, 0] + [7] * 22
    tokens = output_tokens(100, 250, 22)
    assert d["cost_usd_per_million_output_tokens"] == pytest.approx(total / (tokens / 1e6), rel=1e-9)


def _buy_or_rent(catalog: Catalog, rate: float) -> tuple[float, float]:
    """(buy at month 0 and rent months 0-1, rent 36 months) for 100 req/s = 7 replicas over 36 months; rent
    = one 8-GPU node at the cheapest whole-node quote (cheaper than 7 single GPUs)."""
    node = min(
        8 * cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 8), 7 * cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    ) * HOURS
    rent = sum(node * _pv(m, rate) for m in range(36))
    hybrid = node * (_pv(0, rate) + _pv(1, rate)) + _bought_node(catalog, 36, rate)
    return hybrid, rent


@pytest.mark.parametrize("rate", [0.0, 0.1])
def test_buy_vs_rent_takes_the_cheaper_cash_flow(catalog: Catalog, rate: float) -> None:
    """No cost of capital: buying ($357,286.44 with two months' rent) beats renting ($393,984); at 10 %/year
    renting ($344,026.21) beats it ($360,464.14)."""
    hybrid, rent = _buy_or_rent(catalog, rate)
    assert (hybrid < rent) == (rate == 0.0)
    d = plan_json(
        catalog, horizon_months=36, chat={"requests_per_s": 100, "sites": ["us_east", "dc1"]},
        procurement=["rent", "buy"], economics={"cost_of_capital_frac_per_year": rate},
    )  # fmt: skip
    assert d["total_cost_usd"] == pytest.approx(min(hybrid, rent), rel=REL)
    assert (d["capex_usd"] > 0) == (hybrid < rent)


def test_inventory_first_then_rent(catalog: Catalog) -> None:
    """8 owned H100s at dc1 (running cost only) and 200 req/s = 13 replicas: all 8 owned + 5 rented GPUs."""
    d = plan_json(
        catalog, chat={"requests_per_s": 200, "sites": ["us_east", "dc1"]}, procurement=["rent", "buy"],
        inventory=[{"gpu": "h100_sxm", "count": 8, "site": "dc1"}],
    )  # fmt: skip
    monthly = 8 * running_usd_per_gpu_month(catalog, "h100_sxm", "dc1") + 5 * cheapest_quote(
        catalog, "h100_sxm", "us_east", "on_demand", 1
    ) * HOURS
    assert d["total_cost_usd"] == pytest.approx(12 * monthly, rel=REL)


def test_edge_devices_before_cloud(catalog: Catalog) -> None:
    """30 req/s of FP8 Qwen3-8B: the 4 RTX 4090s at store_edge (depreciation + power, no ops or colocation)
    serve 4 × 6.71 req/s, one rented RTX 4090 ($0.60/h) the rest."""
    d = plan_json(
        catalog, chat={"requests_per_s": 30, "quantizations": ["fp8"], "kv_dtypes": ["fp8"],
                       "sites": ["store_edge", "us_east"]},
        hardware={"gpus": ["rtx_4090", "h100_sxm"], "tp": [1], "pp": [1], "gpu_share_fracs": []},
    )  # fmt: skip
    g, s = catalog.accelerators["rtx_4090"], catalog.sites["store_edge"]
    assert g.purchase is not None
    depreciation = g.purchase.usd_per_node / g.gpus_per_node / (12 * g.purchase.lifetime_years)
    power = (g.idle_w + 0.7 * (g.tdp_w - g.idle_w)) / 1e3 * s.pue * s.electricity_usd_per_kwh * HOURS
    monthly = 4 * (depreciation + power) + cheapest_quote(catalog, "rtx_4090", "us_east", "on_demand", 1) * HOURS
    assert sorted((x["site"], x["replicas"]) for x in d["deployments"]) == [("store_edge", 4), ("us_east", 1)]
    assert d["total_cost_usd"] == pytest.approx(12 * monthly, rel=REL)


@pytest.mark.parametrize(("opex", "gpus"), [(10_000, 5), (11_000, 8), (15_000, 10)])
def test_budget_serves_what_the_money_rents(catalog: Catalog, tmp_path: Path, opex: float, gpus: int) -> None:
    """$10,000/month rents 5 single GPUs ($1,936.80 each); $11,000 one 8-GPU node ($10,944); $15,000 the node
    + 2 single GPUs. Served = GPUs × 0.9 × the replica's capacity (`planner predict`)."""
    single = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1) * HOURS
    node = 8 * cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 8) * HOURS
    most = max(n + 8 * k for k in range(3) for n in range(9) if n * single + k * node <= opex)
    assert most == gpus
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(BASE))
    out = CliRunner().invoke(app, ["budget", str(path), "--opex-usd-per-month", str(opex), "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    served = gpus * HEADROOM * saturation_qwen3_8b_h100()
    assert d["served_requests_per_s"]["chat"] == pytest.approx(served, rel=1e-6)
    assert d["served_scale"] == pytest.approx(served / 20, rel=1e-6)
    assert sum(x["gpus"] for x in d["deployments"]) == gpus


def test_budget_total_buys_one_node(catalog: Catalog, tmp_path: Path) -> None:
    """$700,000 of capex buys two $325,000 nodes: 16 replicas from month 2 (demand 0 before), 2 × the one-node
    cash flow."""
    data = copy.deepcopy(BASE)
    data.update(horizon_months=24, procurement=["buy"])
    data["workloads"][0].update(requests_per_s=RAMP, sites=["dc1"])
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    out = CliRunner().invoke(app, ["budget", str(path), "--capex-usd", "700000", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert d["served_requests_per_s"]["chat"] == pytest.approx(16 * HEADROOM * saturation_qwen3_8b_h100(), rel=1e-6)
    assert d["total_cost_usd"] == pytest.approx(2 * _bought_node(catalog, 24, 0.0), rel=REL)


def test_cost_rises_and_bends_down_with_the_rent_price(catalog: Catalog) -> None:
    """Each fixed plan costs a straight line in the rent multiplier, so the cheapest plan's cost never falls as
    rent rises and is concave in it; buy vs rent (100 req/s, 36 months) flips at 335,398.44 / 372,096 = 0.901×
    (the node's horizon cost over the rent it saves)."""
    scales = [0.7, 0.8, 0.9, 0.95, 1.0, 1.2]
    costs = [
        plan_json(
            catalog, horizon_months=36, chat={"requests_per_s": 100, "sites": ["us_east", "dc1"]},
            procurement=["rent", "buy"], economics={"rent_price_scale": s},
        )["total_cost_usd"]
        for s in scales
    ]  # fmt: skip
    assert costs == sorted(costs)
    slopes = [(c2 - c1) / (s2 - s1) for s1, s2, c1, c2 in zip(scales, scales[1:], costs, costs[1:], strict=False)]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(slopes, slopes[1:], strict=False))
    hybrid, rent = _buy_or_rent(catalog, 0.0)
    flip = (hybrid - 2 * rent / 36) / (rent - 2 * rent / 36)
    assert flip == pytest.approx(0.90138, abs=1e-5)
    for s, c in zip(scales, costs, strict=True):
        assert c == pytest.approx(min(rent * s, hybrid + (s - 1) * 2 * rent / 36), rel=REL), s


def test_hourly_peaks_rented_by_the_hour_beat_a_node_running_all_day(catalog: Catalog) -> None:
    """100 req/s for 12 hours a day, 50 for the other 12 (7 and 4 replicas), 36 months, buy or rent. Renting
    by the hour: an 8-GPU node ($1.90) for the 12 peak hours and four single GPUs ($2.69) for the others,
    $5,472 + $3,873.60 a month, $336,441.60 in all; a bought node (all day from month 2) with those two
    months rented costs $354,089.64."""
    node_h = 8 * cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 8)
    gpu_h = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    days = HOURS / 24
    peak = min(node_h, 7 * gpu_h) * 12 * days
    low = min(node_h, 4 * gpu_h) * 12 * days
    rent = 36 * (peak + low)
    bought = 2 * (peak + low) + _bought_node(catalog, 36, 0.0)
    assert (round(rent, 2), round(bought, 2)) == (336_441.60, 354_089.64)
    d = plan_json(
        catalog, horizon_months=36, procurement=["rent", "buy"],
        chat={"requests_per_s": 100, "sites": ["us_east", "dc1"], "hourly_profile_frac": [0.5] * 12 + [1.0] * 12},
    )  # fmt: skip
    assert d["total_cost_usd"] == pytest.approx(min(rent, bought), rel=REL)
    assert d["capex_usd"] == 0
