"""The typed result of a training plan; the CLI, JSON and workbook read only this.

Money: ``total_cost_usd`` is the sum of the chosen option's cash lines (:mod:`planner.training.pricing`); nothing else
computes a price. Lives in planner.readout so that reports read only the readout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from planner.training.search import Option


def option_json(option: Option) -> dict[str, Any]:
    """Flat JSON of one priced option (layout, time, memory, money)."""
    ev = option.evaluation
    lay = ev.layout
    return {
        "gpu": lay.gpu,
        "gpus": lay.gpus,
        "dp": lay.dp,
        "tp": lay.tp,
        "pp": lay.pp,
        "zero_stage": lay.zero_stage,
        "recompute": lay.recompute,
        "sequence_parallel": lay.sequence_parallel,
        "micro_batch": lay.micro_batch,
        "microbatches_per_step": ev.microbatches,
        "schedule": lay.schedule,
        "iteration_time_s": ev.iteration_time_s,
        "steps": ev.steps,
        "days": option.finish_days,
        "run_days": ev.days,
        "start_delay_days": option.start_delay_days,
        "total_cost_usd": option.total_cost_usd,
        "memory_per_gpu_gib": ev.memory_per_gpu_gib,
        "memory_states_gib_per_gpu": ev.memory_states_gib_per_gpu,
        "memory_activations_gib_per_gpu": ev.memory_activations_gib_per_gpu,
        "memory_capacity_gib": ev.memory_capacity_gib,
        "mfu": ev.mfu,
        "tokens_per_s": ev.tokens_per_s,
        "gpu_hours": ev.gpu_hours,
        "procurement": option.procurement,
        "site": option.site,
    }


@dataclass(frozen=True)
class TrainingPlan:
    """Chosen run (or the reasons there is none) plus the best option of every GPU type."""

    status: str
    """'optimal' or 'infeasible'."""
    scenario: str
    model: str
    n_params: float
    training_tokens: float
    train_flop: float
    objective: str
    deadline_days: float
    budget_usd: float | None
    chosen: Option | None
    alternatives: tuple[Option, ...] = ()
    reasons: tuple[str, ...] = field(default_factory=tuple)
    excluded: tuple[str, ...] = field(default_factory=tuple)
    """GPU types the scenario lists that the run's precision leaves out, with the reason."""

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON: the chosen layout's keys at the top level (None when infeasible)."""
        keys = option_json(self.chosen) if self.chosen is not None else {}
        top = {k: keys.get(k) for k in option_json_keys()}
        ev = self.chosen.evaluation if self.chosen is not None else None
        return {
            "status": self.status,
            "scenario": self.scenario,
            "model": self.model,
            "n_params": self.n_params,
            "training_tokens": self.training_tokens,
            "train_flop": self.train_flop,
            "objective": self.objective,
            "deadline_days": self.deadline_days,
            "budget_usd": self.budget_usd,
            **top,
            "breakdown": ev.breakdown_json() if ev is not None else None,
            "checkpoint": None
            if ev is None
            else {
                "write_s": ev.checkpoint_s,
                "interval_s": ev.checkpoint_interval_s,
                "failure_overhead_frac": ev.failure_overhead_frac,
            },
            "cost_lines": [
                {
                    "kind": c.kind,
                    "gpu": c.gpu,
                    "gpus": c.gpus,
                    "usd": c.usd,
                    "note": c.note,
                    "hours": c.hours,
                    "usd_per_gpu_hour": c.usd_per_gpu_hour,
                    "present_value_factor": c.pv_factor,
                }
                for c in (self.chosen.lines if self.chosen is not None else ())
            ],
            "alternatives": [option_json(o) for o in self.alternatives],
            "infeasibility": list(self.reasons),
            "excluded_gpus": list(self.excluded),
        }


def option_json_keys() -> tuple[str, ...]:
    """Keys of :func:`option_json`, in order."""
    return (
        "gpu", "gpus", "dp", "tp", "pp", "zero_stage", "recompute", "sequence_parallel", "micro_batch",
        "microbatches_per_step", "schedule", "iteration_time_s", "steps", "days", "run_days", "start_delay_days",
        "total_cost_usd", "memory_per_gpu_gib", "memory_states_gib_per_gpu", "memory_activations_gib_per_gpu",
        "memory_capacity_gib", "mfu", "tokens_per_s", "gpu_hours", "procurement", "site",
    )  # fmt: skip
