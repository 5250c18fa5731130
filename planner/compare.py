"""`planner compare`: buy-only vs rent-only vs hybrid for one scenario, with crossover and flip points.

Each option is a full plan (same SLOs, same candidates) with the procurement restricted. Reported per
option, from its plan's cost ledger (planner.readout.ledger): horizon TCO, capex, average opex per month,
cost per million output tokens and the monthly cash flow (capex in its order month, recurring costs while
in use, the resale of the remaining book value in the last month).

Recommendation: the cheapest feasible option, ties (relative 1e-9) to the simpler one in the order rent_only,
buy_only, hybrid — a hybrid plan that buys nothing is rent_only; one renting nothing either is ``owned_only``
(planner.compare_recommend.OWNED_ONLY). When buying is impossible (no datacenter site among the workloads'
sites, no candidate GPU with a purchase price, or every lead time at or beyond the horizon) the recommendation
is rent_only and the reason says why. In a max_throughput scenario each option is the most its budget serves:
the recommendation is the one serving the most output tokens (then the cheapest), no cost flip point searched.

Flip points — where "buy" (hybrid or buy-only) and "rent only" swap — for three multipliers: every rental
price (rent_price_scale), every purchase price (purchase_price_scale) and every workload's demand.
The buy/rent decision at a multiplier m compares C_rent(m), the cheapest rent-only horizon cost, with
C_hyb(m), the cheapest plan allowed to buy. For the rent price the rent-only plan does not change, so
C_rent(m) = m · C_rent(1) (no solve), and a plan P found by the hybrid solve at m costs
a_P + m · b_P (a_P its non-rent cost, b_P its rent at scale 1): buying wins for every
m > a_P / (C_rent(1) − b_P). Starting from the base plan, each step solves just below the current
crossing; a cheaper buying plan there moves the crossing down, none proves it (a few solves, exact).
Purchase price and demand use a geometric bisection on [lo, hi] (BISECTION_STEPS steps).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from planner.catalog.loader import Catalog
from planner.compare_breakeven import fleet_breakeven, rented_at_once, reserved_in_plan
from planner.compare_recommend import OWNED_ONLY, recommend, settle
from planner.compare_recommend import PREFERENCE as PREFERENCE  # re-exported: the compare API
from planner.compare_recommend import TIE_REL as TIE_REL
from planner.compare_recommend import buying_blocker as buying_blocker
from planner.costs import rent_allowed
from planner.demand import demand_per_period
from planner.flip_probe import buying_surely_cheaper, cheapest_buying_plan
from planner.optimize.reuse import shared_solves
from planner.optimize.solver import SolverName
from planner.plan import plan
from planner.readout.comparison import Comparison
from planner.readout.result import PlanResult
from planner.scenario import Scenario, Workload, merged_sites
from planner.units import three_digits_text

OPTIONS: dict[str, list[str]] = {"buy_only": ["buy"], "rent_only": ["rent"], "hybrid": ["rent", "buy"]}
BISECTION_STEPS = 6
RANGES = {"rent_price_scale": (0.25, 4.0), "purchase_price_scale": (0.25, 4.0), "demand_scale": (1 / 16, 4.0)}
"""Multiplier ranges searched for each flip parameter."""
FLIP_WHAT = {"rent_price_scale": "rent", "purchase_price_scale": "purchase price", "demand_scale": "demand"}
CHOICE = {"rent_only": "renting", "buy": "buying"}
PRICES = {"rent_price_scale": ("rent_only", "buy"), "purchase_price_scale": ("buy", "rent_only")}
"""Price multipliers with an exact flip from cost lines: (wins below the flip, wins above it)."""
FLIP_STEPS = 8
"""At most this many hybrid solves for a price flip (each moves the crossing on)."""

Progress = Callable[[str], None]
MAX_THROUGHPUT_NO_FLIP = (
    "no flip point: each option is the most its budget serves (objective max_throughput), and the flip points "
    "compare the costs of serving the stated demand — drop the objective and the budget to see them"
)
"""The flip searches compare min-cost plans; a max_throughput option's solve maximises what it serves."""


