"""Build the `planner ledger ...` subcommands from the declarative tables (``ledger_table_*``).

Each ``LedgerCommand`` becomes a typer command: one option per ``Param`` (help, unit, bounds from the
table) plus ``--json``; the command calls the entry's ``compute`` with the options as keyword arguments,
turns a ``ValueError`` into a usage error (exit 2, one line) and prints a JSON object or a table. The
commands are registered sorted by card, each card in its own help panel.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import typer
from rich.markup import escape

from planner.cli import (
    ledger_table_accelerator,
    ledger_table_communication,
    ledger_table_distributed,
    ledger_table_edge_cloud,
    ledger_table_operators,
    ledger_table_optimizations,
    ledger_table_supernode,
    ledger_table_topology,
    ledger_table_training,
    ledger_table_utilization,
)
from planner.cli.common import finite_float
from planner.cli.ledger_common import JsonFlag, emit, guard
from planner.cli.ledger_spec import LedgerCommand, Param

TABLE: tuple[LedgerCommand, ...] = tuple(
    sorted(
        (
            *ledger_table_optimizations.TABLE,
            *ledger_table_training.TABLE,
            *ledger_table_accelerator.TABLE,
            *ledger_table_communication.TABLE,
            *ledger_table_operators.TABLE,
            *ledger_table_distributed.TABLE,
            *ledger_table_utilization.TABLE,
            *ledger_table_supernode.TABLE,
            *ledger_table_topology.TABLE,
            *ledger_table_edge_cloud.TABLE,
        ),
        key=lambda entry: entry.card,
    )
)
"""Every `planner ledger` subcommand, sorted by card (stable: table order within a card)."""


def _check(entry: LedgerCommand) -> None:
    """The table and the compute function must name the same parameters, in the same order."""
    declared = [param.name for param in entry.params]
    accepted = list(inspect.signature(entry.compute).parameters)
    if declared != accepted:
        raise TypeError(f"ledger {entry.name}: params {declared} != {entry.compute.__name__}{accepted}")


FLOAT_TYPES: tuple[object, ...] = (float, float | None)


def _option(param: Param) -> Any:
    """The typer option of ``param``: a number option refuses nan and inf (and values outside its bounds) with
    a usage error naming it, as every numeric option of the CLI does (README "Commands")."""
    if param.type in FLOAT_TYPES:
        low = -math.inf if param.min is None else param.min
        high = math.inf if param.max is None else param.max
        bounds = [
            f"{sign} {bound:g}" for sign, bound in (("≥", param.min), ("≤", param.max)) if bound is not None
        ]
        shown = f"{param.help_text} Range: {', '.join(bounds)}." if bounds else param.help_text
        strict = finite_float(low, high, field=param.name)

        def parse(raw: object) -> float:
            # click also passes the declared default through the parser: a number (remote-exec's
            # local_s = inf means "no local option"); only what the user typed is checked
            return float(raw) if isinstance(raw, int | float) else strict(str(raw))

        return typer.Option(param.default, help=escape(shown), parser=parse, metavar="FLOAT")
    return typer.Option(param.default, help=escape(param.help_text), min=param.min, max=param.max)


def _compute(entry: LedgerCommand, values: dict[str, Any]) -> dict[str, Any]:
    """``entry.compute(**values)``; a formula that divides by an option set to 0 (or overflows) is a usage
    error naming the options the user set to 0, not an internal error."""
    try:
        return dict(entry.compute(**values))
    except ValueError as exc:  # the formula's own words; head them with the option(s) to change
        message = str(exc)
        named = [p for p in entry.params if re.search(rf"(?<![\w-]){p.name}\b", message)]
        if not named:  # an inner quantity (deadline_days → available_s): the options the user set
            named = [p for p in entry.params if values.get(p.name) != p.default]
        shown = [
            f"--{p.name.replace('_', '-')} {values[p.name]:g}"
            for p in named
            if isinstance(values.get(p.name), int | float) and not isinstance(values.get(p.name), bool)
        ]
        raise ValueError(f"{', '.join(shown)}: {message}" if shown else message) from None
    except (ZeroDivisionError, OverflowError) as exc:
        defaults = {param.name: param.default for param in entry.params}
        zeros = [name for name, value in values.items() if value == 0]
        given = [name for name in zeros if defaults.get(name) != 0] or zeros  # the user's zeros first
        culprit = ", ".join(f"--{name.replace('_', '-')} 0" for name in given) or "an input"
        raise ValueError(
            f"{culprit}: the formula is undefined there ({type(exc).__name__}) — give a positive value"
        ) from None


def build(entry: LedgerCommand) -> Callable[..., None]:
    """A typer callback for ``entry`` whose signature declares one option per parameter plus ``--json``."""
    _check(entry)

    def command(**values: Any) -> None:
        as_json = bool(values.pop("as_json"))
        emit(entry.heading, guard(lambda: _compute(entry, values)), as_json)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(param.name, keyword, default=_option(param), annotation=param.type)
        for param in entry.params
    ]
    parameters.append(inspect.Parameter("as_json", keyword, default=False, annotation=JsonFlag))
    signature = inspect.Signature(parameters, return_annotation=None)
    command.__signature__ = signature  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__name__ = command.__qualname__ = entry.name.replace("-", "_")
    command.__doc__ = entry.help
    return command


COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = tuple((entry.name, build(entry)) for entry in TABLE)
"""(name, typer callback) of every subcommand, in registration order; the callback's ``__doc__`` is its help."""


def register(ledger_app: typer.Typer) -> None:
    """Add every ledger subcommand to the ``planner ledger`` group, one help panel per card."""
    for entry, (name, command) in zip(TABLE, COMMANDS, strict=True):
        help_text = escape(entry.help)  # rich markup would swallow "E[max Z_N]"
        epilog = f"Outputs: {', '.join(entry.outputs)}."
        ledger_app.command(name, help=help_text, rich_help_panel=entry.panel, epilog=epilog)(command)
