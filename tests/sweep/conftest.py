"""The local run of the chat grid, shared by the local and Dask tests (solved once per session)."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog
from planner.sweep import LocalEngine, SweepResult, run_sweep
from tests.sweep.helpers import chat_sweep


@pytest.fixture(scope="session")
def local_result(catalog: Catalog) -> SweepResult:
    return run_sweep(catalog, chat_sweep(catalog), LocalEngine(2))
