"""MILP construction: the BuildContext every constraint family writes into, supply options, objective.

Data flow: candidate table → :func:`build_context` (index sets, coefficients, dominance pruning) →
``constraints.FAMILIES`` add their rows in order → :func:`set_objective` → :mod:`planner.solve`.
No PuLP object leaves this module and :mod:`planner.solve`: results are read through the variable
registry by key (never by parsing names).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pulp

from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.costs import (
    colocation_usd_per_month,
    owned_device_usd_per_month,
    power_usd_per_month,
    rent_quote,
)
from planner.ledgers.economics import (
    bought_unit_horizon_usd,
    discount_factor,
    residual_value_usd,
    running_usd_per_month,
)
from planner.scenario import Scenario, demand_per_period
from planner.units import HOURS_PER_MONTH

MAX_SCALE = 10.0
"""max_throughput serves at most 10× the stated demand (bounds the replica counts)."""

TIE_BREAK_USD = 1e-3
"""Tiny cost per replica-point rank so identical inputs give identical plans (fewer GPUs, then table order)."""


@dataclass(frozen=True)
class SupplyOption:
    """One way to obtain GPUs of a type at a site: rent (per kind), an owned edge device, inventory, buy."""

    gpu: str
    site: str
    kind: str
    """rent_on_demand, rent_reserved_1y, rent_reserved_3y, rent_spot, edge_device, owned, buy."""
    unit_gpus: int
    usd_per_unit_month: float
    """Recurring cost of one unit per month (rent, power, colocation, ops, depreciation)."""
    max_units: int | None
    source: str
    capex_usd_per_unit: float = 0.0
    effective_gpus_frac: float = 1.0
    """Usable fraction of a unit's GPUs (spot availability × (1 − preemption overhead))."""
    available_from_month: float = 0.0
    """Bought units are usable from their delivery month (the purchase lead time) on."""
    horizon_usd_per_unit: float = 0.0
    """Buy only: capex − residual value + running costs over the horizon (planner.ledgers.economics)."""
    purchase_month: int = 0
    """Buy only: the month the order is placed (capex is paid then; delivery ``available_from_month``)."""
    residual_usd_per_unit: float = 0.0
    """Buy only: resale value at the horizon, book value at age (horizon − order month) × resale_frac."""

    @property
    def procurement(self) -> str:
        """'rent', 'buy' or 'owned' (inventory and edge devices)."""
        if self.kind.startswith("rent_"):
            return "rent"
        return "buy" if self.kind == "buy" else "owned"

    @property
    def rental_kind(self) -> str | None:
        """on_demand / reserved_1y / reserved_3y / spot for rent options."""
        return self.kind.removeprefix("rent_") if self.kind.startswith("rent_") else None


