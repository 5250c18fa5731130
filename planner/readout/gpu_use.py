"""GPUs paid for vs GPUs running replicas, per GPU type, month by month, and why they differ.

buy_vs_rent pays for more GPUs than its replicas run on, and the workbook showed both counts without the
reason. The gap, in GPU-months, has three causes read from the plan: GPUs of a whole node or instance beyond its
replicas (a unit's GPUs are paid together), whole units held through months that need fewer (a bought node
serves the busiest periods and waits in the quieter ones; a reserved term), and a bought node delivered before
the period it first serves. Running GPUs include the spare replicas of a workload's ``redundancy`` (its SLO
holds with that many failure domains down), counted separately.

Paid per supply line and month is the rule of the Supply sheet's paid-but-idle table (planner.report.
workbook_idle): the period's units, and a bought node from the month the ledger pays its running cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planner.readout.result import PlanResult

MIN_GPUS = 0.01
"""GPU counts below this are rounding, not a GPU share (the smallest share is 1/16)."""

WHOLE_UNITS = "whole_units"
LOWER_DEMAND = "lower_demand"
BEFORE_FIRST_USE = "before_first_use"
CAUSES = (WHOLE_UNITS, LOWER_DEMAND, BEFORE_FIRST_USE)
"""Why a paid GPU runs no replica in a month, in the order the workbook lists them."""


@dataclass
class GpuUse:
    """One GPU type's paid and running GPUs over the horizon (months from 0)."""

    gpu: str
    paid_per_month: list[float]
    running_per_month: list[float]
    spare_per_month: list[float]
    """Running GPUs that are a workload's spare replicas (redundancy), by month."""
    idle_gpu_months: dict[str, float] = field(default_factory=dict)
    """GPU-months paid and idle, by cause (:data:`CAUSES`)."""
    idle_months: dict[str, list[int]] = field(default_factory=dict)
    """Months with idle GPUs of each cause."""

    @property
    def paid_busiest(self) -> float:
        """The most GPUs paid for in one month."""
        return max(self.paid_per_month, default=0.0)

    @property
    def running_busiest(self) -> float:
        """The most GPUs running replicas in one month."""
        return max(self.running_per_month, default=0.0)

    @property
    def paid_gpu_months(self) -> float:
        return sum(self.paid_per_month)

    @property
    def running_gpu_months(self) -> float:
        return sum(self.running_per_month)

    @property
    def spare_gpu_months(self) -> float:
        return sum(self.spare_per_month)

    def busiest_months(self, values: list[float]) -> list[int]:
        """Months where ``values`` (one of the per-month lists) reaches its maximum."""
        top = max(values, default=0.0)
        return [m for m, v in enumerate(values) if top > 0 and v >= top - MIN_GPUS]


