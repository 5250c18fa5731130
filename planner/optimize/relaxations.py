"""The relaxation that removes a workload's candidate-level cause of infeasibility (planner.optimize.explain):
for a reason none of its configurations can run, and for requests longer than its models' context windows."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from planner.candidates import workload_sites
from planner.catalog.loader import Catalog
from planner.context_window import longest_prompt_tokens
from planner.problem.context import BuildContext
from planner.scenario import Workload

CANNOT_RUN_RELAXATIONS = (
    ("needs procurement 'buy' or inventory", "add buy to procurement, or list the GPUs you own there under inventory"),
    (
        "(rent_providers;",
        "add a provider that quotes it to rent_providers, or allow another rental kind (rental_kinds), GPU type or site",
    ),
    (" price for ", "allow another rental kind (rental_kinds), provider (rent_providers), GPU type or site"),
    ("not in hardware.gpus", "add the edge site's GPU types to hardware.gpus, or allow another site"),
    ("devices at edge site", "list the devices installed at the edge site (sites[].devices), or allow another site"),
    ("not available at", "allow a GPU type the site offers (sites[].gpus_available), or another site"),
    ("spans nodes but", "allow a TP×PP that fits one node, or a site with a scale-out fabric"),
    ("quality tier", "raise {w}.max_quality_tier, or allow a format of a lower tier ({w}.quantizations, {w}.kv_dtypes)"),
)
"""(phrase of a candidate's reason, the relaxation that removes it; {w}: the workload) for reasons other than
memory and layout."""


def cannot_run_relaxation(rows: pd.DataFrame, miss: str, workload: str) -> str:
    """The relaxation of a workload none of whose configurations fits or runs, for the reason shown (``miss``):
    more memory per replica when memory is a reason; a supply, site or format change for the reasons of
    :data:`CANNOT_RUN_RELAXATIONS`; else another layout (a TP group leaving the NVLink domain or a TP that
    does not split the attention heads, which larger TP does not cure)."""
    if rows["reason"].astype(str).str.startswith("does not fit").any():
        return "allow larger TP/PP degrees, a 4-bit format or GPUs with more memory"
    return reason_relaxation(miss, workload) or "allow a TP/PP degree or GPU that the reason above permits"


def reason_relaxation(miss: str, workload: str) -> str | None:
    """The relaxation of :data:`CANNOT_RUN_RELAXATIONS` whose phrase the reason ``miss`` contains (None: none)."""
    for phrase, relaxation in CANNOT_RUN_RELAXATIONS:
        if phrase in miss:
            return relaxation.format(w=workload)
    return None


def context_relaxation(catalog: Catalog, w: Workload) -> str:
    """The relaxation of a workload whose requests exceed the context window of every model it lists: a
    shorter prompt (the longest its models take with its answer), or a model whose window holds the request
    (the catalog's, smallest first — the nearest to what it serves —, three at most)."""
    need = w.input_tokens + w.output_tokens
    longer = sorted(
        (m for m in catalog.models.values() if m.max_context_tokens >= need), key=lambda m: (m.params_published_b, m.id)
    )
    models = [catalog.models[m] for m in w.models]
    prompt = longest_prompt_tokens(models, output_tokens=w.output_tokens)
    answer = longest_prompt_tokens(models, output_tokens=w.input_tokens)  # the longest answer after its prompt
    shorten = (
        f"shorten {w.name}.input_tokens to {prompt:,}" if prompt >= 1 else f"shorten {w.name}.output_tokens to {answer:,}"
    )
    if not longer:
        return f"{shorten}: no catalog model has a context window of {need:,} tokens"
    names = ", ".join(f"{m.id} ({m.max_context_tokens:,})" for m in longer[:3])
    return f"{shorten}, or list a model whose context window holds {need:,} tokens: {names}"


def _sites_of_kind(ctx: BuildContext, kind: str) -> str:
    """The scenario's sites of ``kind`` ('cloud', 'datacenter') in catalog order, four at most: 'us_east, us_west, …'."""
    names = [name for name, site in ctx.sites.items() if site.kind == kind]
    return ", ".join(names[:4]) + (", …" if len(names) > 4 else "")


ADD_RENT = "add rent to procurement"
"""The change that lets a buy-only scenario rent (supply_relaxation, bridge_relaxation, capex_relaxation)."""
BUY_ONLY_OPTION_RENTS = " (renting instead: the rent_only and hybrid options)"
"""What compare's buy_only option says in place of ADD_RENT: rent is left out of that option by construction."""


@dataclass(frozen=True)
class Relaxation:
    """A relaxation as a plan states it (``text``: a change to the scenario) and as ``planner compare``'s buy_only
    option states it (``buy_only_option_text``). That option leaves rent out by construction whatever the
    scenario's procurement says, so "add rent to procurement" is no change there but another option, named as
    one; both wordings are written here, side by side, from the same parts."""

    text: str
    buy_only_option_text: str


def supply_relaxation(ctx: BuildContext, workload: str, buy_only: bool) -> Relaxation:
    """Relaxation of a workload with no supply option at its sites, naming the sites that would have one:
    "add rent to procurement, add a datacenter site (dc1) to chat.sites or add inventory" (buy-only), in
    compare's buy_only option "add a datacenter site (dc1) to chat.sites or add inventory (renting instead: the
    rent_only and hybrid options)"."""
    datacenters = _sites_of_kind(ctx, "datacenter")
    where = f" ({datacenters}) to {workload}.sites" if datacenters else ""
    keep = f"add a datacenter site{where} or add inventory"
    if not buy_only:
        return Relaxation(keep, keep)
    return Relaxation(f"{ADD_RENT}, {keep}", keep + BUY_ONLY_OPTION_RENTS)


def _rent_at(ctx: BuildContext, workload: str) -> tuple[str, bool]:
    """(where a workload whose only supply is bought could rent: "at us_east" at a cloud site of its own, else
    "at a cloud site added to chat.sites (us_east, …)"; whether the scenario's procurement already rents)."""
    w = next(x for x in ctx.scenario.workloads if x.name == workload)
    own = [site.id for site in workload_sites(w, ctx.sites) if site.kind == "cloud"]
    clouds = _sites_of_kind(ctx, "cloud")
    where = f"at {', '.join(own)}" if own else f"at a cloud site added to {workload}.sites ({clouds})"
    return where, "rent" in ctx.scenario.procurement


def rent_relaxation(ctx: BuildContext, workload: str) -> str:
    """How a workload whose only supply is bought could rent: at a cloud site of its own or one added to its
    sites, with rent added to procurement where it is not ("add rent to procurement and rent at us_east")."""
    where, rents = _rent_at(ctx, workload)
    return f"rent {where}" if rents else f"{ADD_RENT} and rent {where}"


def bridge_relaxation(ctx: BuildContext, workload: str, first_month: float) -> Relaxation:
    """Relaxation of a workload whose only supply is bought and arrives at ``first_month``: rent until then
    (:func:`rent_relaxation`), or own GPUs; in compare's buy_only option "add inventory, or rent at us_east until
    month 2 (the hybrid option)"."""
    where, rents = _rent_at(ctx, workload)
    text = f"{rent_relaxation(ctx, workload)} until month {first_month:g}, or add inventory"
    return Relaxation(text, text if rents else f"add inventory, or rent {where} until month {first_month:g} (the hybrid option)")


def capex_relaxation(ctx: BuildContext, workload: str, raise_capex: str) -> Relaxation:
    """Relaxation of a capex budget below one node of every purchase a workload has: ``raise_capex`` ("raise
    budget.capex_usd to N") or rent (:func:`rent_relaxation`); in compare's buy_only option "raise
    budget.capex_usd to N (or rent at us_east: the rent_only and hybrid options)"."""
    where, rents = _rent_at(ctx, workload)
    text = f"{raise_capex} or {rent_relaxation(ctx, workload)}"
    return Relaxation(text, text if rents else f"{raise_capex} (or rent {where}: the rent_only and hybrid options)")