@dataclass
class BuildContext:
    """Everything a constraint family needs: problem, data, index sets, variables, named rows."""

    prob: pulp.LpProblem
    scenario: Scenario
    catalog: Catalog
    sites: dict[str, Site]
    cands: pd.DataFrame
    """Feasible, non-dominated candidates (index = cand id)."""
    points: pd.DataFrame
    """Operating points of ``cands`` (columns as in planner.candidates) with a ``point`` id column."""
    periods: list[int]
    """Time slices: one per representative demand period (periods with identical demand and deliveries are
    merged), or one per hour block of it when a workload has an hourly profile (see :func:`time_slices`)."""
    months: dict[int, float]
    """Billed months each slice stands for: months of its merged periods (at present value when the scenario
    has a cost of capital) × its share of the day's hours (without discounting they sum to the horizon)."""
    representative_of: dict[int, int]
    """Every period of the horizon → the representative period that stands for it."""
    slices_of: dict[int, list[int]]
    """Representative period → its time slices (a single slice, with the period's id, without profiles)."""
    start_month: dict[int, int]
    """Time slice → the first month of its representative period."""
    hours_frac: dict[int, float]
    """Time slice → its share of the day's hours (1 without hourly profiles)."""
    demand: dict[tuple[str, int], float]
    supply: list[SupplyOption]
    variables: dict[str, dict[Any, Any]] = field(default_factory=lambda: defaultdict(dict))
    scale_floor: float | None = None
    """max_throughput second stage: the served fraction is held at this value while cost is minimized."""
    elastic: bool = False
    """Explain-infeasibility mode: demand rows get a shortfall variable and the objective minimizes it."""
    rows: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """PuLP row name → (family, key)."""
    row_constraints: dict[str, Any] = field(default_factory=dict)
    """PuLP row name → the constraint as built (to read its activity without PuLP's name lookups)."""
    rent_discount_usd_per_month: dict[tuple[int, int], Any] = field(default_factory=dict)
    """Volume discount (supply option, slice) → USD per month off the quoted rent (constraints.price_tiers)."""
    cost_terms: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    """Objective terms by cost category (USD over the horizon)."""
    _counter: int = 0

    # -- naming and registries ------------------------------------------------------------------
    def _name(self, family: str) -> str:
        self._counter += 1
        return f"{family}_{self._counter}"

    def var(
        self,
        family: str,
        key: Any,
        *,
        low: float | None = 0.0,
        up: float | None = None,
        cat: str = "Continuous",
    ) -> Any:
        """Create (once) and register a variable ``family[key]``."""
        if key in self.variables[family]:
            return self.variables[family][key]
        v = self.prob.add_variable(self._name(family), lowBound=low, upBound=up, cat=cat)
        self.variables[family][key] = v
        return v

    def add_row(self, family: str, key: Any, constraint: Any) -> None:
        """Add a named row of constraint ``family`` for ``key``."""
        name = self._name(family)
        self.prob += constraint, name
        self.rows[name] = (family, key)
        self.row_constraints[name] = constraint

    def add_cost(self, category: str, expr: Any) -> None:
        """Add a horizon cost term (USD) of ``category`` to the objective."""
        self.cost_terms[category].append(expr)

    # -- index helpers --------------------------------------------------------------------------
    _points_by_cand: dict[int, list[Any]] = field(default_factory=dict)

    def points_of(self, cand: int) -> list[Any]:
        """Operating points of candidate ``cand`` (itertuples rows of ``points``)."""
        if not self._points_by_cand:
            for row in self.points.itertuples():
                self._points_by_cand.setdefault(int(row.cand), []).append(row)
        return self._points_by_cand.get(cand, [])

    def cands_of_workload(self, workload: str) -> Iterable[int]:
        """Candidate ids serving ``workload``."""
        return [int(k) for k in self.cands.index[self.cands["workload"] == workload]]

    def replicas(self, cand: int, period: int) -> Any:
        """Σ_j n_rep[k, j, t]: replicas of candidate ``cand`` in ``period``."""
        return pulp.lpSum(self.variables["n_rep"][(cand, int(p.point), period)] for p in self.points_of(cand))

    def gpu(self, gpu_id: str) -> Accelerator:
        """Catalog accelerator."""
        return self.catalog.accelerators[gpu_id]


def prune_dominated(cands: pd.DataFrame) -> pd.DataFrame:
    """Drop candidates dominated within (workload, gpu, site): another one uses no more GPUs, has no worse
    quality tier and at least the same best capacity (ties keep the lower candidate id)."""
    keep: list[int] = []
    groups: dict[tuple[str, str, str], list[tuple[int, int, int, float]]] = defaultdict(list)
    cols = cands[["workload", "gpu", "site", "gpus", "quality_tier", "best_capacity_requests_per_s"]]
    for cand, workload, gpu, site, gpus, tier, cap in cols.itertuples(name=None):
        groups[(str(workload), str(gpu), str(site))].append((int(cand), int(gpus), int(tier), float(cap)))
    for rows in groups.values():
        rows.sort(key=lambda r: (r[1], r[2], -r[3], r[0]))
        frontier: list[tuple[int, int, float]] = []
        for cand, gpus, tier, cap in rows:
            if not any(g <= gpus and q <= tier and c >= cap for g, q, c in frontier):
                frontier.append((gpus, tier, cap))
                keep.append(cand)
    return cands.loc[sorted(keep)]


