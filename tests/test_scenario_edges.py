"""Scenario fields at their edges, found by a procurement user's probes: a rate the solver cannot tell from
none (it planned $0 with no GPU, status optimal), a growth that leaves the allowed range within the horizon
(a $21-trillion plan, or months silently left unserved), an all-zero demand, a list naming a value twice,
and the field a scenario-level check names (planner/scenario_base.py, planner/validation_messages.py)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.errors import ScenarioError
from planner.scenario import parse_scenario
from tests.plan.helpers import starter

BASE: dict[str, Any] = starter(
    {"quantizations": ["bf16", "fp8"]}, name="qa", hardware={"gpus": ["l40s", "h100_sxm"], "tp": [1, 2], "pp": [1]}
)


def _with(**workload: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["workloads"][0].update(workload)
    return data


def _refusal(data: dict[str, Any]) -> str:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, path="s.yaml")
    message = str(err.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("rate", [1e-9, 1e-6, 9.99e-6])
def test_a_rate_the_solver_cannot_tell_from_none_is_refused(rate: float) -> None:
    """1e-6 req/s planned $0 with no deployment (status optimal): the solver's tolerance ate the demand."""
    message = _refusal(_with(requests_per_s=rate))
    assert message.startswith("s.yaml: workloads[0].requests_per_s: must be at least 1e-05 req/s")
    assert f"(got {rate!r})" in message


def test_the_smallest_servable_rate_is_accepted() -> None:
    scenario = parse_scenario(_with(requests_per_s=1e-5), path="s.yaml")
    assert scenario.workloads[0].requests_per_s == 1e-5


def test_a_period_value_is_zero_or_servable() -> None:
    message = _refusal(_with(requests_per_s=[5.0] + [1e-7] * 11))
    assert "workloads[0].requests_per_s[1]: must be 0 (no traffic in that period) or at least 1e-05 req/s" in message
    values = [5.0] + [0.0] * 11  # 0 is no traffic: fine
    assert parse_scenario(_with(requests_per_s=values), path="s.yaml").workloads[0].requests_per_s == values


def test_every_period_zero_is_refused() -> None:
    """[0] * 12 planned $0, exit 0: a workload with no traffic at all is a slip."""
    message = _refusal(_with(requests_per_s=[0.0] * 12))
    assert message == (
        "s.yaml: workloads[0].requests_per_s: every period is 0 — give the periods with traffic their rate, "
        "or remove the workload"
    )


def test_growth_beyond_the_rate_limit_is_refused_with_the_largest_that_fits() -> None:
    """5 req/s doubling monthly for 36 months is 1.7e11 req/s: it planned $21,224,099,988,994."""
    data = _with(growth_frac_per_month=1.0)
    data["horizon_months"] = 36
    message = _refusal(data)
    assert message.startswith(
        "s.yaml: workloads[0].growth_frac_per_month: 1 (100 % a month) takes 5 req/s to 1.72e+11 req/s by month 35, "
        "above the 1e+06 req/s a workload may reach — lower it to 0.4172 or less"
    )
    assert 5 * 1.4172**35 <= 1e6 < 5 * 1.4173**35  # the stated bound is the largest 4-digit growth that fits
    data["workloads"][0]["growth_frac_per_month"] = 0.4172
    assert parse_scenario(data, path="s.yaml").workloads[0].growth_frac_per_month == 0.4172


def test_decay_below_the_servable_rate_is_refused() -> None:
    """-50 %/month for 36 months: months 23-35 fell under 1e-6 req/s and were planned with no GPU
    ($23,184 = 23 months × $1,008, exit 0)."""
    data = _with(growth_frac_per_month=-0.5)
    data["horizon_months"] = 36
    message = _refusal(data)
    assert "workloads[0].growth_frac_per_month: -0.5 (-50 % a month) takes 5 req/s to 1.46e-10 req/s by month 35" in message
    assert "raise it to -0.3126 or more" in message
    assert 5 * (1 - 0.3126) ** 35 >= 1e-5 > 5 * (1 - 0.3127) ** 35
    data["workloads"][0]["growth_frac_per_month"] = -0.3126
    assert parse_scenario(data, path="s.yaml").periods == 36


