"""The ``planner`` command line (typer + rich): the app, global options and the command registrations.

Each command lives in its own module (planner/cli/<command>_cmd.py) and is registered below in one
explicit list. Thin: parse, call, print, map errors to exit codes.
Exit codes: 0 success (a plan was found), 2 invalid input, 3 infeasible, 4 solver/audit failure.
Diagnostics go to stderr; with ``--json`` stdout carries the JSON and nothing else.
Imports of pandas, numpy, PuLP, openpyxl and matplotlib happen inside the commands, so ``planner --help``
starts fast; the ledger subcommands are built the first time the ``ledger`` group is opened, and the other
top-level commands' options only when that command runs or the command list is shown
(:data:`LAZY_COMMANDS`: ``planner catalog gpus`` does not build the options of ``plan``, ``sweep``, ...).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from difflib import get_close_matches
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.27 vendors click
    from typer._click import exceptions as click_errors
    from typer._click.core import Command, Context
except ImportError:  # pragma: no cover - older typer uses the click package
    from click import exceptions as click_errors  # type: ignore[no-redef]
    from click.core import Command, Context  # type: ignore[assignment]

from planner.cli import catalog_cmd, compare_cmd, init_cmd, plan_cmd, predict_cmd, validate_cmd
from planner.cli import sweep as sweep_cmd
from planner.cli import train as train_cmd
from planner.cli.common import VERBOSITY, err, print_error
from planner.cli.guard import DebugFlag, GuardedGroup, set_debug

LAZY_COMMANDS: dict[str, typer.Typer] = {}
"""Top-level commands by name, each in a one-command app built into the root group when first needed."""


def lazy_command(name: str, function: Callable[..., Any]) -> None:
    """Register ``function`` as the top-level command ``name``, built on first use (:data:`LAZY_COMMANDS`)."""
    one = typer.Typer(add_completion=False)  # --install-completion is the root group's, not each command's
    one.command(name)(function)
    LAZY_COMMANDS[name] = one


GLOBAL_FLAGS = frozenset({"-q", "--quiet", "-v", "--verbose", "--debug"})
"""The root group's flags (:func:`main_options`); no command has options of these names."""


def global_flags_first(args: list[str]) -> list[str]:
    """``args`` with the root group's flags moved before the command, so that ``planner plan FILE -q`` reads as
    ``planner -q plan FILE`` (click takes a group's options only before its command); what follows ``--``
    stays as it is."""
    end = args.index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a in GLOBAL_FLAGS]
    return flags + [a for a in args[:end] if a not in GLOBAL_FLAGS] + args[end:]


def _whole_number_hint(message: str) -> str:
    """Click's "'4k' is not a valid int range." (or "... valid int.", a count option without bounds) for a
    count option, said as the number to write: "'4k' is not a whole number — write 4000 (a plain number)"
    (float options already say so, common.finite_float)."""
    match = re.search(r"'([^']*)' is not a valid (?:int range|integer|int)\.?$", message)
    if match is None:
        return message
    from planner.number_hints import option_hint

    option = re.search(r"for '--([a-z0-9-]+)'", message)  # --input-tokens 4k: a token count's two readings
    hint = option_hint(match.group(1), option.group(1).replace("-", "_") if option else "")
    return message[: match.start()] + f"'{match.group(1)}' is not a whole number{hint}"  # click quoted it already