def prune_dominated_sites(
    cands: pd.DataFrame, catalog: Catalog, scenario: Scenario, sites: dict[str, Site]
) -> pd.DataFrame:
    """Drop a candidate at an unlimited cloud site when the same deployment at another unlimited cloud site
    is no more expensive for every rental kind and serves at least as much.

    Without site limits nothing forces traffic apart, and pooling GPUs at one site never needs more whole
    nodes than splitting them, so the dominated copy cannot lower the optimum. Sites with GPU or power
    limits, edge sites and data centers are always kept.
    """

    def unlimited(site_id: str) -> bool:
        site = sites[site_id]
        return site.kind == "cloud" and site.max_gpus is None and site.max_power_kw is None

    def prices(gpu_id: str, site_id: str) -> tuple[float, ...]:
        gpu, site = catalog.accelerators[gpu_id], sites[site_id]
        out = []
        for kind in scenario.rental_kinds:
            quote = rent_quote(catalog, gpu, site, kind, scenario.rent_providers)
            out.append(quote.usd_per_gpu_hour if quote else float("inf"))
        return tuple(out)

    key_cols = ["workload", "model", "quantization", "kv_dtype", "gpu", "tp", "pp"]
    groups: dict[tuple[Any, ...], list[tuple[int, str, tuple[float, ...], float]]] = defaultdict(list)
    price_cache: dict[tuple[str, str], tuple[float, ...]] = {}
    cols = cands[[*key_cols, "site", "best_capacity_requests_per_s"]]
    for k, *key, site, cap in cols.itertuples(name=None):
        if not unlimited(str(site)):
            continue
        gpu = str(key[4])
        if (gpu, str(site)) not in price_cache:
            price_cache[(gpu, str(site))] = prices(gpu, str(site))
        groups[tuple(key)].append((int(k), str(site), price_cache[(gpu, str(site))], float(cap)))
    drop: set[int] = set()
    for rows in groups.values():
        if len(rows) < 2:
            continue
        for k, _site, pk, cap in rows:
            for k2, _site2, pk2, cap2 in rows:
                if k2 == k or k2 in drop:
                    continue
                no_dearer = all(a <= b for a, b in zip(pk2, pk, strict=True))
                strictly = pk2 != pk or cap2 > cap or k2 < k
                if no_dearer and cap2 >= cap and strictly:
                    drop.add(k)
                    break
    return cands.drop(index=sorted(drop))


def prune_dominated_points(points: pd.DataFrame) -> pd.DataFrame:
    """Keep, per candidate, the operating points no other point beats on capacity.

    A replica costs the same at every point of its curve (same GPUs), so a point with less capacity than
    another of the same candidate never lowers the cost; only the best point (ties: the smaller batch,
    i.e. lower latency) reaches the MILP. The full curve stays in the candidate table for reports.
    """
    ordered = points.sort_values(["cand", "capacity_requests_per_s", "batch"], ascending=[True, False, True])
    return ordered.drop_duplicates("cand", keep="first").sort_values(["cand", "batch"])


