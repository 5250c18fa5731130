"""Alternatives the plan already answers are carried over (planner.optimize.restricted_optimum) and equal
the rebuilt-and-solved alternatives; the split-replica dominance rule keeps the optimum."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize import solve
from planner.optimize.alternatives import alternative
from planner.problem.context import build_context
from planner.problem.dominance import prune_split_replicas
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("example", ["long_context_rag", "assistant_8b_edge"])
def test_carried_alternatives_equal_rebuilt_ones(catalog: Catalog, example: str) -> None:
    """Every alternative with the solved plan handed in (carried where the plan is its optimum) has the
    status and cost (1e-9 relative) of the alternative rebuilt and solved from scratch; at least one is
    carried (no solver time), and a carried one is the plan's cost."""
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    main = solve(build_context(catalog, scenario, table), "highs", None)
    carried = 0
    for column in ("gpu", "site"):
        for value in sorted(set(table.candidates[column])):
            old, _ = alternative(catalog, scenario, table, "highs", column=column, value=value)
            new, solved = alternative(catalog, scenario, table, "highs", column=column, value=value, main=main)
            assert new.status == old.status, (column, value)
            if old.total_cost_usd is None:
                assert new.total_cost_usd is None
                continue
            assert new.total_cost_usd == pytest.approx(old.total_cost_usd, rel=1e-9, abs=1e-9), (column, value)
            assert solved is not None
            if solved[0].solve_seconds == 0.0:
                carried += 1
                assert new.total_cost_usd == pytest.approx(main[0].cost_usd, rel=1e-9)
    assert carried >= 1