class OneLineErrors(GuardedGroup):
    """The root group: a usage mistake (unknown option, missing argument, bad value) is one line on
    stderr with exit 2 instead of typer's framed box. Commands of :data:`LAZY_COMMANDS` are built into it
    when invoked or listed."""

    def _build(self, name: str) -> None:
        if name not in self.commands and name in LAZY_COMMANDS:
            self.add_command(typer.main.get_command(LAZY_COMMANDS[name]), name)

    def list_commands(self, ctx: Context) -> list[str]:
        """Every command's name (builds the lazy ones): commands first, then groups, as typer lists them."""
        for name in LAZY_COMMANDS:
            self._build(name)
        names = super().list_commands(ctx)
        return [n for n in LAZY_COMMANDS if n in names] + [n for n in names if n not in LAZY_COMMANDS]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """The command ``cmd_name`` (built now if it is a lazy one)."""
        self._build(cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        """typer's resolution, whose "did you mean" only knows the commands built so far: a mistyped name
        (``planner plna``) is also matched against the lazy ones, without building them."""
        try:
            return super().resolve_command(ctx, args)
        except click_errors.UsageError as exc:
            names = sorted({*self.commands, *LAZY_COMMANDS})
            matches = get_close_matches(args[0], names) if args else []
            if matches and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the CLI; usage errors become ``error: MESSAGE (see 'planner CMD --help')``. The root group's
        flags may also follow the command (:func:`global_flags_first`)."""
        args = global_flags_first(list(sys.argv[1:] if args is None else args))
        try:
            rv = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except click_errors.NoArgsIsHelpError as exc:
            if not standalone_mode:
                raise
            typer.echo(exc.ctx.get_help() if exc.ctx else "")
            sys.exit(0)
        except click_errors.ClickException as exc:
            if not standalone_mode:
                raise
            where = (
                exc.ctx.command_path if isinstance(exc, click_errors.UsageError) and exc.ctx else "planner"
            )
            print_error(f"{_whole_number_hint(exc.format_message())} (see '{where} --help')")
            sys.exit(exc.exit_code)
        except typer.Abort:
            if not standalone_mode:
                raise
            err.print("aborted")
            sys.exit(1)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


class LazyLedgerGroup(TyperGroup):
    """``planner ledger``: its ~60 subcommands (and numpy) are loaded only when the group is used."""

    def _load(self) -> None:
        if self.commands:
            return
        from planner.cli import ledger_build

        built = typer.Typer()
        ledger_build.register(built)
        group = typer.main.get_command(built)
        assert isinstance(group, TyperGroup)
        self.commands.update(group.commands)

    def list_commands(self, ctx: Context) -> list[str]:
        """Names of the ledger subcommands (loads them)."""
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """One ledger subcommand (loads them)."""
        self._load()
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="planner",
    cls=OneLineErrors,
    help="Capacity planner for AI infrastructure: ledgers, MILP plans, Excel reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
ledger_app = typer.Typer(
    cls=LazyLedgerGroup,
    help="One formula family of ledger cards 3-12 per subcommand (cards 1-2: planner predict).",
    no_args_is_help=True,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"planner {version('ai-infra-capacity-planner')}")
        except PackageNotFoundError:
            typer.echo("planner (not installed as a package)")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only errors and the 'wrote PATH' lines (and the JSON --json asks for): no tables, notes, warnings or progress.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also print step timings on stderr.")
    ] = False,
    debug: DebugFlag = False,
) -> None:
    """Capacity planner for AI infrastructure: ledgers, MILP plans, Excel reports."""
    set_debug(debug)
    VERBOSITY.quiet = quiet
    VERBOSITY.verbose = verbose and not quiet


# --- registrations: one line per command (other modules add theirs here) --------------------------
app.add_typer(catalog_cmd.catalog_app, name="catalog")
app.add_typer(ledger_app, name="ledger")
lazy_command("init", init_cmd.init)
lazy_command("predict", predict_cmd.predict)
lazy_command("schema", plan_cmd.schema)
lazy_command("plan", plan_cmd.plan)
lazy_command("compare", compare_cmd.compare)
lazy_command("budget", plan_cmd.budget)
lazy_command("validate-model", validate_cmd.validate_model)
lazy_command("sweep", sweep_cmd.sweep)
lazy_command("train", train_cmd.train)
lazy_command("predict-train", train_cmd.predict_train)


def main() -> None:  # pragma: no cover - console entry point convenience
    """Entry point for ``python -m planner.cli.main``."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
