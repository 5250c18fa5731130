"""The one cost ledger of a plan: a table of cash lines every output reads.

Each line is (month, kind, supply id, procurement, USD, present-value USD) with kind one of

- ``capex``: a bought node's price, in its order month;
- ``running``: power, colocation and ops of bought nodes from delivery, and of owned inventory and edge
  devices while in use;
- ``rent``: rented nodes in use (hour blocks billed by their share of the day);
- ``discount``: the rent volume discount (negative);
- ``resale``: the resale of bought nodes' remaining book value, in the horizon's last month (negative).

A reservation is paid for its whole term, so a reserved option whose last term window runs past the horizon
has rent lines in months ≥ horizon (planner.problem.cost_terms.term_tail): they count in every total and
in the cash flow, which runs to the last month paid (:attr:`CostLedger.cash_months`). Figures "per month"
divide by the horizon: the plan's cost per month of service.

Totals, opex per month, cost per million output tokens, the monthly cash flow and the crossover month are
sums over that table (methods of :class:`CostLedger`). The present values add up to the MILP's objective
(without its tie-break): months are discounted with planner.ledgers.economics.discount_factor, as the
objective's months are.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

CashKind = Literal["capex", "running", "rent", "discount", "resale"]
RECURRING: tuple[CashKind, ...] = ("running", "rent", "discount")
"""Kinds that make up operating expense (opex)."""


@dataclass(frozen=True)
class CashLine:
    """One cash line of the plan's cost ledger."""

    month: int
    """Month the cash moves in (0 = the horizon's first; ≥ horizon for a reservation's term past it)."""
    kind: CashKind
    supply_id: str
    """The supply option it pays for (planner.problem.supply.SupplyOption.id)."""
    procurement: str
    """rent, buy or owned."""
    usd: float
    """Nominal USD (negative for a credit: resale, discount)."""
    discounted_usd: float
    """Present value at the plan's cost of capital (equal to ``usd`` without one)."""


@dataclass(frozen=True)
class CostLedger:
    """The cash lines of a plan over its horizon, and the figures every output reads from them."""

    horizon_months: int
    lines: tuple[CashLine, ...]
    output_tokens: float
    """Output tokens actually served over the horizon (planner.readout.read.served_output_tokens)."""

    @property
    def total_usd(self) -> float:
        """Horizon cost at present value, USD: Σ discounted_usd."""
        return sum((line.discounted_usd for line in self.lines), 0.0)

    def _usd(self, *kinds: CashKind) -> float:
        return sum((line.usd for line in self.lines if line.kind in kinds), 0.0)

    @property
    def capex_usd(self) -> float:
        """Nominal capex over the horizon, USD."""
        return self._usd("capex")

    @property
    def residual_value_usd(self) -> float:
        """Nominal resale credit at the horizon, USD (positive)."""
        return -self._usd("resale")

    @property
    def cash_months(self) -> int:
        """Months the cash flow covers: the horizon, or up to the last month paid when a reservation's term
        runs past it."""
        return max([self.horizon_months, *(line.month + 1 for line in self.lines)])

    @property
    def opex_usd_per_month(self) -> float:
        """Mean nominal operating expense per month of the horizon (rent net of discounts, running costs,
        a reservation's months past the horizon included), USD/month."""
        return self._usd(*RECURRING) / self.horizon_months

    @property
    def opex_usd_by_month(self) -> dict[int, float]:
        """Nominal operating expense of each month with any (rent net of discounts, running costs), USD: what
        a monthly opex budget limits (constraints/budget_max.py row 2)."""
        out: dict[int, float] = defaultdict(float)
        for line in self.lines:
            if line.kind in RECURRING:
                out[line.month] += line.usd
        return dict(out)

    @property
    def cost_usd_per_month(self) -> float:
        """Cost per month of service: total (present value, capex, resale and reserved months past the
        horizon included) ÷ horizon months, USD/month."""
        return self.total_usd / self.horizon_months

    @property
    def cost_usd_per_million_output_tokens(self) -> float | None:
        """Horizon cost ÷ output tokens served over the horizon × 1e6, USD (None when nothing is served)."""
        return self.total_usd / self.output_tokens * 1e6 if self.output_tokens > 0 else None

    @property
    def cash_flow_usd_per_month(self) -> list[float]:
        """Nominal cash out per month, USD: Σ usd of the month's lines (capex in its order month, resale
        credited in the horizon's last month), over :attr:`cash_months`. Without a cost of capital it sums to
        :attr:`total_usd`."""
        flow = [0.0] * self.cash_months
        for line in self.lines:
            flow[line.month] += line.usd
        return flow

    @property
    def cumulative_cash_usd(self) -> list[float]:
        """Running sum of :attr:`cash_flow_usd_per_month`, USD."""
        out, total = [], 0.0
        for usd in self.cash_flow_usd_per_month:
            total += usd
            out.append(total)
        return out

    @property
    def costs_usd(self) -> dict[str, float]:
        """Horizon cost at present value by procurement (rent, buy, owned), USD."""
        out: dict[str, float] = defaultdict(float)
        for line in self.lines:
            out[line.procurement] += line.discounted_usd
        return dict(out)

    def supply_cost_usd(self, supply_id: str) -> float:
        """Horizon cost at present value of one supply option, USD."""
        return sum((line.discounted_usd for line in self.lines if line.supply_id == supply_id), 0.0)

    def supply_usd(self, supply_id: str, kind: CashKind) -> float:
        """Nominal USD of one supply option's lines of ``kind``."""
        return sum((line.usd for line in self.lines if line.supply_id == supply_id and line.kind == kind), 0.0)


def crossover_month(buying: CostLedger, renting: CostLedger) -> int | None:
    """The month buying gets ahead for good: the first month after month 0 from which the cumulative cash of
    ``buying`` stays at most that of ``renting`` to the end, where it is below; None when buying ends no
    cheaper (a cash flow shorter than the other one stays at its last cumulative value). Months where the
    two are equal and buying falls behind later are no crossover: owned GPUs serving alike until month 17,
    then buying behind, said "month 1"."""
    buy, rent = buying.cumulative_cash_usd, renting.cumulative_cash_usd
    n = max(len(buy), len(rent))
    buy, rent = (c + [c[-1] if c else 0.0] * (n - len(c)) for c in (buy, rent))
    if n == 0 or not buy[-1] < rent[-1]:
        return None
    month = n
    while month - 1 > 0 and buy[month - 1] <= rent[month - 1]:
        month -= 1
    return month if month < n else None
