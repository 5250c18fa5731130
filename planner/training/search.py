"""The training optimizer: enumerate layouts, keep what fits, price the fastest per GPU count, choose.

Objective min_cost: the cheapest (GPU type, count, site, procurement, layout) whose completion
(setup + lead time + steps·t·(1 + L)) meets the deadline (and the budget, when given). earliest_finish:
the soonest completion whose cost stays within the budget. Ties go to fewer GPUs, then ids.

Why per-count fastest is enough: for a fixed GPU type, count, site and procurement every cost line is
non-decreasing in the run's days (rent ∝ days; running ∝ months; resale shrinks with age), so among the
layouts of one count the fastest one that fits is also the cheapest. The space is small (a few thousand
layouts per GPU type), so plain enumeration beats a MILP here; tests check it against brute force.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.costs import buy_allowed, rent_allowed
from planner.training.layout import (
    Evaluation,
    Layout,
    RunSettings,
    evaluate_layout,
    layout_problem,
    memory_per_gpu,
)
from planner.training.pricing import CostLine, cost_lines, lead_time_days
from planner.training.scenario import (
    Recompute,
    Schedule,
    TrainingHardware,
    TrainingProcurement,
    TrainingScenario,
)
from planner.training.terms import GpuTerms, ModelTerms
from planner.units import BYTES_PER_GB, BYTES_PER_GIB

RECOMPUTES: tuple[Recompute, ...] = ("none", "selective", "full")
SCHEDULES: tuple[Schedule, ...] = ("1f1b", "interleaved", "fill_drain")


@dataclass(frozen=True)
class Option:
    """One priced way to run: a layout's evaluation at a site with a procurement."""

    evaluation: Evaluation
    site: str
    procurement: TrainingProcurement
    lines: tuple[CostLine, ...]
    start_delay_days: float

    @property
    def total_cost_usd(self) -> float:
        """Sum of the cash lines, USD."""
        return sum(line.usd for line in self.lines)

    @property
    def finish_days(self) -> float:
        """Lead time + completion, days from now."""
        return self.start_delay_days + self.evaluation.days

    def sort_key(self, objective: str) -> tuple[float, float, int, str, str, str]:
        """Deterministic order: objective first, then the other measure, fewer GPUs, ids."""
        ev = self.evaluation
        first, second = (
            (self.total_cost_usd, self.finish_days)
            if objective == "min_cost"
            else (self.finish_days, self.total_cost_usd)
        )
        return (round(first, 6), round(second, 9), ev.layout.gpus, ev.layout.gpu, self.site, self.procurement)


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending (pairs d, n/d up to sqrt(n): a global batch of 10^9 sequences takes
    31,623 trials, not 10^9)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def enumerate_layouts(
    gpu: str, space: TrainingHardware, *, global_batch_seqs: int, max_gpus: int
) -> Iterator[Layout]:
    """Every base layout of the space (ZeRO 0, no recomputation) with t·p·d ≤ max_gpus and d dividing
    the global batch; :func:`fastest_by_count` varies ZeRO and recomputation on each."""
    for tp, pp in itertools.product(sorted(set(space.tp)), sorted(set(space.pp))):
        for dp in divisors(global_batch_seqs):
            if tp * pp * dp > max_gpus:
                break
            for sp, mb in itertools.product(
                (False, True) if tp > 1 else (False,), sorted(set(space.micro_batches))
            ):
                for schedule in SCHEDULES if pp > 1 else ("1f1b",):
                    yield Layout(gpu, tp, pp, dp, 0, "none", sp, mb, schedule)


def _fastest_variant(
    base: Layout, model: ModelTerms, gpu: GpuTerms, run: RunSettings
) -> tuple[list[Evaluation], float]:
    """The evaluations worth timing among the ZeRO × recompute variants of ``base``, and the least memory.

    Dominance (same t, p, d, micro-batch, schedule, SP): ZeRO 0, 1 and 2 move the same bytes, so they take
    the same time and only the first that fits matters; recomputation only adds FLOPs and the iteration
    time is non-decreasing in compute time (t = c + max(0, T_dp − w·c) with w < 1), so within a ZeRO group
    the first recompute level (none → selective → full) that fits is the fastest.
    """
    capacity_gib = gpu.memory_gb * BYTES_PER_GB / BYTES_PER_GIB
    groups = ((0, 1, 2), (3,)) if base.dp > 1 else ((0,),)
    out: list[Evaluation] = []
    smallest = math.inf
    for stages in groups:
        for recompute in RECOMPUTES:
            fitting = None
            for stage in stages:
                layout = replace(base, zero_stage=stage, recompute=recompute)
                memory_gib = memory_per_gpu(layout, model, run)[2]
                smallest = min(smallest, memory_gib)
                if memory_gib <= capacity_gib:
                    fitting = layout
                    break
            if fitting is not None:
                out.append(evaluate_layout(fitting, model, gpu, run))
                break
    return out, smallest


