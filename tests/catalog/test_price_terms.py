"""Rental price rows are filed under the term they are sold at: a commitment (reserved_1y / reserved_3y) or
an interruptible rental (spot) costs less than the same provider's on-demand price for the GPU, and a
short reserved block (AWS EC2 Capacity Blocks: days to months) is not a 1- or 3-year reservation."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog, load_catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_discounted_kinds_are_below_the_providers_on_demand(catalog: Catalog) -> None:
    """Every reserved or spot row costs strictly less than its provider's cheapest on-demand row for the GPU
    (where the provider quotes one): the AWS Capacity Block 4.916 filed as reserved_1y above AWS's 3.90
    on-demand, and RunPod's H100 "spot" 2.69 equal to its secure-cloud on-demand, broke this."""
    offenders = []
    for price in catalog.prices:
        if price.kind == "on_demand":
            continue
        on_demand = [
            p.usd_per_gpu_hour
            for p in catalog.prices
            if p.gpu == price.gpu and p.provider == price.provider and p.kind == "on_demand"
        ]
        if on_demand and price.usd_per_gpu_hour >= min(on_demand):
            offenders.append((price.gpu, price.provider, price.kind, price.usd_per_gpu_hour, min(on_demand)))
    assert offenders == []


def test_no_capacity_block_is_filed_as_a_term_reservation(catalog: Catalog) -> None:
    blocks = [
        (p.gpu, p.provider, p.kind)
        for p in catalog.prices
        if "capacity block" in f"{p.source} {p.notes}".lower() or "capacityblocks" in p.source
    ]
    assert blocks == []


def test_aws_h100_quotes_are_on_demand_only(catalog: Catalog) -> None:
    """The only AWS H100 rows are the two on-demand quotes (before and after the June 2025 cut); the reference
    has no AWS 1-year reserved price."""
    rows = sorted((p.kind, p.usd_per_gpu_hour) for p in catalog.rental_prices("h100_sxm") if p.provider == "aws")
    assert rows == [("on_demand", 3.9), ("on_demand", 12.29)]


def test_each_estimate_is_its_stated_product_to_two_significant_digits(catalog: Catalog) -> None:
    """A market_estimate row's source states its arithmetic, "F × B = X": the figure is X to 2 significant
    digits, and X is F × B. The H20 estimate read "≈ 0.4 × the H100 price 3.49 → 1.5" (0.4 × 3.49 = 1.396 → 1.4)."""
    import re

    checked = {}
    for price in catalog.prices:
        if price.provider != "market_estimate":
            continue
        match = re.search(r"(\d+(?:\.\d+)?) × (\d+(?:\.\d+)?) = (\d+(?:\.\d+)?)", price.source)
        assert match, (price.gpu, price.kind, price.source)  # every estimate states its product
        factor, base, product = (float(g) for g in match.groups())
        assert factor * base == pytest.approx(product, abs=5e-4), (price.gpu, price.kind)
        assert price.usd_per_gpu_hour == float(f"{product:.2g}"), (price.gpu, price.kind)
        checked[(price.gpu, price.kind)] = price.usd_per_gpu_hour
    assert checked[("h20", "on_demand")] == 1.4
    assert checked[("h100_sxm", "reserved_1y")] == 2.4 and checked[("a100_pcie_80gb", "on_demand")] == 2.2
    assert len(checked) == 22  # 4 GPUs without a quote + 3 kinds × 6 main GPUs
