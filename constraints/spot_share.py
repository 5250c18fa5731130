"""Spot share: spot capacity carries at most a fraction of the load (``economics.max_spot_frac``).

    Σ_{o spot} e_o · unit_o · units[o, t]  ≤  f · Σ_k gpus_k · Σ_j n_rep[k, j, t]        ∀ t

Notation: e_o the usable fraction of spot option o, unit_o its GPUs per node, units[o, t] the spot nodes
rented in slice t; gpus_k the GPUs of one replica of candidate k, n_rep its replicas per operating point;
f = max_spot_frac. Replicas are sized to the load they carry, so the share of the serving GPUs that spot
may supply bounds the share of the load it carries (a fleet-wide cap per slice; spot nodes rented but left
idle count against it too, so the cap is never loosened). No rows when f = 1 (the default) or when no spot
option exists: the cap raises cost only where it binds.
"""

from __future__ import annotations

import pulp

from planner.problem.context import BuildContext
from planner.problem.supply import SupplyKind


def add_spot_share(ctx: BuildContext) -> None:
    """Add one spot-share row per slice when ``max_spot_frac`` < 1 and spot can be rented."""
    frac = ctx.scenario.economics.max_spot_frac
    spot = [i for i, o in enumerate(ctx.supply) if o.kind is SupplyKind.RENT_SPOT]
    if frac >= 1 or not spot:
        return
    gpus_of = {int(k): float(g) for k, g in ctx.cands["gpus"].items()}
    for t in ctx.periods:
        on_spot = pulp.lpSum(
            ctx.supply[i].effective_gpus_frac * ctx.supply[i].unit_gpus * ctx.variables["units"][(i, t)]
            for i in spot
        )
        serving = pulp.lpSum(gpus * ctx.replicas(k, t) for k, gpus in gpus_of.items())
        ctx.add_row("spot_share", (t,), on_spot <= frac * serving)