def supply_options(
    catalog: Catalog, scenario: Scenario, sites: dict[str, Site], pairs: set[tuple[str, str]]
) -> list[SupplyOption]:
    """Supply options for every (gpu, site) pair the candidates use."""
    econ = scenario.economics
    out: list[SupplyOption] = []
    owned: dict[tuple[str, str], int] = defaultdict(int)
    for item in scenario.inventory:
        owned[(item.gpu, item.site)] += item.count
    for gpu_id, site_id in sorted(pairs):
        gpu, site = catalog.accelerators[gpu_id], sites[site_id]
        util = econ.utilization_frac
        if owned.get((gpu_id, site_id)):
            running = power_usd_per_month(gpu, site, utilization_frac=util) + colocation_usd_per_month(
                gpu, site, utilization_frac=util
            )
            out.append(
                SupplyOption(
                    gpu_id,
                    site_id,
                    "owned",
                    1,
                    running * (1 + econ.ops_overhead_frac),
                    owned[(gpu_id, site_id)],
                    "inventory (sunk cost: power, colocation, ops)",
                )
            )
        if site.kind == "edge" and site.devices.get(gpu_id, 0):
            monthly = owned_device_usd_per_month(
                gpu, site, utilization_frac=util, lifetime_years=econ.lifetime_years
            )
            out.append(
                SupplyOption(
                    gpu_id,
                    site_id,
                    "edge_device",
                    1,
                    monthly,
                    site.devices[gpu_id],
                    "edge device: purchase price over its lifetime + power",
                )
            )
        if site.kind == "datacenter" and "buy" in scenario.procurement and gpu.purchase is not None:
            out.extend(buy_options(gpu, site, scenario))
        if site.kind == "cloud" and "rent" in scenario.procurement:
            for kind in scenario.rental_kinds:
                quote = rent_quote(catalog, gpu, site, kind, scenario.rent_providers)
                if quote is None:
                    continue
                eff = (
                    econ.spot_availability_frac * (1 - econ.spot_preemption_overhead_frac)
                    if kind == "spot"
                    else 1.0
                )
                unit = gpu.gpus_per_node
                out.append(
                    SupplyOption(
                        gpu_id,
                        site_id,
                        f"rent_{kind}",
                        unit,
                        quote.usd_per_gpu_hour * econ.rent_price_scale * HOURS_PER_MONTH * unit,
                        None,
                        f"{quote.provider} {kind} ${quote.usd_per_gpu_hour}/GPU-h ({quote.source}, {quote.as_of})",
                        effective_gpus_frac=eff,
                    )
                )
    return out


def demand_vectors(scenario: Scenario) -> list[tuple[float, ...]]:
    """Per period of the horizon, every workload's peak requests/s (scenario order)."""
    series = [
        demand_per_period(w, periods=scenario.periods, period_months=scenario.period_months)
        for w in scenario.workloads
    ]
    return [tuple(values[t] for values in series) for t in range(scenario.periods)]


def purchase_months(scenario: Scenario, lead_time_months: float) -> list[int]:
    """Months at which nodes may be ordered: 0, then every ``purchase_every_months`` at a period start
    whose delivery (order month + lead time) falls inside the horizon and after a change in some
    workload's demand since the previous window's delivery.

    Windows whose delivery lands inside a stretch of constant demand are left out: with straight-line
    depreciation and running costs linear in the months held, a node's cost is linear in its order month,
    so within a stretch ordering for its start or not at all (ordering for the next change) is always at
    least as good.
    """
    period = scenario.period_months
    vectors = demand_vectors(scenario)

    def delivery_period(month: int) -> int:
        return min(scenario.periods - 1, math.ceil((month + lead_time_months) / period - 1e-9))

    months = [0]
    last = delivery_period(0)
    for t in range(1, scenario.periods):
        month = t * period
        if month % scenario.economics.purchase_every_months or month + lead_time_months >= scenario.horizon_months:
            continue
        d = delivery_period(month)
        if any(vectors[u] != vectors[last] for u in range(last + 1, d + 1)):
            months.append(month)
            last = d
    return months


