"""What a budget line reports as spent and why it binds, on multi-period plans (planner/readout/budget.py).

The opex budget limits every month (constraints/budget_max.py row 2), so "spent" is the busiest month's opex,
not the mean month's; a line binds in whole units when the money left is below one more *replica's* supply
(two 1-GPU instances for a TP2 replica), in some month for opex; a search that stops at its limit names no
whole-unit line. Expected figures are worked out here from the rent quotes (USD per GPU-hour × 720 h)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.optimize.served_scale import SCALE_LIMIT
from planner.plan import plan
from planner.readout.budget import budget_use
from planner.readout.result import PlanResult
from planner.scenario import Budget, parse_scenario

HOURS_PER_MONTH = 720
L40S_USD_PER_GPU_HOUR = 1.4  # runpod on-demand, per card (catalogs/prices.yaml)
H100_USD_PER_GPU_HOUR = 2.69

GROWING = {
    "name": "probe-growth-rent",
    "horizon_months": 6,
    "workloads": [
        {
            "name": "chat",
            "models": ["qwen3_8b"],
            "quantizations": ["bf16"],
            "requests_per_s": [1, 2, 4, 8, 16, 32],
            "input_tokens": 1000,
            "output_tokens": 200,
            "slo": {"ttft_ms": 2000, "tpot_ms": 60},
            "sites": ["us_east"],
        }
    ],
    "hardware": {"gpus": ["h100_sxm", "l40s"], "tp": [1], "pp": [1]},
    "procurement": ["rent"],
    "rental_kinds": ["on_demand"],
}

TP2_BUY_AND_RENT = {
    "name": "probe-tp2-buy-rent",
    "horizon_months": 12,
    "period_months": 3,
    "workloads": [
        {
            "name": "chat",
            "models": ["llama_3_1_70b"],
            "quantizations": ["fp8"],
            "requests_per_s": [4, 8, 12, 16],
            "input_tokens": 1500,
            "output_tokens": 300,
            "slo": {"ttft_ms": 2000, "tpot_ms": 50},
            "sites": ["us_east", "dc1"],
        }
    ],
    "hardware": {"gpus": ["h100_sxm"], "tp": [2, 4], "pp": [1]},
    "procurement": ["rent", "buy"],
    "rental_kinds": ["on_demand"],
    "economics": {"rent_price_scale": 3},
}


def _budget_plan(catalog: Catalog, data: dict[str, object], **limits: float) -> PlanResult:
    scenario = parse_scenario({**data, "objective": "max_throughput", "budget": limits})
    return plan(catalog, scenario, with_alternatives=False)


def _monthly_rent_usd(result: PlanResult, month: int, usd_per_gpu_hour: dict[str, float]) -> float:
    """Rent of ``month`` from the schedule's rented GPUs of its period × the quote × 720 h."""
    entry = next(e for e in result.schedule if month in e.months)
    return sum(
        n * usd_per_gpu_hour[key.split("@")[0]] * HOURS_PER_MONTH * result.scenario.economics.rent_price_scale
        for key, n in entry.rented_gpus.items()
    )


@pytest.fixture(scope="module")
def growing(catalog: Catalog) -> PlanResult:
    return _budget_plan(catalog, GROWING, opex_usd_per_month=3000)


def test_opex_spent_is_the_busiest_month_not_the_mean(growing: PlanResult) -> None:
    quotes = {"l40s": L40S_USD_PER_GPU_HOUR, "h100_sxm": H100_USD_PER_GPU_HOUR}
    by_month = [_monthly_rent_usd(growing, m, quotes) for m in range(6)]
    busiest = max(by_month)
    assert busiest == pytest.approx(
        (H100_USD_PER_GPU_HOUR + L40S_USD_PER_GPU_HOUR) * HOURS_PER_MONTH
    )  # 2,944.8
    assert sum(by_month) / 6 < 0.6 * busiest  # the mean month (what was reported) is far below it
    use = budget_use(growing)
    assert use is not None
    assert use.spent["opex_usd_per_month"] == pytest.approx(busiest)
    assert use.used_frac["opex_usd_per_month"] == pytest.approx(busiest / 3000)