def _quiet(_: str) -> None:
    return None


def _with(scenario: Scenario, procurement: list[str]) -> Scenario:
    return scenario.model_copy(update={"procurement": procurement})


def scaled_demand(scenario: Scenario, factor: float) -> Scenario:
    """The scenario with every workload's requests/s (a number or each period's value) × ``factor``."""
    workloads = []
    for w in scenario.workloads:
        rate = w.requests_per_s
        scaled = [v * factor for v in rate] if isinstance(rate, list) else rate * factor
        workloads.append(w.model_copy(update={"requests_per_s": scaled}))
    return scenario.model_copy(update={"workloads": workloads})


def _what_if(scenario: Scenario, parameter: str, factor: float) -> Scenario:
    """``scenario`` with one flip parameter at ``factor`` (a price multiplier or the demand level)."""
    if parameter == "demand_scale":
        return scaled_demand(scenario, factor)
    return scenario.model_copy(
        update={"economics": scenario.economics.model_copy(update={parameter: factor})}
    )


_SOLVED: dict[tuple[int, str, str], tuple[Any, Any]] = {}
"""Solutions of this comparison by (catalog, scenario JSON, solver): the flip searches share them."""


def _solve(catalog: Catalog, scenario: Scenario, solver: SolverName) -> tuple[Any, Any]:
    """(solution, context) of the scenario's MILP, solver only (no audit, no readout); solved once."""
    from planner.candidate_cache import candidates_for
    from planner.optimize import solve
    from planner.problem.context import build_context

    key = (id(catalog), scenario.model_dump_json(), solver)
    if key not in _SOLVED:
        _SOLVED[key] = solve(build_context(catalog, scenario, candidates_for(catalog, scenario)), solver, None)
    return _SOLVED[key]


def _cost(catalog: Catalog, scenario: Scenario, solver: SolverName) -> tuple[float | None, dict[str, float]]:
    """Horizon cost of the cheapest plan (None if infeasible) and its cost by category, solver only."""
    sol, _ = _solve(catalog, scenario, solver)
    if sol.status == "infeasible":
        return None, {}
    return sol.cost_usd, dict(sol.costs_usd)


def _recommend(catalog: Catalog, scenario: Scenario, solver: SolverName) -> str | None:
    """'buy' when a plan allowed to buy is strictly cheaper than renting only, else 'rent_only'."""
    rent, _ = _cost(catalog, _with(scenario, ["rent"]), solver)
    if rent is not None and buying_surely_cheaper(catalog, _with(scenario, ["rent", "buy"]), rent * (1 - TIE_REL), solver):
        return "buy"  # what the exact solve below would answer (planner.flip_probe)
    hybrid, _ = _cost(catalog, _with(scenario, ["rent", "buy"]), solver)
    if hybrid is None:
        return None if rent is None else "rent_only"
    return "buy" if rent is None or hybrid < rent * (1 - TIE_REL) else "rent_only"


def priced_usd(ctx: Any, values: dict[str, dict[Any, float]]) -> float:
    """Horizon cost of a fixed plan (its ``bought`` and ``units`` values) at the prices of ``ctx``:
    Σ_buy H_o · bought_o + Σ_other Σ_t months_t · c_o · units_o,t + a reservation's months after the
    horizon (planner.problem.cost_terms.fixed_plan_usd, (2)-(4))."""
    from planner.problem.cost_terms import fixed_plan_usd

    return fixed_plan_usd(ctx, values)


class CostLines:
    """Plans of one procurement as straight lines in a price multiplier m: cost(m) = a + k · m.

    Every price enters the costs linearly, so a fixed plan's cost at m is exact from its cost at m = 1
    and m = 2 (:func:`priced_usd` on contexts built at both)."""

    def __init__(self, catalog: Catalog, scenario: Scenario, parameter: str) -> None:
        from planner.candidate_cache import candidates_for
        from planner.problem.context import build_context

        table = candidates_for(catalog, scenario)
        self.at = [build_context(catalog, _what_if(scenario, parameter, m), table) for m in (1.0, 2.0)]

    def line(self, values: dict[str, dict[Any, float]]) -> tuple[float, float]:
        """(a, k) of the plan with these variable values."""
        one, two = (priced_usd(ctx, values) for ctx in self.at)
        return 2 * one - two, two - one


