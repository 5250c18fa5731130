"""Catalog: typed, validated hardware / model / format / site / price data."""

from __future__ import annotations

from planner.catalog.calibration_schema import CalibrationFamily
from planner.catalog.loader import Catalog, default_catalog, load_catalog
from planner.catalog.schema import (
    Accelerator,
    Interconnect,
    Model,
    NumericFormat,
    RentalPrice,
    Site,
)

__all__ = [
    "Accelerator",
    "CalibrationFamily",
    "Catalog",
    "Interconnect",
    "Model",
    "NumericFormat",
    "RentalPrice",
    "Site",
    "default_catalog",
    "load_catalog",
]
