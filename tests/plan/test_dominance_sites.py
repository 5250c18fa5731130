"""Site dominance (planner.problem.dominance.prune_dominated_sites) keeps the maximal copies of each deployment
under "no dearer at every quote, serves at least as much, else the lower id": the same candidates as comparing
the copies one by one in table order (the rule as first written, kept here as the oracle)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.catalog.schema import Site
from planner.cli.bench import bench_scenario
from planner.problem.dominance import (
    _values,
    copy_key,
    prune_dominated_sites,
    rent_quotes,
    spread_workloads,
    unlimited_site,
)
from planner.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _one_by_one(
    cands: pd.DataFrame, catalog: Catalog, scenario: Scenario, sites: dict[str, Site]
) -> pd.DataFrame:
    """prune_dominated_sites's rule as first written: each copy compared with the others one pair at a time, in
    table order, skipping copies already dropped."""
    spread = spread_workloads(scenario)
    key_cols = copy_key(cands)

    def unlimited(site_id: str) -> bool:
        return unlimited_site(sites[site_id])

    def prices(gpu_id: str, site_id: str) -> tuple[float, ...]:
        return rent_quotes(catalog, scenario, gpu_id, sites[site_id])

    found: dict[tuple[Any, ...], list[tuple[int, str, float]]] = defaultdict(list)
    price_cache: dict[tuple[str, str], tuple[float, ...]] = {}
    # (gpu, site2, site) → (site2's quotes no higher than site's for every kind and size, some quote differs)
    compared: dict[tuple[str, str, str], tuple[bool, bool]] = {}
    if "share_frac" not in cands:  # tables built without GPU sharing
        cands = cands.assign(share_frac=1.0)
    names = [*key_cols, "site", "best_capacity_requests_per_s"]
    rows_of = zip(cands.index.tolist(), *(_values(cands[c]) for c in names), strict=True)
    for k, *key, site, cap in rows_of:  # column lists: no per-cell pandas boxing
        if unlimited(str(site)) and str(key[0]) not in spread:
            found[tuple(key)].append((int(k), str(site), float(cap)))
    drop: set[int] = set()
    for group, found_rows in found.items():
        if len(found_rows) < 2:
            continue
        gpu, one_site = str(group[4]), len({site for _k, site, _c in found_rows}) == 1
        for _k, site, _c in found_rows:  # rows at one site have the same prices: none looked up
            if not one_site and (gpu, site) not in price_cache:
                price_cache[(gpu, site)] = prices(gpu, site)
        for k, site, cap in found_rows:
            for k2, site2, cap2 in found_rows:
                if k2 == k or k2 in drop or cap2 < cap:
                    continue
                if site2 == site:  # the same quotes: no dearer, and differing only by capacity or id
                    le, differs = True, False
                else:
                    if (gpu, site2, site) not in compared:
                        p2, p1 = price_cache[(gpu, site2)], price_cache[(gpu, site)]
                        compared[(gpu, site2, site)] = (all(a <= b for a, b in zip(p2, p1, strict=True)), p2 != p1)
                    le, differs = compared[(gpu, site2, site)]
                if le and (differs or cap2 > cap or k2 < k):
                    drop.add(k)
                    break
    return cands.drop(index=sorted(drop))


def _cases(catalog: Catalog, scenario: Scenario) -> list[pd.DataFrame]:
    """The feasible candidates as build_context prunes them, and as each site alternative does (one site kept)."""
    table = candidates_for(catalog, scenario)
    cands = table.feasible.set_index("cand", drop=False).rename_axis(index=None)
    sites = sorted({str(s) for s in cands["site"]})
    return [cands] + [cands[cands["site"] == s] for s in sites] + [cands[cands["site"] != sites[0]]]


@pytest.mark.parametrize("example", ["bench", "mixed_fleet", "chat_70b_cloud", "long_context_rag"])
def test_the_kept_copies_are_those_of_comparing_them_one_by_one(catalog: Catalog, example: str) -> None:
    scenario = bench_scenario() if example == "bench" else load_scenario(
        ROOT / "examples" / example / "scenario.yaml", catalog
    )
    dropped = 0
    for cands in _cases(catalog, scenario):  # type: ignore[arg-type]
        table = candidates_for(catalog, scenario)  # type: ignore[arg-type]
        fast = prune_dominated_sites(cands, catalog, scenario, table.sites)  # type: ignore[arg-type]
        oracle = _one_by_one(cands, catalog, scenario, table.sites)  # type: ignore[arg-type]
        pd.testing.assert_frame_equal(fast, oracle)
        dropped += len(cands) - len(fast)
    assert dropped > 0
