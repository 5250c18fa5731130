"""The resume file of ``planner sweep --resume PATH``: JSON lines, one row per finished variant.

The first line names the base scenario by the SHA-256 of its data; each later line is one
:class:`~planner.sweep.result.SweepRow`, appended (and flushed) as it arrives, so a sweep stopped half way
(Ctrl-C, a lost cluster) starts again where it stopped. Rows are matched to variants by their key
(``path=value; ...``); error rows are solved again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, Any

from planner.errors import InputError
from planner.sweep.result import SweepRow


def scenario_digest(base: dict[str, Any]) -> str:
    """SHA-256 of the base scenario's data (canonical JSON)."""
    return hashlib.sha256(json.dumps(base, sort_keys=True).encode()).hexdigest()


def read_rows(path: Path, digest: str) -> dict[str, SweepRow]:
    """Finished rows of an earlier run of the same sweep, by key (empty when the file does not exist)."""
    if not path.exists():
        return {}
    rows: dict[str, SweepRow] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):  # a line cut short when the run was stopped
                break
            raise InputError(
                f"--resume {path}: line {n} is not JSON — give a file written by --resume"
            ) from None
        if n == 1:
            if data.get("scenario_sha256") != digest:
                raise InputError(
                    f"--resume {path}: written for another scenario ({data.get('scenario', '?')}) — "
                    "give a new file name to start this sweep afresh"
                )
            continue
        row = SweepRow.from_json(data)
        if row.status != "error":
            rows[row.key] = row
    return rows


class ResumeLog:
    """Appends rows to the resume file as they arrive (the header first when the file is new)."""

    def __init__(self, path: Path, digest: str, scenario: str) -> None:
        self.path = path
        new = not path.exists() or path.stat().st_size == 0
        self._file: IO[str] = path.open("a", encoding="utf-8")
        if new:
            self._write({"scenario": scenario, "scenario_sha256": digest})

    def _write(self, data: dict[str, Any]) -> None:
        self._file.write(json.dumps(data, sort_keys=True) + "\n")
        self._file.flush()

    def append(self, row: SweepRow) -> None:
        """Record one finished row."""
        self._write(row.to_json())

    def close(self) -> None:
        """Close the file."""
        self._file.close()
