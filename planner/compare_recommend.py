"""Which of ``planner compare``'s options to recommend, and why (planner/compare.py's module docstring):
the cheapest feasible option, ties (relative 1e-9) to the simpler one in the order rent_only, buy_only,
hybrid — a hybrid plan that buys nothing is rent_only; in a max_throughput scenario the option serving the
most within the budget; why no plan can buy; ``owned_only`` where that option's plan rents and buys nothing
(the owned GPUs serve the demand)."""

from __future__ import annotations

from planner.catalog.loader import Catalog
from planner.costs import buy_allowed
from planner.readout.result import PlanResult
from planner.scenario import Scenario, merged_sites
from planner.units import months_text, three_digits_text

PREFERENCE = ("rent_only", "buy_only", "hybrid")
"""Among options of equal cost, the simpler one is recommended."""
TIE_REL = 1e-9
SERVED_TIE_REL = 1e-6
"""max_throughput options serving output tokens this close (relative) serve as much: the cheaper is recommended."""


def recommend(options: dict[str, PlanResult]) -> tuple[str | None, str]:
    """The cheapest feasible option (ties to the simpler one, a hybrid that buys nothing is rent-only) and why;
    in a max_throughput scenario (each option the most its budget serves) the one that serves the most
    (:func:`_recommend_served`)."""
    feasible = {n: r.total_cost_usd for n, r in options.items() if r.feasible}
    if not feasible:
        return None, "no option has a plan"
    if all(getattr(options[n], "served_scale", None) is not None for n in feasible):  # (test doubles may lack it)
        return _recommend_served(options, feasible)
    return _recommend_cost(options, feasible)


def _output_tokens(result: PlanResult) -> float:
    return result.ledger.output_tokens if result.ledger is not None else 0.0


def _served_words(result: PlanResult, what: str = "") -> str:
    """'1.13×{what} (1,110,252 M output tokens, $897,474)', with 'from month 3' when the scale holds only
    after the first delivery."""
    since = f" from month {result.served_from_month:g}" if result.served_from_month else ""
    return (
        f"{three_digits_text(result.served_scale or 0)}×{what}{since} ({_output_tokens(result) / 1e6:,.0f} M output tokens, "
        f"${result.total_cost_usd:,.0f})"
    )


def _recommend_served(options: dict[str, PlanResult], feasible: dict[str, float]) -> tuple[str, str]:
    """max_throughput: every option is the most its budget serves, so the answer is the option that serves
    the most — by output tokens served over the horizon (∝ the served scale when each serves it from month
    0; a buy-only plan serves nothing before its first delivery) — and among those serving as much
    (relative 1e-6) the cheapest, as :func:`_recommend_cost` picks it. Ranking by cost alone recommended
    buy_only serving 0.888× from month 3 over hybrid serving 1.13× from month 0 (buy_vs_rent with a $900,000
    budget) because it was $8,545 cheaper within the same budget."""
    tokens = {n: _output_tokens(options[n]) for n in feasible}
    top = max(tokens.values())
    most = {n: c for n, c in feasible.items() if tokens[n] >= top * (1 - SERVED_TIE_REL)}
    best, reason = _recommend_cost(options, most)
    assert best is not None
    if len(most) == 1 == len(feasible):
        return best, reason
    tied = [n for n in PREFERENCE if n in most]
    if len(tied) == len(feasible):
        scale = f"{three_digits_text(options[best].served_scale or 0)}× the stated demand"
        return best, f"{' and '.join(tied)} serve as much within the budget, {scale}: {reason}"
    lead = f"{best} serves the most within the budget: {_served_words(options[best], ' the stated demand')}"
    if len(tied) > 1:
        lead += f" — {reason}"
    rest = sorted((n for n in feasible if n not in most), key=lambda n: -tokens[n])
    return best, "; ".join([lead, *(f"{n} {_served_words(options[n])}" for n in rest)])


def _recommend_cost(options: dict[str, PlanResult], feasible: dict[str, float]) -> tuple[str | None, str]:
    """The cheapest of ``feasible`` (option → total cost), ties to the simpler one, and why."""
    low = min(feasible.values())
    best = next(n for n in PREFERENCE if n in feasible and feasible[n] <= low + abs(low) * TIE_REL)
    if best == "hybrid" and options["hybrid"].capex_usd <= 0 and "rent_only" in feasible:
        best = "rent_only"
    others = [n for n in PREFERENCE if n in feasible and n != best]
    if not others:
        return best, f"{best} is the only option with a plan"
    runner_up = min(others, key=lambda n: feasible[n])
    saving = feasible[runner_up] - feasible[best]
    if saving < -abs(feasible[best]) * TIE_REL:  # a cheaper hybrid that buys nothing (a time-limited solve)
        return best, (
            f"{best}: the cheapest plan, {runner_up} at ${feasible[runner_up]:,.0f}, buys nothing "
            f"(${-saving:,.0f} less than the rent_only solve found)"
        )
    if saving <= abs(feasible[best]) * TIE_REL:
        simpler = "it buys nothing" if best == "rent_only" else "it rents nothing"
        return best, f"{best} costs the same as {runner_up} and is simpler ({simpler})"
    return best, (
        f"{best} is cheapest: ${feasible[best]:,.0f} over the horizon, ${saving:,.0f} "
        f"({saving / feasible[runner_up]:.1%}) less than {runner_up}"
    )


