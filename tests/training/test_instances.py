"""What a training run pays for: the instances a provider sells (whole 8-GPU nodes unless a quote lists
smaller instances; a partial instance's idle GPUs are paid for), whole bought nodes at datacenter sites only
(the rule of `planner plan`), and the scenario's rent volume tiers (the plan's tier formula)."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog
from planner.costs import colocation_usd_per_month, power_usd_per_month
from planner.ledgers.economics import tiered_rent_usd_per_month
from planner.scenario import Economics
from planner.training.plan import plan_training
from planner.training.pricing import cost_lines
from tests.training.helpers import scenario

HOURS = 10 * 24.0  # a 10-day run
RUNPOD = 2.69  # USD/GPU-h, 1/2/4/8-GPU instances (catalogs/prices.yaml)
HYPERSTACK = 1.90  # USD/GPU-h, whole 8-GPU nodes only


def rent(catalog: Catalog, gpus: int, econ: Economics | None = None, site: str = "us_east") -> list:
    lines = cost_lines(
        catalog,
        catalog.gpu("h100_sxm"),
        catalog.site(site),
        "rent",
        gpus=gpus,
        days=10,
        econ=econ or Economics(),
    )
    assert lines is not None
    return lines


def test_four_h100_rent_a_4_gpu_instance_not_half_a_node(catalog: Catalog) -> None:
    """4 GPUs: Runpod's 4-GPU instance (4 × $2.69 = $10.76/h) beats a whole hyperstack node (8 × $1.90 =
    $15.20/h); before, the run paid 4 × $1.90 for GPUs hyperstack sells only as 8-GPU nodes."""
    (line,) = rent(catalog, 4)
    assert min(4 * RUNPOD, 8 * HYPERSTACK) == 4 * RUNPOD
    assert line.gpus == 4 and line.usd == pytest.approx(4 * RUNPOD * HOURS)
    assert line.note == "runpod on-demand $2.69/GPU-h, 1 × 4-GPU instance"


@pytest.mark.parametrize(
    ("gpus", "paid", "usd_per_hour", "note"),
    [
        (1, 1, 1 * RUNPOD, "runpod on-demand $2.69/GPU-h, 1 × 1-GPU instance"),
        (3, 4, 4 * RUNPOD, "runpod on-demand $2.69/GPU-h, 1 × 4-GPU instance (1 idle GPU paid)"),
        (5, 8, 8 * HYPERSTACK, "hyperstack on-demand $1.90/GPU-h, 1 × 8-GPU node (3 idle GPUs paid)"),
        (8, 8, 8 * HYPERSTACK, "hyperstack on-demand $1.90/GPU-h, 1 × 8-GPU node"),
        (12, 16, 16 * HYPERSTACK, "hyperstack on-demand $1.90/GPU-h, 2 × 8-GPU nodes (4 idle GPUs paid)"),
    ],
)
def test_rent_pays_whole_instances(
    catalog: Catalog, gpus: int, paid: int, usd_per_hour: float, note: str
) -> None:
    """One instance of s ≥ G GPUs or ⌈G/8⌉ whole nodes, whichever costs less per hour (at us_east:
    Runpod's 1/2/4/8-GPU instances at $2.69, hyperstack's nodes at $1.90)."""
    (line,) = rent(catalog, gpus)
    assert (line.gpus, line.note) == (paid, note)
    assert line.usd == pytest.approx(usd_per_hour * HOURS)


def test_buy_only_at_datacenter_sites_and_in_whole_nodes(catalog: Catalog) -> None:
    """12 H100 bought at dc1 are 2 nodes of 8 ($325,000 each): capex, running and resale of 16 GPUs; a cloud
    region sells no GPUs (None), as `planner plan` offers buy options at datacenter sites only."""
    gpu, dc1, econ = catalog.gpu("h100_sxm"), catalog.site("dc1"), Economics()
    assert cost_lines(catalog, gpu, catalog.site("us_east"), "buy", gpus=8, days=45, econ=econ) is None
    lines = {c.kind: c for c in cost_lines(catalog, gpu, dc1, "buy", gpus=12, days=45, econ=econ) or []}
    running = (
        power_usd_per_month(gpu, dc1, utilization_frac=0.7)
        + colocation_usd_per_month(gpu, dc1, utilization_frac=0.7)
    ) * 1.1
    assert {c.gpus for c in lines.values()} == {16}
    assert lines["capex"].usd == pytest.approx(2 * 325_000)
    assert lines["capex"].note.startswith("2 × 8-GPU nodes (4 idle GPUs bought) at $325,000/node")
    assert lines["running"].usd == pytest.approx(16 * 2 * running)  # 45 days → 2 whole months
    assert lines["resale"].usd == pytest.approx(-2 * 0.5 * 325_000 * (1 - 2 / 48))


def test_plan_never_buys_at_a_cloud_site(catalog: Catalog) -> None:
    """Buy-only with every site allowed: the run is bought at dc1 (before: us_east, per GPU, at the cloud
    region's colocation rate); with cloud sites only it is infeasible with the cause and the fixes."""
    base = {"procurement": ["buy"], "deadline_days": 200, "hardware": {"gpus": ["h100_sxm"], "max_gpus": 16}}
    plan = plan_training(catalog, scenario(catalog, **base, sites=None))
    assert plan.chosen is not None and plan.chosen.site == "dc1"
    nodes = -(-plan.chosen.evaluation.layout.gpus // 8)
    capex = next(line for line in plan.chosen.lines if line.kind == "capex")
    assert capex.usd == pytest.approx(nodes * 325_000) and capex.gpus == 8 * nodes
    cloud = plan_training(catalog, scenario(catalog, **base, sites=["us_east", "us_west"]))
    assert cloud.status == "infeasible"
    assert cloud.reasons == (
        "h100_sxm: buying needs a datacenter site; sites lists only us_east (cloud), us_west (cloud) — add dc1 "
        "to sites, or add rent to procurement",
    )


def test_rent_volume_tiers_discount_the_rent(catalog: Catalog) -> None:
    """24 GPUs (3 hyperstack nodes) with 10 % off beyond 8 GPUs and 20 % beyond 16: 8 GPUs at 10 % and 8 at
    20 % off, a discount line of −$1.90 × 240 h × (0.8 + 1.6) = −$1,094.40 (the plan's tier formula)."""
    tiers = [{"min_gpus": 8, "discount_frac": 0.1}, {"min_gpus": 16, "discount_frac": 0.2}]
    econ = Economics.model_validate({"rent_volume_tiers": tiers})
    line, discount = rent(catalog, 24, econ)
    assert line.usd == pytest.approx(24 * HYPERSTACK * HOURS)
    assert discount.kind == "discount" and discount.usd == pytest.approx(-1094.40)
    ledger = tiered_rent_usd_per_month(24, HYPERSTACK * HOURS, [(8, 0.1), (16, 0.2)])
    assert line.usd + discount.usd == pytest.approx(ledger)
    assert discount.note == "rent volume tiers: 10% beyond 8 GPUs, 20% beyond 16 GPUs"
    assert [c.kind for c in rent(catalog, 8, econ)] == ["rent"]  # nothing beyond the first threshold


def test_plan_applies_rent_volume_tiers(catalog: Catalog) -> None:
    """The same run with 25 % off beyond 8 GPUs costs less by its discount line; the total is the lines' sum."""
    hardware = {"gpus": ["h100_sxm"], "max_gpus": 16, "pp": [1], "micro_batches": [1]}
    base = {"deadline_days": 10, "hardware": hardware}
    plain = plan_training(catalog, scenario(catalog, **base))
    tiers = {"rent_volume_tiers": [{"min_gpus": 8, "discount_frac": 0.25}]}
    tiered = plan_training(catalog, scenario(catalog, **base, economics=tiers))
    assert plain.chosen is not None and tiered.chosen is not None
    assert tiered.chosen.evaluation.layout.gpus == plain.chosen.evaluation.layout.gpus == 16
    rent_line, discount = tiered.chosen.lines
    assert discount.usd == pytest.approx(-0.25 * rent_line.usd / 2)  # the second node's 8 of 16 GPUs
    assert tiered.to_json()["total_cost_usd"] == pytest.approx(plain.chosen.total_cost_usd + discount.usd)


def test_rent_and_owned_running_are_discounted_like_the_bought_lines() -> None:
    """45 days at 12 %/year: month 0 whole at factor 1, half of month 1 at 1.12^(−1/12); at r = 0 or within
    the first month nothing changes (the plan's convention: each month paid at its start)."""
    from planner.training.pricing import present_value_frac

    econ = Economics(cost_of_capital_frac_per_year=0.12)
    assert present_value_frac(45.0, econ) == pytest.approx((1 + 0.5 * 1.12 ** (-1 / 12)) / 1.5, rel=1e-12)
    assert present_value_frac(20.0, econ) == 1.0
    assert present_value_frac(45.0, Economics()) == 1.0
