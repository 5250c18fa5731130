"""The periods a binding row holds in, read from the plan's schedule.

The solver keys its rows by time slice, not by period: periods with the same demand are merged into one
representative period (a flat 36-month plan has the one slice 0, standing for periods 0–35), and an hourly
profile splits each representative period into hour blocks (slice = period × blocks + block: four periods of
nine blocks are slices 0–35). The JSON keeps the rows as the solver wrote them; what a person reads (the
terminal, the HTML, the workbook's Periods column) names the periods each row stands for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SlicePeriods = dict[int, list[int]]
"""Slice id → the periods (from 0) it stands for."""

TIME_POSITION = {"instance_packing": -2}
"""Where the slice sits in a key when it is not last: instance_packing is (gpu, site, slice, instance size)."""
PERIOD_KEYED = {("budget_max", "opex")}
"""(family, first key) of rows keyed by a representative period instead of a slice (one row per period)."""


def _field(entry: Any, name: str) -> Any:
    return entry[name] if isinstance(entry, dict) else getattr(entry, name)


def slice_periods(schedule: Sequence[Any]) -> tuple[SlicePeriods, SlicePeriods]:
    """(slice → periods, representative period → periods) from the schedule's entries (JSON dicts or
    ScheduleEntry), each entry one period with its ``representative_period`` and ``hour_blocks``."""
    by_slice: SlicePeriods = {}
    by_rep: SlicePeriods = {}
    for entry in schedule:
        period, rep = int(_field(entry, "period")), int(_field(entry, "representative_period"))
        blocks = len(_field(entry, "hour_blocks") or [])
        by_rep.setdefault(rep, []).append(period)
        for b in range(max(blocks, 1)):
            by_slice.setdefault(rep if blocks <= 1 else rep * blocks + b, []).append(period)
    return by_slice, by_rep


def split_key(family: str, key: Sequence[Any]) -> tuple[tuple[str, ...], int | None, tuple[str, ...]]:
    """(before, time id, after) of a binding row's key; time id None when the key carries none."""
    parts = [str(k) for k in key]
    pos = TIME_POSITION.get(family, -1)
    if len(parts) < -pos or not parts[pos].isdigit():
        return tuple(parts), None, ()
    at = len(parts) + pos
    return tuple(parts[:at]), int(parts[at]), tuple(parts[at + 1 :])


def row_periods(row: dict[str, Any], maps: tuple[SlicePeriods, SlicePeriods] | None) -> list[int] | None:
    """The periods a binding row holds in (None without a time id); without a schedule its own time id."""
    family = str(row["family"])
    _before, time_id, _after = split_key(family, row["key"])
    if time_id is None:
        return None
    if maps is None:
        return [time_id]
    by_slice, by_rep = maps
    keyed_by_period = bool(row["key"]) and (family, str(row["key"][0])) in PERIOD_KEYED
    return sorted((by_rep if keyed_by_period else by_slice).get(time_id, [time_id]))
