"""The relaxation that removes a workload's candidate-level cause of infeasibility (planner.optimize.explain):
for a reason none of its configurations can run, and for requests longer than its models' context windows."""

from __future__ import annotations

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
    for phrase, relaxation in CANNOT_RUN_RELAXATIONS:
        if phrase in miss:
            return relaxation.format(w=workload)
    return "allow a TP/PP degree or GPU that the reason above permits"


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
"""The change that lets a buy-only scenario rent (supply_relaxation, bridge_relaxation)."""
BUY_ONLY_OPTION_RENTS = " (renting instead: the rent_only and hybrid options)"
"""What compare's buy_only option says in place of ADD_RENT: rent is left out of that option by construction."""


def supply_relaxation(ctx: BuildContext, workload: str, buy_only: bool) -> str:
    """Relaxation of a workload with no supply option at its sites, naming the sites that would have one."""
    datacenters = _sites_of_kind(ctx, "datacenter")
    where = f" ({datacenters}) to {workload}.sites" if datacenters else ""
    return f"{ADD_RENT + ', ' if buy_only else ''}add a datacenter site{where} or add inventory"


def rent_relaxation(ctx: BuildContext, workload: str) -> str:
    """How a workload whose only supply is bought could rent: at a cloud site of its own or one added to its
    sites, with rent added to procurement where it is not ("add rent to procurement and rent at us_east")."""
    w = next(x for x in ctx.scenario.workloads if x.name == workload)
    own = [site.id for site in workload_sites(w, ctx.sites) if site.kind == "cloud"]
    clouds = _sites_of_kind(ctx, "cloud")
    where = f"at {', '.join(own)}" if own else f"at a cloud site added to {workload}.sites ({clouds})"
    rent = "rent" if "rent" in ctx.scenario.procurement else f"{ADD_RENT} and rent"
    return f"{rent} {where}"


def bridge_relaxation(ctx: BuildContext, workload: str, first_month: float) -> str:
    """Relaxation of a workload whose only supply is bought and arrives at ``first_month``: rent until then
    (:func:`rent_relaxation`), or own GPUs."""
    return f"{rent_relaxation(ctx, workload)} until month {first_month:g}, or add inventory"


def buy_only_option_relaxation(relaxation: str) -> str:
    """The relaxation of ``planner compare``'s buy_only option, which leaves rent out by construction
    whatever the scenario's procurement says: "add rent to procurement" is no change to the scenario there
    but another option, so it is named as one. "add rent to procurement, add a datacenter site (dc1) to
    chat.sites or add inventory" → "add a datacenter site (dc1) to chat.sites or add inventory (renting
    instead: the rent_only and hybrid options)"; "add rent to procurement and rent at us_east until month 2, or
    add inventory" → "add inventory, or rent at us_east until month 2 (the hybrid option)"; "raise
    budget.capex_usd to N or add rent to procurement and rent at us_east" → "raise budget.capex_usd to N (or
    rent at us_east: the rent_only and hybrid options)"."""
    if relaxation.startswith(f"{ADD_RENT}, "):
        return relaxation.removeprefix(f"{ADD_RENT}, ") + BUY_ONLY_OPTION_RENTS
    if relaxation.startswith(f"{ADD_RENT} and rent "):
        bridge, _, other = relaxation.removeprefix(f"{ADD_RENT} and ").rpartition(", or ")
        return f"{other}, or {bridge} (the hybrid option)"
    head, found, rent = relaxation.partition(f" or {ADD_RENT} and ")
    if found:
        return f"{head} (or {rent}: the rent_only and hybrid options)"
    return relaxation