def buy_options(gpu: Accelerator, site: Site, scenario: Scenario) -> list[SupplyOption]:
    """One buy option per purchase window (:func:`purchase_months`): a whole node, capex at its order month,
    usable from delivery (order month + lead time) to the horizon, horizon TCO from planner.ledgers.economics."""
    assert gpu.purchase is not None
    econ = scenario.economics
    util = econ.utilization_frac
    running = running_usd_per_month(
        power_usd_per_month=power_usd_per_month(gpu, site, utilization_frac=util) * gpu.gpus_per_node,
        colocation_usd_per_month=colocation_usd_per_month(gpu, site, utilization_frac=util)
        * gpu.gpus_per_node,
        ops_overhead_frac=econ.ops_overhead_frac,
    )
    life = econ.lifetime_years or gpu.purchase.lifetime_years
    node_usd = gpu.purchase.usd_per_node * econ.purchase_price_scale
    lead = gpu.purchase.lead_time_months
    out = []
    for month in purchase_months(scenario, lead):
        horizon = bought_unit_horizon_usd(
            node_usd,
            horizon_months=scenario.horizon_months,
            lead_time_months=lead,
            lifetime_years=life,
            resale_frac=econ.resale_frac,
            running_usd_per_month=running,
            cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year,
            purchase_month=month,
        )
        out.append(
            SupplyOption(
                gpu.id,
                site.id,
                "buy",
                gpu.gpus_per_node,
                running,
                None,
                f"buy node ${gpu.purchase.usd_per_node:,.0f} ordered month {month} "
                f"({gpu.purchase.source}, {gpu.purchase.as_of})",
                capex_usd_per_unit=node_usd,
                available_from_month=month + lead,
                horizon_usd_per_unit=horizon,
                purchase_month=month,
                residual_usd_per_unit=residual_value_usd(
                    node_usd,
                    horizon_months=scenario.horizon_months - month,
                    lifetime_years=life,
                    resale_frac=econ.resale_frac,
                ),
            )
        )
    return out


def build_context(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    *,
    prune: bool = True,
    exclude: dict[str, set[str]] | None = None,
) -> BuildContext:
    """Index sets and coefficients of the MILP; ``exclude`` drops candidates by column value (alternatives)."""
    cands = table.feasible.set_index("cand", drop=False).rename_axis(index=None)
    for column, values in (exclude or {}).items():
        cands = cands[~cands[column].isin(values)]
    if prune and not cands.empty:
        cands = prune_dominated(prune_dominated_sites(cands, catalog, scenario, table.sites))
    points = table.points[table.points["cand"].isin(cands.index)]
    if prune and not points.empty:
        points = prune_dominated_points(points)
    points = points.reset_index(drop=True)
    points = points.assign(point=range(len(points)))
    pairs = {(g, s) for g, s in zip(cands["gpu"], cands["site"], strict=True)}
    supply = supply_options(catalog, scenario, table.sites, pairs)
    leads = tuple(sorted({o.available_from_month for o in supply if o.kind == "buy"}))
    slices = time_slices(scenario, leads)
    prob = pulp.LpProblem(f"plan_{abs(hash(scenario.name)) % 10**8}", pulp.LpMinimize)
    return BuildContext(
        prob=prob,
        scenario=scenario,
        catalog=catalog,
        sites=table.sites,
        cands=cands,
        points=points,
        periods=list(slices.hours_frac),
        months=slices.months,
        representative_of=slices.representative_of,
        slices_of=slices.slices_of,
        start_month=slices.start_month,
        hours_frac=slices.hours_frac,
        demand=slices.demand,
        supply=supply,
    )


