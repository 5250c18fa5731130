"""What a scenario states that no plan can use, said beside the plan (JSON ``warnings``, stderr): owned GPUs
(``inventory``) at a site no workload may run at, or of a GPU type ``hardware.gpus`` leaves out. The plan is
right for the scenario as written; the warning catches the scenario that was meant."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planner.scenario import Scenario


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
