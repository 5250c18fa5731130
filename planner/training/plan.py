"""Orchestration of a training plan: scenario → terms → enumeration → prices → choice → readout."""

from __future__ import annotations

import itertools
import math

from planner.catalog.loader import Catalog
from planner.costs import rent_quotes_by_size
from planner.limits import MAX_COUNT
from planner.readout.training import TrainingPlan
from planner.training.layout import SECONDS_PER_DAY, Evaluation, RunSettings, layout_problem
from planner.training.pricing import cost_lines
from planner.training.scenario import TrainingProcurement, TrainingScenario, resolve_model
from planner.training.search import (
    Option,
    allowed_sites,
    choose,
    divisors,
    enumerate_layouts,
    fastest_by_count,
    priced_options,
    procurement_allowed,
    site_limit,
)
from planner.training.terms import GpuTerms, ModelTerms, gpu_terms, model_terms
from planner.units import days_decimals


def run_settings(scenario: TrainingScenario) -> RunSettings:
    """The run-level inputs of a scenario."""
    return RunSettings(
        training_tokens=scenario.training_tokens,
        global_batch_seqs=scenario.global_batch_seqs,
        checkpoint_write_gb_per_s=scenario.checkpoint_write_gb_per_s,
        gpu_mtbf_hours=scenario.gpu_mtbf_hours,
        restart_s=scenario.restart_s,
        setup_days=scenario.setup_days,
        workspace_gib=scenario.workspace_gib,
    )


def candidate_gpus(catalog: Catalog, scenario: TrainingScenario) -> list[str]:
    """The scenario's GPU types (or every datacenter GPU), keeping those with the run's precision."""
    ids = scenario.hardware.gpus or [
        g.id for g in catalog.accelerators.values() if g.placement == "datacenter"
    ]
    return sorted(g for g in set(ids) if scenario.precision in catalog.gpu(g).dense_tflops)


def _max_count(catalog: Catalog, scenario: TrainingScenario, gpu_id: str) -> int:
    limits = [
        site_limit(s, catalog.gpu(gpu_id), p, scenario)
        for s in allowed_sites(catalog, scenario)
        for p in scenario.procurement
    ]
    return max(limits, default=0)


def _days(seconds: float) -> str:
    """'1 day', '0.5 days', '30 days' (the time left, in the reasons' words: 'in 1 days' read oddly)."""
    days = seconds / SECONDS_PER_DAY
    return f"{days:g} {'day' if f'{days:g}' == '1' else 'days'}"


def _finish_days(days: float, deadline_days: float) -> str:
    """A completion time in days, with the decimals (:func:`planner.units.days_decimals`) that set it apart from
    the deadline ("0.12 days" against 0.1, not "0.1 days")."""
    return f"{days:,.{days_decimals((days,), apart_from=(deadline_days,))}f} days"


def _layout_words(ev: Evaluation) -> str:
    """'TP2×PP1×DP1024' of an evaluated layout."""
    return f"TP{ev.layout.tp}×PP{ev.layout.pp}×DP{ev.layout.dp}"


