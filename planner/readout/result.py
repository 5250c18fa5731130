"""PlanResult: a solved (or explained-infeasible) plan as typed records, its cost ledger, and its JSON.

Every money figure of the plan — total, capex, opex per month, cost per million output tokens, the
monthly cash flow — is a sum over :attr:`PlanResult.ledger`; ``to_json`` and every report read them here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from planner.optimize.alternative_record import Alternative
from planner.optimize.explain import Explanation
from planner.readout.budget import budget_use
from planner.readout.ledger import CostLedger
from planner.readout.pd import pd_summary
from planner.readout.types import Deployment, ScheduleEntry, SupplyLine, as_json
from planner.readout.warnings import plan_warnings
from planner.scenario import Scenario


@dataclass
class PlanResult:
    """A solved (or explained-infeasible) plan."""

    scenario: Scenario
    status: str
    deployments: list[Deployment]
    supply: list[SupplyLine]
    schedule: list[ScheduleEntry]
    ledger: CostLedger | None
    """The cost ledger (None when infeasible)."""
    candidates_evaluated: int
    candidates_feasible: int
    solve_seconds: float
    total_seconds: float
    binding_constraints: list[dict[str, Any]] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)
    infeasibility: list[Explanation] = field(default_factory=list)
    gap: float | None = None
    """Relative gap (cost − bound) / cost of a ``feasible`` plan; 0 when ``optimal``; None when the solver
    reports no bound (CBC)."""
    bound_usd: float | None = None
    """Proven lower bound on the horizon cost of every plan, USD (the total cost when ``optimal``; None when
    the solver reports none)."""
    served_scale: float | None = None
    """max_throughput: the common fraction of the stated demand that is served."""
    served_from_month: float | None = None
    """max_throughput: the month from which the served fraction holds (the first purchase delivery when
    only buying is allowed, else 0); earlier periods serve what they can."""
    time_limit_s: float | None = None
    """The ``--time-limit`` the optimizer ran under (None: none)."""
    optimizer_seconds: float | None = None
    """Wall seconds of every solve (plan, decomposition, alternatives): the part ``--time-limit`` caps."""
    build_seconds: float | None = None
    """Wall seconds building the plan's MILP (not in ``to_json``; ``make bench`` reads it)."""
    alternatives_seconds: float | None = None
    """Wall seconds of the alternatives (builds and solves; not in ``to_json``; ``make bench`` reads it)."""

    @property
    def feasible(self) -> bool:
        """True when there is a plan."""
        return self.status != "infeasible" and self.ledger is not None

    @property
    def total_cost_usd(self) -> float:
        """Horizon cost at present value (ledger), USD; NaN when infeasible."""
        return self.ledger.total_usd if self.ledger is not None else math.nan

    @property
    def capex_usd(self) -> float:
        """Nominal capex (ledger), USD."""
        return self.ledger.capex_usd if self.ledger is not None else 0.0

    @property
    def costs_usd(self) -> dict[str, float]:
        """Horizon cost by procurement (ledger), USD."""
        return self.ledger.costs_usd if self.ledger is not None else {}

    @property
    def cost_usd_per_month(self) -> float:
        """Average monthly cost over the horizon (ledger), USD/month."""
        return self.ledger.cost_usd_per_month if self.ledger is not None else math.nan

    def served_requests_per_s(self) -> dict[str, float]:
        """Requests/s served per workload at its peak slice, and their total."""
        out: dict[str, float] = defaultdict(float)
        for d in self.deployments:
            if d.role != "decode":  # a disaggregated request passes a prefill and a decode pool: count it once
                out[d.workload] += d.served_requests_per_s
        out["total"] = sum(v for k, v in out.items() if k != "total")
        return dict(out)

    def to_json(self) -> dict[str, Any]:
        """The machine-readable plan (``planner plan --json``)."""
        ledger = self.ledger
        return {
            "scenario": self.scenario.name,
            "status": self.status,
            "gap": self.gap,
            "bound_usd": self.bound_usd,
            "objective": self.scenario.objective,
            "horizon_months": self.scenario.horizon_months,
            "period_months": self.scenario.period_months,
            "total_cost_usd": ledger.total_usd if ledger else None,
            "cost_usd_per_month": ledger.cost_usd_per_month if ledger else None,
            "costs_usd": self.costs_usd,
            "capex_usd": ledger.capex_usd if ledger else None,
            "residual_value_usd": ledger.residual_value_usd if ledger else None,
            "opex_usd_per_month": ledger.opex_usd_per_month if ledger else None,
            "cost_usd_per_million_output_tokens": ledger.cost_usd_per_million_output_tokens if ledger else None,
            "output_tokens_served": ledger.output_tokens if ledger else None,
            "cash_flow_usd_per_month": ledger.cash_flow_usd_per_month if ledger else None,
            "served_scale": self.served_scale,
            "served_from_month": self.served_from_month,
            "served_requests_per_s": self.served_requests_per_s(),
            "budget_used": _budget_used(self),
            "warnings": plan_warnings(self.scenario, self.supply),
            "deployments": [as_json(d) for d in self.deployments],
            "disaggregation": [g.to_json() for g in pd_summary(self.deployments)],
            "supply": [as_json(s) for s in self.supply],
            "schedule": [as_json(e) for e in self.schedule],
            "cost_ledger": [as_json(line) for line in ledger.lines] if ledger else [],
            "binding_constraints": self.binding_constraints,
            "alternatives": [a.to_json() for a in self.alternatives],
            "infeasibility": [e.to_json() for e in self.infeasibility],
            "candidates_evaluated": self.candidates_evaluated,
            "candidates_feasible": self.candidates_feasible,
            "solve_seconds": self.solve_seconds,
            "total_seconds": self.total_seconds,
            "time_limit_s": self.time_limit_s,
            "optimizer_seconds": self.optimizer_seconds,
        }


def _budget_used(result: PlanResult) -> dict[str, Any] | None:
    """Each stated budget line spent, its limit and share, the binding limit (planner.readout.budget); None
    without a budget or a plan."""
    use = budget_use(result)
    return use.to_json() if use is not None else None
