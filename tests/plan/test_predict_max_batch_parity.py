"""``planner predict`` with the prefix cache reads the memory fit the plan computes for the cached deployment
(planner.performance.optimizations.optimized_max_batch): its ``max_batch`` was the plain fit (24 sequences for
examples/rag_prefix_cache's H100 TP2) while ``at_load.batch_limit`` and the plan held 58."""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _predict(words: list[str]) -> dict:  # type: ignore[type-arg]
    res = CliRunner().invoke(app, [*words, "--json"])
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_predict_max_batch_is_the_plans_fit_with_the_prefix_cache(catalog: Catalog) -> None:
    scenario = load_scenario(ROOT / "examples/rag_prefix_cache/scenario.yaml", catalog)
    deployments = plan(catalog, scenario, with_alternatives=False).deployments
    h100 = next(d for d in deployments if d.gpu == "h100_sxm")
    assert "--prefix-hit-frac 0.8 --prefix-tokens 6144" in h100.predict_command
    words = shlex.split(h100.predict_command)[1:]
    cached = _predict([*words, "--batch", str(h100.batch)])
    # 6,144-token prefix held once, each sequence 8,300 − 0.8·6,144 tokens: 58 sequences fit (plain: 24)
    assert cached["max_batch"] == 58
    assert cached["at_load"]["batch_limit"] == cached["max_batch"] == h100.batch_limit  # the plan's deployment too
    # memory at the deployment's batch is the plan's (its resident prefix pages included)
    assert math.isclose(cached["memory_per_gpu_gb"], h100.memory_per_gpu_gb, rel_tol=1e-9)
    assert math.isclose(cached["memory_per_gpu_gb"], 57.4857, rel_tol=1e-5)
    # the lone prefill is of the 3,085 new tokens after 4,915 cached ones, not the whole 8,000-token prompt
    assert math.isclose(cached["at_load"]["cached_prompt_tokens"], 4915.2, rel_tol=1e-9)
    plain_words = [w for w in words if w not in ("--prefix-hit-frac", "0.8", "--prefix-tokens", "6144")]
    plain = _predict([*plain_words, "--batch", str(h100.batch)])
    assert plain["max_batch"] == 24 and plain["at_load"]["batch_limit"] == 24
    assert cached["ttft_ms"] < 0.5 * plain["ttft_ms"]
    # 18 whole sequences' KV without the cache: 70.97 GB per GPU against 57.49 GB with it
    assert math.isclose(plain["memory_per_gpu_gb"], 70.9652, rel_tol=1e-5)


def test_every_deployment_states_the_batch_limit_its_predict_command_prints(catalog: Catalog) -> None:
    """A deployment's ``batch_limit`` (memory fit with its optimizations, max_batch, the engine's cap:
    planner.performance.load.replica_batch_limit) is its predict command's ``at_load.batch_limit``, so a
    'memory' limit can be read against the batch it runs (mixed_fleet's summarizer: batch 15 of 108)."""
    for example, expected in (("rag_prefix_cache", {"h100_sxm": 58, "h200_sxm": 157}), ("mixed_fleet", None)):
        scenario = load_scenario(ROOT / f"examples/{example}/scenario.yaml", catalog)
        deployments = plan(catalog, scenario, with_alternatives=False).deployments
        for d in deployments:
            at_load = _predict(shlex.split(d.predict_command)[1:])["at_load"]
            assert d.batch_limit == at_load["batch_limit"] >= d.batch, (example, d.gpu, d.tp)
        if expected is not None:
            assert {d.gpu: d.batch_limit for d in deployments} == expected
    summarizer = next(d for d in deployments if d.workload == "summarize")
    assert (summarizer.batch, summarizer.batch_limit, summarizer.limited_by) == (15, 108, "memory")