def _fewest_in_time(
    scenario: TrainingScenario,
    model: ModelTerms,
    gpu: GpuTerms,
    delay_days: float,
    within: dict[int, Evaluation],
    limit: int,
) -> tuple[Evaluation | None, Evaluation]:
    """Beyond the ``limit`` GPUs that ``within`` (the fastest layout per count up to it) covers, up to MAX_COUNT
    (hardware.max_gpus and the sites' limits set aside): the fastest layout of the fewest GPUs that completes
    by the deadline (None when no GPU count does: the batch, the degrees and failures cap the useful count),
    and the fastest layout seen.

    Notes
    -----
    in time ⇔ delay_days + days(fastest layout of n GPUs) ≤ deadline_days; the count named is the least such n,
    so "raise hardware.max_gpus to n" is a change that plans (card 4's ⌈F·(1 + L)/(Π·η·T)⌉ at one MFU is a
    lower bound only: a layout of that count may not exist, or runs at a lower MFU). Counts are tried in
    ascending order and the search stops at the first in time.
    """
    run = run_settings(scenario)
    fastest = min(within.values(), key=lambda e: (e.days, e.layout.gpus))
    in_time = [n for n in sorted(within) if delay_days + within[n].days <= scenario.deadline_days + 1e-9]
    if in_time:  # a count within the limit is fast enough (no site supplies it)
        return within[in_time[0]], fastest
    beyond = sorted(
        (
            layout
            for layout in enumerate_layouts(
                gpu.gpu_id, scenario.hardware, global_batch_seqs=run.global_batch_seqs, max_gpus=MAX_COUNT
            )
            if layout.gpus > limit
        ),
        key=lambda layout: layout.gpus,
    )
    for count, group in itertools.groupby(beyond, key=lambda layout: layout.gpus):
        ev = fastest_by_count(group, model, gpu, run)[0].get(count)
        if ev is None:
            continue
        if delay_days + ev.days <= scenario.deadline_days + 1e-9:
            return ev, fastest
        if ev.days < fastest.days:
            fastest = ev
    return None, fastest


def _compute_reason(
    scenario: TrainingScenario,
    model: ModelTerms,
    gpu: GpuTerms,
    within: dict[int, Evaluation],
    limit: int,
    delay_days: float,
) -> str:
    """Why no run of ``gpu`` meets the deadline, with the change that makes one: "needs ≥ N gpu …; the allowed
    sites offer M … — raise it to at least N" where a layout of N GPUs (:func:`_fewest_in_time`) finishes in
    time, else the batch that caps the useful GPU count. T = deadline − setup − delivery; ``within``: the
    fastest layout per GPU count up to ``limit``."""
    fastest = min(within.values(), key=lambda e: (e.days, e.layout.gpus))
    available_s = (scenario.deadline_days - scenario.setup_days - delay_days) * SECONDS_PER_DAY
    if available_s <= 0:
        return (
            f"{gpu.gpu_id}: delivery ({delay_days:g} days) and setup ({scenario.setup_days:g} days) leave no time "
            f"before the {scenario.deadline_days:g}-day deadline"
        )
    after = f" (after {delay_days:g} days of delivery)" if delay_days > 0 else ""
    goal = f"{scenario.training_tokens:.3g} tokens in {_days(available_s)}{after}"
    deadline = scenario.deadline_days
    enough, overall = _fewest_in_time(scenario, model, gpu, delay_days, within, limit)
    if enough is None:  # no GPU count finishes: the global batch (DP divides it) and the degrees cap them
        return (
            f"{gpu.gpu_id}: no layout finishes {goal}: the fastest uses {overall.layout.gpus:,} GPUs "
            f"({_layout_words(overall)}, {_finish_days(overall.days + delay_days, deadline)}) and more run no "
            f"faster with a global batch of {scenario.global_batch_seqs:,} sequences (DP divides it) and "
            f"hardware.tp {sorted(set(scenario.hardware.tp))} × hardware.pp {sorted(set(scenario.hardware.pp))} "
            "— raise global_batch_tokens or deadline_days"
        )
    count = enough.layout.gpus
    shown = f"(fastest: {fastest.layout.gpus:,} GPUs, {_finish_days(fastest.days + delay_days, deadline)})"
    if count <= limit:  # a layout that fits the limit finishes in time, but no allowed site supplies it
        return (
            f"{gpu.gpu_id}: {count:,} GPUs ({_layout_words(enough)}) would train {goal}, but no allowed site "
            f"supplies {count:,} {gpu.gpu_id} with procurement {', '.join(scenario.procurement)} (its instance "
            f"sizes or capacity) {shown}"
        )
    cap = f"the allowed sites offer {limit:,}"
    if limit == scenario.hardware.max_gpus:  # name the limit that binds: the scenario's own cap
        cap += f" within hardware.max_gpus {limit:,} — raise it to at least {count:,}"
    return (
        f"{gpu.gpu_id}: needs ≥ {count:,} {gpu.gpu_id} to train {goal} ({_layout_words(enough)} at "
        f"{enough.mfu:.0%} MFU: {_finish_days(enough.days + delay_days, deadline)}); {cap} {shown}"
    )


