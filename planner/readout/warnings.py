"""What a plan's reader should check, said beside the plan (JSON ``warnings``, stderr, the workbook's and the
HTML page's Summary): owned GPUs (``inventory``) at a site no workload may run at, or of a GPU type
``hardware.gpus`` leaves out; and a fleet larger than any AI cluster publicly known at one site. The plan is
right for the scenario as written (the exit code does not change); the warning catches the scenario that was
meant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planner.readout.types import SupplyLine
    from planner.scenario import Scenario

LARGEST_SITE_GPUS = 100_000
"""GPUs above which a plan's fleet is larger than any AI cluster publicly known at one site: xAI's Colossus
(Memphis), built with 100,000 NVIDIA H100 GPUs and announced as the largest AI training cluster in September
2024 (xAI; NVIDIA press release, 28 October 2024: "the world's largest AI supercomputer", 100,000 Hopper GPUs);
its reported expansion toward 200,000 GPUs (2025) and Meta's 24,576-GPU clusters (Meta engineering blog,
March 2024) bracket it [U: from those announcements, not re-checked against a filed source]. A plan above it
is rarely what was meant (requests/s with extra zeros, tokens in the wrong unit): examples/chat_70b_cloud at
1e5 × its demand (800,000 req/s) holds 279,152 MI300X (34,894 8-GPU nodes)."""


def fleet_gpus(supply: Sequence[SupplyLine]) -> int:
    """GPUs the plan holds: Σ over its supply lines of each line's most GPUs in use at once
    (:attr:`SupplyLine.gpus`, the "GPUs" column of the terminal's supply tables), GPUs."""
    return sum(line.gpus for line in supply)


def huge_fleet(supply: Sequence[SupplyLine]) -> list[str]:
    """One sentence when :func:`fleet_gpus` exceeds :data:`LARGEST_SITE_GPUS`, else none."""
    gpus = fleet_gpus(supply)
    if gpus <= LARGEST_SITE_GPUS:
        return []
    return [
        f"the plan holds {gpus:,} GPUs, more than the {LARGEST_SITE_GPUS:,} of the largest AI cluster publicly "
        "known at one site (xAI Colossus, 2024) — check the workloads' requests_per_s and token counts before "
        "renting or buying it"
    ]


def plan_warnings(scenario: Scenario, supply: Sequence[SupplyLine]) -> list[str]:
    """Every warning of a plan: :func:`unused_inventory`, then :func:`huge_fleet`."""
    return unused_inventory(scenario) + huge_fleet(supply)


def unused_inventory(scenario: Scenario) -> list[str]:
    """One sentence per inventory entry no workload can use, with the field that would let it."""
    anywhere = any(w.sites is None for w in scenario.workloads)  # every cloud site: checked by kind elsewhere
    sites = sorted({s for w in scenario.workloads for s in w.sites or ()})
    gpus = scenario.hardware.gpus
    out = []
    for i, item in enumerate(scenario.inventory):
        owned = f"inventory[{i}] ({item.count} × {item.gpu} at {item.site})"
        if not anywhere and item.site not in sites:
            out.append(
                f"{owned} serves nothing: no workload may run at {item.site} (their sites: {', '.join(sites)}) — "
                f"add {item.site} to a workload's sites to use it"
            )
        elif gpus is not None and item.gpu not in gpus:
            out.append(
                f"{owned} serves nothing: hardware.gpus leaves {item.gpu} out — add it to hardware.gpus to use it"
            )
    return out
