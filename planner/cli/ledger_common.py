"""Shared output helpers of the `planner ledger ...` subcommands (JSON or a rich table, errors as exit 2)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from planner.cli.common import VERBOSITY, json_text

Value = float | int | str | bool | None

JsonFlag = Annotated[bool, typer.Option("--json", help="Print a JSON object instead of a table.")]


PLAIN_FROM = 1e4
"""From this magnitude up a table figure is written whole with thousands separators ("84,226,145 GPU-hours",
where 6 significant digits wrote "8.42261e+07"), as `planner predict`'s table does (predict_cmd.value_text)."""
EXPONENT_FROM = 1e15
"""From this magnitude up a figure keeps its exponent ("1.2e+26" training FLOP): 16 or more digits read worse."""


def shown(value: Value) -> str:
    """A table cell: 6 significant digits below 10,000, whole with thousands separators up to 10^15, 6
    significant digits with an exponent above; ∞ for an unbounded quantity (e.g. the uplink no deadline
    allows; ``inf`` read as a typo), — for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if PLAIN_FROM <= abs(value) < EXPONENT_FROM:
        return f"{value:,.0f}"
    return str(value) if isinstance(value, int) else f"{value:.6g}"


def emit(title: str, values: Mapping[str, Value], as_json: bool) -> None:
    """Print ``values`` as a JSON object or as a two-column table."""
    if as_json:
        typer.echo(json_text(dict(values)))  # the one JSON rendering: an unbounded quantity → null
        return
    table = Table(title=title)
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for key, value in values.items():
        table.add_row(key, shown(value))
    if any(isinstance(v, float) and math.isinf(v) for v in values.values()):
        table.caption = "∞: unbounded (null in --json)"
    if not VERBOSITY.quiet:  # -q: only errors (and the JSON --json asks for)
        Console().print(table)


def guard(call: Callable[[], dict[str, Value]]) -> dict[str, Value]:
    """Run a ledger computation; a ValueError becomes a typer BadParameter (exit code 2)."""
    try:
        return call()
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err
