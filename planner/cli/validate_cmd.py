"""``planner validate-model``: predict public measurements with the plan/predict code path, write the report.

Refuses (exit 2, nothing written) when the measurement folder is missing or holds no CSV, so a fresh clone
without ``../shared`` never overwrites the tracked ``reports/validation.*`` with an empty report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.cli.common import VERBOSITY, JsonFlag, JsonOut, check_output_path, emit, fail, run_guarded, wrote
from planner.cli.progress import working
from planner.errors import InputError


def measurement_csvs(directory: Path) -> list[Path]:
    """The measurement CSVs in ``directory`` (an input error when there are none)."""
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--measurements {directory}: is a file, expected the folder of the measurement CSVs")
    if not directory.is_dir():
        raise InputError(
            f"--measurements {directory}: folder not found — pass the folder of the public measurement CSVs "
            "(shared/reference/measurements) or set PLANNER_MEASUREMENTS_DIR"
        )
    found = sorted(directory.glob("*.csv"))
    if not found:
        raise InputError(f"--measurements {directory}: no .csv files there — nothing to validate against")
    return found


def check_report_dir(out_dir: Path) -> None:
    """--out: a folder that exists or can be made, not under /proc, /sys or /dev, whose validation.md and
    validation.csv can be written (an InputError, exit 2, names --out otherwise)."""
    from planner.report.files import check_output_dir, check_output_file

    check_output_dir(out_dir, "--out")
    if out_dir.is_dir():
        for name in ("validation.md", "validation.csv"):
            check_output_file(out_dir / name, "--out")


def validate_model(
    measurements: Annotated[
        Path | None,
        typer.Option(
            "--measurements",
            help="Folder of measurement CSVs (default: $PLANNER_MEASUREMENTS_DIR, else shared/reference/measurements next to the repository).",
        ),
    ] = None,
    out_dir: Annotated[
        Path, typer.Option("--out", "--reports", help="Folder for validation.md and validation.csv (relative to the current folder).")
    ] = Path("reports"),
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
) -> None:
    """Predict every public measurement with the plan/predict code path; print and write the error report."""
    from planner.cli.catalog_cmd import _catalog
    from planner.validate import measurements_dir, run_validation, write_reports

    directory = measurements if measurements is not None else measurements_dir()
    run_guarded(lambda: measurement_csvs(directory))
    run_guarded(lambda: check_output_path(json_out, "--json-out"))
    run_guarded(lambda: check_report_dir(out_dir))  # before minutes of predictions, not after them
    catalog = _catalog()
    with working(f"predicting the measurements in {directory}"):
        report = run_guarded(lambda: run_validation(catalog, directory=directory))
    if not report.rows:
        fail(
            InputError(
                f"--measurements {directory}: no row there is a prediction target — reports not written"
            )
        )
    for path in run_guarded(lambda: write_reports(report, out_dir)):
        wrote(path)
    if not emit(report.to_json(), as_json, json_out) and not VERBOSITY.quiet:
        typer.echo(report.to_markdown())