def _line_flip(
    catalog: Catalog, scenario: Scenario, solver: SolverName, parameter: str, start: float
) -> float | None:
    """The multiplier where the cheapest buying plan's cost line meets the rent-only plan's (buying wins
    at ``start``; it wins below the flip for a purchase price, above it for the rent): a crossing from the
    current buying plan, then one solve just past it — a cheaper buying plan there moves the crossing on,
    none proves it. None when buying wins over the whole range."""
    lo, hi = RANGES[parameter]
    hybrid, rent = _with(scenario, ["rent", "buy"]), _with(scenario, ["rent"])
    rent_sol, _ = _solve(catalog, _what_if(rent, parameter, start), solver)
    buy_sol, _ = _solve(catalog, _what_if(hybrid, parameter, start), solver)
    if rent_sol.status == "infeasible" or buy_sol.status == "infeasible":
        return None
    a_r, k_r = CostLines(catalog, rent, parameter).line(rent_sol.values)
    lines = CostLines(catalog, hybrid, parameter)
    values = buy_sol.values
    crossing = start
    for _ in range(FLIP_STEPS):
        a_p, k_p = lines.line(values)
        if abs(k_p - k_r) <= 1e-12 * max(1.0, abs(k_r)):
            return None
        crossing = (a_r - a_p) / (k_p - k_r)
        if not lo <= crossing <= hi:
            return None
        past = crossing * (1 + 1e-6) if k_p > k_r else crossing * (1 - 1e-6)
        sol = cheapest_buying_plan(catalog, _what_if(hybrid, parameter, past), solver)  # or the hybrid optimum
        sol = sol if sol is not None else _solve(catalog, _what_if(hybrid, parameter, past), solver)[0]
        buys = sol.status != "infeasible" and sum(sol.values.get("bought", {}).values()) > 0.5
        if not buys or sol.cost_usd >= (a_r + k_r * past) * (1 - TIE_REL):
            return crossing
        values = sol.values
    return crossing


Found = tuple[float, str, str, tuple[float, float] | None]
"""(factor, wins below, wins above, the bracket [lo, hi] a bisection left it in; None: exact, from cost lines)."""


def _bisect(catalog: Catalog, scenario: Scenario, solver: SolverName, parameter: str) -> Found | None:
    """Geometric bisection for the multiplier where the buy/rent decision flips: (factor = √(lo·hi), below,
    above, (lo, hi)); after BISECTION_STEPS steps the bracket is (hi/lo of the range)^(1/2^steps) wide
    (demand, 1/16×-4×: ±3.3 %), so the sentence states it. An end where no option has a plan (4× the demand
    beyond what the sites can hold) is replaced by 1× — the decision now — so a flip between the other end
    and 1× is still found (it said "buying wins at every demand level from 0.062× to 4×" where the owned GPUs
    alone serve up to 0.5×)."""
    lo, hi = RANGES[parameter]
    at_lo = _recommend(catalog, _what_if(scenario, parameter, lo), solver)
    at_hi = _recommend(catalog, _what_if(scenario, parameter, hi), solver)
    if (at_lo is None) != (at_hi is None):
        now = _recommend(catalog, _what_if(scenario, parameter, 1.0), solver)
        if at_hi is None:
            hi, at_hi = 1.0, now
        else:
            lo, at_lo = 1.0, now
    if at_lo == at_hi or at_lo is None or at_hi is None:
        return None
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi)
        if _recommend(catalog, _what_if(scenario, parameter, mid), solver) == at_lo:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi), at_lo, at_hi, (lo, hi)


