"""Scenario types for serving topologies (issue 13): the prefill/decode disaggregation mode of a workload
and the efficiency assumptions a scenario may state per GPU type. Used by planner/scenario.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from planner.errors import ScenarioError
from planner.validation_messages import suggest_id


def _yaml_on_off(value: object) -> object:
    """``true`` / ``false`` (YAML booleans) are taken as 'on' / 'off'."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return value


Disaggregation = Annotated[Literal["auto", "off", "on"], BeforeValidator(_yaml_on_off)]
"""auto: the optimizer picks co-located or separate prefill and decode pools; off: co-located only; on:
separate pools only."""


class EfficiencyOverride(BaseModel):
    """Efficiency assumptions a scenario states for one GPU type (omitted fields keep the catalog's)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    prefill_mfu_frac: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None, description="Compute efficiency (MFU) of prefill and decode matmuls, fraction of the dense peak."
    )
    decode_mbu_frac: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None, description="Bandwidth efficiency (MBU) of the weight and KV stream, fraction of peak HBM bandwidth."
    )


def check_efficiency_gpus(path: str, gpus: list[str] | None, stated: list[str], accelerators: Mapping[str, object]) -> None:
    """Every ``hardware.efficiency`` key (``stated``) is a catalog GPU the plan may use (in ``gpus`` =
    ``hardware.gpus`` when given): an efficiency stated for a GPU left out of ``hardware.gpus`` would
    silently stay unused."""
    for gpu in stated:
        if gpu not in accelerators:
            raise ScenarioError(f"{path}: hardware.efficiency.{gpu}: unknown gpu '{gpu}'{suggest_id(gpu, accelerators)}")
        if gpus is not None and gpu not in gpus:
            raise ScenarioError(
                f"{path}: hardware.efficiency.{gpu}: {gpu} is not in hardware.gpus ({', '.join(gpus)}), so this "
                f"efficiency would be unused — add {gpu} to hardware.gpus or remove the entry"
            )
