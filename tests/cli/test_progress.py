"""Progress on stderr: drawn only on a terminal without --quiet, after DELAY_S; stdout is never touched."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from planner.cli import common, progress


def _terminal(monkeypatch: pytest.MonkeyPatch, quiet: bool = False) -> io.StringIO:
    buffer = io.StringIO()
    monkeypatch.setattr(progress, "err", Console(file=buffer, force_terminal=True, width=100))
    monkeypatch.setattr(progress, "DELAY_S", 0.05)
    monkeypatch.setattr(common.VERBOSITY, "quiet", quiet)
    return buffer


def test_spinner_shows_the_step_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = _terminal(monkeypatch)
    with progress.working("planning") as step:
        step("flip point: rent")
        time.sleep(0.4)
    assert "flip point: rent" in buffer.getvalue()


def test_silent_with_quiet_or_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = _terminal(monkeypatch, quiet=True)
    with progress.working("planning"):
        time.sleep(0.2)
    assert buffer.getvalue() == ""
    monkeypatch.setattr(progress, "err", Console(file=buffer, force_terminal=False))
    monkeypatch.setattr(common.VERBOSITY, "quiet", False)
    with progress.working("planning"):
        time.sleep(0.2)
    assert buffer.getvalue() == ""


def test_quick_steps_draw_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = _terminal(monkeypatch)
    monkeypatch.setattr(progress, "DELAY_S", 5.0)
    with progress.working("planning"):
        pass
    assert buffer.getvalue() == ""


def test_a_search_adds_its_progress_to_the_current_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long search's line follows the step it runs in ('planning hybrid — best $…'), then the step's own
    label comes back when the search is over."""
    from planner.search_progress import _REPORTER

    buffer = _terminal(monkeypatch)
    with progress.working("comparing") as step:
        step("planning hybrid")
        report = _REPORTER.get()
        assert report is not None
        report("best $820,967, proven floor $799,866 (gap 2.6%), 790 nodes")
        time.sleep(0.4)
        shown = buffer.getvalue()
        report("")
        step("planning rent_only")
        time.sleep(0.4)
    assert "planning hybrid — best $820,967, proven floor $799,866 (gap 2.6%), 790 nodes" in shown
    assert "planning rent_only" in buffer.getvalue()
    assert _REPORTER.get() is None