SITE_KIND: dict[TrainingProcurement, tuple[str, str]] = {
    "rent": ("renting", "cloud"),
    "buy": ("buying", "datacenter"),
}
"""Procurement → (verb, the site kind it needs), as `planner plan`'s supply options."""


def _first_site(
    catalog: Catalog, scenario: TrainingScenario, procurement: TrainingProcurement, gpu_id: str
) -> str | None:
    """The catalog site where ``procurement`` prices a node of ``gpu_id`` cheapest for a day (rent quote,
    purchase; ties in id order), so the fix a reason suggests is the one a run would use."""
    gpu = catalog.gpu(gpu_id)
    priced: list[tuple[float, str]] = []
    for site_id, site in sorted(catalog.sites.items()):
        if site_limit(site, gpu, procurement, scenario) == 0:
            continue
        lines = cost_lines(
            catalog, gpu, site, procurement, gpus=gpu.gpus_per_node, days=1.0, econ=scenario.economics
        )
        if lines is not None:
            priced.append((sum(line.usd for line in lines), site_id))
    return min(priced)[1] if priced else None


def _site_kind_reason(catalog: Catalog, scenario: TrainingScenario, gpu_id: str) -> str | None:
    """ "buying needs a datacenter site; sites lists only us_east (cloud) — add dc1 to sites, or add rent to
    procurement" when no allowed site is of the kind any stated procurement needs (None otherwise)."""
    sites = allowed_sites(catalog, scenario)
    wanted = sorted(set(scenario.procurement))
    if any(p not in SITE_KIND or any(procurement_allowed(s, p) for s in sites) for p in wanted):
        return None
    needs = "; ".join(f"{SITE_KIND[p][0]} needs a {SITE_KIND[p][1]} site" for p in wanted)
    listed = ", ".join(f"{s.id} ({s.kind})" for s in sites)
    fixes = [
        f"add {site} to sites"
        for p in wanted
        if (site := _first_site(catalog, scenario, p, gpu_id)) is not None
    ]
    fixes += [
        f"add {p} to procurement"
        for p in SITE_KIND
        if p not in wanted and any(procurement_allowed(s, p) for s in sites)
    ]
    return f"{gpu_id}: {needs}; sites lists only {listed} — {', or '.join(fixes) or 'change sites'}"


def _unpriced_reason(catalog: Catalog, scenario: TrainingScenario, gpu_id: str) -> str | None:
    """Buy as the only way to obtain ``gpu_id`` while the catalog has no purchase price for it (None otherwise)."""
    if set(scenario.procurement) != {"buy"} or catalog.gpu(gpu_id).purchase is not None:
        return None
    return (
        f"{gpu_id}: the catalog has no purchase price for it (catalogs/accelerators.yaml: no purchase record), so "
        "it cannot be bought — add rent to procurement, or list a GPU type with a price"
    )


def _inventory_reason(catalog: Catalog, scenario: TrainingScenario, gpu_id: str) -> str | None:
    """Why owned GPUs of ``gpu_id`` cannot run when owned is the only procurement: none in the inventory, or
    all at sites the scenario leaves out (None otherwise)."""
    if set(scenario.procurement) != {"owned"}:
        return None
    held = [i for i in scenario.inventory if i.gpu == gpu_id]
    if not held:
        others = ", ".join(f"{i.count} {i.gpu} at {i.site}" for i in scenario.inventory)
        unlisted = sorted({i.gpu for i in scenario.inventory} - set(scenario.hardware.gpus or ()))
        fix = (
            f"list {', '.join(unlisted)} in hardware.gpus, or " if scenario.hardware.gpus and unlisted else ""
        )
        return f"{gpu_id}: the inventory holds none (it holds {others}) — {fix}add rent or buy to procurement"
    allowed = {s.id for s in allowed_sites(catalog, scenario)}
    outside = sorted({i.site for i in held} - allowed)
    if outside:
        return f"{gpu_id}: the inventory's {gpu_id} are at {', '.join(outside)}, which sites leaves out — add it to sites"
    return None


