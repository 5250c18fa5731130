"""A numeric field's bounds (annotated_types constraints of a pydantic field) in the user's words, and the test
of a value against them: what the validation messages (planner.validation_messages) name as the valid range."""

from __future__ import annotations

from typing import Any

import annotated_types


def bounds_text(metadata: list[Any]) -> str | None:
    """'in (0, 1e+06]', '≥ 1', ... from annotated_types constraints."""
    lo = hi = None
    for m in metadata:
        if isinstance(m, annotated_types.Gt):
            lo = f"({m.gt:g}"
        elif isinstance(m, annotated_types.Ge):
            lo = f"[{m.ge:g}"
        elif isinstance(m, annotated_types.Lt):
            hi = f"{m.lt:g})"
        elif isinstance(m, annotated_types.Le):
            hi = f"{m.le:g}]"
    if lo and hi:
        return f"must be in {lo}, {hi}"
    if lo:
        return f"must be {'>' if lo[0] == '(' else '≥'} {lo[1:]}"
    if hi:
        return f"must be {'<' if hi[-1] == ')' else '≤'} {hi[:-1]}"
    return None


def within_bounds(metadata: list[Any], value: float) -> bool:
    """Whether ``value`` meets every annotated_types bound in ``metadata``."""
    for m in metadata:
        if isinstance(m, annotated_types.Gt) and not value > float(m.gt):  # type: ignore[arg-type]
            return False
        if isinstance(m, annotated_types.Ge) and not value >= float(m.ge):  # type: ignore[arg-type]
            return False
        if isinstance(m, annotated_types.Lt) and not value < float(m.lt):  # type: ignore[arg-type]
            return False
        if isinstance(m, annotated_types.Le) and not value <= float(m.le):  # type: ignore[arg-type]
            return False
    return True
