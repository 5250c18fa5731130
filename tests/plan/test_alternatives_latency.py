"""Alternatives carry the worst (max over deployments) predicted TPOT and TTFT of their plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("example", ["chat_70b_cloud", "mixed_fleet"])
def test_alternatives_have_worst_tpot_and_ttft_within_slos(catalog: Catalog, example: str) -> None:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    data = plan(catalog, scenario).to_json()
    tpot_slo_ms = max(w.slo.tpot_ms for w in scenario.workloads)
    ttft_slo_ms = max(w.slo.ttft_ms for w in scenario.workloads)
    assert data["alternatives"]
    feasible = [a for a in data["alternatives"] if a["status"] != "infeasible"]
    assert feasible
    for a in data["alternatives"]:
        assert "max_tpot_ms" in a and "max_ttft_ms" in a
        if a["status"] == "infeasible":
            assert a["max_tpot_ms"] is None and a["max_ttft_ms"] is None
            continue
        assert 0 < a["max_tpot_ms"] <= tpot_slo_ms
        assert 0 < a["max_ttft_ms"] <= ttft_slo_ms
    # The alternatives differ in latency, not only in cost: the frontier has more than one TPOT.
    assert len({round(a["max_tpot_ms"], 3) for a in feasible}) > 1


def test_single_gpu_alternative_matches_a_single_gpu_plan(catalog: Catalog) -> None:
    """small_models_shared's plan uses one GPU type (L40S); that GPU's alternative is the same plan at the same
    cost. (rag_prefix_cache's did until the ridge loss made an H200 replica part of it.)"""
    scenario = load_scenario(ROOT / "examples/small_models_shared/scenario.yaml", catalog)
    data = plan(catalog, scenario).to_json()
    gpus = {d["gpu"] for d in data["deployments"]}
    assert len(gpus) == 1
    (gpu,) = gpus
    alt = next(a for a in data["alternatives"] if a["kind"] == "gpu" and a["gpu"] == gpu)
    assert alt["total_cost_usd"] == pytest.approx(data["total_cost_usd"], rel=1e-6)
    assert alt["max_tpot_ms"] <= max(w.slo.tpot_ms for w in scenario.workloads)
    assert alt["max_ttft_ms"] <= max(w.slo.ttft_ms for w in scenario.workloads)