def _no_layout_reason(scenario: TrainingScenario, model: ModelTerms, gpu: GpuTerms, limit: int) -> str:
    """ "no layout of hardware.tp [3] × hardware.pp [1] × hardware.micro_batches [1] can run …: TP3 does not
    divide 32 heads — list …" when every layout of the scenario's degrees fails :func:`layout_problem`."""
    space = scenario.hardware
    seqs = scenario.global_batch_seqs
    problems: list[str] = []
    for layout in enumerate_layouts(gpu.gpu_id, space, global_batch_seqs=seqs, max_gpus=max(limit, 1)):
        problem = layout_problem(layout, model, gpu, seqs)
        if problem is not None and problem not in problems:
            problems.append(problem)
    tps = [d for d in divisors(model.heads) if d <= gpu.scale_up_gpus][:4]
    pps = [d for d in divisors(model.layers) if d <= 8][:4]
    micro = [d for d in divisors(seqs) if d <= 4][:3]
    shown = "; ".join(problems[:3]) + (f"; … ({len(problems)} reasons)" if len(problems) > 3 else "")
    return (
        f"{gpu.gpu_id}: no layout of hardware.tp {sorted(set(space.tp))} × hardware.pp {sorted(set(space.pp))} × "
        f"hardware.micro_batches {sorted(set(space.micro_batches))} can run {model.model_id} on up to {limit} GPUs: "
        f"{shown or f'each needs more than the {limit} GPUs allowed'} — list degrees that divide its {model.heads} heads, "
        f"{model.layers} layers and {seqs:,}-sequence batch, e.g. tp: {tps}, pp: {pps}, micro_batches: {micro}"
    )


def _instance_reason(catalog: Catalog, scenario: TrainingScenario, gpu: GpuTerms, smallest: int) -> str:
    """ "rented only as 1-GPU instances …" when layouts fit but no instance a provider sells holds one (a run
    spans one instance, or whole nodes: :func:`planner.training.pricing.instance_options`)."""
    accelerator = catalog.gpu(gpu.gpu_id)
    sizes = sorted(
        {size for site in allowed_sites(catalog, scenario) if procurement_allowed(site, "rent")
         for size in rent_quotes_by_size(catalog, accelerator, site, "on_demand")}
    )  # fmt: skip
    offered = "/".join(map(str, sizes)) + "-GPU instances" if sizes else "no on-demand instance"
    buy = "add buy to procurement (at a datacenter site) or " if accelerator.purchase is not None else ""
    return (
        f"{gpu.gpu_id}: the allowed sites rent it only as {offered}, and the smallest layout that fits needs "
        f"{smallest} GPUs on one instance or whole {accelerator.gpus_per_node}-GPU nodes — {buy}list another GPU "
        "in hardware.gpus"
    )