def representative_periods(
    scenario: Scenario, lead_times_months: tuple[float, ...] = ()
) -> tuple[list[int], dict[int, float], dict[tuple[str, int], float], dict[int, int]]:
    """Merge periods with identical demand vectors: (periods, months per period, demand[(w, t)], period → its
    representative).

    Valid because rented capacity follows each period and bought capacity is one decision per order
    window whose availability only depends on whether a period starts after its delivery month (part of
    the key), so identical periods have identical optimal decisions; the cost of a merged period is
    weighted by its months, each discounted to the present with the cost of capital
    (planner.ledgers.economics.discount_factor, as bought nodes are), so rent and purchases compare at
    present value.
    """
    vectors = demand_vectors(scenario)
    first_of: dict[tuple[float, ...], int] = {}
    months: dict[int, float] = {}
    representative_of: dict[int, int] = {}
    for t in range(scenario.periods):
        start = t * scenario.period_months
        vector = vectors[t] + tuple(start >= lead for lead in lead_times_months)
        rep = first_of.setdefault(vector, t)
        representative_of[t] = rep
        # cost weight: the period's months, each at its present value (1 per month without a cost of capital)
        months[rep] = months.get(rep, 0.0) + sum(
            discount_factor(m, cost_of_capital_frac_per_year=scenario.economics.cost_of_capital_frac_per_year)
            for m in range(start, start + scenario.period_months)
        )
    periods = sorted(months)
    demand = {(w.name, t): vectors[t][i] for i, w in enumerate(scenario.workloads) for t in periods}
    return periods, months, demand, representative_of


def hour_blocks(scenario: Scenario) -> list[tuple[float, dict[str, float]]]:
    """Hours of the day grouped by the load they carry: [(share of the day, {workload: fraction of its peak
    demand})]. Hours with the same fractions for every workload form one block; without any hourly profile
    there is a single block (share 1, every fraction 1)."""
    if all(w.hourly_profile_frac is None for w in scenario.workloads):
        return [(1.0, {w.name: 1.0 for w in scenario.workloads})]
    hours: dict[tuple[float, ...], int] = {}
    for h in range(24):
        vector = tuple(
            w.hourly_profile_frac[h] if w.hourly_profile_frac else 1.0
            for w in scenario.workloads
        )
        hours[vector] = hours.get(vector, 0) + 1
    return [
        (count / 24, {w.name: f for w, f in zip(scenario.workloads, vector, strict=True)})
        for vector, count in sorted(hours.items(), reverse=True)
    ]


@dataclass(frozen=True)
class TimeSlices:
    """Index sets of the time dimension (see :class:`BuildContext` for each field)."""

    months: dict[int, float]
    representative_of: dict[int, int]
    slices_of: dict[int, list[int]]
    start_month: dict[int, int]
    hours_frac: dict[int, float]
    demand: dict[tuple[str, int], float]


def time_slices(scenario: Scenario, lead_times_months: tuple[float, ...] = ()) -> TimeSlices:
    """Representative periods (:func:`representative_periods`) split into hour blocks (:func:`hour_blocks`).

    A slice of block b in period t has demand D[w, t] · f[w, b] and is billed months(t) · share(b): capacity
    that can follow the hours (on-demand and spot rent) is paid only for the hours it runs, while
    persistent capacity (bought, owned, reserved) is held equal over a period's slices (commitments).
    Without a profile each period is one slice carrying the period's id.
    """
    periods, months, demand, representative_of = representative_periods(scenario, lead_times_months)
    blocks = hour_blocks(scenario)
    out_months: dict[int, float] = {}
    slices_of: dict[int, list[int]] = {}
    start: dict[int, int] = {}
    share_of: dict[int, float] = {}
    out_demand: dict[tuple[str, int], float] = {}
    for t in periods:
        slices_of[t] = []
        for b, (share, frac) in enumerate(blocks):
            s = t if len(blocks) == 1 else t * len(blocks) + b
            slices_of[t].append(s)
            out_months[s] = months[t] * share
            start[s] = t * scenario.period_months
            share_of[s] = share
            for w in scenario.workloads:
                out_demand[(w.name, s)] = demand[(w.name, t)] * frac[w.name]
    return TimeSlices(out_months, representative_of, slices_of, start, share_of, out_demand)


def replica_upper_bound(ctx: BuildContext, cand: int, capacity_requests_per_s: float) -> int:
    """Data bound on replicas of one point: ceil(peak demand / capacity) (the big-M of the point selector)."""
    workload = ctx.cands.at[cand, "workload"]
    peak = max(ctx.demand[(workload, t)] for t in ctx.periods)
    if ctx.scenario.objective == "max_throughput":
        peak *= MAX_SCALE
    return max(1, math.ceil(peak / capacity_requests_per_s - 1e-9))


