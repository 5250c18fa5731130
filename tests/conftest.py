"""Shared fixtures: the bundled catalog, loaded once per session."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog, default_catalog


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()
