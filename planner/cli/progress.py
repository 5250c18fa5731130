"""Signs of life on stderr for slow commands: a rich spinner with the step and the elapsed seconds.

Shown only when stderr is a terminal and ``--quiet`` is off, and only once the step has run for
``DELAY_S`` (quick commands stay silent). stdout is never touched, so ``--json`` output stays clean.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from planner.cli.common import VERBOSITY, debug, err
from planner.search_progress import reporting

DELAY_S = 2.0
"""A step must run this long before the spinner appears (s)."""

SEARCH_LOG_EVERY_S = 10.0
"""Least seconds between two ``-v`` log lines of a running search (the spinner shows every report)."""


def enabled() -> bool:
    """True when a spinner may be drawn: stderr is a TTY and not ``--quiet``."""
    return err.is_terminal and not VERBOSITY.quiet


@contextlib.contextmanager
def working(label: str) -> Iterator[Callable[[str], None]]:
    """Run a block under a delayed spinner; yields ``step(text)`` to change the label as work advances. A
    long optimizer search inside adds its progress to the current step's label (planner.search_progress)."""
    state = {"label": label, "step": label}
    start = time.perf_counter()
    done = threading.Event()

    def step(text: str) -> None:
        state["label"] = state["step"] = text
        debug(f"{time.perf_counter() - start:6.1f} s  {text}")

    logged = [-SEARCH_LOG_EVERY_S]

    def searched(text: str) -> None:  # '' when the search is over: back to the step's own label
        state["label"] = f"{state['step']} — {text}" if text else state["step"]
        now = time.perf_counter() - start
        if text and now - logged[0] >= SEARCH_LOG_EVERY_S:  # -v: a line every 10 s, not every second
            logged[0] = now
            debug(f"{now:6.1f} s  {state['label']}")

    def spin() -> None:
        if done.wait(DELAY_S):
            return
        with err.status(state["label"]) as status:
            while not done.wait(0.2):
                status.update(f"{state['label']} … {time.perf_counter() - start:.0f} s")

    thread = threading.Thread(target=spin, daemon=True) if enabled() else None
    if thread is not None:
        thread.start()
    try:
        if thread is None and not (VERBOSITY.verbose and not VERBOSITY.quiet):  # no one sees a search's lines
            yield step
        else:
            with reporting(searched):
                yield step
    finally:
        done.set()
        if thread is not None:
            thread.join()
        debug(f"{label}: {time.perf_counter() - start:.2f} s")
