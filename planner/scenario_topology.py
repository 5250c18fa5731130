"""Scenario types for serving topologies (issue 13): the prefill/decode disaggregation mode of a workload
and the efficiency assumptions a scenario may state per GPU type. Used by planner/scenario.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from planner.errors import ScenarioError, suggest_id
from planner.limits import MIN_EFFICIENCY_FRAC


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

    prefill_mfu_frac: Annotated[float, Field(ge=MIN_EFFICIENCY_FRAC, le=1)] | None = Field(
        None, description="Compute efficiency (MFU) of prefill and decode matmuls, fraction of the dense peak."
    )
    decode_mbu_frac: Annotated[float, Field(ge=MIN_EFFICIENCY_FRAC, le=1)] | None = Field(
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


def refuse_edge_inventory(path: str, index: int, gpu: str, count: int, site: str, kind: str) -> None:
    """An edge site's GPUs are its ``devices``: inventory there was silently ignored (a GPU type without
    devices there) or added to the devices (the same boxes counted twice, at another cost)."""
    if kind == "edge":
        raise ScenarioError(
            f"{path}: inventory[{index}].site: {site} is an edge site, whose GPUs are its devices — state them as "
            f"sites: [{{name: {site}, devices: {{{gpu}: {count}}}}}] (inventory is owned GPUs at datacenter sites)"
        )


def check_owned_supply(scenario: Any, sites: Mapping[str, Any], path: str) -> None:
    """``procurement: [owned]`` (neither rent nor buy) leaves only the inventory and the edge devices at the
    workloads' sites: with none of either there is nothing to plan on, which is the input's fault, not a
    capacity shortfall."""
    if set(scenario.procurement) != {"owned"} or scenario.inventory:
        return
    listed = {site for w in scenario.workloads for site in w.sites or []}  # default: cloud sites, no devices
    if any(sites[site].devices for site in listed if site in sites):
        return
    raise ScenarioError(
        f"{path}: procurement: [owned] needs an inventory (or edge sites with devices) — add "
        "inventory: [{gpu: ..., count: ..., site: ...}], or add rent or buy to procurement"
    )


def refuse_misplaced_devices(path: str, index: int, site: str, kind: str, devices: Mapping[str, int]) -> None:
    """``devices`` are the GPUs installed at an edge site; at a cloud or datacenter site they were silently
    ignored (procurement [owned] then failed with "no on_demand price ...")."""
    if not devices or kind == "edge":
        return
    gpu, count = next(iter(devices.items()))
    instead = (
        f"list owned GPUs under inventory: [{{gpu: {gpu}, count: {count}, site: {site}}}]"
        if kind == "datacenter"
        else "rent there (procurement: [rent])"
    )
    raise ScenarioError(
        f"{path}: sites[{index}].devices: {site} is a {kind} site; devices are the GPUs installed at an edge "
        f"site — add kind: edge to this entry, or {instead}"
    )


def refuse_kindless_site(path: str, index: int, site: str, kindless: bool) -> None:
    """A site the scenario adds without ``kind`` is an edge site (planner.scenario.merged_sites); with no
    devices it can hold nothing, and the plan failed with 'no h100_sxm devices at edge site lab'."""
    if kindless:
        raise ScenarioError(
            f"{path}: sites[{index}].kind: {site} is a new site without a kind, so an edge site with no devices "
            "— add kind: cloud (rent), kind: datacenter (buy, inventory) or devices: {GPU: count} (edge)"
        )


def refuse_oversized_workspace(path: str, workspace_gib: float, listed: list[str] | None, gpus: Mapping[str, Any]) -> None:
    """``workspace_gib`` (per GPU) at or above the memory of every allowed GPU: the plan was infeasible with
    "allow larger TP/PP degrees, a 4-bit format or GPUs with more memory", none of which frees a GPU's
    workspace (a value in MiB or GB of the whole node, e.g. 200, was meant)."""
    largest = max(listed or gpus, key=lambda g: gpus[g].memory_gb)
    memory_gib = gpus[largest].memory_gb * 1e9 / 2**30
    if workspace_gib >= memory_gib:
        raise ScenarioError(
            f"{path}: workspace_gib: {workspace_gib:g} GiB per GPU leaves no memory on any GPU of hardware.gpus (the "
            f"largest, {largest}, has {memory_gib:.1f} GiB) — it is the per-GPU reserve for buffers, in GiB (default 2)"
        )


def refuse_unusable_ep(path: str, ep: list[int] | None, tp: list[int], models: list[Any]) -> None:
    """An EP degree that no workload's mixture-of-experts model can use under ``hardware.tp`` (``ep: [3]`` for
    128 experts, any EP for dense models) planned as tensor parallelism only, silently."""
    from planner.performance.moe import moe_layouts  # a pure module: no cycle

    usable = sorted({e for model in models for _, e in moe_layouts(model, tp) if e > 1})
    for i, e in enumerate(ep or []):
        if e > 1 and e not in usable:
            fix = f"use ep: [1, {', '.join(map(str, usable))}]" if usable else "leave ep out (no listed model is a mixture of experts)"
            raise ScenarioError(
                f"{path}: hardware.ep[{i}]: EP {e} fits no workload's MoE model with hardware.tp {tp} (ep must divide the "
                f"expert count and tp × ep be one of hardware.tp) — {fix}"
            )


def check_hardware(path: str, scenario: Any, catalog: Any) -> None:
    """The hardware space's checks against the catalog (workspace, EP degrees)."""
    hardware = scenario.hardware
    refuse_oversized_workspace(path, scenario.workspace_gib, hardware.gpus, catalog.accelerators)
    models = [catalog.models[m] for w in scenario.workloads for m in w.models if m in catalog.models]
    refuse_unusable_ep(path, hardware.ep, list(hardware.tp), models)
