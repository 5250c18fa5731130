"""How much of each budget line a plan spends, which line binds, and why when none is spent in full.

A budget line binds when the plan spends ≥ ``BINDING_FRACTION`` of it. A line with money left can still be
what stops the served scale: supply comes in whole units (a purchased node, a rented instance), so the
line binds *in whole units* when what is left is less than one more unit of the cheapest supply the plan
already uses for that kind of money. Every output (``planner budget``, its JSON, the workbook and HTML Summary)
reads :func:`budget_use`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from planner.optimize.served_scale import SCALE_LIMIT, reached_limit

if TYPE_CHECKING:
    from planner.readout.result import PlanResult
    from planner.readout.types import SupplyLine

BINDING_FRACTION = 0.999
"""Share of a budget line spent from which it counts as binding."""

BUDGET_KEYS = ("capex_usd", "opex_usd_per_month", "total_usd")
"""Budget fields (scenario ``budget:`` and ``planner budget`` options), in the order they are shown."""


@dataclass(frozen=True)
class UnitStep:
    """The cheapest whole unit of supply the plan uses, priced in one budget line's money."""

    usd: float
    what: str
    """e.g. "one 8-GPU h200_sxm node at dc1"."""


@dataclass(frozen=True)
class BudgetUse:
    """Spent against each stated budget line (USD; opex per month), the share used and the binding limit."""

    spent: dict[str, float]
    limits: dict[str, float | None]
    used_frac: dict[str, float | None]
    binding: list[str]
    """Lines spent to ≥ BINDING_FRACTION."""
    whole_units: dict[str, UnitStep]
    """Lines with money left that is less than one more unit of the cheapest supply the plan uses."""
    binding_limit: str
    """The binding limit in words (terminal, JSON and workbook)."""

    def to_json(self) -> dict[str, Any]:
        """``budget_used`` of ``planner budget --json``."""
        return {
            **self.spent,
            "limits": self.limits,
            "used_frac": self.used_frac,
            "binding": self.binding,
            "whole_units": {k: asdict(v) for k, v in self.whole_units.items()},
            "binding_limit": self.binding_limit,
        }


def _unit_name(s: SupplyLine) -> str:
    unit = "node" if s.procurement in ("buy", "inventory") else "instance"
    return f"one {s.unit_gpus}-GPU {s.gpu} {unit} at {s.site}"


def _unit_steps(result: PlanResult) -> dict[str, UnitStep]:
    """Per budget line, the cheapest single unit of supply the plan uses, in that line's money:
    capex = a purchase line's capex ÷ its units; opex = the unit's monthly cost; total = the line's
    horizon cost (present value) ÷ its units, the horizon cost of one more such unit (about)."""
    horizon = result.scenario.horizon_months
    options: dict[str, list[UnitStep]] = {k: [] for k in BUDGET_KEYS}
    for s in result.supply:
        if s.units <= 0:
            continue
        name = _unit_name(s)
        if s.procurement == "buy" and s.capex_usd > 0:
            options["capex_usd"].append(UnitStep(s.capex_usd / s.units, name))
        if s.usd_per_unit_month > 0:
            options["opex_usd_per_month"].append(UnitStep(s.usd_per_unit_month, name))
        if s.cost_usd_per_month > 0:
            options["total_usd"].append(UnitStep(s.cost_usd_per_month * horizon / s.units, name))
    return {k: min(v, key=lambda u: (u.usd, u.what)) for k, v in options.items() if v}


def _money(usd: float) -> str:
    return f"${usd:,.0f}"


def budget_use(result: PlanResult) -> BudgetUse | None:
    """The plan's budget lines (None when the scenario states no budget or there is no plan)."""
    budget = result.scenario.budget
    ledger = result.ledger
    if budget is None or ledger is None:
        return None
    spent = {
        "capex_usd": ledger.capex_usd,
        # per month paid: a reservation's months after the horizon are months of opex too (the limit is
        # per month; the ledger's opex per month divides by the horizon, the months of service)
        "opex_usd_per_month": ledger.opex_usd_per_month * ledger.horizon_months / ledger.cash_months,
        "total_usd": ledger.total_usd,
    }
    limits: dict[str, float | None] = {k: getattr(budget, k) for k in BUDGET_KEYS}
    used = {k: (spent[k] / v if v else None) for k, v in limits.items() if v is not None}
    binding = [k for k in BUDGET_KEYS if (used.get(k) or 0.0) >= BINDING_FRACTION]
    left = {k: v - spent[k] for k, v in limits.items() if v is not None and k not in binding}
    steps = _unit_steps(result)
    whole_units = {k: steps[k] for k in left if k in steps and left[k] < steps[k].usd}
    if binding:
        text = ", ".join(binding)
    elif whole_units:
        text = "; ".join(
            f"{k} in whole units: the {_money(left[k])} left is less than {u.what} ({_money(u.usd)})"
            for k, u in whole_units.items()
        )
    else:
        families = sorted({str(b.get("family")) for b in result.binding_constraints})
        text = "no budget line: " + (", ".join(families) or "—")
        if reached_limit(result.served_scale, SCALE_LIMIT):
            text += (
                f"; the search stops at {SCALE_LIMIT:,.0f}× the stated demand, so the budget serves at least that "
                "(state a larger demand to look further, and check that a budget line pays for this plan's supply: "
                "rent from opex_usd_per_month and total_usd, purchases from capex_usd and total_usd)"
            )
    return BudgetUse(spent, limits, used, binding, whole_units, text)
