"""Candidate evaluation without CPython's cyclic garbage collector running in the middle of it.

Building a candidate table allocates hundreds of thousands of row dicts and small arrays that all stay
alive until the table is done; every generation-2 collection in between walks all of them again and finds
nothing to free (the 20-workload bench instance spent ~20 % of its evaluation there). :func:`gc_paused`
turns the collector off for the duration of the call and back on after it (only if it was on: nested and
concurrent callers leave it as they found it); reference counting still frees everything that is not in a
cycle, and cycles made meanwhile are collected at the next collection after it. Numbers are unaffected.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run with the cyclic garbage collector off (module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        was_on = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_on:
                gc.enable()

    return wrapper
