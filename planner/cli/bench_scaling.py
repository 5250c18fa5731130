"""`make bench` scaling table (issue 17): how candidates, MILP size, time and memory grow with the number of
workloads and with the horizon, and a 100-variant price × demand sweep on 2 local workers.

Each instance runs in a fresh process (spawned, one task per process), so its peak memory (VmHWM: the
resident high-water mark of its own address space; ru_maxrss would carry over the forking bench's) is its
own. Two series: 1, 5, 10, 20 workloads over the full catalog (1 month, rent; the problem of one demand
period), and 1, 12, 24, 36 months of 5 workloads with buy + rent + reserved and 3 %/month growth (monthly
periods: what to buy when). The one-month solves have a wall-clock cap of ``SCALING_TIME_LIMIT_S`` (status
and gap show when it stopped the search); the multi-month ones take the large-problem path, node-limited and
repeatable, uncapped as `planner plan` runs them (a wall-clock cap would skip its steps). For the 1-workload instance, every single-configuration plan (one candidate,
one operating point, whole replicas, whole nodes at the cheapest rent of its GPU type and site) is
enumerated and timed, and its cheapest cost is compared with the MILP's optimum.
"""

from __future__ import annotations

import math
import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

SCALING_TIME_LIMIT_S = 20.0
WORKLOAD_COUNTS = (1, 5, 10, 20)
HORIZON_MONTHS = (1, 12, 24, 36)
SWEEP_PRICES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5)
SWEEP_DEMANDS_REQUESTS_PER_S = (2, 4, 6, 8, 10, 12, 16, 20, 24, 32)
SWEEP_EXAMPLE = "examples/chat_70b_cloud/scenario.yaml"
SWEEP_TARGET_S = 60.0
PLAN_WITH_ALTERNATIVES_TARGET_S = 3.0
WORKLOADS_20_TARGET_S = 15.0
WORKLOADS_20_TARGET_MB = 1024.0
BUY_SOLVE_TARGET_S = 2.0


@dataclass(frozen=True)
class Instance:
    """One row of the table: a series label and the scenario's size."""

    series: str
    workloads: int
    months: int


@dataclass(frozen=True)
class Measured:
    """What one instance measured (seconds, MB, counts)."""

    candidates: int
    variables: int
    rows: int
    evaluation_s: float
    build_s: float
    solve_s: float
    peak_mb: float
    status: str
    gap: float | None
    enumeration: str


def _workloads(n: int) -> list[dict[str, Any]]:
    """``n`` workloads: the bench's five, then copies with other demand and SLOs (distinct names)."""
    from planner.cli.bench import WORKLOADS

    out = []
    for i in range(n):
        name, models, rps, p, g, ttft, tpot = WORKLOADS[i % len(WORKLOADS)]
        k = i // len(WORKLOADS)
        out.append(
            {
                "name": f"{name}{k}" if k else name,
                "models": models,
                "requests_per_s": rps * (1 + 0.25 * k),
                "input_tokens": p,
                "output_tokens": g,
                "slo": {"ttft_ms": ttft, "tpot_ms": tpot * (1 + 0.2 * k)},
            }
        )
    return out


def instance_scenario(inst: Instance) -> Any:
    """The scenario of ``inst`` (full catalog: every GPU, format, TP 1-8, PP 1-2)."""
    from planner.catalog import default_catalog
    from planner.scenario import parse_scenario

    catalog = default_catalog()
    formats = sorted(catalog.formats)
    cloud = sorted(s for s, site in catalog.sites.items() if site.kind == "cloud")
    economics = inst.series == "months"
    sites = cloud[:3] + ["dc1"] if economics else cloud[:4]
    workloads = [
        {**w, "quantizations": formats, "sites": sites, "growth_frac_per_month": 0.03 if economics else 0.0}
        for w in _workloads(inst.workloads)
    ]
    data: dict[str, Any] = {
        "name": f"scaling-{inst.workloads}w-{inst.months}m",
        "horizon_months": inst.months,
        "workloads": workloads,
        "hardware": {"tp": [1, 2, 4, 8], "pp": [1, 2]},
    }
    if economics:
        data.update(procurement=["rent", "buy"], rental_kinds=["on_demand", "reserved_1y", "spot"])
    return parse_scenario(data)


def _enumerate_single_configurations(ctx: Any) -> float:
    """Cheapest single-configuration plan of a one-workload, one-slice rent problem, USD over the horizon.

    Every (candidate, operating point, rent option of its GPU type and site): ⌈demand / capacity⌉ replicas,
    each replica's GPUs inside one rented unit (⌊unit GPUs / replica GPUs⌋ replicas per unit). Co-located
    candidates only (a prefill or decode pool serves nothing alone); those with no rent option where they run
    are skipped (the MILP cannot use them either)."""
    (workload,) = {w.name for w in ctx.scenario.workloads}
    (t,) = ctx.periods
    demand = ctx.demand[(workload, t)]
    options: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for opt in ctx.supply:
        options.setdefault((opt.gpu, opt.site), []).append((opt.usd_per_unit_month, opt.unit_gpus))
    best = math.inf
    for k in ctx.cands.index:
        if ctx.cands.at[k, "role"] != "colocated":
            continue
        key = (str(ctx.cands.at[k, "gpu"]), str(ctx.cands.at[k, "site"]))
        gpus = float(ctx.cands.at[k, "gpus"])
        for p in ctx.points_of(int(k)):
            replicas = math.ceil(demand / float(p.capacity_requests_per_s) - 1e-9)
            for usd, unit in options.get(key, []):
                per_unit = math.floor(unit / gpus + 1e-9)
                if per_unit >= 1:
                    best = min(best, usd * math.ceil(replicas / per_unit) * ctx.months[t])
    return best


