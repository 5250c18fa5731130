"""Which links a deployment's tensor-parallel group and pipeline chain use (scale-up inside its domain, the
host link inside a node, the scale-out fabric across nodes), and the refusal of a group that cannot run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Interconnect
from planner.errors import InputError


class UnsupportedDeployment(InputError):
    """The configuration cannot run at all (format not supported, TP too large for the fabric, ...)."""


@dataclass(frozen=True)
class Links:
    """The links a TP group and a PP chain use."""

    tp: Interconnect | None
    pp: Interconnect | None


def domain_gpus(gpu: Accelerator) -> int:
    """GPUs of one scale-up domain: the NVLink / NVSwitch domain, or the node for host-link-only GPUs."""
    return max(gpu.scale_up_domain_gpus if gpu.scale_up is not None else 1, gpu.gpus_per_node)


def require_in_domain(gpu: Accelerator, group_gpus: int, *, what: str) -> None:
    """Raise UnsupportedDeployment when a TP (or EP) group of ``group_gpus`` leaves the scale-up domain."""
    domain = domain_gpus(gpu)
    if group_gpus > domain:
        if gpu.scale_up is None:
            where = f"one {gpu.id} node ({domain} GPU{'s' if domain > 1 else ''}, no scale-up link)"
        elif gpu.scale_up.startswith("nvlink"):
            where = f"the {domain}-GPU NVLink domain of {gpu.id}"
        else:
            where = f"the {domain}-GPU {gpu.scale_up} domain of {gpu.id}"
        raise UnsupportedDeployment(
            f"{what} leaves {where}: tensor-parallel groups stay inside it (use PP across nodes, or a GPU "
            "whose scale-up domain is larger, e.g. gb200_nvl72)"
        )


_LINKS: dict[tuple[int, int, int, int], tuple[Catalog, Accelerator, Links | tuple[Any, ...]]] = {}
"""group_links results (or the args of the UnsupportedDeployment it raised) per (catalog, GPU record, tp, pp)."""
_LINKS_KEPT = 4096


def group_links(catalog: Catalog, gpu: Accelerator, *, tp: int, pp: int) -> Links:
    """:func:`pick_group_links`, evaluated once per (catalog, GPU record, TP, PP): the records are frozen and
    held with the answer (so their ids cannot be reused while it is kept); a refusal is raised again with the
    same message."""
    key = (id(catalog), id(gpu), tp, pp)
    hit = _LINKS.get(key)
    if hit is None or hit[0] is not catalog or hit[1] is not gpu:
        answer: Links | tuple[Any, ...]
        try:
            answer = pick_group_links(catalog, gpu, tp=tp, pp=pp)
        except UnsupportedDeployment as exc:
            answer = exc.args
        if len(_LINKS) >= _LINKS_KEPT:
            _LINKS.clear()
        hit = _LINKS[key] = (catalog, gpu, answer)
    if isinstance(hit[2], Links):
        return hit[2]
    raise UnsupportedDeployment(*hit[2])


def pick_group_links(catalog: Catalog, gpu: Accelerator, *, tp: int, pp: int) -> Links:
    """Pick the TP and PP links: scale-up inside its domain, host link inside a node, scale-out across nodes.

    Raises UnsupportedDeployment when a group must span nodes and the GPU has no scale-out fabric, and
    when a TP group would leave its scale-up domain (NVLink / NVSwitch; the node for host-link-only
    GPUs): TP all-reduces run twice per layer and stay inside it, only PP stages (and data-parallel
    replicas) cross the scale-out fabric (issue 13, card 11).
    """
    require_in_domain(gpu, tp, what=f"TP{tp}")

    def link_for(group_gpus: int, what: str) -> Interconnect | None:
        if group_gpus <= 1:
            return None
        if gpu.scale_up is not None and group_gpus <= gpu.scale_up_domain_gpus:
            return catalog.interconnect(gpu.scale_up)
        if group_gpus <= gpu.gpus_per_node:
            return catalog.interconnect(gpu.host_link)
        if gpu.scale_out is None:
            raise UnsupportedDeployment(
                f"{what} of {group_gpus} GPUs exceeds the {gpu.gpus_per_node} GPUs per {gpu.id} node "
                "and the node has no multi-node link"
            )
        return catalog.interconnect(gpu.scale_out)

    tp_link = link_for(tp, f"TP{tp} group")
    pp_link = link_for(tp * pp, f"TP{tp}xPP{pp} replica") if pp > 1 else None
    return Links(tp=tp_link, pp=pp_link)
