"""`planner compare` when the owned GPUs serve the demand: the rent-only option rents nothing, so its flip
sentences said "renting wins at every rent multiplier from 0.25× to 4×" about a plan that rents nothing
(planner/compare.py), and the recommendation was "rent_only" for a plan that rents nothing in a scenario that
may not rent (procurement: [owned]); it is "owned_only" (planner.compare_recommend.OWNED_ONLY). Where the
owned GPUs do not serve it, the recommended renting says it is beyond the scenario's procurement."""

from __future__ import annotations

import pytest

from planner.catalog.loader import load_catalog
from planner.compare import compare
from planner.scenario import parse_scenario, validate_against_catalog
from tests.plan.helpers import starter

SCENARIO = starter(
    {"quantizations": ["bf16", "fp8"], "sites": ["dc1"]},
    name="owned-h100",
    hardware={"gpus": ["h100_sxm", "l40s", "a100_sxm_80gb"], "tp": [1, 2, 4], "pp": [1]},
    procurement=["owned"],
    inventory=[{"gpu": "h100_sxm", "count": 8, "site": "dc1"}],
)


@pytest.fixture(scope="module")
def owned() -> object:
    catalog = load_catalog()
    scenario = parse_scenario(SCENARIO, path="s.yaml")
    validate_against_catalog(scenario, catalog, "s.yaml")
    return compare(catalog, scenario).to_json()


def test_every_option_is_the_owned_plan(owned: dict) -> None:  # type: ignore[type-arg]
    # 1 owned H100 at dc1 runs: (90 W idle + 0.7 × 610 W) × PUE 1.4 × $0.08/kWh × 720 h = $41.69 power,
    # 0.7 kW × $184.06/kW-month = $128.84 colocation, × 1.1 ops overhead = $187.59/month; × 12 months
    running = (517 * 1.4 * 0.08 * 720 / 1000 + 0.7 * 184.06) * 1.1
    for option in owned["options"]:
        assert option["status"] == "optimal"
        assert option["total_cost_usd"] == pytest.approx(12 * running, rel=1e-9)
        assert option["capex_usd"] == 0
    assert owned["recommendation"] == "owned_only"
    assert owned["recommendation_reason"] == (
        f"nothing to rent or buy: the owned GPUs serve the demand for ${12 * running:,.0f} over 12 months"
        " (every option plans them alone)"
    )


def test_flip_sentences_do_not_call_the_owned_plan_renting(owned: dict) -> None:  # type: ignore[type-arg]
    sentences = [f["sentence"] for f in owned["flip_points"] if f["parameter"] != "utilization_frac"]
    assert sentences == [
        "buying nothing (the owned GPUs serve the demand) wins at every rent multiplier from 0.25× to 4×",
        "buying nothing (the owned GPUs serve the demand) wins at every purchase price multiplier from 0.25× to 4×",
        "buying nothing (the owned GPUs serve the demand) wins at every demand level from 0.062× to 4×",
    ]


def test_renting_beyond_an_owned_only_procurement_says_so() -> None:
    """200 req/s at dc1 or us_east: the 8 owned H100 serve at most 177 (planner plan: infeasible, exit 3), the
    rent-only option rents the rest at us_east and is recommended — beyond procurement: [owned], as its reason
    now says; the options keep their own procurement."""
    catalog = load_catalog()
    data = starter(
        {"quantizations": ["bf16", "fp8"], "sites": ["dc1", "us_east"], "requests_per_s": 200},
        name="owned-h100-short", hardware=SCENARIO["hardware"], procurement=["owned"],
        inventory=SCENARIO["inventory"],
    )
    scenario = parse_scenario(data, path="s.yaml")
    validate_against_catalog(scenario, catalog, "s.yaml")
    out = compare(catalog, scenario, flip_points=False).to_json()
    rent = next(o for o in out["options"] if o["name"] == "rent_only")
    assert rent["status"] == "optimal" and rent["capex_usd"] == 0 and rent["opex_usd_per_month"] > 1000
    assert out["recommendation"] == "rent_only"
    assert out["recommendation_reason"].endswith(
        " — beyond the scenario's procurement [owned], which allows no renting (planner plan keeps to it;"
        " compare plans each option with its own)"
    )

