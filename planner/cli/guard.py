"""The CLI's last line of defence: every command runs inside :class:`GuardedGroup.invoke`.

- A :class:`~planner.errors.PlannerError` that escaped a command → its one-line message and exit code
  (2 input, 3 infeasible, 4 solver/audit).
- A pydantic ``ValidationError`` (an option value a record refused, e.g. ``--total-usd inf``) → exit 2.
- Any other exception (a bug) → ``error: internal error: TypeError: ... (rerun with --debug for the
  traceback)`` and exit 4; ``planner --debug CMD`` prints the traceback too.
- Output piped into a reader that stopped (``planner plan X | head -3``): the ``BrokenPipeError`` passes
  through to typer, which silences the closed stream and exits 1 (no "internal error").
- Ctrl-C → ``interrupted`` and exit 130; SIGTERM → ``terminated`` and exit 143. Both unwind through the
  ``finally`` blocks of :mod:`planner.report.files`, so no temporary file is left and no existing output
  changes.
"""

from __future__ import annotations

import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
import typer.core
from typer.core import TyperGroup

from planner.errors import InputError, PlannerError

if TYPE_CHECKING:
    from pydantic import ValidationError

INTERNAL_ERROR_EXIT = 4
INTERRUPTED_EXIT = 130
TERMINATED_EXIT = 143


class Terminated(SystemExit):
    """Raised in the main thread when SIGTERM arrives, so cleanup code runs before the process ends."""


try:  # typer >= 0.26 runs on its own copy of click; the click package is not a dependency
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - older typer on the click package
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

_PASS_THROUGH: tuple[type[BaseException], ...] = tuple(
    {
        exc
        for module in (typer, click_exceptions)
        for name in ("Exit", "Abort", "ClickException")
        if isinstance(exc := getattr(module, name, None), type) and issubclass(exc, BaseException)
    }
)
"""Exceptions that are the CLI's own way of ending (exit codes, usage errors): never wrapped."""
_PASS_THROUGH_AND_PIPE: tuple[type[BaseException], ...] = (*_PASS_THROUGH, BrokenPipeError)
"""…and a closed stdout, which typer's main silences (exit 1)."""


NOTHING_CHANGED = "no output was changed"


class _State:
    debug = False
    stopped_note = NOTHING_CHANGED
    """What an interrupted or terminated run left behind (a command that keeps partial results says so)."""


def set_debug(value: bool) -> None:
    """Called by the root callback with the value of ``--debug``; a new command has kept nothing yet."""
    _State.debug = bool(value)
    _State.stopped_note = NOTHING_CHANGED


def set_stopped_note(text: str) -> None:
    """What the 'interrupted — …' / 'terminated — …' line says the run kept (default: no output was changed);
    e.g. a sweep with --resume keeps its finished rows."""
    _State.stopped_note = text


DebugFlag = Annotated[
    bool, typer.Option("--debug", help="Show the Python traceback of an unexpected error (exit 4).")
]


def _print_error(message: str) -> None:
    from planner.cli.common import print_error

    print_error(message)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated(TERMINATED_EXIT)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (exit 143) instead of killing the process."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def internal_error_line(exc: BaseException) -> str:
    """The one line shown for an unexpected exception."""
    detail = str(exc).splitlines()[0] if str(exc) else ""
    name = type(exc).__name__
    return f"internal error: {name}{': ' + detail if detail else ''} (rerun with --debug for the traceback)"


def _is_validation_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a pydantic ``ValidationError`` — looked up only if pydantic is loaded (it must be
    for one to be raised), so ``planner --help`` does not import pydantic."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(exc, pydantic.ValidationError)


class GuardedGroup(TyperGroup):
    """Root command group with the exit-code mapping described in the module docstring."""

    def invoke(self, ctx: Any) -> Any:
        """Run the chosen command; map what escapes it to one line and an exit code."""
        try:
            with sigterm_raises():
                return super().invoke(ctx)
        except _PASS_THROUGH_AND_PIPE:
            raise
        except Terminated:
            _print_error(f"terminated — {_State.stopped_note}")
            raise typer.Exit(TERMINATED_EXIT) from None
        except KeyboardInterrupt:
            _print_error(f"interrupted — {_State.stopped_note}")
            raise typer.Exit(INTERRUPTED_EXIT) from None
        except PlannerError as exc:
            _print_error(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except Exception as exc:  # noqa: BLE001 - the top level turns every bug into exit 4
            if _is_validation_error(exc):  # a value from an option that a record refused: input, not a bug
                from planner.validation_messages import format_validation_error

                refused = cast("ValidationError", exc)
                _print_error(f"invalid value: {format_validation_error(refused.title, refused)}")
                raise typer.Exit(InputError.exit_code) from None
            if _State.debug:
                traceback.print_exc()
            _print_error(internal_error_line(exc))
            raise typer.Exit(INTERNAL_ERROR_EXIT) from None
