"""Shared fixtures: the bundled catalog, loaded once per session; parsed-YAML copies kept in the session's
own temporary folder (planner.parsed_yaml_cache), not in the user's ~/.cache."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from planner import forked
from planner.catalog import Catalog, default_catalog

# property tests are judged by their values, never by their time: under load (CI's 2 cores, up to 4 pytest
# workers) Hypothesis's default 200 ms deadline turned a slow example into a failure that its replay did not
# repeat (FlakyFailure in test_reserved_breakeven_instances)
settings.register_profile("planner", deadline=None)
settings.load_profile("planner")


@pytest.fixture(scope="session", autouse=True)
def _session_yaml_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("PLANNER_CACHE_DIR")
    os.environ["PLANNER_CACHE_DIR"] = str(tmp_path_factory.mktemp("planner-cache"))
    yield
    if before is None:
        os.environ.pop("PLANNER_CACHE_DIR", None)
    else:
        os.environ["PLANNER_CACHE_DIR"] = before


@pytest.fixture(autouse=True)
def _forking_as_at_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with forking allowed (planner.forked): a sweep task run in this process forbids it for
    the rest of the process (sweep tasks never nest pools), which would otherwise decide, by the test files a
    pytest-xdist worker happens to run first, whether later tests exercise their forked paths."""
    monkeypatch.setitem(forked._STATE, "forbidden", False)
    yield


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()
