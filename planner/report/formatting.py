"""Cell styles, number formats and name sanitizing shared by the workbook sheets."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from planner.units import count_text
from planner.units import months_text as months_text  # re-exported: the reports' and CLI's import

USD_FORMAT = '"$"#,##0.00'
USD_AXIS_FORMAT = '"$"#,##0'
"""Chart axes: whole dollars."""
USD_WHOLE_FORMAT = '"$"#,##0'
PERCENT_FORMAT = "0.0%"
NUMBER_FORMAT = "#,##0.00"
INT_FORMAT = "#,##0"

HEADER_FILL = "1F4E78"
HEADER_FONT_COLOR = "FFFFFF"
MAX_COLUMN_WIDTH = 60
MIN_COLUMN_WIDTH = 8

_FORMULA_PREFIXES = ("=", "+", "-", "@")
_SHEET_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")
_NAME_FORBIDDEN = re.compile(r"[^A-Za-z0-9_]")


def is_formula_like(value: Any) -> bool:
    """True for user text that a spreadsheet would read as a formula (starts with = + - @)."""
    return isinstance(value, str) and value[:1] in _FORMULA_PREFIXES


def sanitize_sheet_title(title: str) -> str:
    """A legal sheet title: printable, no ``[]:*?/\\``, no leading/trailing apostrophe, 1-31 characters."""
    cleaned = _SHEET_FORBIDDEN.sub("_", "".join(ch if ch.isprintable() else "_" for ch in title))
    cleaned = cleaned.strip(" '")[:31].strip(" '")
    return cleaned or "Sheet"


def sanitize_defined_name(name: str) -> str:
    """A legal table displayName / defined name: letters, digits, underscores; starts with a letter."""
    cleaned = _NAME_FORBIDDEN.sub("_", name)
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "T_" + cleaned
    # Names that look like cell references (A1, R1C1) are illegal.
    if re.fullmatch(r"[A-Za-z]{1,3}[0-9]+", cleaned) or re.fullmatch(r"([Rr][0-9]*)?([Cc][0-9]*)?", cleaned):
        cleaned = "N_" + cleaned
    return cleaned[:255]


def period_runs_text(values: Sequence[int]) -> str:
    """Replicas per period, equal neighbours merged: [4, 1, 1, 1] → "4 1×3" (the terminal's column), counts
    grouped: [1233855] × 36 → "1,233,855×36"."""
    out: list[str] = []
    k = 0
    while k < len(values):
        n = 1
        while k + n < len(values) and values[k + n] == values[k]:
            n += 1
        count = count_text(values[k])
        out.append(count if n == 1 else f"{count}×{n}")
        k += n
    return " ".join(out)


def binding_rows(binding: list[dict[str, Any]], schedule: Sequence[Any] = ()) -> list[tuple[str, str]]:
    """(family, key) lines of the binding rows, the rows of one family and key that differ only in their
    time merged into one line with the periods as runs: twelve ``demand_coverage chat/0`` … ``chat/11`` lines
    become ``chat/0–11``; ``0, 2, 5–7`` where they are not consecutive (the terminal plan). With the plan's
    ``schedule`` a row names the periods its slice stands for (planner.report.binding_periods: a flat
    36-month plan's one slice is ``chat/0–35``, hour blocks 0–35 of four periods ``chat/0–3``); without it,
    the slice ids. First appearance order."""
    from planner.report.binding_periods import row_periods, slice_periods, split_key

    maps = slice_periods(schedule) if schedule else None
    groups: dict[tuple[str, tuple[str, ...], tuple[str, ...]], set[int]] = {}
    for row in binding:
        family = str(row["family"])
        before, _time, after = split_key(family, row["key"])
        groups.setdefault((family, before, after), set()).update(row_periods(row, maps) or [])
    out = []
    for (family, before, after), periods in groups.items():
        middle = [number_runs_text(sorted(periods))] if periods else []
        out.append((family, "/".join([*before, *middle, *after])))
    return out


def months_runs_text(months: list[int]) -> str:
    """'month 3', or 'months 0–11, 18' for several (:func:`number_runs_text`)."""
    return f"month {months[0]}" if len(months) == 1 else f"months {number_runs_text(months)}"


def number_runs_text(values: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] → '0–2, 5, 7–8'."""
    runs: list[str] = []
    start = prev = values[0]
    for v in [*values[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        runs.append(str(start) if start == prev else f"{start}–{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(runs)


def status_text(status: str, gap: float | None, bound_usd: float | None) -> str:
    """'optimal', or 'feasible (gap 4.1%, bound $123,456)': a plan not proven optimal shows how far from the
    proven lower bound it may be: one text for the terminal title, the workbook and the HTML."""
    if status != "feasible":
        return status
    if gap is None:
        return "feasible (gap unknown: the solver reports no bound)"
    return f"feasible (gap {gap:.1%}" + (f", bound ${bound_usd:,.0f})" if bound_usd is not None else ")")
