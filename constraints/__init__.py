"""Constraint families of the planning MILP, one module each (see ../shared/design/formulation.md).

Each module exposes ``add_<family>(ctx)``, with the inequality in its docstring. ``FAMILIES`` is the
explicit order in which :func:`planner.solve.solve_plan` adds them.
"""

from __future__ import annotations

from collections.abc import Callable

from constraints.budget_max import add_budget_max
from constraints.commitments import add_commitments
from constraints.demand_coverage import add_demand_coverage
from constraints.gpu_supply import add_gpu_supply
from constraints.memory_fit import add_memory_fit
from constraints.node_packing import add_node_packing
from constraints.placement_rtt import add_placement_rtt
from constraints.price_tiers import add_price_tiers
from constraints.quantization_policy import add_quantization_policy
from constraints.site_capacity import add_site_capacity
from constraints.slo_operating_point import add_slo_operating_point
from planner.model import BuildContext

Family = Callable[[BuildContext], None]

FAMILIES: tuple[tuple[str, Family], ...] = (
    ("demand_coverage", add_demand_coverage),
    ("slo_operating_point", add_slo_operating_point),
    ("memory_fit", add_memory_fit),
    ("node_packing", add_node_packing),
    ("gpu_supply", add_gpu_supply),
    ("site_capacity", add_site_capacity),
    ("placement_rtt", add_placement_rtt),
    ("quantization_policy", add_quantization_policy),
    ("commitments", add_commitments),
    ("price_tiers", add_price_tiers),
    ("budget_max", add_budget_max),
)

__all__ = ["FAMILIES", "Family"]
