"""The local run of the chat grid, shared by the local and Dask tests (solved once per session)."""

from __future__ import annotations

import faulthandler
from collections.abc import Iterator

import pytest

from planner.catalog import Catalog
from planner.sweep import LocalEngine, SweepResult, run_sweep
from tests.sweep.helpers import chat_sweep


@pytest.fixture(scope="session")
def local_result(catalog: Catalog) -> SweepResult:
    return run_sweep(catalog, chat_sweep(catalog), LocalEngine(2))


WATCHDOG_S = 600
"""A sweep test still running after this long is stuck (a lost Dask worker that never came back): dump the
stacks and end the test run rather than hold CI until its own limit."""


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
