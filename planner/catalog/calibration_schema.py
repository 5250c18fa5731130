"""Catalog record of fitted performance-model parameters (catalogs/calibration.yaml): the known parameters
and their sane ranges, and one accelerator family's record."""

from __future__ import annotations

from pydantic import model_validator

from planner.catalog.schema import Id, Sourced
from planner.errors import did_you_mean

CALIBRATION_RANGES: dict[str, tuple[float, float]] = {
    "step_overhead_ms": (0.0, 1000.0),
    "prefill_saturation_tokens": (0.0, 1_000_000.0),
    "decode_mbu_scale": (0.1, 10.0),
    "prefill_mfu_scale": (0.1, 10.0),
    "weight_only_read_efficiency_frac": (0.01, 1.0),
    "kv_page_tokens": (1.0, 4096.0),
    "operator_overlap_exponent": (1.0, float("inf")),
    "weight_stream_frac": (0.0, 1.0), "gemm_launch_us": (0.0, 100.0), "layer_kernels_us": (0.0, 1000.0), "kv_stream_frac": (0.0, 1.0),
}
"""Known calibration parameters and their sane ranges (planner/ledgers/efficiency.py reads them);
operator_overlap_exponent: q of ledgers.efficiency.overlapped_stage_s, 1 (no overlap) to .inf (the max)."""


class CalibrationFamily(Sourced):
    """Fitted performance-model parameters for one accelerator family (see ``make validate``)."""

    family: Id
    parameters: dict[str, float]
    fit: str
    """How the parameters were fitted (rows, objective, date)."""

    @model_validator(mode="after")
    def _check(self) -> CalibrationFamily:
        for name, value in self.parameters.items():
            if name not in CALIBRATION_RANGES:
                raise ValueError(f"unknown parameter {name!r}{did_you_mean(name, CALIBRATION_RANGES)}")
            lo, hi = CALIBRATION_RANGES[name]
            if not lo <= value <= hi:
                raise ValueError(f"parameter {name} must be in [{lo:g}, {hi:g}] (got {value!r})")
        return self
