"""The number to write for a value written as text (planner.inputs.number_hint): a unit, a currency sign,
thousands separators, a k/M suffix — "write 5000" — a percentage on a fraction, a time in another unit than the
field's, and a token count's two readings of k and M (a sequence length's 4k is 4,096, a request's 4,000)."""

from __future__ import annotations

import re
from typing import Any

_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9}
_SECONDS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hr": 3600.0}
_SECONDS |= {"hour": 3600.0, "d": 86400.0, "day": 86400.0, "w": 604800.0, "week": 604800.0, "mo": 2592000.0}
_SECONDS |= {"month": 2592000.0, "y": 31536000.0, "yr": 31536000.0, "year": 31536000.0}
"""Time units a value may be written in, in seconds (a month is 30 days, a year 365, as the cost model's)."""


def _seconds(unit: str) -> float | None:
    """Seconds per ``unit`` (``ms``, ``s``, ``hours``, ``month``, ...), None when it is not a time unit."""
    unit = unit.lower()
    return _SECONDS.get(unit, _SECONDS.get(unit[:-1]) if unit.endswith("s") else None)


def _time_ratio(unit: str, field_unit: str) -> float | None:
    """How many ``field_unit`` one ``unit`` is (12 months a year), None unless both are time units."""
    given, wanted = _seconds(unit), _seconds(field_unit)
    if given is None or wanted is None:
        return None
    return {(_SECONDS["year"], _SECONDS["month"]): 12.0, (_SECONDS["month"], _SECONDS["year"]): 1 / 12}.get(
        (given, wanted), given / wanted
    )


_BINARY = {"k": 1024, "m": 1024**2}
"""A k or M suffix on a token count may mean 1024 or 1024² (a "4k" context is 4,096 tokens)."""
_LENGTH_FIELD = re.compile(r"seq_len|seq_tokens|context|window|^lengths$|^max_tokens$")
"""Token fields that are sequence lengths, conventionally binary (4k = 4,096): a scenario's seq_len_tokens,
a context window, `planner ledger`'s --seq-tokens (L), paging-waste's --lengths and --max-tokens (the full
reservation per sequence, L_max); other token fields (a request's input_tokens, training_tokens, a batch's
tokens) are plain counts, conventionally decimal."""


def _tokens_hint(number: float, unit: str, field: str) -> str:
    """For a token count written with k or M (``seq_len_tokens: 4k``): both readings, the field's convention
    first — a sequence length 4k = 4 × 1024 = 4096, a request's or a run's tokens 4k = 4000 — so the number
    written (and used) is the one meant; '' for other fields and suffixes. Nothing is read with a suffix."""
    binary = _BINARY.get(unit.lower())
    if binary is None or "tokens" not in field and not _LENGTH_FIELD.search(field):
        return ""
    as_binary, as_decimal = number * binary, number * _SCALE[unit.lower()]
    if not (as_binary.is_integer() and as_decimal.is_integer()):
        return ""
    text = f"{number:g}{unit}"
    times = "1024" if unit.lower() == "k" else "1024²"
    if _LENGTH_FIELD.search(field):
        return (
            f" — write {int(as_binary)} ({text} as a sequence length: {number:g} × {times}) or {int(as_decimal)} "
            f"({number:g} × {_SCALE[unit.lower()]:,.0f}) as a plain number"
        )
    return (
        f" — write {int(as_decimal)} ({text} as a token count: {number:g} × {_SCALE[unit.lower()]:,.0f}) or "
        f"{int(as_binary)} ({number:g} × {times}, as context lengths are written) as a plain number"
    )


def number_hint(value: object, loc: tuple[Any, ...]) -> str:
    """' — write 5000 (…)' for a number written as text with a unit, a currency sign, thousands separators
    or a k/M suffix (``'$5,000'``, ``'8 req/s'``, ``'500ms'``, ``'8k'``); a percentage on a ``*_frac`` field is
    written as the fraction (``'90%'`` → 0.9); a time in another unit than the field's is converted
    (``ttft_ms: 2s`` → 2000, ``horizon_months: 3 years`` → 36: both said "write 2", "write 3")."""
    if not isinstance(value, str):
        return ""
    match = re.fullmatch(r"\s*\$?\s*([-+]?\d[\d,_]*(?:\.\d+)?(?:e[-+]?\d+)?)\s*([a-zA-Z%/$ ]*?)\s*", value)
    if match is None:
        return ""
    number, unit = float(match.group(1).replace(",", "").replace("_", "")), match.group(2).strip()
    field = next((p for p in reversed(loc) if isinstance(p, str)), "")
    if value.strip() == match.group(1) and not re.search(r"[,_]", value):
        return f" — write {match.group(1)} without quotes"
    if unit == "%":
        return f" — write {number / 100:g} (a fraction: {number / 100:g} = {number:g} %)" if re.search("frac|ratio", field) else ""
    ratio = None if "_per_" in field else _time_ratio(unit, field.rsplit("_", 1)[-1])
    if ratio is not None and ratio != 1:
        return f" — write {number * ratio:.6g} ({number:g} {unit} in {field.rsplit('_', 1)[-1]})"
    tokens = _tokens_hint(number, unit, field)
    if tokens:
        return tokens
    number *= _SCALE.get(unit.lower(), 1.0)
    named = "_" in field  # max_gpus, ttft_ms: the unit is in the name; count: it is not
    why = ("the unit is in the field name" if named else "no unit") if unit and unit.lower() not in _SCALE else "a plain number"
    shown = f"{int(number)}" if number.is_integer() and abs(number) < 1e15 else f"{number:g}"
    return f" — write {shown} ({why})"


def option_hint(raw: str, option: str = "") -> str:
    """:func:`number_hint` of a command-line value of ``option`` (its name, ``seq_tokens``; '' for none), but
    '' where that is "write N without quotes": a shell argument has no quotes to drop."""
    hint = number_hint(raw, (option,) if option else ())
    return "" if hint.endswith(" without quotes") else hint
