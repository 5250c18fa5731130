"""GPU-type alternatives solved while the plan is: the plan's built model restricted to each GPU type
(planner.optimize.restricted_model) in a forked child (planner.forked.Background), beside the plan's solve.

A restriction of the built model does not depend on the plan's solution except where the plan answers it
without a solve (a plan that deploys only GPU type X is R_X's optimum): the child solves every GPU type's
restriction as :meth:`PlanModel.solve` does with no plan known, and once the plan is solved
:func:`planner.optimize.alternatives.alternatives` takes those answers wherever the plan does not answer the
restriction itself (``PlanModel.early``). Each answer is the one the serial loop computes — the same HiGHS
model, options and node limit —, so the alternatives do not depend on whether or when the child ran.

Started only where the alternatives would be solved on the plan's model in forked workers anyway: HiGHS,
min cost, no ``--time-limit`` (a deadline shares its time between the solves), a plan small enough for the
exact MILP, and two workers (planner.forked.workers_for).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from planner.candidates import CandidateTable
from planner.forked import Background, workers_for
from planner.optimize.build import build_problem
from planner.optimize.components import whole
from planner.optimize.decompose import is_large
from planner.optimize.restricted_model import Outcome, PlanModel
from planner.optimize.solver import Solution, SolverName
from planner.problem.context import BuildContext

EARLY_MIN_CANDIDATES = 200
"""Kept candidates from which a plan's GPU alternatives start while it is solved: below, the plan and its
alternatives take well under 0.2 s and a fork (~0.03-0.06 s) would cost more than it saves."""

MAX_NODES = 2000
"""Branch-and-bound nodes of each alternative's exact MILP (planner.optimize.alternatives.ALTERNATIVE_MAX_NODES
is this number: the restrictions solved here are the ones it would solve)."""


@dataclass
class EarlyAlternatives:
    """The plan's context, built here when started (its build seconds), and the GPU types' restrictions
    being solved; a context manager that stops the child on leaving."""

    ctx: BuildContext
    build_seconds: float | None = None
    """None: not built here (nothing started)."""
    outcomes: Background[dict[tuple[str, str], Outcome | None]] | None = None
    """None: nothing started (or the built problem is not one HiGHS model, which no restriction is solved on)."""

    @property
    def built(self) -> BuildContext | None:
        """The plan's context when built here (planner.optimize.solve's ``built``), else None."""
        return None if self.build_seconds is None else self.ctx

    def solution(self, sol: Solution) -> Solution:
        """``sol`` with the build seconds spent here (solve() of a built context counts none)."""
        return sol if self.build_seconds is None else dataclasses.replace(sol, build_seconds=self.build_seconds)

    def take(self, model: PlanModel | None, ctx: BuildContext) -> None:
        """Hand the answers to ``model`` (the solved plan's model of ``ctx``); stop the child when they are not
        wanted (no model, or the plan was solved on another context, e.g. by the large-problem method)."""
        if model is None or ctx is not self.ctx:
            self.cancel()
        elif self.outcomes is not None:
            model.early = self.outcomes.result()

    def solving(self, model: PlanModel | None, ctx: BuildContext) -> bool:
        """True while a child solves the answers that :meth:`take` would hand to ``model`` (the site
        alternatives can then start on the core the plan's solve has freed)."""
        return model is not None and ctx is self.ctx and self.outcomes is not None and self.outcomes.forked

    def cancel(self) -> None:
        """Stop the child (the plan is infeasible, or its alternatives are not asked)."""
        if self.outcomes is not None:
            self.outcomes.cancel()

    def __enter__(self) -> EarlyAlternatives:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


def _restrictions(ctx: BuildContext, table: CandidateTable) -> dict[tuple[str, str], Outcome | None]:
    """Every SLO-feasible GPU type's restriction of ``ctx``'s built model, solved with no plan known."""
    model = PlanModel(ctx, None, table)
    return {
        ("gpu", gpu): model.solve("gpu", gpu, time_limit_s=None, max_nodes=MAX_NODES)
        for gpu in sorted(model.feasible["gpu"])
    }


def start(
    ctx: BuildContext, table: CandidateTable, solver: SolverName, *, time_limit_s: float | None, wanted: bool
) -> EarlyAlternatives:
    """Build the unbuilt plan context ``ctx`` and start solving its GPU types' restrictions in a forked child;
    nothing built or started where the alternatives are not ``wanted`` or the module docstring's conditions
    do not hold."""
    eligible = (
        wanted
        and solver == "highs"
        and time_limit_s is None
        and ctx.scenario.objective == "min_cost"
        and ctx.scale_floor is None
        and not ctx.elastic
        and len(ctx.cands) >= EARLY_MIN_CANDIDATES
        and workers_for(2) > 1
        and not is_large(ctx)
    )
    if not eligible:
        return EarlyAlternatives(ctx)
    began = time.perf_counter()
    build_problem(ctx)
    build_s = time.perf_counter() - began
    if not ctx.row_constraints or whole(ctx) is None:  # not one HiGHS model: PlanModel.of refuses it
        return EarlyAlternatives(ctx, build_s)
    return EarlyAlternatives(ctx, build_s, Background(lambda: _restrictions(ctx, table)))
