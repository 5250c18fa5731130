"""Constraint families of the planning MILP, one module each (see ../shared/design/formulation.md).

Each module exposes ``add_<family>(ctx)``, with the inequality in its docstring. ``FAMILIES`` is the
explicit order in which :func:`planner.optimize.build.build_problem` adds them, each with its role:

- ``forbid``: rows that only force a candidate's replicas or flow to zero (their keys start with the
  candidate id), so the decomposition can probe them once for the candidates they exclude;
- ``capacity``: what one deployment can serve (operating points of its latency curve);
- ``coupling``: rows that tie decisions of several candidates or periods together (demand coverage,
  reserved terms, persistent capacity);
- ``resource``: limits of shared resources — GPUs, sites, power, money — that explain infeasibility;
- ``cost``: rows that only define cost terms (volume discounts).

Reports ask the roles (binding rows are the coupling and resource rows), never a list of names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from constraints.budget_max import add_budget_max
from constraints.commitments import add_commitments
from constraints.demand_coverage import add_demand_coverage
from constraints.gpu_floor import add_gpu_floor
from constraints.gpu_supply import add_gpu_supply
from constraints.instance_packing import add_instance_packing
from constraints.memory_fit import add_memory_fit
from constraints.node_packing import add_node_packing
from constraints.pd_flow import add_pd_flow
from constraints.placement_rtt import add_placement_rtt
from constraints.price_tiers import add_price_tiers
from constraints.quantization_policy import add_quantization_policy
from constraints.redundancy import add_redundancy
from constraints.site_capacity import add_site_capacity
from constraints.slo_operating_point import add_slo_operating_point
from constraints.spot_share import add_spot_share
from constraints.workload_cost_floor import add_workload_cost_floor
from planner.problem.context import BuildContext

Role = Literal["forbid", "capacity", "resource", "coupling", "cost"]
ROLES: tuple[Role, ...] = ("forbid", "capacity", "resource", "coupling", "cost")


@dataclass(frozen=True)
class Family:
    """One constraint family: its name (the row-name prefix), its builder and its role."""

    name: str
    add: Callable[[BuildContext], None]
    role: Role


FAMILIES: tuple[Family, ...] = (
    Family("demand_coverage", add_demand_coverage, "coupling"),
    Family("pd_flow", add_pd_flow, "coupling"),
    Family("slo_operating_point", add_slo_operating_point, "capacity"),
    Family("gpu_floor", add_gpu_floor, "capacity"),
    Family("memory_fit", add_memory_fit, "forbid"),
    Family("node_packing", add_node_packing, "forbid"),
    Family("gpu_supply", add_gpu_supply, "resource"),
    Family("instance_packing", add_instance_packing, "resource"),
    Family("site_capacity", add_site_capacity, "resource"),
    Family("placement_rtt", add_placement_rtt, "forbid"),
    Family("quantization_policy", add_quantization_policy, "forbid"),
    Family("commitments", add_commitments, "coupling"),
    Family("price_tiers", add_price_tiers, "cost"),
    Family("budget_max", add_budget_max, "resource"),
    Family("spot_share", add_spot_share, "resource"),
    Family("redundancy", add_redundancy, "coupling"),
    Family("workload_cost_floor", add_workload_cost_floor, "capacity"),
)


def families_with(*roles: Role) -> tuple[Family, ...]:
    """The families of ``roles``, in build order."""
    return tuple(f for f in FAMILIES if f.role in roles)


def names_with(*roles: Role) -> frozenset[str]:
    """Names of the families of ``roles``."""
    return frozenset(f.name for f in families_with(*roles))


__all__ = ["FAMILIES", "ROLES", "Family", "Role", "families_with", "names_with"]
