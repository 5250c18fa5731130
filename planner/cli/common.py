"""What every ``planner`` command shares: the consoles, verbosity, error mapping and the JSON convention.

JSON convention (every command): ``--json`` prints JSON to stdout and nothing else goes to stdout;
``--json-out PATH`` writes the same JSON to a file. A PATH that is one of the command's input files (or a
YAML file) is refused with exit 2, so a scenario can never be overwritten by its plan. Every file written
is announced on stderr ("wrote PATH"), with ``--quiet`` too: ``-q`` leaves only errors (exit 2, 3, 4 and their
causes), the "wrote PATH" lines and the JSON ``--json`` asks for; tables, notes, warnings and progress are
silenced in every command (:data:`VERBOSITY`). A failed run (infeasible, exit 3) writes no file:
an existing output stays as it was ("not written: PATH" on stderr); ``--json`` still prints its JSON.
Floats in the JSON keep 12 significant digits (:data:`JSON_SIGNIFICANT_DIGITS`); the ledger commands' JSON too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from planner.errors import InputError, PlannerError

out = Console(width=max(160, Console().width), highlight=False)
err = Console(stderr=True, highlight=False)
T = TypeVar("T")


@dataclass
class Verbosity:
    """Global output level set by ``planner --quiet`` / ``--verbose``. Quiet: only errors, the "wrote PATH"
    lines and requested JSON (:func:`show`, :func:`note`, :func:`warn` print nothing)."""

    quiet: bool = False
    verbose: bool = False


VERBOSITY = Verbosity()


def text(value: object) -> str:
    """``value`` as rich-safe text: square brackets in user data (names, id patterns) are escaped."""
    return escape(str(value))


def error_text(message: object) -> str:
    """``message`` as the one line after ``error:``: :func:`text`, with line breaks, tabs and escape codes
    written as ``\\n``, ``\\t``, ``\\x1b`` (an option value holding a newline split the error in two)."""
    return text("".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in str(message)))


def print_error(message: object) -> None:
    """``error: message`` as one line on stderr."""
    err.print(f"[bold red]error:[/] {error_text(message)}", soft_wrap=True)


def fail(exc: PlannerError) -> NoReturn:
    """Print ``exc`` as one line on stderr and exit with its code (2 input, 3 infeasible, 4 solver)."""
    print_error(exc)
    raise typer.Exit(code=exc.exit_code)


def run_guarded(fn: Callable[[], T]) -> T:
    """Run ``fn``; print a one-line error and exit with the error's code on PlannerError."""
    try:
        return fn()
    except PlannerError as exc:
        fail(exc)


def note(message: str) -> None:
    """An informational line on stderr (silent with ``--quiet``); ``message`` is plain text."""
    if not VERBOSITY.quiet:
        err.print(text(message), soft_wrap=True)


def warn(message: str) -> None:
    """A ``warning:`` line on stderr (silent with ``--quiet``); ``message`` is plain text."""
    if not VERBOSITY.quiet:
        err.print(f"[bold yellow]warning:[/] {text(message)}", soft_wrap=True)


def debug(message: str) -> None:
    """A detail line on stderr shown only with ``--verbose``."""
    if VERBOSITY.verbose and not VERBOSITY.quiet:
        err.print(f"[dim]{text(message)}[/]", soft_wrap=True)


def wrote(path: Path | str) -> None:
    """Announce a written file on stderr: ``wrote PATH`` (with ``--quiet`` too: a script learns what it got)."""
    err.print(text(f"wrote {path}"), soft_wrap=True)


def written_files(output: Path | None, plots: Path | None) -> list[Path]:
    """The report ``output`` and the PNG charts in the folder ``plots``, whichever a command was asked for."""
    return ([] if output is None else [output]) + ([] if plots is None else sorted(plots.glob("*.png")))


def announce(paths: list[Path]) -> None:
    """:func:`wrote` for each of ``paths``: the files a command wrote before its stdout, announced after it."""
    for path in paths:
        wrote(path)


JSON_SIGNIFICANT_DIGITS = 12
"""Significant digits of a float in the JSON: the figures are sums of products of catalog prices and solver
values, whose last bits are rounding noise (a plan of $245,721.60 read 245721.5999999995 and its tied
alternative 245721.60000000003; a balanced flow 13.999999999991699 requests/s). 12 digits keep a dollar
figure to a thousandth of a cent up to $1e9 and drop noise below 5e-13 of the value."""


