"""The declarative table behind `planner ledger ...` (planner.cli.ledger_build): entries agree with
their compute functions, name the formulas they evaluate and the outputs they return, and the help
lists the subcommands grouped by card."""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Iterator
from typing import Any, get_type_hints

import pytest
import typer
from typer.testing import CliRunner

from planner.cli.ledger_build import COMMANDS, TABLE, register
from planner.cli.ledger_spec import CARD_TITLES, LedgerCommand

IDS = [entry.name for entry in TABLE]


def _code_names(code: types.CodeType) -> Iterator[str]:
    """Names a code object (and the lambdas / comprehensions inside it) refers to."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _called_names(entry: LedgerCommand) -> set[str]:
    """Names used by ``compute`` and by the helpers of its own module that it calls."""
    compute = entry.compute
    names = set(_code_names(compute.__code__))
    for name in list(names):
        helper = compute.__globals__.get(name)
        if inspect.isfunction(helper) and helper.__module__ == compute.__module__:
            names |= set(_code_names(helper.__code__))
    return names


def _ledger_functions_called(entry: LedgerCommand) -> set[Any]:
    names = _called_names(entry)
    found = set()
    for name in names:
        value = entry.compute.__globals__.get(name)
        if inspect.isfunction(value) and value.__module__.startswith("planner.ledgers"):
            found.add(value)
        if inspect.ismodule(value) and value.__name__.startswith("planner.ledgers"):
            for attr in names:
                member = getattr(value, attr, None)
                if inspect.isfunction(member) and member.__module__.startswith("planner.ledgers"):
                    found.add(member)
    return found


def test_names_are_unique_and_sorted_by_card() -> None:
    assert len(set(IDS)) == len(IDS) == len(COMMANDS)
    assert [entry.card for entry in TABLE] == sorted(entry.card for entry in TABLE)
    assert all(entry.card in CARD_TITLES and set(entry.also_cards) <= set(CARD_TITLES) for entry in TABLE)


@pytest.mark.parametrize("entry", TABLE, ids=IDS)
def test_params_match_the_compute_signature(entry: LedgerCommand) -> None:
    hints = get_type_hints(entry.compute)
    assert list(inspect.signature(entry.compute).parameters) == [param.name for param in entry.params]
    for param in entry.params:
        assert hints[param.name] == param.type, param.name
        assert param.help and not param.help.endswith("."), param.name  # the builder adds unit and period


@pytest.mark.parametrize("entry", TABLE, ids=IDS)
def test_formulas_listed_are_the_ones_compute_calls(entry: LedgerCommand) -> None:
    assert entry.formulas
    assert all(formula.__module__.startswith("planner.ledgers") for formula in entry.formulas)
    assert set(entry.formulas) == _ledger_functions_called(entry)


@pytest.mark.parametrize("entry", TABLE, ids=IDS)
def test_outputs_are_the_declared_keys_in_order(entry: LedgerCommand) -> None:
    values = dict(entry.compute(**{param.name: param.default for param in entry.params}))
    keys = list(values)
    assert keys == [key for key in entry.outputs if key in values]
    missing = [key for key in entry.outputs if key not in values]
    assert missing == (["stable"] if entry.name == "pd-rate" else [])  # only given --arrival-per-s


def _help(*args: str) -> str:
    """``--help`` text with the rich boxes and line wrapping taken out."""
    app = typer.Typer()
    sub = typer.Typer()
    register(sub)
    app.add_typer(sub, name="ledger")
    result = CliRunner().invoke(app, ["ledger", *args, "--help"])
    assert result.exit_code == 0
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


def test_help_groups_commands_by_card_in_card_order() -> None:
    text = _help()
    panels = [f"Card {card} — {CARD_TITLES[card]}" for card in sorted({entry.card for entry in TABLE})]
    positions = [text.index(panel) for panel in panels]
    assert positions == sorted(positions)
    assert text.index("kv-pool-capacity") < text.index("training-time") < text.index("rent-vs-api")
    assert "E[max of N normal step times]" in text  # help text is not read as rich markup


def test_option_help_carries_the_unit() -> None:
    text = _help("tp-step")
    assert "T_local, single-card local step time, ms." in text
    assert "Outputs: step_ms, comm_ms, doubled_step_ms, doubling_pays." in text