def owned_only(result: PlanResult) -> bool:
    """The plan rents and buys nothing: every GPU it uses is owned (inventory or edge devices)."""
    return result.feasible and all(line.procurement == "owned" for line in result.supply)


OWNED_ONLY = "owned_only"
"""The recommendation when the recommended option's plan rents and buys nothing (:func:`owned_only`): keep to
the owned GPUs. It names no option (no option row is one): 'rent_only' there told the user to rent a fleet
whose plan rents nothing, in a scenario (``procurement: [owned]``) that may not rent at all."""


def owned_reason(options: dict[str, PlanResult], picked: str) -> str:
    """Why :data:`OWNED_ONLY`: what the owned GPUs serve, at what cost (``picked``: the option the cost or
    served-most rule chose), and which options plan them alone — e.g. 'nothing to rent or buy: the owned GPUs
    serve the demand for $2,251 over 12 months (every option plans them alone)'."""
    best = options[picked]
    scale = best.served_scale
    what = "the demand" if scale is None else f"{three_digits_text(scale)}× the stated demand"
    alone = [n for n in PREFERENCE if n in options and owned_only(options[n])]
    others = [n for n in PREFERENCE if n in options and n not in alone]
    which = "every option plans them alone" if not others else f"{' and '.join(alone)} plan them alone"
    return (
        f"nothing to rent or buy: the owned GPUs serve {what} for ${best.total_cost_usd:,.0f} over "
        f"{months_text(best.scenario.horizon_months)} ({which})"
    )


def buying_blocker(catalog: Catalog, scenario: Scenario) -> str | None:
    """Why no plan can buy in ``scenario`` (None when buying is possible): buying needs a datacenter site
    among the workloads' sites, a candidate GPU with a purchase price, and delivery before the horizon."""
    if "buy" not in scenario.procurement:
        return "the scenario's procurement does not include buy"
    sites = merged_sites(catalog, scenario)
    # a workload without sites runs at every cloud site (planner.candidates.workload_sites), never a datacenter
    allowed = {s for w in scenario.workloads for s in (w.sites or ())}
    if not any(buy_allowed(sites[s]) for s in allowed if s in sites):
        return "no site of the workloads is a datacenter (cloud regions rent, edge devices are owned)"
    gpus = [
        catalog.accelerators[g]
        for g in (scenario.hardware.gpus or catalog.accelerators)
        if g in catalog.accelerators
    ]
    buyable = [g for g in gpus if g.purchase is not None and g.placement == "datacenter"]
    if not buyable:
        return "no candidate GPU has a purchase price"
    lead = min(g.purchase.lead_time_months for g in buyable if g.purchase is not None)
    if lead >= scenario.horizon_months:
        return f"the shortest lead time ({lead:g} months) is not inside the {scenario.horizon_months}-month horizon"
    return None


VERB = {"rent": "renting", "buy": "buying"}


def outside_procurement(scenario: Scenario, result: PlanResult) -> str:
    """'' or a note for the reason when the recommended plan rents or buys though the scenario's
    ``procurement`` does not list it: compare plans each option with its own procurement, so an owned-only
    scenario (``procurement: [owned]``) its GPUs cannot serve gets renting recommended, which ``planner plan``
    on it may not do (it is infeasible there)."""
    used = {line.procurement for line in result.supply} - {"owned"} - set(scenario.procurement)
    if not used:
        return ""
    listed = ", ".join(scenario.procurement)
    what = " or ".join(VERB.get(u, u) for u in sorted(used, reverse=True))
    return (
        f" — beyond the scenario's procurement [{listed}], which allows no {what} (planner plan keeps to it;"
        " compare plans each option with its own)"
    )


def settle(
    scenario: Scenario, options: dict[str, PlanResult], recommendation: str | None, reason: str
) -> tuple[str | None, str]:
    """The recommendation and reason as compare states them: :data:`OWNED_ONLY` (:func:`owned_reason`) where
    the recommended option's plan rents and buys nothing, else the option with :func:`outside_procurement`'s
    note on its reason."""
    if recommendation is None:
        return None, reason
    if owned_only(options[recommendation]):
        return OWNED_ONLY, owned_reason(options, recommendation)
    return recommendation, reason + outside_procurement(scenario, options[recommendation])
