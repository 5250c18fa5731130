"""The resume file of ``planner sweep --resume PATH``: JSON lines, one row per finished variant.

The first line names the base scenario by the SHA-256 of its data, and the catalog and planner version the
rows were solved with by the SHA-256 of the loaded catalog and the version (``catalog_sha256``: a price,
hardware or model change since the interrupted run would otherwise mix two catalogs in one sweep, silently);
each later line is one
:class:`~planner.sweep.result.SweepRow`, appended (and flushed) as it arrives, so a sweep stopped half way
(Ctrl-C, a lost cluster) starts again where it stopped. Rows are matched to variants by their key
(``path=value; ...``); error rows are solved again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, Any

from planner.catalog.loader import Catalog
from planner.errors import InputError
from planner.sweep.result import SweepRow


def scenario_digest(base: dict[str, Any]) -> str:
    """SHA-256 of the base scenario's data (canonical JSON)."""
    return hashlib.sha256(json.dumps(base, sort_keys=True).encode()).hexdigest()


def catalog_digest(catalog: Catalog) -> str:
    """SHA-256 of the loaded catalog's records and the planner's version: what else decides a row's figures."""
    from planner import __version__

    return hashlib.sha256(f"{__version__}\n{catalog.model_dump_json()}".encode()).hexdigest()


def read_rows(path: Path, digest: str, catalog_sha256: str | None = None) -> dict[str, SweepRow]:
    """Finished rows of an earlier run of the same sweep, by key (empty when the file does not exist); with
    ``catalog_sha256``, of a run with the same catalog and planner version (a header without one is older).

    A last line without its newline was cut short when the run stopped and is skipped (:class:`ResumeLog`
    drops it before appending); any other line that is not what --resume writes is an InputError naming the
    file and the line, so a results file of something else is never appended to."""
    if not path.exists():
        return {}
    try:
        content = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"--resume {path}: not UTF-8 text (byte {exc.start}) — give a file written by --resume, or a new file name"
        ) from None
    cut = not content.endswith("\n")
    rows: dict[str, SweepRow] = {}
    lines = content.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) and cut:  # a line cut short when the run was stopped
                break
            raise InputError(f"--resume {path}: line {n} is not JSON — {_ASK}") from None
        if n == 1:
            if not isinstance(data, dict) or "scenario_sha256" not in data:
                raise InputError(
                    f"--resume {path}: line 1 is not the header a --resume file starts with — {_ASK}"
                )
            if data.get("scenario_sha256") != digest:
                raise InputError(
                    f"--resume {path}: written for another scenario ({data.get('scenario', '?')}) — "
                    "give a new file name to start this sweep afresh"
                )
            if catalog_sha256 is not None and data.get("catalog_sha256") != catalog_sha256:
                raise InputError(
                    f"--resume {path}: its rows were solved with another catalog or planner version (prices, "
                    "hardware or models changed since) — give a new file name to start this sweep afresh"
                )
            continue
        row = _row(data)
        if row is None:
            raise InputError(f"--resume {path}: line {n} is not a sweep row — {_ASK}")
        if row.status != "error":
            rows[row.key] = row
    return rows


_ASK = "give a file written by --resume, or a new file name to start afresh"
_NUMBERS_OR_NONE = (
    "gap",
    "total_cost_usd",
    "capex_usd",
    "opex_usd_per_month",
    "cost_usd_per_million_output_tokens",
    "served_scale",
    "served_requests_per_s",
)
"""Row fields that hold a number or null."""


def _row(data: object) -> SweepRow | None:
    """The row a resume-file line holds, or None when the line is no row :meth:`SweepRow.to_json` wrote (a
    missing or unknown field, a field of the wrong type)."""
    if not isinstance(data, dict):
        return None
    try:
        row = SweepRow.from_json(data)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    plain = (
        isinstance(row.index, int)
        and isinstance(row.key, str)
        and isinstance(row.status, str)
        and isinstance(row.values, dict)
        and isinstance(row.gpus_by_type, dict)
        and isinstance(row.binding_constraints, list)
        and (row.error is None or isinstance(row.error, str))
    )
    numbers = all(
        getattr(row, name) is None or _is_number(getattr(row, name)) for name in _NUMBERS_OR_NONE
    ) and all(_is_number(v) for v in (row.solve_seconds, row.total_seconds, *row.gpus_by_type.values()))
    return row if plain and numbers else None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class ResumeLog:
    """Appends rows to the resume file as they arrive (the header first when the file is new)."""

    def __init__(self, path: Path, digest: str, scenario: str, catalog_sha256: str | None = None) -> None:
        self.path = path
        _drop_cut_line(
            path
        )  # a row appended after a cut line would join it: the file could not be read again
        new = not path.exists() or path.stat().st_size == 0
        self._file: IO[str] = path.open("a", encoding="utf-8")
        if new:
            header = {"scenario": scenario, "scenario_sha256": digest}
            self._write(header | ({"catalog_sha256": catalog_sha256} if catalog_sha256 is not None else {}))

    def _write(self, data: dict[str, Any]) -> None:
        self._file.write(json.dumps(data, sort_keys=True) + "\n")
        self._file.flush()

    def append(self, row: SweepRow) -> None:
        """Record one finished row."""
        self._write(row.to_json())

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def _drop_cut_line(path: Path) -> None:
    """Truncate ``path`` after its last newline: the part after it is a line cut short by a stopped run
    (:func:`read_rows` skipped it)."""
    if not path.exists():
        return
    content = path.read_bytes()
    if content and not content.endswith(b"\n"):
        with path.open("r+b") as file:
            file.truncate(content.rfind(b"\n") + 1)
