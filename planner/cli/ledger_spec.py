"""The declarative form of one `planner ledger ...` subcommand: parameters, formulas, outputs.

A ``LedgerCommand`` names the command, its card, a title, the ``planner.ledgers`` formulas it evaluates,
its parameters (type, default, help, unit, bounds) and the keys of its outputs. ``compute`` takes the
parameters as keyword arguments (same names) and returns the outputs; it holds only the glue (unit
conversions, chaining formulas). ``planner.cli.ledger_build`` turns the entries into typer commands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from planner.cli.ledger_common import Value

CARD_TITLES: dict[int, str] = {
    1: "inference resource accounting",
    2: "model architecture to resources",
    3: "inference optimisations",
    4: "training",
    5: "accelerator arithmetic",
    6: "communication",
    7: "operators & runtime",
    8: "distributed inference",
    9: "GPU utilisation, cost per success",
    10: "supernode",
    11: "collective topology",
    12: "edge–cloud, buy vs rent",
}
"""Short names of the 12 ledger cards (../reference/ledgers.md), used as help panel titles."""


@dataclass(frozen=True)
class Param:
    """One option ``--<name with dashes>`` of a ledger command.

    ``help`` is the meaning (symbol first, as on the card), ``unit`` the unit ("" when dimensionless or a
    count); ``min``/``max`` are inclusive bounds typer enforces before the formula runs (exit 2).
    """

    name: str
    type: object
    default: Value
    help: str
    unit: str = ""
    min: float | None = None
    max: float | None = None

    @property
    def help_text(self) -> str:
        """The option's help line: meaning, then the unit."""
        return f"{self.help}, {self.unit}." if self.unit else f"{self.help}."

    def with_default(self, default: Value) -> Param:
        """The same option with another default (shared options, per-command book inputs)."""
        return dataclasses.replace(self, default=default)


@dataclass(frozen=True)
class LedgerCommand:
    """One `planner ledger <name>` subcommand.

    ``doc`` states the formula; ``source`` where the book has it ("book ch04 §4.3"); the help line adds
    the card numbers to both. ``title`` heads the table output as "<title> (card N)"; ``also_cards``
    lists further cards the formula belongs to. ``formulas`` are the ``planner.ledgers`` functions
    ``compute`` evaluates; ``outputs`` the keys it may return, in order (unit-suffixed names).
    """

    name: str
    card: int
    title: str
    doc: str
    formulas: tuple[Callable[..., object], ...]
    params: tuple[Param, ...]
    outputs: tuple[str, ...]
    compute: Callable[..., Mapping[str, Value]]
    source: str = ""
    also_cards: tuple[int, ...] = ()

    @property
    def help(self) -> str:
        """Help line, e.g. "Critical batch B* = b_W·Π/(2β); … (card 5 and card 1, book ch01 §1.3)."."""
        cards = " and ".join(f"card {card}" for card in (self.card, *self.also_cards))
        return f"{self.doc} ({cards}, {self.source})." if self.source else f"{self.doc} ({cards})."

    @property
    def heading(self) -> str:
        """Table title, e.g. "Critical batch (cards 5, 1)"."""
        cards = (self.card, *self.also_cards)
        label = "card" if len(cards) == 1 else "cards"
        return f"{self.title} ({label} {', '.join(str(card) for card in cards)})"

    @property
    def panel(self) -> str:
        """Help panel of ``planner ledger --help``, e.g. "Card 3 — inference optimisations"."""
        return f"Card {self.card} — {CARD_TITLES[self.card]}"