def test_opex_binds_in_whole_units_in_the_month_with_the_least_room(growing: PlanResult) -> None:
    """$55.20 left in month 5 is less than one more L40S ($1,008/month); before, "no budget line"."""
    use = budget_use(growing)
    assert use is not None and use.binding == []
    left = 3000 - (H100_USD_PER_GPU_HOUR + L40S_USD_PER_GPU_HOUR) * HOURS_PER_MONTH
    l40s = L40S_USD_PER_GPU_HOUR * HOURS_PER_MONTH
    step = use.whole_units["opex_usd_per_month"]
    assert step.month == 5
    assert step.usd == pytest.approx(l40s) and step.left_usd == pytest.approx(left)
    assert use.binding_limit == (
        f"opex_usd_per_month in whole units: in month 5 the ${left:,.0f} left is less than one 1-GPU l40s "
        f"instance at us_east (${l40s:,.0f})"
    )


def test_a_line_spent_beyond_its_limit_says_so_with_the_month(growing: PlanResult) -> None:
    lower = replace(
        growing, scenario=growing.scenario.model_copy(update={"budget": Budget(opex_usd_per_month=2000)})
    )
    use = budget_use(lower)
    assert use is not None and use.binding == ["opex_usd_per_month"]
    busiest = (H100_USD_PER_GPU_HOUR + L40S_USD_PER_GPU_HOUR) * HOURS_PER_MONTH
    assert use.binding_limit == (
        f"opex_usd_per_month (opex_usd_per_month over the limit in month 5: ${busiest:,.0f} > $2,000)"
    )


def test_a_tp2_replica_on_1_gpu_instances_needs_two_of_them(catalog: Catalog) -> None:
    """Period 0 (months 0-2) can only rent (bought nodes arrive in month 2, usable from period 1): two rented
    H100 at 3× the quote = $11,620.80/month, so $20,000 leaves $8,379.20, less than the two more 1-GPU
    instances a TP2 replica needs; it said "no budget line" (it compared with one instance, $5,810).
    Raising the opex line alone grows the served scale, so the line is what stops it (to $26,000: month 2 also
    pays the running cost of the node delivered then, constraints/budget_max.py (2))."""
    capped = _budget_plan(
        catalog, TP2_BUY_AND_RENT, capex_usd=700_000, opex_usd_per_month=20_000, total_usd=600_000
    )
    h100 = H100_USD_PER_GPU_HOUR * HOURS_PER_MONTH * 3
    assert _monthly_rent_usd(capped, 0, {"h100_sxm": H100_USD_PER_GPU_HOUR}) == pytest.approx(2 * h100)
    use = budget_use(capped)
    assert use is not None and use.binding == []
    step = use.whole_units["opex_usd_per_month"]
    assert step.month == 0
    assert step.usd == pytest.approx(2 * h100) and step.left_usd == pytest.approx(20_000 - 2 * h100)
    assert use.binding_limit.startswith(
        f"opex_usd_per_month in whole units: in month 0 the ${20_000 - 2 * h100:,.0f} left is less than 2 1-GPU "
        f"h100_sxm instances at us_east for one 2-GPU replica of chat (${2 * h100:,.0f})"
    )
    raised = _budget_plan(
        catalog, TP2_BUY_AND_RENT, capex_usd=700_000, opex_usd_per_month=26_000, total_usd=600_000
    )
    assert raised.served_scale is not None and capped.served_scale is not None
    assert raised.served_scale > 1.5 * capped.served_scale


def test_a_capex_line_with_rent_allowed_binds_nothing_even_in_whole_units(catalog: Catalog) -> None:
    """Capex alone with rent allowed: the search stops at its limit; $50,000 of capex left below one node
    ($325,000) is not what stops it, so no whole-unit line is named (it said "capex_usd in whole units")."""
    result = _budget_plan(catalog, TP2_BUY_AND_RENT, capex_usd=700_000)
    assert result.served_scale == pytest.approx(SCALE_LIMIT, rel=1e-6)
    use = budget_use(result)
    assert use is not None and use.binding == [] and use.whole_units == {}
    assert use.binding_limit.startswith("no budget line binds (the plan's binding rows: ")
    assert f"the search stops at {SCALE_LIMIT:,.0f}× the stated demand" in use.binding_limit