def fastest_by_count(
    layouts: Iterator[Layout], model: ModelTerms, gpu: GpuTerms, run: RunSettings
) -> tuple[dict[int, Evaluation], float]:
    """Fastest fitting evaluation per GPU count, and the smallest memory need seen (GiB per GPU)."""
    best: dict[int, Evaluation] = {}
    smallest = math.inf
    for base in layouts:
        if layout_problem(base, model, gpu, run.global_batch_seqs) is not None:
            continue
        evaluations, least = _fastest_variant(base, model, gpu, run)
        smallest = min(smallest, least)
        for ev in evaluations:
            held = best.get(base.gpus)
            if held is None or (ev.days, ev.memory_per_gpu_gib) < (held.days, held.memory_per_gpu_gib):
                best[base.gpus] = ev
    return best, smallest


def allowed_sites(catalog: Catalog, scenario: TrainingScenario) -> list[Site]:
    """The scenario's sites, or every cloud/datacenter site of the catalog, in id order."""
    if scenario.sites is not None:
        return [catalog.site(s) for s in sorted(set(scenario.sites))]
    return [s for _, s in sorted(catalog.sites.items()) if s.kind in ("cloud", "datacenter")]


def procurement_allowed(site: Site, procurement: TrainingProcurement) -> bool:
    """Whether ``procurement`` exists at ``site`` as in `planner plan`: rent at cloud sites, buy at datacenter
    sites (:func:`planner.costs.rent_allowed`, :func:`planner.costs.buy_allowed`), owned wherever the
    inventory is."""
    if procurement == "rent":
        return rent_allowed(site)
    if procurement == "buy":
        return buy_allowed(site)
    return True


def site_capacity(site: Site, gpu: Accelerator) -> float:
    """GPUs of ``gpu`` the site can hold (inf without limits; 0 where it is not available).

    Notes
    -----
    min(site max_gpus, ⌊kW_max·1000/(TDP·PUE)⌋) (as constraints/site_capacity.py).
    """
    if site.gpus_available is not None and gpu.id not in site.gpus_available:
        return 0
    limit = math.inf
    if site.max_gpus is not None:
        limit = min(limit, site.max_gpus)
    if site.max_power_kw is not None:
        limit = min(limit, math.floor(site.max_power_kw * 1e3 / (gpu.tdp_w * site.pue) + 1e-9))
    return limit


def site_limit(
    site: Site, gpu: Accelerator, procurement: TrainingProcurement, scenario: TrainingScenario
) -> int:
    """GPUs of ``gpu`` the run may use at ``site`` with ``procurement`` (0 = none).

    Notes
    -----
    min(hardware.max_gpus, :func:`site_capacity`, owned inventory at the site for ``owned``); 0 where the
    procurement does not exist at the site (:func:`procurement_allowed`).
    """
    if not procurement_allowed(site, procurement):
        return 0
    limit = min(scenario.hardware.max_gpus, site_capacity(site, gpu))
    if procurement == "owned":
        owned = sum(i.count for i in scenario.inventory if i.gpu == gpu.id and i.site == site.id)
        limit = min(limit, owned)
    return int(limit)


def price(
    catalog: Catalog, scenario: TrainingScenario, ev: Evaluation, site: Site, procurement: TrainingProcurement
) -> Option | None:
    """The priced option, or None when the site cannot supply it (the run's GPUs beyond :func:`site_limit`,
    or the GPUs paid for — whole instances or nodes — beyond :func:`site_capacity`)."""
    gpu = catalog.gpu(ev.layout.gpu)
    if ev.layout.gpus > site_limit(site, gpu, procurement, scenario):
        return None
    lines = cost_lines(
        catalog, gpu, site, procurement, gpus=ev.layout.gpus, days=ev.days, econ=scenario.economics
    )
    if lines is None or max(line.gpus for line in lines) > site_capacity(site, gpu):
        return None
    return Option(ev, site.id, procurement, tuple(lines), lead_time_days(gpu, procurement))


def meets(option: Option, scenario: TrainingScenario) -> bool:
    """Deadline and budget both hold."""
    within_budget = scenario.budget_usd is None or option.total_cost_usd <= scenario.budget_usd + 1e-6
    return option.finish_days <= scenario.deadline_days + 1e-9 and within_budget


def priced_options(catalog: Catalog, scenario: TrainingScenario, best: dict[int, Evaluation]) -> list[Option]:
    """Every (count, site, procurement) option of one GPU type's fastest layouts."""
    out = []
    for site in allowed_sites(catalog, scenario):
        for procurement in sorted(set(scenario.procurement)):
            for count in sorted(best):
                option = price(catalog, scenario, best[count], site, procurement)
                if option is not None:
                    out.append(option)
    return out


def choose(options: list[Option], scenario: TrainingScenario) -> Option | None:
    """The best option that meets the deadline and budget under the scenario's objective."""
    good = [o for o in options if meets(o, scenario)]
    return min(good, key=lambda o: o.sort_key(scenario.objective)) if good else None
