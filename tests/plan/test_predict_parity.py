"""``planner predict --requests-per-s`` reproduces every deployment of every bundled example: TTFT, TPOT and
decode step equal to the plan's (one computation). Each deployment is predicted with what the plan's
deployment holds — its site, role, engine with its settings, optimizations, the workload's lengths and SLO
percentiles, the scenario's stated efficiencies, batch limit and workspace — at the load each replica serves
at the peak (a replica serving nothing there shows its operating point: its capacity per replica)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from planner import performance as perf
from planner.catalog import Catalog
from planner.plan import plan
from planner.readout import Deployment
from planner.readout.optimizations import is_on
from planner.scenario import Scenario, load_scenario, merged_sites

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/scenario.yaml"))


def predict_request(scenario: Scenario, d: Deployment) -> perf.PredictRequest:
    """The predict options that describe deployment ``d`` of a plan of ``scenario``."""
    w = next(x for x in scenario.workloads if x.name == d.workload)
    stated = scenario.hardware.efficiency.get(d.gpu)
    pool = d.role != "colocated"
    served = d.served_per_replica_requests_per_s
    return perf.PredictRequest(
        model=d.model, gpu=d.gpu, tp=d.tp, pp=d.pp, ep=d.ep, quant=d.quantization, kv_dtype=d.kv_dtype,
        input_tokens=w.input_tokens, output_tokens=w.output_tokens, engine=d.engine, role=d.role, site=d.site,
        requests_per_s=served if served else d.capacity_per_replica_requests_per_s,
        workspace_gib=scenario.workspace_gib, batch_limit=scenario.max_batch,
        ttft_percentile=None if pool else w.slo.ttft_percentile,
        tpot_percentile=None if pool else w.slo.tpot_percentile,
        prefix_cache=w.prefix_cache if is_on(d.optimizations, "prefix_cache") else None,
        speculative=w.speculative if is_on(d.optimizations, "speculative") else None,
        prefill_mfu_frac=None if stated is None else stated.prefill_mfu_frac,
        decode_mbu_frac=None if stated is None else stated.decode_mbu_frac,
    )


@pytest.mark.parametrize("example", EXAMPLES)
def test_predict_reproduces_every_deployment_of_the_example(catalog: Catalog, example: str) -> None:
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    sites = merged_sites(catalog, scenario)
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    assert deployments
    for d in deployments:
        assert sites[d.site] == catalog.sites[d.site]  # predict knows the catalog's sites only
        at = perf.predict(catalog, predict_request(scenario, d)).to_json()["at_load"]
        for key in ("ttft_ms", "tpot_ms", "decode_step_ms"):
            assert math.isclose(at[key], getattr(d, key), rel_tol=1e-6, abs_tol=1e-9), (d.gpu, d.role, key)