def _flip(
    catalog: Catalog, scenario: Scenario, solver: SolverName, parameter: str, base: str | None
) -> dict[str, Any] | None:
    """The flip point of ``parameter`` by bisection ({parameter, factor, sentence}) or None in range;
    ``base`` is the decision now ('buy' or 'rent_only')."""
    found = _bisect(catalog, scenario, solver, parameter)
    if found is None:
        return None
    factor, below, above, bracket = found
    now = _now(None if base is None else "rent_only" if base == "rent_only" else "buy")
    return {
        "parameter": parameter,
        "factor": factor,
        "sentence": flip_sentence(scenario, parameter, factor, below, above, now, bracket),
    }


def _peak_requests_per_s(scenario: Scenario, w: Workload) -> float:
    """The workload's peak over the horizon as planned (a list's largest value, or the growing rate's)."""
    return max(demand_per_period(w, periods=scenario.periods, period_months=scenario.period_months))


def _now(recommendation: str | None) -> str:
    if recommendation is None:
        return "no option is feasible now"
    if recommendation == OWNED_ONLY:  # no option's name: the owned GPUs serve it all
        return f"now the owned GPUs serve the demand: recommendation {OWNED_ONLY}"
    kind = "renting" if recommendation == "rent_only" else "buying"
    return f"now {kind} wins" + ("" if recommendation == "buy" else f": recommendation {recommendation}")


def flip_sentence(
    scenario: Scenario, parameter: str, factor: float, below: str, above: str, now: str,
    bracket: tuple[float, float] | None = None,
) -> str:
    """The flip point in words, e.g. 'renting wins if the rent falls below 0.90× the catalog price, buying above
    it'; ``bracket``: the interval a bisection left the flip in, stated after the factor ('0.83× (between 0.80×
    and 0.86×)')."""
    below_w, above_w = CHOICE.get(below, below), CHOICE.get(above, above)
    within = "" if bracket is None else f" (between {bracket[0]:.2f}× and {bracket[1]:.2f}×)"
    if parameter == "demand_scale":
        rates = ", ".join(
            f"{w.name} {three_digits_text(factor * _peak_requests_per_s(scenario, w))} req/s"
            for w in scenario.workloads
        )
        return (
            f"{above_w} wins if demand stays above {factor:.2f}×{within} the stated level ({rates} at peak), "
            f"{below_w} below it ({now})"
        )
    return (
        f"{below_w} wins if the {FLIP_WHAT[parameter]} falls below {factor:.2f}×{within} the catalog price, "
        f"{above_w} above it ({now})"
    )


def _no_flip_sentence(parameter: str, decision: str | None, owned: bool = False) -> str:
    """``owned``: the rent-only plan rents nothing (the owned GPUs serve), so 'renting' would name nothing."""
    lo, hi = RANGES[parameter]
    who = "buying nothing (the owned GPUs serve the demand)" if owned else CHOICE.get(decision or "", "neither")
    what = "demand level" if parameter == "demand_scale" else FLIP_WHAT[parameter] + " multiplier"
    return f"{who} wins at every {what} from {lo:.2g}× to {hi:.2g}×"


def _search(
    catalog: Catalog, scenario: Scenario, solver: SolverName, parameter: str, decision: str | None
) -> Found | None:
    """(factor, wins below, wins above, bracket) of one flip parameter, or None when it does not flip in range."""
    if parameter in PRICES and decision == "buy" and not scenario.economics.rent_volume_tiers:
        crossing = _line_flip(catalog, scenario, solver, parameter, 1.0)
        below, above = PRICES[parameter]
        return None if crossing is None else (crossing, below, above, None)
    return _bisect(catalog, scenario, solver, parameter)


