"""Answers that name the cause (issue 15 item 4): the closest miss of a GPU that fits but misses an SLO,
and `planner budget` with buy-only procurement measuring the served scale from the first delivery."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from planner.catalog import Catalog
from planner.optimize.explain_slo import closest_miss
from planner.plan import plan
from planner.readout import PlanResult
from planner.readout.budget import budget_use
from planner.scenario import Budget, Scenario, load_scenario, parse_scenario
from planner.scenario_base import Slo
from tests.plan.helpers import starter

ROOT = Path(__file__).resolve().parents[2]


def _rows(*configs: tuple[str, int, str, int, float, float, float]) -> pd.DataFrame:
    """Candidate rows (gpu, tp, quantization, max_batch, tpot_floor_ms, prefill_ms, network_ms)."""
    return pd.DataFrame(
        [
            {
                "gpu": gpu,
                "tp": tp,
                "pp": 1,
                "quantization": q,
                "site": "us_east",
                "max_batch": batch,
                "tpot_floor_ms": tpot,
                "prefill_ms": prefill,
                "network_ms": net,
                "feasible": False,
                "reason": "does not fit: weights + workspace + one sequence's KV exceed GPU memory"
                if batch < 1
                else "TTFT floor above the SLO",
            }
            for gpu, tp, q, batch, tpot, prefill, net in configs
        ]
    )


def test_closest_miss_names_the_configuration_that_fits_and_by_how_much() -> None:
    """Most RTX 4090 rows do not fit in memory, but TP4 int8 fits and misses only TTFT (3980 ms > 3000 ms):
    that is the reason given, not the most common one."""
    rows = _rows(
        ("rtx_4090", 1, "bf16", 0, 0.0, 0.0, 0.0),
        ("rtx_4090", 2, "bf16", 0, 0.0, 0.0, 0.0),
        ("rtx_4090", 2, "int8", 0, 0.0, 0.0, 0.0),
        ("rtx_4090", 4, "int8", 8, 40.0, 3960.0, 20.0),
        ("rtx_4090", 4, "bf16", 2, 80.0, 5000.0, 20.0),
    )
    why = closest_miss(rows, Slo(ttft_ms=3000, tpot_ms=50))
    assert why == (
        "fits as rtx_4090 TP4xPP1 int8 at us_east but misses TTFT by 980 ms (3980 ms > 3000 ms) "
        "at its best configuration"
    )


def test_closest_miss_reports_both_latencies_and_memory() -> None:
    both = _rows(("l4", 2, "fp8", 4, 62.5, 2500.0, 100.0))
    assert "misses TPOT by 12.5 ms (62.5 ms > 50 ms) and TTFT by 600 ms (2600 ms > 2000 ms)" in closest_miss(
        both, Slo(ttft_ms=2000, tpot_ms=50)
    )
    none_fit = _rows(("l4", 1, "bf16", 0, 0.0, 0.0, 0.0))
    assert closest_miss(none_fit, Slo()).startswith("does not fit in memory at any allowed TP/PP and format")


def test_budget_with_buy_only_serves_from_the_first_delivery(catalog: Catalog) -> None:
    """buy_vs_rent with procurement [buy] and a $1.6M capex budget: nothing can serve before the first
    purchase is delivered (month 2), and quarterly periods use it from the next quarter, so the common served
    fraction is measured from month 3 on (it said month 2, inside a quarter that serves nothing) — it is > 0
    (it was 0: the scale had to hold in the months before delivery too), within the capex budget."""
    stated = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    scenario = stated.model_copy(
        update={"procurement": ["buy"], "objective": "max_throughput", "budget": Budget(capex_usd=1.6e6)}
    )
    result = plan(catalog, scenario, with_alternatives=False)
    lead_months = min(catalog.gpu(g).purchase.lead_time_months for g in ("h100_sxm", "h200_sxm"))  # type: ignore[union-attr]
    assert result.served_scale is not None and result.served_scale > 0.5
    assert lead_months == 2 and result.served_from_month == 3  # the first quarter starting after delivery
    assert result.capex_usd <= 1.6e6
    before = [e for e in result.schedule if e.start_month < lead_months]
    assert before and all(sum(e.served_requests_per_s.values()) == 0 for e in before)
    _check_budget_use(result)


def _check_budget_use(result: PlanResult) -> None:
    """The capex line has money left (it said "no budget line"), but less than one more node of the cheapest
    kind the plan buys: it binds in whole units, and the sentence names the node and both amounts."""
    bought = [s for s in result.supply if s.procurement == "buy"]
    node = min(bought, key=lambda s: s.capex_usd / s.units)
    node_usd = node.capex_usd / node.units
    left = 1.6e6 - result.capex_usd
    assert 0 < left < node_usd
    use = budget_use(result)
    assert use is not None and use.binding == [] and use.used_frac == {"capex_usd": result.capex_usd / 1.6e6}
    assert use.binding_limit == (
        f"capex_usd in whole units: the ${left:,.0f} left is less than one {node.unit_gpus}-GPU {node.gpu} node "
        f"at {node.site} (${node_usd:,.0f})"
    )
    spent_in_full = replace(
        result, scenario=result.scenario.model_copy(update={"budget": Budget(capex_usd=result.capex_usd)})
    )
    assert budget_use(spent_in_full).binding_limit == "capex_usd"  # type: ignore[union-attr]
    ample = replace(result, scenario=result.scenario.model_copy(update={"budget": Budget(capex_usd=1e9)}))
    assert budget_use(ample).binding_limit.startswith("no budget line binds (the plan's binding rows: ")  # type: ignore[union-attr]


def _buy_only(catalog: Catalog, **update: object) -> Scenario:
    stated = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    return stated.model_copy(update={"procurement": ["buy"], **update})


def test_buy_only_plan_names_the_lead_time(catalog: Catalog) -> None:
    """Buy-only min cost: the demand of the first months cannot be served because purchases arrive after
    their lead time — the answer says so, and offers rent at a cloud site or inventory."""
    result = plan(catalog, _buy_only(catalog), with_alternatives=False)
    lead = min(catalog.gpu(g).purchase.lead_time_months for g in ("h100_sxm", "h200_sxm"))  # type: ignore[union-attr]
    assert result.status == "infeasible"
    first = result.infeasibility[0]
    assert first.requirement == "lead_time"
    assert f"nothing bought arrives before month {lead:g} (purchase lead time {lead:g} months)" in first.message
    # buy_vs_rent's workload lists us_east and dc1: rent is what procurement leaves out
    assert first.relaxation == "add rent to procurement and rent at us_east until month 2, or add inventory"


def test_buy_only_without_a_datacenter_says_no_site_allows_buying(catalog: Catalog) -> None:
    stated = _buy_only(catalog)
    cloud_only = [w.model_copy(update={"sites": ["us_east"]}) for w in stated.workloads]
    result = plan(catalog, stated.model_copy(update={"workloads": cloud_only}), with_alternatives=False)
    assert result.status == "infeasible"
    assert [e.message for e in result.infeasibility] == [
        "chat: no site allows buying (buying needs a datacenter site; its sites: us_east)"
    ]


def test_budget_below_one_node_names_the_node_price(catalog: Catalog) -> None:
    """A $1,000 capex budget with buy-only procurement serves nothing: infeasible, naming the cheapest node."""
    scenario = _buy_only(catalog, objective="max_throughput", budget=Budget(capex_usd=1000))
    result = plan(catalog, scenario, with_alternatives=False)
    cheapest = min(catalog.gpu(g).purchase.usd_per_node for g in ("h100_sxm", "h200_sxm"))  # type: ignore[union-attr]
    assert result.status == "infeasible"
    assert result.infeasibility[0].message.startswith(
        f"chat: the capex budget $1,000 is below one node (${cheapest:,.0f}: "
    )


@pytest.mark.parametrize(
    ("change", "reason", "relaxation"),
    [
        (  # owned GPUs at another site than the workload's
            {"procurement": ["owned"], "inventory": [{"gpu": "h100_sxm", "count": 1, "site": "us_east"}],
             "workloads": [{"sites": ["dc1"]}]},
            "h100_sxm at datacenter dc1 needs procurement 'buy' or inventory",
            "add buy to procurement, or list the GPUs you own there under inventory",
        ),
        (
            {"rental_kinds": ["spot"], "rent_providers": ["lambda"]},  # lambda quotes no spot, others do
            "no spot price for h100_sxm at us_east from lambda (rent_providers; other providers quote it)",
            "add a provider that quotes it to rent_providers, or allow another rental kind (rental_kinds), GPU type or site",
        ),
        (
            {"workloads": [{"quantizations": ["int4"], "max_quality_tier": 1}]},
            "format quality tier 2 above the workload's max_quality_tier 1",
            "raise chat.max_quality_tier, or allow a format of a lower tier (chat.quantizations, chat.kv_dtypes)",
        ),
    ],
)
def test_a_workload_that_cannot_run_gets_the_relaxation_of_its_reason(
    catalog: Catalog, change: dict[str, object], reason: str, relaxation: str
) -> None:
    """The relaxation follows the reason shown; it was "allow a TP/PP degree or GPU that the reason above
    permits" for every reason but memory."""
    top = {k: v for k, v in change.items() if k != "workloads"}
    workload = change.get("workloads", [{}])
    assert isinstance(workload, list)
    data = starter(workload[0], hardware={"gpus": ["h100_sxm"], "tp": [1], "pp": [1]}, **top)
    result = plan(catalog, Scenario.model_validate(data, context={"catalog": catalog}), with_alternatives=False)
    assert result.status == "infeasible"
    (cause,) = result.infeasibility
    assert cause.message.endswith(reason)
    assert cause.relaxation == relaxation


