"""Shared helpers of the workbook tests: read a workbook back, find a labelled row, recompute in LibreOffice."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import openpyxl
import pytest

SOFFICE = shutil.which("soffice")
needs_soffice = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) not installed")


def load_workbook(path: Path, *, data_only: bool = False) -> Any:
    """openpyxl workbook; LibreOffice-saved files carry extensions openpyxl warns about, which is harmless."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return openpyxl.load_workbook(path, data_only=data_only)


def find_row(ws: Any, label: str, column: int = 1) -> Any:
    """The first row of ``ws`` whose cell in ``column`` (1-based) holds ``label``."""
    for row in ws.iter_rows():
        if row[column - 1].value == label:
            return row
    raise AssertionError(f"{label!r} not found on {ws.title}")


def soffice(args: Sequence[str], profile_dir: Path, *, timeout_s: float = 300) -> None:
    """Run headless LibreOffice with a private profile under ``profile_dir``."""
    assert SOFFICE is not None
    subprocess.run(
        [SOFFICE, "--headless", "--norestore", f"-env:UserInstallation=file://{profile_dir}/lo", *args],
        check=True,
        capture_output=True,
        timeout=timeout_s,
    )


def recompute(paths: Sequence[Path], folder: Path, *, timeout_s: float = 300) -> Path:
    """Recompute every formula of ``paths`` by converting them with LibreOffice; returns the output folder."""
    out = folder / "out"
    soffice(
        ["--convert-to", "xlsx", "--outdir", str(out), *(str(p) for p in paths)], folder, timeout_s=timeout_s
    )
    return out


def table_last_row(ws: Any, name: str) -> int:
    """The last row of the Excel table ``name`` on ``ws`` (rows below it are totals and notes)."""
    ref = str(ws.tables[name].ref)
    return int("".join(ch for ch in ref.split(":")[1] if ch.isdigit()))
