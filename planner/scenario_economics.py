"""The money sections of a scenario (planner.scenario re-exports them): spending limits, GPUs already owned,
negotiated rent discounts and the cost-model parameters."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, PrivateAttr, model_validator

from planner.catalog.schema import Id
from planner.limits import MAX_COUNT
from planner.scenario_base import Fraction, Strict, Usd


class Budget(Strict):
    """Spending limits (any subset)."""

    capex_usd: Usd | None = Field(None, description="Most spent on purchases (node prices at order), USD.")
    opex_usd_per_month: Usd | None = Field(
        None, description="Most spent in any month on rent and running costs (power, colocation, ops), USD."
    )
    total_usd: Usd | None = Field(None, description="Most spent over the horizon (the plan's total cost), USD.")
    _option_keys: frozenset[str] = PrivateAttr(default=frozenset())

    @classmethod
    def from_options(cls, stated: Budget | None = None, **limits: float | None) -> Budget:
        """The limits `planner budget` takes as options (--capex-usd, ...) over the scenario's own ``stated``
        budget: an option replaces the line it names, the scenario's other lines still hold (they were
        dropped: a stated opex limit with --capex-usd 100 planned $34M a month). Messages name the option or
        the scenario line each limit came from."""
        given = {k: v for k, v in limits.items() if v is not None}
        budget = cls(**{**(stated.model_dump() if stated is not None else {}), **given})
        budget._option_keys = frozenset(given)
        return budget

    def line(self, key: str) -> str:
        """Where the user states budget line ``key`` ('opex_usd_per_month'): ``budget.opex_usd_per_month`` in
        the scenario, or ``--opex-usd-per-month`` when `planner budget`'s option gave it."""
        return f"--{key.replace('_', '-')}" if key in self._option_keys else f"budget.{key}"


class InventoryItem(Strict):
    """GPUs already owned (sunk cost: only power, colocation and ops are paid)."""

    gpu: Id = Field(description="GPU type (`planner catalog gpus`).")
    count: Annotated[int, Field(ge=1, le=MAX_COUNT)] = Field(description="GPUs of that type owned there.")
    site: Id = Field(description="Site where they are installed (`planner catalog sites`).")


class VolumeTier(Strict):
    """An incremental rent discount: GPUs beyond ``min_gpus`` (of one type, site and rental kind, in one
    period) are billed at (1 − discount_frac) × the quote."""

    min_gpus: Annotated[int, Field(ge=1, le=MAX_COUNT)] = Field(description="GPUs beyond which the discount applies.")
    discount_frac: Annotated[float, Field(gt=0, lt=1)] = Field(
        description="Discount on the quote for those GPUs (0.2 = 20 % off)."
    )


class Economics(Strict):
    """Cost-model parameters (defaults documented; catalog figures supply prices)."""

    lifetime_years: Annotated[float, Field(gt=0, le=50)] | None = Field(
        None, description="Depreciation life; default: the catalog's (4 y)."
    )
    resale_frac: Fraction = Field(
        0.5, description="Residual value at the horizon = book value x resale_frac."
    )
    ops_overhead_frac: Fraction = Field(
        0.1,
        description="Operations cost of bought and owned GPUs as a fraction of their running cost (power + "
        "colocation): running × (1 + this). Edge devices pay depreciation + power, without it.",
    )
    cost_of_capital_frac_per_year: Annotated[float, Field(ge=0, le=1)] = Field(
        0.0, description="Discount rate."
    )
    spot_availability_frac: Fraction = Field(0.8, description="Fraction of spot capacity usable on average.")
    spot_preemption_overhead_frac: Fraction = Field(0.1, description="Work lost to preemption on spot.")
    max_spot_frac: Fraction = Field(1.0, description="Most of the serving GPUs (so of the load) on spot.")
    utilization_frac: Fraction = Field(0.7, description="Average GPU utilization for power draw.")
    rent_price_scale: Annotated[float, Field(gt=0, le=100)] = Field(
        1.0, description="Multiplier on every catalog rental price (what-if)."
    )
    purchase_price_scale: Annotated[float, Field(gt=0, le=100)] = Field(
        1.0, description="Multiplier on every catalog purchase price (what-if)."
    )
    rent_volume_tiers: list[VolumeTier] = Field(
        default_factory=list,
        max_length=16,
        description=(
            "Negotiated volume discounts on rent (no public source, so none by default), e.g. "
            "[{min_gpus: 64, discount_frac: 0.1}, {min_gpus: 256, discount_frac: 0.2}]: increasing min_gpus, "
            "non-decreasing discounts."
        ),
    )
    purchase_every_months: Annotated[int, Field(ge=1, le=120)] = Field(
        3,
        description=(
            "Purchase orders may be placed at month 0 and then every this many months (a quarter by "
            "default); a window where no workload's demand changed since the previous one adds nothing."
        ),
    )

    @model_validator(mode="after")
    def _check_tiers(self) -> Economics:
        tiers = self.rent_volume_tiers
        for i, (a, b) in enumerate(zip(tiers, tiers[1:], strict=False)):
            if b.min_gpus <= a.min_gpus or b.discount_frac < a.discount_frac:
                raise ValueError(  # "@field: ..." names the later tier (planner.validation_messages)
                    f"@rent_volume_tiers[{i + 1}]: min_gpus must increase and discount_frac must not decrease "
                    f"(got {a.min_gpus} → {b.min_gpus} GPUs, {a.discount_frac} → {b.discount_frac}) — list the "
                    "tiers by min_gpus, each above the one before"
                )
        return self


def unusable_spot(rental_kinds: list[str], procurement: list[str], economics: Economics, owned: bool) -> str | None:
    """``rental_kinds: [spot]`` with spot never usable (availability 0, or every hour lost to preemption) and
    nothing bought or ``owned`` (inventory, edge devices): no GPU at all, and the plan was "infeasible: no
    single limit is used up", naming neither field."""
    if rental_kinds != ["spot"] or procurement != ["rent"] or owned:
        return None
    if economics.spot_availability_frac == 0:
        field, why = "spot_availability_frac", "0: spot capacity is never available"
    elif economics.spot_preemption_overhead_frac == 1:
        field, why = "spot_preemption_overhead_frac", "1: preemption loses all the work done on spot"
    else:
        return None
    return (
        f"@economics.{field}: {why}, and rental_kinds lists only spot, so no GPU can be rented — write e.g. "
        f"{Economics.model_fields[field].default} (the default), or add on_demand to rental_kinds"
    )
