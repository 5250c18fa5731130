"""catalogs/calibration.yaml may carry a family's operator overlap exponent q (README, ledgers.efficiency):
accepted from 1 to ∞ and read by the efficiency terms; below 1 it is refused with its range."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from planner import performance as perf
from planner.catalog.calibration_schema import CalibrationFamily
from planner.catalog.loader import Catalog
from planner.ledgers.efficiency import OPERATOR_OVERLAP_EXPONENT


def test_a_family_may_ship_an_overlap_exponent(catalog: Catalog) -> None:
    calib = {
        fam: CalibrationFamily.model_validate(
            {**rec.model_dump(), "parameters": {**rec.parameters, "operator_overlap_exponent": 2.5}}
        )
        for fam, rec in catalog.calibration.items()
    }
    shipped = catalog.model_copy(update={"calibration": calib})
    gpu, fmt = catalog.gpu("h100_sxm"), catalog.format("bf16")
    assert perf.efficiency_terms(shipped, gpu, fmt).overlap_exponent == 2.5
    assert perf.efficiency_terms(catalog, gpu, fmt).overlap_exponent == OPERATOR_OVERLAP_EXPONENT == 2.85  # the measured default
    rec = next(iter(catalog.calibration.values()))
    with pytest.raises(ValidationError, match="operator_overlap_exponent must be in"):
        CalibrationFamily.model_validate({**rec.model_dump(), "parameters": {"operator_overlap_exponent": 0.5}})
