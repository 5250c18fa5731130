"""The plan workbook's month-by-month cost columns, read from the plan's cost ledger.

The ledger (planner.readout.ledger.CostLedger) is a list of cash lines (month, kind, supply id, USD,
present-value USD). Here its lines are grouped into one *stream* per (supply id, kind): the column of the
Costs sheet that carries them, month by month. A stream is *live* when the workbook writes it as a
formula over the Assumptions prices that reproduces the ledger exactly:

- rent, and running cost of owned units or edge devices: units billed in the month × the unit's monthly
  price (SupplyLine.units_per_month × usd_per_unit_month);
- running cost of bought nodes: nodes paid for × the monthly running price (SupplyLine.units_per_month: the
  nodes bought, from their delivery month, where the ledger starts their running cost);
- capex: nodes bought × the node price, in the order month; resale: −nodes bought × the resale value per
  node, in the horizon's last month.

The rent volume discount, and any stream whose formula would not reproduce the ledger (checked here, month
by month), are written as the ledger's values. Nothing is priced here: every USD figure comes from the
ledger or from the supply lines the ledger priced.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from planner.report.formatting import sanitize_defined_name

if TYPE_CHECKING:
    from planner.readout import CashLine, PlanResult, SupplyLine
    from planner.readout.ledger import CashKind

KIND_ORDER: tuple[str, ...] = ("capex", "rent", "running", "discount", "resale")
KIND_TITLE = {
    "capex": "Capex",
    "rent": "Rent",
    "running": "Running",
    "discount": "Volume discount",
    "resale": "Resale",
}
RECURRING_KINDS = ("rent", "running", "discount")
"""Kinds that make up opex (planner.readout.ledger.RECURRING)."""
MATCH_REL = 1e-9
"""A formula reproduces a ledger line when it is within this fraction of the line (or of 1 USD)."""


def as_count(value: float) -> float:
    """A unit count as the sheet shows it: an int when whole, else the hours-weighted fraction."""
    number = float(value)
    return int(number) if number.is_integer() else number


@dataclass(frozen=True)
class SupplyRow:
    """One supply line of the plan and the unit figures the Costs formulas multiply."""

    index: int
    """1-based position (row ``index + 1`` of the Supply sheet)."""
    line: SupplyLine
    bought_units: int
    """Buy lines: nodes bought (gpu_supply holds them all in use from delivery, so the most units in use);
    0 otherwise."""
    units_by_month: list[float]
    """Units the recurring column multiplies each month: SupplyLine.units_per_month (billed units for rent /
    owned / edge, nodes bought from their delivery month, as the ledger books their running cost)."""
    capex_usd_per_unit: float
    resale_usd_per_unit: float


    @property
    def label(self) -> str:
        s = self.line
        return f"{self.index}: {s.gpu} @ {s.site} {s.kind}"

    def _name(self, prefix: str) -> str:
        s = self.line
        return sanitize_defined_name(f"{prefix}_{self.index}_{s.gpu}_{s.site}_{s.kind}")

    @property
    def price_name(self) -> str:
        """Defined name of the monthly price per unit (rent, or running cost)."""
        return self._name("Price")

    @property
    def capex_name(self) -> str:
        """Defined name of the purchase price per node."""
        return self._name("Capex")

    @property
    def resale_name(self) -> str:
        """Defined name of the resale value per node at the horizon."""
        return self._name("Resale")

    @property
    def recurring_kind(self) -> str:
        return "rent" if self.line.procurement == "rent" else "running"


@dataclass(frozen=True)
class Stream:
    """The ledger lines of one supply id and kind, month by month: one column of the Costs sheet."""

    supply_id: str
    kind: CashKind
    procurement: str
    supply: SupplyRow | None
    """None when no supply line carries this id (the column then holds the ledger's values)."""
    usd_by_month: list[float]
    """Σ nominal USD of the ledger's lines per month."""
    pv_usd: float
    """Σ present-value USD of the ledger's lines."""
    live: bool = False
    """Written as formulas over the Assumptions prices (they reproduce ``usd_by_month``)."""

    @property
    def header(self) -> str:
        label = self.supply.label if self.supply is not None else self.supply_id
        return f"{KIND_TITLE[self.kind]} {label} (USD)"

    def formula_usd(self, month: int) -> float:
        """What the live formula of ``month`` evaluates to (before any edit of the Assumptions)."""
        s = self.supply
        if s is None:
            return self.usd_by_month[month]
        if self.kind in ("capex", "resale") and not self.usd_by_month[month]:
            return 0.0  # written only in the months the ledger books it
        if self.kind == "capex":
            return s.bought_units * s.capex_usd_per_unit
        if self.kind == "resale":
            return -s.bought_units * s.resale_usd_per_unit
        if self.kind in ("rent", "running"):
            return float(s.units_by_month[month]) * s.line.usd_per_unit_month
        return self.usd_by_month[month]

    def reproduced(self) -> bool:
        """True when the formulas give the ledger's USD in every month."""
        return all(
            abs(self.formula_usd(m) - usd) <= MATCH_REL * max(1.0, abs(usd))
            for m, usd in enumerate(self.usd_by_month)
        )


@dataclass(frozen=True)
class CostStreams:
    """Supply rows and cost streams of a plan, in Costs-sheet column order."""

    horizon_months: int
    supplies: list[SupplyRow]
    streams: list[Stream]
    cash_months: int = 0
    """Month rows of the Costs sheet (CostLedger.cash_months: past the horizon while a reservation's term is
    still paid); the horizon when 0."""

    @property
    def months(self) -> int:
        """Month rows of the Costs sheet: max(horizon, cash months)."""
        return max(self.horizon_months, self.cash_months)

    @property
    def recurring(self) -> list[SupplyRow]:
        """Supply rows with a Units column (the ones a live rent or running stream multiplies)."""
        ids = {s.supply_id for s in self.streams if s.live and s.kind in ("rent", "running")}
        return [row for row in self.supplies if row.line.id in ids]

    def of_supply(self, row: SupplyRow) -> list[Stream]:
        return [s for s in self.streams if s.supply is row]

    @property
    def all_live(self) -> bool:
        """Every stream but the volume discount is a formula."""
        return all(s.live for s in self.streams if s.kind != "discount")


def _supply_row(index: int, line: SupplyLine, months: int) -> SupplyRow:
    bought = int(line.units) if line.kind == "buy" else 0
    # the units the ledger pays for each month (bought nodes from delivery, as their running cost): the
    # readout's SupplyLine.units_per_month, so the JSON, the Costs sheet's Units columns and the ledger agree
    units = [float(u) for u in line.units_per_month]
    units += [0.0] * (months - len(units))  # months after the horizon: only a reservation's term is paid
    return SupplyRow(
        index=index,
        line=line,
        bought_units=bought,
        units_by_month=[as_count(u) for u in units],
        capex_usd_per_unit=line.capex_usd / bought if bought else 0.0,
        resale_usd_per_unit=line.residual_usd / bought if bought else 0.0,
    )


def cost_streams(result: PlanResult) -> CostStreams:
    """The plan's supply rows and its ledger's lines grouped into Costs-sheet columns."""
    ledger = result.ledger
    if ledger is None:
        return CostStreams(result.scenario.horizon_months, [], [])
    horizon = ledger.cash_months
    lines = list(ledger.lines)
    supplies = [_supply_row(i, s, horizon) for i, s in enumerate(result.supply, start=1)]
    by_id = {row.line.id: row for row in supplies}
    grouped: dict[tuple[str, str], list[CashLine]] = {}
    for line in lines:
        grouped.setdefault((line.supply_id, line.kind), []).append(line)
    order = {row.line.id: row.index for row in supplies}
    first_seen = {key[0]: i for i, key in reversed(list(enumerate(grouped)))}
    keys = sorted(
        grouped,
        key=lambda k: (order.get(k[0], len(order) + 1), first_seen[k[0]], KIND_ORDER.index(k[1])),
    )
    streams = []
    for supply_id, kind in keys:
        group = grouped[(supply_id, kind)]
        usd = [0.0] * horizon
        for line in group:
            usd[line.month] += line.usd
        stream = Stream(
            supply_id=supply_id,
            kind=group[0].kind,
            procurement=group[0].procurement,
            supply=by_id.get(supply_id),
            usd_by_month=usd,
            pv_usd=sum(line.discounted_usd for line in group),
        )
        live = stream.supply is not None and kind != "discount" and stream.reproduced()
        streams.append(replace(stream, live=live))
    return CostStreams(ledger.horizon_months, supplies, streams, horizon)