def clean_json(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf → None, numpy scalars → Python numbers, -0.0 → 0.0 (a sum of zero costs,
    such as no resale, printed as -0.0), floats to :data:`JSON_SIGNIFICANT_DIGITS` significant digits."""
    if isinstance(obj, dict):
        return {str(k): clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, float):
        return float(f"{obj:.{JSON_SIGNIFICANT_DIGITS}g}") + 0.0  # + 0.0: -0.0 → 0.0
    return obj


def json_text(obj: Any) -> str:
    """The one JSON rendering every command uses (indent 2, NaN → null)."""
    return json.dumps(clean_json(obj), indent=2)


JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON to stdout (nothing else on stdout).")
]
JsonOut = Annotated[
    Path | None, typer.Option("--json-out", help="Also write the JSON to this file.", metavar="PATH")
]


def check_output_path(path: Path | None, option: str, inputs: Iterable[Path] = ()) -> None:
    """Refuse an output path that is an input of the command or a YAML file (exit 2, nothing written); a path
    the system refuses to look at (a name over 255 bytes: "internal error: OSError", exit 4) too."""
    if path is None:
        return
    try:
        _check_output_path(path, option, inputs)
    except OSError as exc:
        raise InputError(f"{option} {path}: {exc.strerror or exc} — choose another path") from None


def _check_output_path(path: Path, option: str, inputs: Iterable[Path]) -> None:
    if str(path) in ("-", "/dev/stdout"):  # '-' wrote a file named '-'; /dev/stdout said "cannot write under /proc"
        stdout = "to print the JSON on stdout, use --json" if option == "--json-out" else "give a file name"
        raise InputError(f"{option} {path}: not standard output here — {stdout}")
    if path.suffix.lower() in (".yaml", ".yml"):
        wanted = {"--resume": "a .jsonl path (e.g. rows.jsonl)", "-o": "a .xlsx path"}.get(option, "a .json path")
        raise InputError(f"{option} {path}: refusing to write over a YAML file — use {wanted}")
    for source in inputs:
        if path.exists() and source.exists() and path.resolve() == source.resolve():
            raise InputError(f"{option} {path}: that is an input file of this command — choose another path")
    folder = path.parent if str(path.parent) else Path(".")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{option} {path}: {folder} is a file, not a folder — choose a path in a folder")
    if not folder.is_dir():
        raise InputError(f"{option} {path}: folder {folder} does not exist")
    from planner.report.files import check_output_file, fixed_write_time

    check_output_file(path, option, inputs)  # writable, not a directory, not /proc (issue 15)
    if path.suffix.lower() == ".xlsx":
        fixed_write_time()  # a bad SOURCE_DATE_EPOCH is refused here, before the solve, not after it


def check_distinct_outputs(*outputs: tuple[str, Path | None]) -> None:
    """Refuse two output options naming one file (``-o plan.xlsx --json-out plan.xlsx`` wrote the workbook,
    then the JSON over it, and announced both): exit 2 naming both options."""
    seen: dict[Path, str] = {}
    for option, path in outputs:
        if path is None:
            continue
        key = path.resolve()
        if key in seen:
            raise InputError(
                f"{option} {path}: {seen[key]} names the same file — give each output its own name"
            )
        seen[key] = option


def emit(
    obj: Any, as_json: bool, json_out: Path | None, *, failed: bool = False, outputs: tuple[Path | None, ...] = ()
) -> bool:
    """Print ``obj`` as JSON to stdout when ``as_json``; write it to ``json_out`` when given and the run
    did not fail (``failed``: the command exits 3 — a failed run never changes an existing output; the note
    names ``json_out`` and the command's other ``outputs`` given, such as its workbook).

    Returns True when stdout is taken by JSON (the caller prints no tables then).
    """
    rendered = json_text(obj)
    unwritten = [str(p) for p in (json_out, *outputs) if p is not None]
    if failed and unwritten:
        kept = "an existing file is left as it was" if len(unwritten) == 1 else "existing files are left as they were"
        note(f"not written: {', '.join(unwritten)} (the run failed; {kept})")
    elif json_out is not None:
        from planner.report.files import atomic_write_text

        run_guarded(lambda: atomic_write_text(json_out, rendered + "\n"))
        wrote(json_out)
    if as_json:
        typer.echo(rendered)
    return as_json


def infeasible_heading(source: Path | None) -> str:
    """'FILE: infeasible' (the causes below are about this scenario file), or 'infeasible' without one."""
    return f"{text(str(source))}: [bold red]infeasible[/]" if source is not None else "[bold red]infeasible[/]"


PIPED_COLUMN_MAX_WIDTH = 60
"""Widest a wrapping column (prose: quotes, reasons) is printed when stdout is a file or pipe."""


def show(renderable: Any) -> None:
    """Print a table or text on stdout. Piped or redirected, a table is printed at its natural width, prose
    columns wrapped at PIPED_COLUMN_MAX_WIDTH (a file has no right margin: squeezed to a guessed width the
    columns would wrap into many lines and lose their headers). Nothing with ``--quiet``."""
    if VERBOSITY.quiet:
        return
    if out.is_terminal:
        out.print(renderable)
        return
    from rich.measure import Measurement
    from rich.table import Table

    if isinstance(renderable, Table):
        for column in renderable.columns:
            if column.max_width is None and not column.no_wrap:
                column.max_width = PIPED_COLUMN_MAX_WIDTH
    page_width = out.width
    natural = Measurement.get(out, out.options.update_width(10_000), renderable).maximum
    out.width = max(page_width, natural)
    try:
        out.print(renderable)
    finally:
        out.width = page_width


def usage_error(message: str) -> NoReturn:
    """Exit 2 with one line naming the problem (for option checks done in the CLI)."""
    fail(InputError(message))


def finite_float(minimum: float, maximum: float = math.inf, *, field: str = "") -> Callable[[str], float]:
    """A command-line parser for a finite number in [``minimum``, ``maximum``]: "nan", "inf" and values outside
    are usage errors that name the option (the option layer checks them, so no NaN reaches a model). ``field``
    (the option's name, ``seq_tokens``) picks the hint of a number written as text: a token count's two
    readings of 4k, a time in another unit (planner.number_hints)."""

    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:  # '5,000', '$5000', '5k': the number to write (imported only on this error path)
            from planner.number_hints import option_hint

            raise typer.BadParameter(f"{raw!r} is not a number{option_hint(raw, field)}") from None
        if not math.isfinite(value):
            raise typer.BadParameter(f"must be a finite number, not {raw!r}")
        if value < minimum:
            raise typer.BadParameter(f"must be at least {minimum:g}, not {raw}")
        if value > maximum:  # a fraction given as a percentage: the fraction to write
            percent = f" — a fraction: write {value / 100:g} for {value:g} %" if maximum == 1 and value <= 100 else ""
            raise typer.BadParameter(f"must be at most {maximum:g}, not {raw}{percent}")
        return value

    return parse
