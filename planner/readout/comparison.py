"""The result of ``planner compare``: buy-only vs rent-only vs hybrid plans and the cross-option figures.

Each option's money is its plan's cost ledger (planner.readout.ledger); the crossover month compares two
ledgers' cumulative cash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.readout.ledger import crossover_month
from planner.readout.result import PlanResult


@dataclass
class Comparison:
    """The three options and the cross-option figures."""

    options: dict[str, PlanResult]
    recommendation: str | None
    breakeven_utilization_frac: float | None
    flip_points: list[dict[str, Any]]
    recommendation_reason: str = ""
    """Why the recommendation: the saving over the runner-up, or why buying is not possible."""
    picked: str | None = None
    """The option whose plan the recommendation reads: the recommendation itself, or for ``owned_only`` (the
    plan rents and buys nothing: planner.compare_recommend.OWNED_ONLY) the option the cost rule chose; None:
    the recommendation's."""

    @property
    def recommended_option(self) -> str | None:
        """The option whose plan is the recommended one (an options key; None when no option is feasible)."""
        if self.picked is not None:
            return self.picked
        return self.recommendation if self.recommendation in self.options else None

    @property
    def feasible(self) -> dict[str, PlanResult]:
        """The options that have a plan."""
        return {name: r for name, r in self.options.items() if r.feasible}

    @property
    def cash_flow_usd(self) -> dict[str, list[float]]:
        """Per feasible option, its nominal monthly cash flow (ledger), all as long as the longest (a
        reservation paid after the horizon runs past it; the other options pay nothing then)."""
        flows = {name: r.ledger.cash_flow_usd_per_month for name, r in self.feasible.items() if r.ledger}
        n = max((len(f) for f in flows.values()), default=0)
        return {name: f + [0.0] * (n - len(f)) for name, f in flows.items()}

    def crossover_pair(self) -> tuple[str, str] | None:
        """(buying option, 'rent_only') whose cumulative costs the crossover month compares: buy-only when
        it is feasible, else hybrid, and only when it buys something; None otherwise."""
        feasible = self.feasible
        buying = "buy_only" if "buy_only" in feasible else "hybrid"
        if buying in feasible and "rent_only" in feasible and feasible[buying].capex_usd > 0:
            return buying, "rent_only"
        return None

    @property
    def crossover_month(self) -> int | None:
        """First month after 0 at which the buying option's cumulative cash is at most renting's."""
        pair = self.crossover_pair()
        if pair is None:
            return None
        buying, renting = (self.options[name].ledger for name in pair)
        assert buying is not None and renting is not None
        return crossover_month(buying, renting)

    def to_json(self) -> dict[str, Any]:
        """``planner compare --json``: per option the plan's ledger figures and served scale (max_throughput; null
        for min_cost), then the cross-option ones."""
        rows = []
        for name, result in self.options.items():
            data = result.to_json()
            rows.append(
                {
                    "name": name,
                    "status": data["status"],
                    "total_cost_usd": data["total_cost_usd"],
                    "capex_usd": data["capex_usd"],
                    "residual_value_usd": data["residual_value_usd"],
                    "opex_usd_per_month": data["opex_usd_per_month"],
                    "cost_usd_per_million_output_tokens": data["cost_usd_per_million_output_tokens"],
                    "output_tokens_served": data["output_tokens_served"],
                    # max_throughput: the share of the stated demand the option serves (null for min_cost),
                    # from month served_from_month (a purchase's delivery), as the plan JSON has them
                    "served_scale": data["served_scale"],
                    "served_from_month": data["served_from_month"],
                    "deployments": data["deployments"],
                    "cash_flow_usd_per_month": data["cash_flow_usd_per_month"] or [],
                    "infeasibility": data["infeasibility"],
                }
            )
        return {
            "scenario": next(iter(self.options.values())).scenario.name,
            "options": rows,
            "recommendation": self.recommendation,
            "recommendation_reason": self.recommendation_reason,
            "crossover_month": self.crossover_month,
            "breakeven_utilization_frac": self.breakeven_utilization_frac,
            "flip_points": self.flip_points,
        }