def test_plan_with_several_gpu_types_is_not_carried(catalog: Catalog) -> None:
    """chat_70b_cloud's plan mixes GPU types: no GPU alternative may be answered by it."""
    scenario = load_scenario(ROOT / "examples/chat_70b_cloud/scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    main = solve(build_context(catalog, scenario, table), "highs", None)
    used = {str(main[1].cands.at[k, "gpu"]) for (k, _j, _t), n in main[0].values["n_rep"].items() if n > 0}
    assert len(used) > 1
    for gpu in sorted(used):
        record, solved = alternative(catalog, scenario, table, "highs", column="gpu", value=gpu, main=main)
        assert solved is not None and solved[0].solve_seconds > 0.0
        assert record.total_cost_usd is not None and record.total_cost_usd > main[0].cost_usd


def _cands(rows: list[tuple[int, float, float, float]], workload: str = "chat") -> pd.DataFrame:
    """Co-located h100 candidates at one site: (id, GPUs, best capacity req/s, prefill ms)."""
    return pd.DataFrame(
        [
            {
                "cand": k,
                "workload": workload,
                "role": "colocated",
                "gpu": "h100_sxm",
                "site": "us_east",
                "model": "llama_3_1_70b",
                "quantization": "fp8",
                "kv_dtype": "bf16",
                "gpus": gpus,
                "quality_tier": 1,
                "best_capacity_requests_per_s": cap,
                "prefill_ms": prefill,
                "network_ms": 20.0,
            }
            for k, gpus, cap, prefill in rows
        ]
    ).set_index("cand", drop=False)


def test_split_replicas_drop_only_what_smaller_replicas_replace(catalog: Catalog) -> None:
    """TP4 at 8.4 req/s is replaced by 2 × TP2 (10.4), TP8 at 20 by 4 × TP2 (20.8); TP8 at 25 stays (more
    than 4 × TP2 or 2 × TP4 serve); a TP2 too slow for the TTFT SLO (placement_rtt) replaces nothing."""
    scenario = load_scenario(ROOT / "examples/chat_70b_cloud/scenario.yaml", catalog)
    ttft_ms = scenario.workloads[0].slo.ttft_ms
    name = scenario.workloads[0].name
    cands = _cands([(0, 2, 5.2, 100.0), (1, 4, 8.4, 80.0), (2, 8, 20.0, 60.0), (3, 8, 25.0, 60.0)], name)
    assert list(prune_split_replicas(cands, catalog, scenario).index) == [0, 3]
    slow = _cands([(0, 2, 5.2, ttft_ms), (1, 4, 8.4, 80.0)], name)
    assert list(prune_split_replicas(slow, catalog, scenario).index) == [0, 1]


def test_split_replica_rule_keeps_the_optimum(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """mixed_fleet solved with and without the rule (the other pruning kept): the same cost."""
    scenario = load_scenario(ROOT / "examples/mixed_fleet/scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    ctx = build_context(catalog, scenario, table)
    before = len(ctx.cands)
    monkeypatch.setattr("planner.problem.context.prune_split_replicas", lambda cands, _catalog, _scenario: cands)
    unsplit = build_context(catalog, scenario, table)
    assert len(unsplit.cands) > before  # the rule dropped something here
    with_rule, _ = solve(ctx, "highs", None)
    without, _ = solve(unsplit, "highs", None)
    assert with_rule.status == without.status == "optimal"
    assert with_rule.cost_usd == pytest.approx(without.cost_usd, rel=1e-9)


def test_plan_reports_build_and_alternatives_seconds(catalog: Catalog) -> None:
    """The bench's split of a plan: build, solve and alternatives seconds are measured and fit inside the
    optimizer's seconds, which fit inside the total."""
    from planner.cli.bench import plan_split
    from planner.plan import plan

    scenario = load_scenario(ROOT / "examples/nvl72_rack/scenario.yaml", catalog)
    result = plan(catalog, scenario, with_alternatives=True)
    assert result.build_seconds is not None and result.build_seconds > 0
    assert result.alternatives_seconds is not None and result.alternatives_seconds > 0
    assert result.optimizer_seconds is not None
    inside = result.build_seconds + result.solve_seconds + result.alternatives_seconds
    assert inside <= result.optimizer_seconds <= result.total_seconds
    parts = [float(x) for x in plan_split(result).split(" / ")]
    assert len(parts) == 4 and parts[0] == pytest.approx(result.total_seconds - result.optimizer_seconds, abs=0.01)
    assert plan(catalog, scenario, with_alternatives=False).alternatives_seconds is None


@pytest.mark.parametrize("example", ["chat_p99_redundant", "mixed_fleet"])
def test_twin_carried_site_alternatives_equal_rebuilt_ones(
    catalog: Catalog, example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site alternative at a site the plan does not deploy on is answered by the plan carried to its twins
    there (no solve) when that ties, or solved from the carried plan as a start when it only fits; either
    way its status and cost are those of the alternative rebuilt and solved cold. Its worst latencies are
    those of one of the equal-cost plans, which need not be the one a cold solve stops at: alternatives are
    not re-chosen by the tie-break as the plan is (planner.optimize.canonical; +2 s CPU on the 5-workload
    bench). mixed_fleet's eu_west carried is two H100 FP8 TP2 replicas (worst TTFT 193 ms), solved cold one
    FP8 TP2 and one INT4 TP1 (501 ms), at the same cost."""
    import planner.optimize.alternatives as alts
    from planner.optimize.restricted_optimum import carry

    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    main = solve(build_context(catalog, scenario, table), "highs", None)
    plan_sites = {str(main[1].cands.at[k, "site"]) for (k, _j, _t), n in main[0].values["n_rep"].items() if n > 0}
    outcomes: dict[str, str] = {}

    def spy(*args: object, site: str | None = None) -> object:
        got = carry(*args, site=site)  # type: ignore[arg-type]
        if site is not None:
            outcomes[site] = "optimum" if got.optimum else "start" if got.start else "none"
        return got

    monkeypatch.setattr(alts, "carry", spy)
    for site in sorted(set(table.candidates["site"])):
        old, _ = alternative(catalog, scenario, table, "highs", column="site", value=site)
        new, solved = alternative(catalog, scenario, table, "highs", column="site", value=site, main=main)
        assert new.status == old.status, site
        assert new.total_cost_usd == pytest.approx(old.total_cost_usd, rel=1e-9), site
        if outcomes.get(site) != "optimum":  # solved (cold, or from the carried start): the same search's answer
            assert (new.max_tpot_ms, new.max_ttft_ms) == (old.max_tpot_ms, old.max_ttft_ms), site
        if outcomes.get(site) == "optimum":
            assert solved is not None and solved[0].solve_seconds == 0.0
            assert new.total_cost_usd == pytest.approx(main[0].cost_usd, rel=1e-9)
    twins = [s for s, how in outcomes.items() if how == "optimum" and s not in plan_sites]
    assert twins, (outcomes, plan_sites)  # a site the plan does not use, answered without a solve


def test_warm_start_keeps_the_optimum(catalog: Catalog) -> None:
    """mixed_fleet's ap_northeast alternative solved cold and from a start (its optimal plan, by family and
    key, into a fresh build of the same problem): the same status and cost; a start naming a variable the
    problem lacks is refused (KeyError), never silently dropped."""
    from planner.optimize.solver import solve_context

    scenario = load_scenario(ROOT / "examples/mixed_fleet/scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    others = set(table.feasible["site"]) - {"ap_northeast"}
    cold_ctx = build_context(catalog, scenario, table, exclude={"site": others})
    cold = solve_context(cold_ctx, max_nodes=2000)
    start = {(f, k): v for f, values in cold.values.items() for k, v in values.items() if v}
    warm = solve_context(build_context(catalog, scenario, table, exclude={"site": others}), warm_start=start)
    assert cold.status == warm.status == "optimal"
    assert warm.cost_usd == pytest.approx(cold.cost_usd, rel=1e-9)
    with pytest.raises(KeyError):
        solve_context(build_context(catalog, scenario, table, exclude={"site": others}), warm_start={("n_rep", (-1, 0, 0)): 1.0})


def test_infeasible_site_alternative_names_the_lead_time(catalog: Catalog) -> None:
    """buy_vs_rent's dc1 can only buy, delivered 2 months in: its alternative says so and what to add
    (it said "supply or site limits cannot cover the demand")."""
    scenario = load_scenario(ROOT / "examples" / "buy_vs_rent" / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    record, solved = alternative(catalog, scenario, table, "highs", column="site", value="dc1")
    assert solved is None and record.status == "infeasible"
    assert record.lost_because == (
        "chat: nothing bought arrives before month 2 (purchase lead time 2 months), so its demand before month 2"
        " cannot be served — rent at us_east until month 2, or add inventory"
    )


@pytest.mark.parametrize("example", ["mixed_fleet", "chat_70b_cloud"])
def test_the_deployed_candidates_check_answers_as_the_whole_restriction(
    catalog: Catalog, example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """carry checks the carried plan first on the restriction built on the candidates it deploys
    (restricted_optimum.SMALL_CHECK_RATIO); where that proves it an optimum, the check on the whole restriction
    does too, with the same cost and the same deployed replicas; elsewhere both give the same answer."""
    import planner.optimize.restricted_optimum as ro
    from planner.optimize.alternatives import _worst_latency_ms

    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    sol, ctx = solve(build_context(catalog, scenario, table), "highs", None)
    sites = sorted({str(s) for s in table.feasible["site"]})
    proven = 0
    for site in sites:
        sub = build_context(catalog, scenario, table, exclude={"site": set(sites) - {site}})
        small = ro.carry(ctx, sol, sub, site=site)
        with monkeypatch.context() as m:
            m.setattr(ro, "SMALL_CHECK_RATIO", 10**9)  # the whole restriction only
            whole = ro.carry(ctx, sol, sub, site=site)
        assert (small.optimum is None) == (whole.optimum is None), site
        assert small.start == whole.start, site
        if small.optimum is not None and whole.optimum is not None:
            (a, a_ctx), (b, b_ctx) = small.optimum, whole.optimum
            assert len(a_ctx.cands) < len(b_ctx.cands), site  # answered on the deployed candidates alone
            assert a.cost_usd == pytest.approx(b.cost_usd, rel=1e-12)
            used = [{k: n for k, n in s.values["n_rep"].items() if n} for s in (a, b)]
            assert used[0] == used[1] and _worst_latency_ms(a_ctx, a) == _worst_latency_ms(b_ctx, b)
            proven += 1
    assert proven >= 1
