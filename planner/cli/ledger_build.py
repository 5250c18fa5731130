"""Build the `planner ledger ...` subcommands from the declarative tables (``ledger_table_*``).

Each ``LedgerCommand`` becomes a typer command: one option per ``Param`` (help, unit, bounds from the
table) plus ``--json``; the command calls the entry's ``compute`` with the options as keyword arguments,
turns a ``ValueError`` into a usage error (exit 2, one line) and prints a JSON object or a table. The
commands are registered sorted by card, each card in its own help panel.
"""

from __future__ import annotations

import inspect
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
from planner.cli.ledger_common import JsonFlag, emit, guard
from planner.cli.ledger_spec import LedgerCommand

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


def build(entry: LedgerCommand) -> Callable[..., None]:
    """A typer callback for ``entry`` whose signature declares one option per parameter plus ``--json``."""
    _check(entry)

    def command(**values: Any) -> None:
        as_json = bool(values.pop("as_json"))
        emit(entry.heading, guard(lambda: dict(entry.compute(**values))), as_json)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(
            param.name,
            keyword,
            default=typer.Option(param.default, help=escape(param.help_text), min=param.min, max=param.max),
            annotation=param.type,
        )
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