def create_variables(ctx: BuildContext) -> None:
    """n_rep[k, j, t] integer replicas per point; y[k, j] binary point selection; flow[k, t] served req/s."""
    counts = ctx.points["cand"].value_counts()
    for row in ctx.points.itertuples():
        cand, point = int(row.cand), int(row.point)
        bound = replica_upper_bound(ctx, cand, float(row.capacity_requests_per_s))
        if counts[cand] > 1:
            ctx.var("y", (cand, point), low=0, up=1, cat="Integer")
        for t in ctx.periods:
            ctx.var("n_rep", (cand, point, t), low=0, up=bound, cat="Integer")
    for cand in ctx.cands.index:
        for t in ctx.periods:
            ctx.var("flow", (int(cand), t), low=0)
    for i, opt in enumerate(ctx.supply):
        if opt.kind == "buy":
            ctx.var("bought", i, low=0, up=opt.max_units, cat="Integer")
        for t in ctx.periods:
            ctx.var("units", (i, t), low=0, up=opt.max_units, cat="Integer")
    if ctx.scenario.objective == "max_throughput":
        ctx.var("scale", (), low=0, up=MAX_SCALE)


def supply_usd_per_month(ctx: BuildContext, option: int, t: int) -> Any:
    """Recurring cost of supply ``option`` in slice t, USD per month: quote × units, net of the rent volume
    discount (constraints.price_tiers fills ``ctx.rent_discount_usd_per_month``)."""
    opt = ctx.supply[option]
    units = ctx.variables["units"][(option, t)]
    return opt.usd_per_unit_month * units - ctx.rent_discount_usd_per_month.get((option, t), 0)


def supply_cost_usd(ctx: BuildContext, option: int) -> Any:
    """Horizon cost of supply ``option``, USD: bought nodes × their horizon TCO, else Σ_t months_t × the
    monthly cost (:func:`supply_usd_per_month`). The objective and the total-budget row both use it."""
    opt = ctx.supply[option]
    if opt.kind == "buy":
        return opt.horizon_usd_per_unit * ctx.variables["bought"][option]
    return pulp.lpSum(ctx.months[t] * supply_usd_per_month(ctx, option, t) for t in ctx.periods)


def set_objective(ctx: BuildContext) -> None:
    """min Σ categories of horizon cost + a deterministic tie-break (module constant TIE_BREAK_USD)."""
    for i, opt in enumerate(ctx.supply):
        category = "rent" if opt.procurement == "rent" else ("owned" if opt.procurement == "owned" else "buy")
        ctx.add_cost(category, supply_cost_usd(ctx, i))
    ranked = ctx.cands.sort_values(["gpus", "quality_tier", "cand"]).index
    rank = {int(c): r for r, c in enumerate(ranked)}
    tie = pulp.lpSum(
        TIE_BREAK_USD
        * ctx.months[t]
        * (1 + rank[int(row.cand)] / max(1, len(rank)))
        * ctx.variables["n_rep"][(int(row.cand), int(row.point), t)]
        for row in ctx.points.itertuples()
        for t in ctx.periods
    )
    ctx.add_cost("tie_break", tie)
    if ctx.elastic:
        # lexicographic first stage: the least unserved demand, whatever it costs
        ctx.prob += pulp.lpSum(ctx.variables["short"].values())
        return
    if ctx.scenario.objective == "max_throughput" and ctx.scale_floor is None:
        # first stage of max_throughput: the largest common served fraction within the budget
        ctx.prob.sense = pulp.LpMaximize
        ctx.prob += ctx.variables["scale"][()]
        return
    if ctx.scale_floor is not None:
        ctx.add_row("demand_coverage", ("scale_floor",), ctx.variables["scale"][()] >= ctx.scale_floor)
    ctx.prob += pulp.lpSum(pulp.lpSum(terms) for terms in ctx.cost_terms.values())
