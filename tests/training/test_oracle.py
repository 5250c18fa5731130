"""Brute-force oracle: on small choice sets every (GPU, t, p, d, ZeRO, recompute, SP, micro-batch,
schedule, site, procurement) combination is evaluated, priced and filtered independently of the search's
enumeration and its per-count shortcut; the planner must return the same best option."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from planner.catalog import Catalog
from planner.training.layout import Layout, evaluate_layout, layout_problem
from planner.training.plan import plan_training, run_settings
from planner.training.scenario import TrainingScenario, resolve_model
from planner.training.search import Option, allowed_sites, meets, price
from planner.training.terms import gpu_terms, model_terms
from tests.training.helpers import scenario

SMALL: dict[str, Any] = {
    "model": {"layers": 8, "hidden_size": 2048, "ffn_size": 5632, "heads": 16, "vocab_size": 32000},
    "training_tokens": 1.0e12,
    "seq_len_tokens": 2048,
    "global_batch_sequences": 48,
    "sites": ["dc1", "us_east"],
    "procurement": ["buy", "rent"],
    "hardware": {"gpus": ["a100_sxm_80gb", "h100_sxm", "rtx_4090"], "max_gpus": 8, "tp": [1, 2], "pp": [1, 2], "micro_batches": [1, 2]},
}  # fmt: skip


def brute_force(catalog: Catalog, sc: TrainingScenario) -> Option | None:
    model = model_terms(resolve_model(sc, catalog), seq_len=sc.seq_len_tokens)
    run = run_settings(sc)
    hw = sc.hardware
    options = []
    for gpu_id in sorted(hw.gpus or []):
        gpu = gpu_terms(catalog, gpu_id, precision=sc.precision)
        for tp, pp, dp, zero, rc, sp, mb, sched in itertools.product(
            hw.tp, hw.pp, range(1, hw.max_gpus + 1), range(4), ("none", "selective", "full"), (False, True),
            hw.micro_batches, ("1f1b", "interleaved", "fill_drain"),
        ):  # fmt: skip
            layout = Layout(gpu_id, tp, pp, dp, zero, rc, sp, mb, sched)  # type: ignore[arg-type]
            if layout.gpus > hw.max_gpus or layout_problem(layout, model, gpu, run.global_batch_seqs):
                continue
            ev = evaluate_layout(layout, model, gpu, run)
            if not ev.fits:
                continue
            for site in allowed_sites(catalog, sc):
                for proc in sc.procurement:
                    option = price(catalog, sc, ev, site, proc)
                    if option is not None and meets(option, sc):
                        options.append(option)
    return min(options, key=lambda o: o.sort_key(sc.objective)) if options else None


@pytest.mark.parametrize(
    "changes",
    [
        {"deadline_days": 200},
        {"deadline_days": 40},
        {"deadline_days": 15},
        {"deadline_days": 9},
        {"deadline_days": 5},
        {"deadline_days": 60, "objective": "earliest_finish", "budget_usd": 5000},
        {"deadline_days": 60, "objective": "earliest_finish", "budget_usd": 2000},
        {
            "deadline_days": 100,
            "procurement": ["buy"],
            "hardware": {**SMALL["hardware"], "gpus": ["a100_sxm_80gb", "rtx_4090"]},
        },
        {
            "deadline_days": 100,
            "objective": "earliest_finish",
            "budget_usd": 20000,
            "hardware": {**SMALL["hardware"], "gpus": ["a100_sxm_80gb", "rtx_4090"]},
        },
    ],
)
def test_search_matches_brute_force(catalog: Catalog, changes: dict[str, Any]) -> None:
    sc = scenario(catalog, **{**SMALL, **changes})
    plan = plan_training(catalog, sc)
    oracle = brute_force(catalog, sc)
    if oracle is None:
        assert plan.status == "infeasible" and plan.reasons
        return
    assert plan.chosen is not None
    got = plan.chosen
    assert got.total_cost_usd == pytest.approx(oracle.total_cost_usd, rel=1e-9)
    assert got.finish_days == pytest.approx(oracle.finish_days, rel=1e-9)
    assert (got.evaluation.layout.gpu, got.evaluation.layout.gpus, got.site, got.procurement) == (
        oracle.evaluation.layout.gpu,
        oracle.evaluation.layout.gpus,
        oracle.site,
        oracle.procurement,
    )


def test_a_later_deadline_never_costs_more(catalog: Catalog) -> None:
    """Relaxing the deadline only adds options: the cheapest run's cost is non-increasing in the deadline, and
    it always finishes by the deadline. At ap_northeast Runpod sells 1/2/4/8-GPU instances at one price, so a
    later deadline can take fewer GPUs at a higher MFU (at us_east a whole hyperstack node is cheapest)."""
    costs = []
    for deadline in (9, 12, 15, 25, 40, 80, 200):
        changes = {**SMALL, "sites": ["ap_northeast"], "deadline_days": deadline}
        plan = plan_training(catalog, scenario(catalog, **changes))
        assert plan.chosen is not None
        assert plan.chosen.finish_days <= deadline
        costs.append(plan.chosen.total_cost_usd)
    assert costs == sorted(costs, reverse=True)
    assert costs[0] > costs[-1]
