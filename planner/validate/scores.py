"""Predicted vs measured rows and their error summaries (absolute percentage error, median, p90)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ResultRow:
    """Predicted vs measured for one case."""

    source: str
    metric: str
    label: str
    family: str
    predicted: float
    measured: float
    note: str = ""

    @property
    def abs_pct_error(self) -> float:
        """|predicted − measured| / measured × 100."""
        return abs_pct_error(self.predicted, measured=self.measured)

    @property
    def ratio(self) -> float:
        """predicted / measured."""
        return self.predicted / self.measured


@dataclass(frozen=True)
class ErrorSummary:
    """Median and p90 absolute percentage error of a group of rows."""

    group: str
    rows: int
    median_pct: float
    p90_pct: float


def signed_pct_error(predicted: float, *, measured: float) -> float:
    """(predicted − measured) / measured × 100, % (+ = the model predicts more: slower for a time)."""
    return (predicted / measured - 1.0) * 100.0


class TimedRow:
    """Mixin of a dataclass row with ``predicted_ms`` and ``measured_ms``: its signed error."""

    predicted_ms: float
    measured_ms: float

    @property
    def error_pct(self) -> float:
        """(predicted − measured) / measured × 100 (signed: + = the model is slow)."""
        return signed_pct_error(self.predicted_ms, measured=self.measured_ms)


def abs_pct_error(predicted: float, *, measured: float) -> float:
    """Absolute percentage error |predicted − measured| / measured × 100, %.

    Raises ValueError when ``measured`` is not positive.
    """
    if measured <= 0:
        raise ValueError(f"measured value must be > 0, got {measured}")
    return abs(predicted - measured) / measured * 100.0


def summarize(rows: Iterable[ResultRow], *, key: Callable[[ResultRow], str]) -> list[ErrorSummary]:
    """Median / p90 absolute percentage error per group (groups sorted by name)."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r.abs_pct_error)
    return [
        ErrorSummary(g, len(v), float(np.median(v)), float(np.percentile(v, 90)))
        for g, v in sorted(groups.items())
    ]