def test_decay_counts_each_periods_peak_month() -> None:
    """A 3-month period is planned at its busiest month, the first one while demand decays."""
    data = _with(growth_frac_per_month=-0.5)
    data.update(horizon_months=24, period_months=3)
    message = _refusal(data)
    lowest = 5 * 0.5**21  # the last period's first month
    assert f"to {lowest:.3g} req/s by month 21" in message


def test_an_hour_of_the_profile_below_the_servable_rate_is_refused() -> None:
    """[1, 1e-9 × 23] planned $504 (one hour a day), the other 23 hours' 5e-9 req/s served by nothing."""
    message = _refusal(_with(hourly_profile_frac=[1.0] + [1e-9] * 23))
    assert "workloads[0].hourly_profile_frac[1]: 1e-09 of the peak is 5e-09 req/s in the quietest period" in message
    assert "write 0 for an hour without traffic, or at least 2e-06" in message
    assert parse_scenario(_with(hourly_profile_frac=[1.0] + [0.0] * 23), path="s.yaml")
    assert parse_scenario(_with(hourly_profile_frac=[1.0] + [2e-6] * 23), path="s.yaml")


@pytest.mark.parametrize(
    ("where", "field", "values", "line"),
    [
        ("workload", "sites", ["us_east", "us_west", "us_east"], "workloads[0].sites: us_east is listed twice — list each value once: [us_east, us_west]"),
        ("workload", "models", ["qwen3_8b", "qwen3_8b"], "workloads[0].models: qwen3_8b is listed twice"),
        ("workload", "quantizations", ["fp8", "fp8"], "workloads[0].quantizations: fp8 is listed twice"),
        ("hardware", "gpus", ["l40s", "l40s"], "hardware.gpus: l40s is listed twice"),
        ("hardware", "tp", [1, 2, 1], "hardware.tp: 1 is listed twice — list each value once: [1, 2]"),
        ("top", "procurement", ["rent", "rent"], "procurement: rent is listed twice"),
        ("top", "rental_kinds", ["spot", "on_demand", "spot"], "rental_kinds: spot is listed twice"),
    ],
)
def test_a_list_naming_a_value_twice_is_refused(where: str, field: str, values: list[Any], line: str) -> None:
    """``sites: [us_east, us_east]`` planned as if listed once, exit 0: another site was likely meant."""
    data = copy.deepcopy(BASE)
    holder = {"workload": data["workloads"][0], "hardware": data["hardware"], "top": data}[where]
    holder[field] = values
    assert _refusal(data) == f"s.yaml: {line}" or _refusal(data).startswith(f"s.yaml: {line}")


def test_scenario_level_checks_name_their_field() -> None:
    """They printed '(top level): ...'; the field is where the fix goes."""
    data = copy.deepcopy(BASE)
    data["workloads"].append({**data["workloads"][0], "requests_per_s": 1})
    assert _refusal(data).startswith(
        "s.yaml: workloads[1].name: duplicate workload names: ['chat'] — give each workload its own name"
    )
    data = copy.deepcopy(BASE)
    data["period_months"] = 5
    assert _refusal(data) == (
        "s.yaml: period_months: horizon_months must be a multiple of period_months — use period_months 1, 2, 3, 4, 6, 12"
    )
    data = copy.deepcopy(BASE)
    data["sites"] = [{"name": "us_east", "rtt_ms": 30}, {"name": "us_east", "rtt_ms": 40}]
    assert _refusal(data).startswith("s.yaml: sites[1].name: duplicate site names in sites: ['us_east']")


def test_a_list_of_a_set_length_says_how_many() -> None:
    """pydantic's 'List should have at least 24 items after validation, not 23' named no fix."""
    message = _refusal(_with(hourly_profile_frac=[1.0] * 23))
    assert message == "s.yaml: workloads[0].hourly_profile_frac: must have at least 24 entries (got 23): give exactly 24"