def peak_rss_mb() -> float:
    """Peak resident memory of this process's own address space (MB = 2^20 B): VmHWM from /proc, which
    resets at exec, unlike ru_maxrss, which a spawned child inherits from the process that forked it; where
    /proc is missing, ru_maxrss."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(inst: Instance) -> Measured:
    """Evaluate, build and solve ``inst`` (in this process); its peak RSS at the end."""
    from planner.candidates import build_candidates
    from planner.catalog import default_catalog
    from planner.optimize import solve
    from planner.optimize.build import build_problem
    from planner.problem.context import build_context

    catalog = default_catalog()
    scenario = instance_scenario(inst)
    t0 = time.perf_counter()
    table = build_candidates(catalog, scenario)
    evaluation_s = time.perf_counter() - t0
    built = build_context(catalog, scenario, table)
    t1 = time.perf_counter()
    build_problem(built)
    build_s = time.perf_counter() - t1
    cap_s = SCALING_TIME_LIMIT_S if inst.months == 1 else None
    sol, _ = solve(build_context(catalog, scenario, table), "highs", cap_s)
    enumeration = ""
    if inst.workloads == 1 and len(built.periods) == 1 and sol.status != "infeasible":
        t2 = time.perf_counter()
        best = _enumerate_single_configurations(built)
        same = math.isclose(best, sol.cost_usd, rel_tol=1e-6)
        enumeration = f"{time.perf_counter() - t2:.2f} s, " + (
            "same optimum" if same else f"${best:,.0f} vs MILP ${sol.cost_usd:,.0f}"
        )
    return Measured(
        candidates=len(table.candidates),
        variables=len(built.prob.variables()),
        rows=len(built.row_constraints),
        evaluation_s=evaluation_s,
        build_s=build_s,
        solve_s=sol.solve_seconds,
        peak_mb=peak_rss_mb(),
        status=sol.status,
        gap=sol.gap,
        enumeration=enumeration or "n/a (too large)",
    )


def scaling_rows() -> list[tuple[Instance, Measured | str]]:
    """Every instance, each in a fresh spawned process (an error is shown in its row)."""
    instances = [Instance("workloads", n, 1) for n in WORKLOAD_COUNTS]
    instances += [Instance("months", 5, m) for m in HORIZON_MONTHS]
    out: list[tuple[Instance, Measured | str]] = []
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn, max_tasks_per_child=1) as pool:
        futures = [(inst, pool.submit(measure, inst)) for inst in instances]
        for inst, future in futures:
            try:
                out.append((inst, future.result()))
            except Exception as exc:  # a row with the error, the table goes on
                out.append((inst, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
    return out


def sweep_seconds() -> tuple[float, int, int, float]:
    """Wall seconds of the 100-variant rent price × demand sweep of the chat example on 2 local processes,
    the number of rows and of optimal rows, and the sum of the variants' own seconds (plan time in the
    workers: what the wall time would be on one idle core)."""
    from planner.catalog import default_catalog
    from planner.scenario import load_scenario
    from planner.sweep import LocalEngine, parse_axis, plan_sweep, run_sweep

    catalog = default_catalog()
    start = time.perf_counter()
    scenario = load_scenario(SWEEP_EXAMPLE, catalog)
    axes = [
        parse_axis("economics.rent_price_scale=" + ",".join(map(str, SWEEP_PRICES))),
        parse_axis("workloads.chat.requests_per_s=" + ",".join(map(str, SWEEP_DEMANDS_REQUESTS_PER_S))),
    ]
    result = run_sweep(catalog, plan_sweep(scenario, catalog, axes, "grid"), LocalEngine(2))
    optimal = sum(r.status == "optimal" for r in result.rows)
    return time.perf_counter() - start, len(result.rows), optimal, sum(r.total_seconds for r in result.rows)


def cpu_s(*who: int) -> float:
    """User + system CPU seconds so far of the ``resource.RUSAGE_*`` targets ``who``."""
    return sum(usage.ru_utime + usage.ru_stime for usage in map(resource.getrusage, who))


def plan_with_alternatives() -> tuple[float, float, str]:
    """Wall and CPU seconds (this process and its forked alternative workers) of `planner plan` on the
    5-workload full-catalog scenario with its alternatives, cold (run in a fresh process), and its split
    (evaluation+readout / build / solve / alternatives)."""
    from planner.catalog import default_catalog
    from planner.cli.bench import bench_scenario, plan_split
    from planner.plan import plan

    catalog, scenario = default_catalog(), bench_scenario()
    who = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    cpu, start = cpu_s(*who), time.perf_counter()
    result = plan(catalog, scenario, with_alternatives=True)  # type: ignore[arg-type]
    return time.perf_counter() - start, cpu_s(*who) - cpu, plan_split(result)


def _plan_with_alternatives_cold() -> tuple[float, float, str]:
    """:func:`plan_with_alternatives` in a fresh interpreter, as `planner plan` runs (cold caches; a pool
    worker would be daemonic and solve the alternatives serially)."""
    import json
    import subprocess
    import sys

    code = "import json; from planner.cli.bench_scaling import plan_with_alternatives as p; print(json.dumps(p()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall, cpu, split = json.loads(out.stdout.strip().splitlines()[-1])
    return float(wall), float(cpu), str(split)


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def print_targets(rows: list[tuple[Instance, Measured | str]], sweep_s: float) -> None:
    """The issue-17 speed targets with the values measured above (and one plan with alternatives)."""
    measured = {(i.series, i.workloads, i.months): m for i, m in rows if not isinstance(m, str)}
    wall, cpu, split = _plan_with_alternatives_cold()
    lines = [
        (
            f"5-workload full-catalog plan incl. alternatives ≤ {PLAN_WITH_ALTERNATIVES_TARGET_S:g} s",
            f"{wall:.2f} s ({cpu:.2f} s CPU incl. workers; evaluation+readout / build / solve / alternatives {split})",
            _verdict(wall <= PLAN_WITH_ALTERNATIVES_TARGET_S),
        )
    ]
    w20 = measured.get(("workloads", max(WORKLOAD_COUNTS), 1))
    if w20 is not None:
        total = w20.evaluation_s + w20.build_s + w20.solve_s
        ok = total <= WORKLOADS_20_TARGET_S and w20.peak_mb <= WORKLOADS_20_TARGET_MB and w20.status == "optimal"
        lines.append(
            (
                f"{max(WORKLOAD_COUNTS)} workloads over the full catalog ≤ {WORKLOADS_20_TARGET_S:g} s and "
                f"≤ {WORKLOADS_20_TARGET_MB:g} MB",
                f"{total:.2f} s ({w20.evaluation_s:.2f} + {w20.build_s:.2f} + {w20.solve_s:.2f}), {w20.peak_mb:.0f} MB, "
                f"{w20.status}",
                _verdict(ok),
            )
        )
    buy = measured.get(("months", 5, 1))
    if buy is not None:
        lines.append(
            (
                f"1-month scenario with buy options: solve ≤ {BUY_SOLVE_TARGET_S:g} s",
                f"{buy.solve_s:.2f} s ({buy.status})",
                _verdict(buy.solve_s <= BUY_SOLVE_TARGET_S),
            )
        )
    lines.append(
        (f"100-variant sweep, 2 workers ≤ {SWEEP_TARGET_S:g} s", f"{sweep_s:.1f} s", _verdict(sweep_s <= SWEEP_TARGET_S))
    )
    print("\nIssue 17 targets (cold start: see the table above)\n\n| target | measured | verdict |\n|---|---|---|")
    for target, value, verdict in lines:
        print(f"| {target} | {value} | {verdict} |", flush=True)


def print_scaling_table() -> None:
    """Print the scaling table, the sweep row and the issue-17 targets (markdown)."""
    print(
        f"\nScaling (each instance in a fresh process; 1-month solves capped at {SCALING_TIME_LIMIT_S:g} s wall, "
        "longer horizons uncapped on the large-problem path)\n"
    )
    head = "| series | workloads | months | candidates | variables | rows | evaluation s | build s | solve s | peak MB | status | gap | enumeration |"
    print(head, flush=True)
    print("|" + "---|" * (head.count("|") - 1))
    rows = scaling_rows()
    for inst, m in rows:
        if isinstance(m, str):
            print(f"| {inst.series} | {inst.workloads} | {inst.months} | error: {m} |" + " |" * 9, flush=True)
            continue
        gap = "" if m.gap is None else f"{m.gap:.2%}"
        print(
            f"| {inst.series} | {inst.workloads} | {inst.months} | {m.candidates:,} | {m.variables:,} | {m.rows:,} | "
            f"{m.evaluation_s:.2f} | {m.build_s:.2f} | {m.solve_s:.2f} | {m.peak_mb:.0f} | {m.status} | {gap} | "
            f"{m.enumeration} |",
            flush=True,
        )
    seconds, count, optimal, variant_s = sweep_seconds()
    print(
        f"\n100-variant sweep (rent price × demand of {SWEEP_EXAMPLE}, 2 local workers): {seconds:.1f} s "
        f"({variant_s:.1f} s of plans in the workers) for {count} rows, {optimal} optimal (target ≤ {SWEEP_TARGET_S:g} s"
        f"{'' if seconds <= SWEEP_TARGET_S else ', MISSED'})"
    )
    print_targets(rows, seconds)


if __name__ == "__main__":
    print_scaling_table()
