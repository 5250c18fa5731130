"""Why a budget serves none of the demand (objective max_throughput, no served scale > 0): the cheapest plan
that serves any of it, against each budget line.

max_throughput serves one common fraction s of every workload's demand, so any s > 0 needs at least one
replica of every workload in every slice with demand. The cheapest such plan is the min-cost plan of the
demand scaled by :data:`TINY_SCALE` (one replica each; the replica is far from full, so the scale itself
does not change the choice), with the budget lifted. A budget line below that plan's figure is a cause:

    total_usd < C_total,   opex_usd_per_month < max_t opex_t,   capex_usd < C_capex

(the plan minimises the total; a line it exceeds may still be met by a dearer mix, so the sentence says
"the cheapest plan that serves any demand" and gives its figures). planner/plan.py asks here only when
planner.optimize.explain.explain_supply found no cause in the supply options alone.
"""

from __future__ import annotations

import math

from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.optimize.explain import EXPLAIN_MAX_NODES, Explanation
from planner.optimize.solver import SolverName, solve_context
from planner.problem.context import build_context
from planner.readout.budget import busiest_opex_usd_per_month
from planner.readout.read import cost_ledger, schedule
from planner.scenario import Scenario

TINY_SCALE = 1e-6
"""Demand factor of the 'serves any of it' plan: one replica per workload and slice with demand."""

GENERIC = Explanation(
    workload=None, requirement="budget", message="no plan fits the budget", relaxation="raise the budget"
)


def _tiny(scenario: Scenario) -> Scenario:
    """``scenario`` as min_cost without a budget, every workload's demand × :data:`TINY_SCALE`."""
    workloads = []
    for w in scenario.workloads:
        rate = w.requests_per_s
        scaled = [v * TINY_SCALE for v in rate] if isinstance(rate, list) else rate * TINY_SCALE
        workloads.append(w.model_copy(update={"requests_per_s": scaled}))
    return scenario.model_copy(update={"objective": "min_cost", "budget": None, "workloads": workloads})


def budget_floor_explanation(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, solver: SolverName
) -> Explanation:
    """The budget lines below the cheapest plan that serves any of the demand, with that plan's figures;
    :data:`GENERIC` when none is (or that plan cannot be found)."""
    budget = scenario.budget
    ctx = build_context(catalog, _tiny(scenario), table)
    sol = solve_context(ctx, solver=solver, max_nodes=EXPLAIN_MAX_NODES)
    if budget is None or sol.status != "optimal":
        return GENERIC
    ledger = cost_ledger(ctx, sol, schedule(ctx, sol))
    total, capex = ledger.total_usd, ledger.capex_usd
    opex = busiest_opex_usd_per_month(ledger)
    over = []
    raise_to = []
    if budget.total_usd is not None and budget.total_usd < total:
        over.append(f"the total budget ${budget.total_usd:,.0f} is below ${total:,.0f} over the horizon")
        raise_to.append(f"{budget.line('total_usd')} to ${math.ceil(total - 1e-6):,}")
    if budget.opex_usd_per_month is not None and budget.opex_usd_per_month < opex:
        over.append(f"the opex budget ${budget.opex_usd_per_month:,.0f}/month is below ${opex:,.0f}/month")
        raise_to.append(f"{budget.line('opex_usd_per_month')} to ${math.ceil(opex - 1e-6):,}")
    if budget.capex_usd is not None and budget.capex_usd < capex:
        over.append(f"the capex budget ${budget.capex_usd:,.0f} is below ${capex:,.0f}")
        raise_to.append(f"{budget.line('capex_usd')} to ${math.ceil(capex - 1e-6):,}")
    if not over:
        return GENERIC
    return Explanation(
        workload=None,
        requirement="budget",
        message=(
            "no plan serves any of the demand within the budget: the cheapest that does (one replica of every "
            f"workload) costs ${total:,.0f} over the horizon, ${opex:,.0f}/month at most, ${capex:,.0f} capex; "
            + "; ".join(over)
        ),
        relaxation="raise " + ", or ".join(raise_to),
    )
