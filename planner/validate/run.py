"""Entry point of ``make validate`` / ``planner validate-model``."""

from __future__ import annotations

from pathlib import Path

from planner.catalog.loader import Catalog
from planner.validate.fit import _uncalibrated_catalog, fit_calibration, leave_one_source_out
from planner.validate.kernel_mixed_steps import mixed_step_markdown, mixed_step_rows
from planner.validate.kernel_moe_blocks import moe_block_markdown, moe_block_rows
from planner.validate.kernel_steps import step_markdown, step_rows
from planner.validate.kernels import kernel_markdown, kernel_rows
from planner.validate.predictions import evaluate
from planner.validate.report import ValidationReport
from planner.validate.sources import build_cases


def run_validation(
    catalog: Catalog, *, directory: Path | None = None, cross_validate: bool = True
) -> ValidationReport:
    """Predict every measurement with the catalog's calibration and score it (``make validate``).

    Also evaluates the uncalibrated physics defaults and, with ``cross_validate``, refits the calibration
    on all rows (reported as ``fitted_parameters``) and per left-out source.
    """
    cases, skipped = build_cases(catalog, directory)
    report = ValidationReport(
        rows=evaluate(catalog, cases),
        skipped=skipped,
        uncalibrated_rows=evaluate(_uncalibrated_catalog(catalog), cases),
        # in-house kernel, compiled-step and whole-step timings: reported, never fitted
        kernel_lines=kernel_markdown(kernel_rows(catalog)) + step_markdown(step_rows(catalog))
        + mixed_step_markdown(mixed_step_rows(catalog)) + moe_block_markdown(moe_block_rows(catalog)),
    )
    if cross_validate:
        report.fitted_parameters = fit_calibration(catalog, cases)
        report.held_out_rows = leave_one_source_out(catalog, cases)
    return report
