"""Unit constants and conversions. GB = 1e9 B (decimal), GiB = 2**30 B (binary).

Every quantity in the planner carries its unit in its name; convert only through these helpers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

BYTES_PER_KB = 1e3
BYTES_PER_MB = 1e6
BYTES_PER_GB = 1e9
BYTES_PER_TB = 1e12
BYTES_PER_KIB = 2.0**10
BYTES_PER_MIB = 2.0**20
BYTES_PER_GIB = 2.0**30

FLOP_PER_TFLOP = 1e12
FLOP_PER_GFLOP = 1e9

MS_PER_S = 1e3
US_PER_S = 1e6
S_PER_HOUR = 3600.0
HOURS_PER_MONTH = 720.0  # the book's rental month (30 days), card 12
S_PER_MONTH = HOURS_PER_MONTH * S_PER_HOUR  # 2,592,000 s
MONTHS_PER_YEAR = 12.0


def gb_to_bytes(gb: float) -> float:
    """Decimal gigabytes to bytes (x 1e9)."""
    return gb * BYTES_PER_GB


def bytes_to_gb(n_bytes: float) -> float:
    """Bytes to decimal gigabytes (/ 1e9)."""
    return n_bytes / BYTES_PER_GB


def gib_to_bytes(gib: float) -> float:
    """Binary gibibytes to bytes (x 2**30)."""
    return gib * BYTES_PER_GIB


def bytes_to_gib(n_bytes: float) -> float:
    """Bytes to binary gibibytes (/ 2**30)."""
    return n_bytes / BYTES_PER_GIB


def gbit_per_s_to_gb_per_s(gbit_per_s: float) -> float:
    """Link bit rate to byte rate: divide by 8 (400 Gb/s = 50 GB/s), card 1."""
    return gbit_per_s / 8.0


def mbit_per_s_to_bytes_per_s(mbit_per_s: float) -> float:
    """Megabits per second to bytes per second (1 Mb/s = 125,000 B/s)."""
    return mbit_per_s * 1e6 / 8.0


def three_digits_text(value: float) -> str:
    """A figure for a sentence: three significant digits (``1.26``, ``88.6``, ``0.062``), plain whole numbers with
    thousands grouped from 1,000 up (``10,000``, ``49,999``) — never ``1e+04``, which ``:.3g`` writes there."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def count_text(count: float) -> str:
    """A GPU or replica count as a reader writes it: whole numbers grouped (``9,870,840``, ``1``, not ``1.0`` or
    ``:g``'s ``9.87084e+06``), a fraction of a shared GPU with up to two decimals (``0.5``, ``2.25``)."""
    if float(count).is_integer():
        return f"{count:,.0f}"
    return f"{count:,.2f}".rstrip("0").rstrip(".")


def months_text(months: int) -> str:
    """A number of months in words: "1 month", "36 months" (a horizon, the months a budget line counts)."""
    return f"{months} month{'' if months == 1 else 's'}"


def days_decimals(days_values: Iterable[float], *, apart_from: Iterable[float] = (), most: int = 6) -> int:
    """Decimals to print durations in days with: one at a day or more, two significant digits of the smallest
    below a day (0.064), and more until values that differ print differently, among themselves and from
    ``apart_from`` (0.232 and 0.238 days of two options; a 0.12-day run against a 0.1-day deadline — not "0.2"
    twice, or "0.1" for a missed 0.1), at most ``most``."""
    values = sorted({d for d in days_values if math.isfinite(d) and d > 0})
    if not values:
        return 1
    decimals = min(most, max(1, 1 - math.floor(math.log10(values[0]))))
    shown = sorted(set(values) | {d for d in apart_from if math.isfinite(d)})
    while decimals < most and len({f"{d:.{decimals}f}" for d in shown}) < len(shown):
        decimals += 1
    return decimals