def test_a_lead_time_is_no_cause_when_nothing_is_asked_before_delivery(catalog: Catalog) -> None:
    """Buy-only at dc1 with demand only from month 2 (when the first node arrives) and a power limit below one
    node (8 × H100 at 700 W × PUE 1.4 = 7.84 kW > 7.8 kW): the cause named was the purchase lead time."""
    scenario = parse_scenario(
        {
            "name": "power-below-a-node",
            "horizon_months": 6,
            "workloads": [
                {
                    "name": "chat", "models": ["qwen3_8b"], "quantizations": ["bf16"],
                    "requests_per_s": [0, 0, 100, 100, 100, 100], "input_tokens": 1000, "output_tokens": 250,
                    "slo": {"ttft_ms": 1500, "tpot_ms": 60}, "sites": ["dc1"], "disaggregation": "off",
                }
            ],
            "hardware": {"gpus": ["h100_sxm"], "tp": [1], "pp": [1], "gpu_share_fracs": []},
            "procurement": ["buy"],
            "sites": [{"name": "dc1", "max_power_kw": 7.8}],
        }
    )
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "infeasible"
    said = " ".join(e.message + " " + e.relaxation for e in result.infeasibility)
    assert "lead time" not in said
    assert "the power limit of site dc1" in said and "raise sites.dc1.max_power_kw (7.8 now)" in said