def find_flip_points(
    catalog: Catalog,
    scenario: Scenario,
    solver: SolverName,
    options: dict[str, PlanResult],
    recommendation: str | None,
    progress: Progress = _quiet,
) -> list[dict[str, Any]]:
    """Rent price, purchase price and demand flip points (factor None and a sentence when none in range).

    The three searches are independent and run side by side (each solve is deterministic, so the answers
    do not depend on it); the base solves both price searches start from are made first, once."""
    now = _now(recommendation)
    owned = recommendation == OWNED_ONLY  # buying nothing, as renting only: the decision searched is rent_only's
    decision = None if recommendation is None else "rent_only" if owned or recommendation == "rent_only" else "buy"
    if decision == "buy":
        for parameter in PRICES:
            for procurement in (["rent"], ["rent", "buy"]):
                _solve(catalog, _what_if(_with(scenario, procurement), parameter, 1.0), solver)
    flips: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=min(len(FLIP_WHAT), os.cpu_count() or 1)) as pool:
        searches = {p: pool.submit(_search, catalog, scenario, solver, p, decision) for p in FLIP_WHAT}
        for parameter, search in searches.items():
            progress(f"flip point: {FLIP_WHAT[parameter]}")
            found = search.result()
            if found is None:
                flips.append(
                    {"parameter": parameter, "factor": None, "sentence": _no_flip_sentence(parameter, decision, owned)}
                )
                continue
            factor, below, above, bracket = found
            sentence = flip_sentence(scenario, parameter, factor, below, above, now, bracket)
            flips.append({"parameter": parameter, "factor": factor, "sentence": sentence})
    return flips


def compare(
    catalog: Catalog,
    scenario: Scenario,
    *,
    solver: SolverName = "highs",
    flip_points: bool = True,
    progress: Progress = _quiet,
) -> Comparison:
    """Plan the scenario three times (buy only, rent only, hybrid) and derive the comparison."""
    with shared_solves():  # the flip searches re-ask the options' own problems
        return _compare(catalog, scenario, solver=solver, flip_points=flip_points, progress=progress)


def _compare(
    catalog: Catalog, scenario: Scenario, *, solver: SolverName, flip_points: bool, progress: Progress
) -> Comparison:
    _SOLVED.clear()
    blocker = buying_blocker(catalog, _with(scenario, ["rent", "buy"]))
    options = {}
    for name, proc in OPTIONS.items():
        progress(f"planning {name}")
        options[name] = plan(catalog, _with(scenario, proc), solver=solver, with_alternatives=False)
    buy_only = options["buy_only"]  # "add rent to procurement" is another option here, not a scenario change
    buy_only.infeasibility = [
        replace(e, relaxation=e.buy_only_option_relaxation or e.relaxation) for e in buy_only.infeasibility
    ]
    recommendation, reason = recommend(options)
    if blocker is not None and options["rent_only"].feasible:
        recommendation, reason = "rent_only", f"buying is not possible: {blocker}"
    picked, (recommendation, reason) = recommendation, settle(scenario, options, recommendation, reason)
    breakeven, breakeven_flip = None, None
    rent = options["rent_only"]
    if rent.status != "infeasible" and rent.deployments:
        # every rented (GPU, site) with the most GPUs held there at once (compare_breakeven.rented_at_once)
        sites = merged_sites(catalog, scenario)
        held = {
            (g, s): n for (g, s), n in rented_at_once(rent.schedule).items()
            if n > 0 and s in sites and rent_allowed(sites[s])
        }
        if held:
            breakeven, breakeven_flip = fleet_breakeven(
                catalog, [(g, sites[s], max(int(n), 1)) for (g, s), n in sorted(held.items())],
                scenario.rent_providers, horizon_months=scenario.horizon_months,
            )
            if breakeven_flip is not None:  # the whole fleet reserved; the plan may reserve part of it
                breakeven_flip["sentence"] += reserved_in_plan(rent.supply)
    flips: list[dict[str, Any]] = []
    if blocker is not None:
        flips.append(
            {
                "parameter": None,
                "factor": None,
                "sentence": f"no flip point: buying is not possible ({blocker})",
            }
        )
    elif scenario.objective == "max_throughput":
        flips.append({"parameter": None, "factor": None, "sentence": MAX_THROUGHPUT_NO_FLIP})
    elif flip_points and recommendation is not None:
        flips = find_flip_points(catalog, scenario, solver, options, recommendation, progress)
        _SOLVED.clear()
    if breakeven_flip is not None:
        flips.append(breakeven_flip)
    return Comparison(options, recommendation, breakeven, flips, reason, picked)
