"""Fixtures shared by the plan tests."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the children forked by this process during the test."""
    made: list[int] = []
    real = os.fork

    def counting() -> int:
        pid = real()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting)
    return made