def _reason(
    catalog: Catalog, scenario: TrainingScenario, model: ModelTerms, gpu: GpuTerms, best: dict[int, Evaluation],
    smallest_gib: float, options: list[Option],
) -> str:  # fmt: skip
    limit = _max_count(catalog, scenario, gpu.gpu_id)
    if limit == 0:
        return (
            _site_kind_reason(catalog, scenario, gpu.gpu_id)
            or _inventory_reason(catalog, scenario, gpu.gpu_id)
            or _unpriced_reason(catalog, scenario, gpu.gpu_id)
            or f"{gpu.gpu_id}: no allowed site offers it with procurement {', '.join(scenario.procurement)}"
        )
    if not best and smallest_gib == math.inf:  # no layout of the space can run at all: say why, not "inf GiB"
        return _no_layout_reason(scenario, model, gpu, limit)
    if not best:
        capacity = gpu.memory_gb * 1e9 / 2**30
        return (
            f"{gpu.gpu_id}: {model.model_id} does not fit with any layout up to {limit} GPUs — the smallest needs "
            f"{smallest_gib:.1f} GiB per GPU, the card has {capacity:.1f} GiB"
        )
    if not options and set(scenario.procurement) == {"rent"}:
        return _instance_reason(catalog, scenario, gpu, min(best))
    in_time = [o for o in options if o.finish_days <= scenario.deadline_days + 1e-9]
    if not in_time:
        delay = min((o.start_delay_days for o in options), default=0.0)
        return _compute_reason(scenario, model, gpu, best, limit, delay)
    cheapest = min(o.total_cost_usd for o in in_time)
    cost, budget = over_budget_usd(cheapest, scenario.budget_usd or 0.0)
    return f"{gpu.gpu_id}: the cheapest run that meets the deadline costs ${cost}; the budget is ${budget}"


def over_budget_usd(cost_usd: float, budget_usd: float) -> tuple[str, str]:
    """A cost above the budget and the budget in words: whole dollars, or cents (the cost rounded up) where
    whole dollars read the same — "costs $5,377; the budget is $5,377" said nothing to a $5,377.10 budget."""
    cost, budget = f"{cost_usd:,.0f}", f"{budget_usd:,.0f}"
    if cost != budget:
        return cost, budget
    return f"{math.ceil(cost_usd * 100 - 1e-6) / 100:,.2f}", f"{math.floor(budget_usd * 100 + 1e-6) / 100:,.2f}"


def plan_training(catalog: Catalog, scenario: TrainingScenario) -> TrainingPlan:
    """Choose GPU type, count, site, procurement and layout (see :mod:`planner.training.search`)."""
    model = model_terms(resolve_model(scenario, catalog), seq_len=scenario.seq_len_tokens)
    run = run_settings(scenario)
    chosen_per_gpu: list[Option] = []
    reasons: list[str] = []
    for gpu_id in candidate_gpus(catalog, scenario):
        gpu = gpu_terms(catalog, gpu_id, precision=scenario.precision, mfu_frac=scenario.mfu_frac)
        limit = _max_count(catalog, scenario, gpu_id)
        layouts = enumerate_layouts(
            gpu_id, scenario.hardware, global_batch_seqs=run.global_batch_seqs, max_gpus=limit
        )
        best, smallest = fastest_by_count(layouts, model, gpu, run)
        options = priced_options(catalog, scenario, best)
        pick = choose(options, scenario)
        if pick is None:
            reasons.append(_reason(catalog, scenario, model, gpu, best, smallest, options))
        else:
            chosen_per_gpu.append(pick)
    chosen_per_gpu.sort(key=lambda o: o.sort_key(scenario.objective))
    excluded = tuple(
        f"{g}: no {scenario.precision} peak in the catalog, so it is left out — set precision: bf16 to consider it"
        for g in sorted(set(scenario.hardware.gpus or ()))
        if scenario.precision not in catalog.gpu(g).dense_tflops
    )  # a GPU type the scenario names but cannot run at its precision is said, not dropped silently
    if not chosen_per_gpu and not reasons:
        reasons.append(f"no GPU type in hardware.gpus has a {scenario.precision} peak")
    return TrainingPlan(
        status="optimal" if chosen_per_gpu else "infeasible",
        scenario=scenario.name,
        model=model.model_id,
        n_params=model.n_params,
        training_tokens=scenario.training_tokens,
        train_flop=model.train_flop_per_token * scenario.training_tokens,
        objective=scenario.objective,
        deadline_days=scenario.deadline_days,
        budget_usd=scenario.budget_usd,
        chosen=chosen_per_gpu[0] if chosen_per_gpu else None,
        alternatives=tuple(chosen_per_gpu),
        reasons=tuple(reasons) if not chosen_per_gpu else (),
        excluded=excluded,
    )


__all__ = ["candidate_gpus", "plan_training", "run_settings"]
