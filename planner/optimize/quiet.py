"""Silence C-level stdout while HiGHS runs: it prints a banner on fd 1 once per process even with
``msg=False``, which would break ``--json -`` (planner.optimize.solver re-exports :func:`quiet_stdout`)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

_QUIET_LOCK = threading.Lock()
_quiet: dict[str, int] = {"depth": 0, "saved_fd": -1, "null_fd": -1}
"""State of :func:`quiet_stdout`: open uses, and the fds to restore when the last one ends."""


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Redirect C-level stdout (fd 1) to /dev/null for the duration (HiGHS banner).

    Nestable and thread-safe: fd 1 is swapped when the first of overlapping uses starts and restored
    when the last one ends (solves in worker threads may start and finish in any order)."""
    with _QUIET_LOCK:
        _quiet["depth"] += 1
        if _quiet["depth"] == 1:
            sys.stdout.flush()
            try:
                _quiet["saved_fd"] = os.dup(1)
            except OSError:  # no real fd 1 (e.g. captured by a test runner): nothing to protect
                _quiet["saved_fd"] = -1
            if _quiet["saved_fd"] >= 0:
                _quiet["null_fd"] = os.open(os.devnull, os.O_WRONLY)
                os.dup2(_quiet["null_fd"], 1)
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _quiet["depth"] -= 1
            if _quiet["depth"] == 0 and _quiet["saved_fd"] >= 0:
                sys.stdout.flush()
                os.dup2(_quiet["saved_fd"], 1)
                os.close(_quiet["saved_fd"])
                os.close(_quiet["null_fd"])
                _quiet["saved_fd"] = _quiet["null_fd"] = -1