def _month_periods(result: PlanResult, months: int) -> list[int]:
    """The period of each month (0-based), from the schedule."""
    period_of = [min(m // max(result.scenario.period_months, 1), len(result.schedule) - 1) for m in range(months)]
    for entry in result.schedule:
        for m in entry.months:
            if m < months:
                period_of[m] = entry.period
    return period_of


def _spare_gpus(result: PlanResult, replicas: int, served: float, cap: float, per_replica: float, w: str) -> float:
    """GPUs of the replicas beyond those the served load needs at capacity, for a workload with spare replicas."""
    redundancy = next((x.redundancy for x in result.scenario.workloads if x.name == w), None)
    if redundancy is None or redundancy.spare_replicas <= 0 or cap <= 0:
        return 0.0
    needed = math.ceil(served / cap - 1e-6)
    return max(0, replicas - needed) * per_replica


def _causes(idle: float, running: float, peak: float, size: int, bought: bool) -> dict[str, float]:
    """Split ``idle`` paid GPUs of a GPU type at a site in one month by cause. Bought nodes are sized for the
    busiest month: the GPUs that run replicas then (``peak``) and not now wait for demand, the rest are GPUs of
    the whole nodes beyond any month's replicas. Rented units follow the month's replicas: their idle GPUs short
    of a whole unit (``size``) are the unit's rounding, whole idle units are held through lower demand (a term)."""
    lower = min(idle, max(0.0, peak - running)) if bought else size * math.floor(idle / size + 1e-9)
    return {LOWER_DEMAND: lower, WHOLE_UNITS: idle - lower}


@dataclass
class SiteMonths:
    """GPUs paid for and running replicas per (GPU type, site) and month: the one count the Summary's
    explanation (:func:`gpu_use`) and the Supply sheet's paid-but-idle table (planner.report.workbook_idle) read."""

    period_of: list[int]
    """The period of each month."""
    paid: dict[tuple[str, str], list[float]]
    running: dict[tuple[str, str], list[float]]
    unit_gpus: dict[tuple[str, str], list[int]]
    """The largest unit (node, instance) paid in the month."""
    bought: dict[tuple[str, str], list[bool]]
    """Whether a bought node is paid in the month."""
    delivered: dict[tuple[str, str], int]
    """The first delivery month of the bought nodes (pairs with a purchase)."""
    spare: dict[str, list[float]]
    """Running GPUs that are a workload's spare replicas (redundancy), per GPU type and month."""


def site_months(result: PlanResult) -> SiteMonths:
    """Paid GPUs per supply line and month (the period's units; a bought node from the month the ledger pays its
    running cost, delivered inside a period it is paid and idle there) and running GPUs (replicas × TP·EP·PP·
    share), summed per (GPU type, site)."""
    months = result.scenario.horizon_months
    period_of = _month_periods(result, months) if result.schedule else [0] * months
    table = SiteMonths(period_of, {}, {}, {}, {}, {}, {})
    for s in result.supply:
        key = (s.gpu, s.site)
        paid = table.paid.setdefault(key, [0.0] * months)
        sizes = table.unit_gpus.setdefault(key, [0] * months)
        bought = table.bought.setdefault(key, [False] * months)
        for m in range(months):
            t = period_of[m]
            units = s.units_per_period[t] if t < len(s.units_per_period) else 0.0
            if s.kind == "buy" and m < len(s.units_per_month):  # paid from delivery, not from use
                units = max(units, s.units_per_month[m])
            paid[m] += units * s.unit_gpus
            if units > MIN_GPUS:
                sizes[m] = max(sizes[m], s.unit_gpus)
                bought[m] = bought[m] or s.kind == "buy"
        if s.kind == "buy":
            table.delivered[key] = min(table.delivered.get(key, months), s.delivery_month)
    table.running = {k: [0.0] * months for k in table.paid}
    for d in result.deployments:
        per_replica = d.gpus / d.replicas if d.replicas else 0.0  # TP·EP·PP·share
        running = table.running.setdefault((d.gpu, d.site), [0.0] * months)
        spares = table.spare.setdefault(d.gpu, [0.0] * months)
        cap = d.capacity_per_replica_requests_per_s
        for m in range(months):
            t = period_of[m]
            replicas = d.replicas_per_period[t] if t < len(d.replicas_per_period) else 0
            running[m] += replicas * per_replica
            served = d.served_requests_per_s_per_period[t] if t < len(d.served_requests_per_s_per_period) else 0.0
            spares[m] += _spare_gpus(result, replicas, served, cap, per_replica, d.workload)
    return table


def gpu_use(result: PlanResult) -> list[GpuUse]:
    """Per GPU type of the plan's supply (in supply order): paid and running GPUs per month and the idle
    GPU-months by cause. Empty for an infeasible plan, and for an hourly profile's plan: its rentals are billed by
    the hour (units per period are the day's mean, 0.5 of a GPU rented 12 h a day) while its replicas are the
    busiest hour block's, so the two counts do not compare month by month."""
    if not result.feasible or not result.schedule or any(e.hour_blocks for e in result.schedule):
        return []
    months = result.scenario.horizon_months
    table = site_months(result)
    uses: dict[str, GpuUse] = {}
    for key, paid in table.paid.items():
        gpu, running = key[0], table.running[key]
        use = uses.setdefault(gpu, GpuUse(gpu, [0.0] * months, [0.0] * months, table.spare.get(gpu, [0.0] * months)))
        first_use = next((m for m, v in enumerate(running) if v > MIN_GPUS), months)
        for m in range(months):
            use.paid_per_month[m] += paid[m]
            use.running_per_month[m] += running[m]
            idle = paid[m] - running[m]
            if idle < MIN_GPUS:
                continue
            causes = _causes(idle, running[m], max(running), max(table.unit_gpus[key][m], 1), table.bought[key][m])
            if key in table.delivered and table.delivered[key] <= m < first_use:
                causes = {BEFORE_FIRST_USE: idle}
            for cause, gpus in causes.items():
                if gpus >= MIN_GPUS:
                    use.idle_gpu_months[cause] = use.idle_gpu_months.get(cause, 0.0) + gpus
                    use.idle_months.setdefault(cause, []).append(m)
    for use in uses.values():
        for cause in use.idle_months:
            use.idle_months[cause] = sorted(set(use.idle_months[cause]))
    return list(uses.values())