def test_a_total_line_binds_in_whole_units_of_one_period_not_the_whole_horizon(catalog: Catalog) -> None:
    """$15,000 in total: the plan spends the sum of its monthly rents; what is left is less than one more L40S
    for one 1-month period ($1,008), the least one more on-demand unit adds (it said $3,024, that line's cost
    over the months it runs)."""
    result = _budget_plan(catalog, GROWING, total_usd=15_000)
    quotes = {"l40s": L40S_USD_PER_GPU_HOUR, "h100_sxm": H100_USD_PER_GPU_HOUR}
    total = sum(_monthly_rent_usd(result, m, quotes) for m in range(6))
    use = budget_use(result)
    assert use is not None and use.spent["total_usd"] == pytest.approx(total)
    l40s = L40S_USD_PER_GPU_HOUR * HOURS_PER_MONTH
    assert 0 < 15_000 - total < l40s
    assert use.binding_limit == (
        f"total_usd in whole units: the ${15_000 - total:,.0f} left is less than one 1-GPU l40s instance at "
        f"us_east for one 1-month period (${l40s:,.0f})"
    )


HOURLY = {
    **GROWING,
    "name": "probe-hourly",
    "horizon_months": 12,
    "period_months": 3,
    "workloads": [
        {
            **GROWING["workloads"][0],  # type: ignore[index]
            "requests_per_s": [10, 25, 40, 60],
            "hourly_profile_frac": [0.2] * 6
            + [0.4, 0.6, 0.8]
            + [1.0] * 8
            + [0.8, 0.8, 0.6, 0.6, 0.4, 0.4, 0.2],
        },
        {
            "name": "summ",
            "models": ["llama_3_1_8b"],
            "quantizations": ["bf16"],
            "requests_per_s": 0.3,
            "input_tokens": 2000,
            "output_tokens": 150,
            "slo": {"ttft_ms": 2000, "tpot_ms": 60},
            "sites": ["us_east"],
        },
    ],
    "hardware": {"gpus": ["h100_sxm", "l40s"], "tp": [1], "pp": [1], "gpu_share_fracs": [0.5, 0.25]},
}


def test_hourly_rent_binds_in_whole_units_of_its_shortest_hour_block(catalog: Catalog) -> None:
    """On-demand rent follows the hour blocks and is billed for the hours it runs, so one more L40S can cost
    as little as its shortest block (3 h a day: $126/month); the busiest month's opex is the hours-weighted
    sum over its blocks."""
    result = _budget_plan(catalog, HOURLY, opex_usd_per_month=3000)
    quotes = {"l40s": L40S_USD_PER_GPU_HOUR, "h100_sxm": H100_USD_PER_GPU_HOUR}
    by_month = []
    for m in range(12):
        entry = next(e for e in result.schedule if m in e.months)
        by_month.append(
            sum(
                b.hours_per_day / 24 * n * quotes[key.split("@")[0]] * HOURS_PER_MONTH
                for b in entry.hour_blocks
                for key, n in b.rented_gpus.items()
            )
        )
    use = budget_use(result)
    assert use is not None
    assert use.spent["opex_usd_per_month"] == pytest.approx(max(by_month))
    step = use.whole_units["opex_usd_per_month"]
    assert step.month is not None and step.left_usd == pytest.approx(3000 - by_month[step.month])
    shortest = min(b.hours_per_day for e in result.schedule for b in e.hour_blocks)
    assert shortest == 3
    assert step.usd <= L40S_USD_PER_GPU_HOUR * HOURS_PER_MONTH * shortest / 24 + 1e-9
    assert step.left_usd < step.usd


def test_a_zero_budget_line_prints_without_a_share(tmp_path: Path) -> None:
    """`budget: {capex_usd: 0}` on a rent-only plan crashed (exit 4) after writing its outputs: the share of a
    zero limit is None."""
    import yaml
    from typer.testing import CliRunner

    from planner.cli.main import app

    data = yaml.safe_load(Path("examples/small_models_shared/scenario.yaml").read_text())
    data["budget"] = {"capex_usd": 0}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives"])
    assert res.exit_code == 0, res.output
    assert "capex_usd: 0 of 0\n" in res.stdout
