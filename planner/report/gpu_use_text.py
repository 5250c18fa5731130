"""GPUs paid vs GPUs running replicas in words, one sentence per GPU type (planner.readout.gpu_use): the
plan workbook's Summary and the HTML report read these under the GPUs-paid table, so a finance reader sees
why the plan pays for more GPUs than its replicas run on (whole nodes or instances, months of lower demand,
a node delivered before it serves, spare replicas for redundancy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.readout.gpu_use import BEFORE_FIRST_USE, CAUSES, LOWER_DEMAND, WHOLE_UNITS, GpuUse, gpu_use
from planner.report.formatting import months_runs_text

if TYPE_CHECKING:
    from planner.readout import PlanResult

GPU_USE_TITLE = "GPUs paid vs GPUs running replicas (why they differ; months from 0)"
CAUSE_WORDS = {
    LOWER_DEMAND: "in whole nodes or instances kept through months of lower demand, sized for the busiest months",
    WHOLE_UNITS: "in the unused part of nodes or instances, which are paid whole",
    BEFORE_FIRST_USE: "in bought nodes delivered before the first period they serve",
}
"""Each idle cause (planner.readout.gpu_use.CAUSES) as the sentence names it."""
EVERY_GPU_RUNS = "Every GPU paid runs a replica in every month."
"""The end of a GPU type's sentence when nothing is idle and nothing spare (the terminal leaves it out)."""


def gpus_text(value: float) -> str:
    """A GPU count: "8", "1.5" (GPU shares)."""
    return f"{value:,.0f}" if abs(value - round(value)) < 0.005 else f"{value:,.2f}"


def _count(value: float) -> str:
    return f"{gpus_text(value)} GPU{'' if gpus_text(value) == '1' else 's'}"


def gpu_use_sentence(use: GpuUse, horizon_months: int, redundancy: str = "") -> str:
    """One GPU type's paid and running GPUs and the idle GPU-months by cause, in words."""
    paid_at, run_at = use.busiest_months(use.paid_per_month), use.busiest_months(use.running_per_month)
    head = (
        f"{use.gpu}: at most {_count(use.paid_busiest)} paid at once ({months_runs_text(paid_at)}), "
        f"at most {_count(use.running_busiest)} running replicas ({months_runs_text(run_at) if run_at else 'no month'})."
    )
    idle = use.paid_gpu_months - use.running_gpu_months
    spare = use.spare_gpu_months
    if idle < 0.005 and spare < 0.005:
        return f"{head} {EVERY_GPU_RUNS}"
    body = (
        f" Over {horizon_months} months {gpus_text(use.paid_gpu_months)} GPU-months are paid and "
        f"{gpus_text(use.running_gpu_months)} run replicas"
    )
    if spare >= 0.005:
        spare_at = [m for m, v in enumerate(use.spare_per_month) if v >= 0.005]
        body += (
            f", of which about {gpus_text(spare)} are spare replicas beyond the load ({months_runs_text(spare_at)}): "
            f"redundancy{redundancy} keeps the SLO with a failure domain down"
        )
    body += "."
    if idle >= 0.005:
        parts = [
            f"{gpus_text(use.idle_gpu_months[c])} {CAUSE_WORDS[c]} ({months_runs_text(use.idle_months[c])})"
            for c in CAUSES
            if use.idle_gpu_months.get(c, 0.0) >= 0.005
        ]
        body += f" The {gpus_text(idle)} GPU-months paid and idle: " + "; ".join(parts) + "."
    return head + body


def gpu_use_lines(result: PlanResult) -> list[tuple[str, str]]:
    """(GPU type, sentence) for each GPU type of the plan; empty for an infeasible plan."""
    spares = {
        w.redundancy.failure_domain
        for w in result.scenario.workloads
        if w.redundancy is not None and w.redundancy.spare_replicas > 0
    }
    said = f" ({', '.join(sorted(spares))} domain)" if spares else ""
    return [
        (use.gpu, gpu_use_sentence(use, result.scenario.horizon_months, said)) for use in gpu_use(result)
    ]