def test_cli_refuses_a_vanishing_rate_with_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    import yaml

    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(_with(requests_per_s=1e-6)))
    out = tmp_path / "plan.json"
    out.write_text("before")
    result = CliRunner().invoke(app, ["plan", str(scenario), "--json-out", str(out)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "workloads[0].requests_per_s: must be at least 1e-05 req/s" in lines[0]
    assert out.read_text() == "before"
    assert math.isclose(1e-5 * 86_400, 0.864)  # the "requests a day" the message states


@pytest.mark.parametrize(
    ("field", "text", "line"),
    [
        ("requests_per_s", "8 req/s", "workloads[0].requests_per_s: expected a number (got '8 req/s') — write 8 (the unit is in the field name)"),
        ("requests_per_s", "5", "workloads[0].requests_per_s: expected a number (got '5') — write 5 without quotes"),
        ("input_tokens", "1,000", "workloads[0].input_tokens: expected a whole number (got '1,000') — write 1000 (a plain number)"),
        (
            "input_tokens",
            "8k",
            "workloads[0].input_tokens: expected a whole number (got '8k') — write 8000 (8k as a token count: "
            "8 × 1,000) or 8192 (8 × 1024, as context lengths are written) as a plain number",
        ),
    ],
)
def test_a_number_written_as_text_gets_the_number_to_write(field: str, text: str, line: str) -> None:
    """'8 req/s' was answered 'expected a number' with no valid alternative."""
    assert _refusal(_with(**{field: text})) == f"s.yaml: {line}"


def test_money_and_percent_text_get_the_plain_number() -> None:
    data = copy.deepcopy(BASE)
    data["budget"] = {"opex_usd_per_month": "$5,000"}
    assert _refusal(data).endswith("budget.opex_usd_per_month: expected a number (got '$5,000') — write 5000 (a plain number)")
    data = copy.deepcopy(BASE)
    data["max_utilization_frac"] = "90%"
    assert _refusal(data).endswith("max_utilization_frac: expected a number (got '90%') — write 0.9 (a fraction: 0.9 = 90 %)")


def test_inventory_at_an_edge_site_is_refused_with_the_devices_to_write() -> None:
    """2 × l40s inventory at store_edge was ignored (exit 3: 'no h100_sxm devices at edge site store_edge');
    4 × rtx_4090 there was added to the site's 4 devices (8 GPUs, two cost models) — exit 0."""
    from planner.catalog.loader import load_catalog
    from planner.scenario import validate_against_catalog

    data = _with(sites=["store_edge"])
    data["procurement"] = ["owned"]
    data["inventory"] = [{"gpu": "rtx_4090", "count": 4, "site": "store_edge"}]
    scenario = parse_scenario(data, path="s.yaml")
    with pytest.raises(ScenarioError) as err:
        validate_against_catalog(scenario, load_catalog(), "s.yaml")
    assert str(err.value) == (
        "s.yaml: inventory[0].site: store_edge is an edge site, whose GPUs are its devices — state them as "
        "sites: [{name: store_edge, devices: {rtx_4090: 4}}] (inventory is owned GPUs at datacenter sites)"
    )
    data["inventory"] = [{"gpu": "l40s", "count": 8, "site": "dc1"}]  # a datacenter: fine
    validate_against_catalog(parse_scenario(data, path="s.yaml"), load_catalog(), "s.yaml")


def test_the_schema_states_the_new_limits() -> None:
    """`planner schema` promises every field's limits: the smallest rate and lists of distinct values."""
    from planner.scenario import Scenario
    from planner.scenario_base import SchemaWithDefaults

    defs = Scenario.model_json_schema(schema_generator=SchemaWithDefaults)["$defs"]
    rate, per_period = defs["Workload"]["properties"]["requests_per_s"]["anyOf"]
    assert rate["minimum"] == 1e-5 and rate["maximum"] == 1e6
    assert per_period["items"]["description"] == "0 (no traffic) or at least 1e-05 req/s"
    assert defs["Workload"]["properties"]["sites"]["anyOf"][0]["uniqueItems"] is True
    assert defs["HardwareSpace"]["properties"]["tp"]["uniqueItems"] is True


def test_section_checks_name_the_entry() -> None:
    """'economics: rent_volume_tiers: ...' and '(top level): objective max_throughput ...' named a section,
    not the field to edit."""
    data = copy.deepcopy(BASE)
    data["economics"] = {"rent_volume_tiers": [{"min_gpus": 8, "discount_frac": 0.1}, {"min_gpus": 8, "discount_frac": 0.2}]}
    assert _refusal(data) == (
        "s.yaml: economics.rent_volume_tiers[1]: min_gpus must increase and discount_frac must not decrease "
        "(got 8 → 8 GPUs, 0.1 → 0.2) — list the tiers by min_gpus, each above the one before"
    )
    data = copy.deepcopy(BASE)
    data["objective"] = "max_throughput"
    assert _refusal(data).startswith("s.yaml: objective: objective max_throughput needs a budget — add budget:")


def test_all_three_procurements_get_the_list_to_write() -> None:
    """[rent, buy, owned] was 'at most 2 entries (got 3) — shorten or split it': which one to drop?"""
    data = copy.deepcopy(BASE)
    data["procurement"] = ["rent", "buy", "owned"]
    assert _refusal(data) == (
        "s.yaml: procurement: owned adds nothing to rent and buy: the inventory is used whenever it is listed — "
        "write [rent, buy] (owned alone plans on the inventory only)"
    )
    data["procurement"] = ["rent", "buy"]
    assert parse_scenario(data, path="s.yaml").procurement == ["rent", "buy"]


@pytest.mark.parametrize(
    ("site", "line"),
    [
        ("us_east", "us_east is a cloud site; devices are the GPUs installed at an edge site — add kind: edge to "
                    "this entry, or rent there (procurement: [rent])"),
        ("dc1", "dc1 is a datacenter site; devices are the GPUs installed at an edge site — add kind: edge to this "
                "entry, or list owned GPUs under inventory: [{gpu: l40s, count: 4, site: dc1}]"),
    ],
)
def test_devices_outside_an_edge_site_are_refused(site: str, line: str) -> None:
    """devices at us_east were ignored: with procurement [owned] the plan failed 'no on_demand price for
    h100_sxm at us_east', at dc1 'needs procurement buy or inventory' (exit 3, wrong cause)."""
    from planner.catalog.loader import load_catalog
    from planner.scenario import validate_against_catalog

    data = _with(sites=[site])
    data["procurement"] = ["owned"]
    data["sites"] = [{"name": site, "devices": {"l40s": 4}}]
    with pytest.raises(ScenarioError) as err:
        validate_against_catalog(parse_scenario(data, path="s.yaml"), load_catalog(), "s.yaml")
    assert str(err.value) == f"s.yaml: sites[0].devices: {line}"
    data["sites"] = [{"name": site, "kind": "edge", "devices": {"l40s": 4}}]  # an edge site: fine
    validate_against_catalog(parse_scenario(data, path="s.yaml"), load_catalog(), "s.yaml")


def test_a_new_site_without_kind_or_devices_is_refused() -> None:
    """sites: [{name: lab}] became an edge site with no devices: exit 3 'no h100_sxm devices at edge site lab'."""
    from planner.catalog.loader import load_catalog
    from planner.scenario import validate_against_catalog

    data = _with(sites=["lab"])
    data["sites"] = [{"name": "lab"}]
    with pytest.raises(ScenarioError) as err:
        validate_against_catalog(parse_scenario(data, path="s.yaml"), load_catalog(), "s.yaml")
    assert str(err.value) == (
        "s.yaml: sites[0].kind: lab is a new site without a kind, so an edge site with no devices — add kind: "
        "cloud (rent), kind: datacenter (buy, inventory) or devices: {GPU: count} (edge)"
    )
    for fixed in ({"name": "lab", "kind": "cloud"}, {"name": "lab", "devices": {"l40s": 1}}, {"name": "us_east"}):
        data["sites"] = [fixed]
        data["workloads"][0]["sites"] = [fixed["name"]]
        validate_against_catalog(parse_scenario(data, path="s.yaml"), load_catalog(), "s.yaml")
