"""An alternative's record — the best plan with only one GPU type or one site — and how it ranks against
the chosen plan (:func:`rank`: its cost delta and why it lost)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from planner.optimize.served_scale import serves_less

TIE_REL = 1e-6
"""Relative cost difference up to which an alternative ties with the plan."""


@dataclass(frozen=True)
class Alternative:
    """The best plan with only one GPU type (``kind`` 'gpu') or one site (``kind`` 'site')."""

    kind: str
    value: str
    status: str
    lost_because: str
    total_cost_usd: float | None = None
    cost_delta_usd: float | None = None
    cost_usd_per_month: float | None = None
    max_tpot_ms: float | None = None
    """Largest predicted TPOT over its deployments (None when infeasible)."""
    max_ttft_ms: float | None = None
    served_scale: float | None = None
    """max_throughput: the largest served fraction of the stated demand with only this GPU type or site (its
    cost is the least that serves it); None for min-cost scenarios."""

    def to_json(self) -> dict[str, Any]:
        """``{"kind": "gpu", "gpu": "h100_sxm", ...}`` as in ``planner plan --json``."""
        out: dict[str, Any] = {
            "kind": self.kind,
            self.kind: self.value,
            "status": self.status,
            "total_cost_usd": self.total_cost_usd,
            "cost_delta_usd": self.cost_delta_usd,
            "max_tpot_ms": self.max_tpot_ms,
            "max_ttft_ms": self.max_ttft_ms,
            "lost_because": self.lost_because,
        }
        if self.cost_usd_per_month is not None:
            out["cost_usd_per_month"] = self.cost_usd_per_month
        if self.served_scale is not None:
            out["served_scale"] = self.served_scale
        return out


def rank(
    items: list[Alternative],
    best_cost_usd: float,
    plan_uses: dict[str, set[str]],
    served_scale: float | None = None,
) -> list[Alternative]:
    """Fill each solved alternative's cost delta against the plan (``best_cost_usd``) and why it lost:
    "chosen" when it is the plan (the plan uses only its GPU type / site), "tie" when it costs the same
    (within :data:`TIE_REL`), else how much more it costs. A max_throughput plan (``served_scale``: the
    fraction of the stated demand it serves) ranks on the served fraction first: an alternative serving less
    lost on that, whatever it costs."""
    objective = "min cost" if served_scale is None else "max throughput, then min cost"
    out = []
    for a in items:
        if a.total_cost_usd is None:
            out.append(a)
            continue
        delta = a.total_cost_usd - best_cost_usd
        tie = abs(delta) <= TIE_REL * max(1.0, best_cost_usd)
        if tie:
            delta = 0.0  # a tie costs nothing more (not the rounding residue, e.g. -7e-12 shown as "-0")
        if serves_less(a.served_scale, served_scale):
            assert a.served_scale is not None and served_scale is not None  # serves_less: both known
            why = (
                f"serves {a.served_scale:.3g}× the stated demand, the plan {served_scale:.3g}× "
                "(objective: max throughput)"
            )
        elif tie:
            why = "chosen" if plan_uses.get(a.kind) == {a.value} else "tie: same cost as the plan"
        else:
            why = f"costs ${delta:,.0f} more over the horizon (objective: {objective})"
        out.append(dataclasses.replace(a, cost_delta_usd=delta, lost_because=why))
    return out
