"""Input checks shared by the ledger modules (scalars or numpy arrays; a failed check is a ValueError)."""

from __future__ import annotations

from typing import Any

import numpy as np


def require_positive(name: str, value: Any) -> None:
    """Raise ValueError unless every element of ``value`` is > 0."""
    if np.any(np.asarray(value) <= 0):
        raise ValueError(f"{name} must be positive, got {value!r}")


def require_non_negative(name: str, value: Any) -> None:
    """Raise ValueError unless every element of ``value`` is >= 0."""
    if np.any(np.asarray(value) < 0):
        raise ValueError(f"{name} must be non-negative, got {value!r}")


def require_fraction(name: str, value: Any, *, allow_zero: bool = True) -> None:
    """Raise ValueError unless every element lies in [0, 1] (or (0, 1] with ``allow_zero=False``)."""
    v = np.asarray(value)
    low_bad = (v < 0) if allow_zero else (v <= 0)
    if np.any(low_bad | (v > 1)):
        raise ValueError(f"{name} must be a fraction in {'[0' if allow_zero else '(0'}, 1], got {value!r}")


def require_count(name: str, value: Any, minimum: int = 1) -> None:
    """Raise ValueError unless the count ``value`` (or every element of an array of counts) is at least
    ``minimum``."""
    if np.any(np.asarray(value) < minimum):
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
