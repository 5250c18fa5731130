"""Field types and small sections of a scenario (planner.scenario re-exports them): the strict base model,
ranged number types, latency SLOs with their percentiles, redundancy, GPU shares and site overrides; and the
checks of the raw document before validation (its ``kind:``, a plan's JSON given as the scenario) and the
valid ids per field that "did you mean" answers with."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from planner.catalog.schema import Id
from planner.errors import ScenarioError, suggest_id
from planner.limits import (
    MAX_COUNT,
    MAX_LATENCY_MS,
    MAX_LIST,
    MAX_REQUESTS_PER_S,
    MAX_RTT_MS,
    MAX_TOKENS,
    MAX_UPLINK_MBIT_PER_S,
    MAX_USD,
)
from planner.validation_messages import IdTable

if TYPE_CHECKING:
    from planner.catalog.loader import Catalog

PositiveFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]

MIN_REQUESTS_PER_S = 1e-5
"""The smallest rate other than 0 a plan serves (0.864 requests a day): the solver's tolerance cannot tell a
rate of 1e-6 req/s or less from none (such a workload got a $0 plan with no GPU, status optimal)."""


def _servable_rate(value: float) -> float:
    if 0 < value < MIN_REQUESTS_PER_S:
        raise ValueError(f"must be at least {MIN_REQUESTS_PER_S:g} req/s (0.864 requests a day): a plan cannot tell "
                         "a smaller rate from no traffic")
    return value


def _servable_or_zero(value: float) -> float:
    if 0 < value < MIN_REQUESTS_PER_S:
        raise ValueError(f"must be 0 (no traffic in that period) or at least {MIN_REQUESTS_PER_S:g} req/s: a plan "
                         "cannot tell a smaller rate from no traffic")
    return value


def _one_line(name: str) -> str:
    """A scenario's name titles every output: empty, the plan read ": optimal — …"; a newline or an escape
    code split the title or reached the terminal."""
    if not name.strip():
        raise ValueError("must not be empty — give the scenario a name, e.g. name: chat-2027")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise ValueError("must be one line of text without control characters (a newline, tab or escape code)")
    if len(name) > 200:
        raise ValueError(f"at most 200 characters (got {len(name):,}) — shorten it; describe the plan in a comment")
    return name


ScenarioName = Annotated[str, AfterValidator(_one_line), Field(description="Scenario name (free text).")]


EMPTY_HINT = " (the file is empty or only comments — `planner init FILE` writes a starter scenario)"


def _no_repeats(values: list[Any]) -> list[Any]:
    """A list of ids or degrees names each once (a repeat is a copy-paste slip: another entry was meant)."""
    twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if twice is not None:
        once = ", ".join(str(v) for v in dict.fromkeys(values))
        raise ValueError(f"{twice} is listed twice — list each value once: [{once}]")
    return values


_T = TypeVar("_T")
UniqueList = Annotated[list[_T], AfterValidator(_no_repeats), Field(json_schema_extra={"uniqueItems": True})]
"""A list that names each value once (``sites: [us_east, us_east]`` is refused; the schema says uniqueItems)."""


def owned_alone(procurement: list[str]) -> list[str]:
    """``[rent, buy, owned]``: owned (the inventory only) adds nothing to rent and buy, which use the inventory
    too; it was refused as 'at most 2 entries', which named no fix."""
    if len(procurement) > 2:
        raise ValueError("owned adds nothing to rent and buy: the inventory is used whenever it is listed — write "
                         "[rent, buy] (owned alone plans on the inventory only)")
    return procurement


def repeated_name(field: str, names: list[str], what: str, fix: str) -> str | None:
    """``@field[i].name: duplicate <what>: [...] — <fix>`` at the later entry of the first name given twice."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if not dupes:
        return None
    later = max(i for i, n in enumerate(names) if n == dupes[0])
    return f"@{field}[{later}].name: duplicate {what}: {dupes} — {fix}"

Demand = Annotated[
    float,
    Field(gt=0, le=MAX_REQUESTS_PER_S, json_schema_extra={"minimum": MIN_REQUESTS_PER_S}),
    AfterValidator(_servable_rate),
]
DemandValue = Annotated[
    float,
    Field(ge=0, le=MAX_REQUESTS_PER_S, description=f"0 (no traffic) or at least {MIN_REQUESTS_PER_S:g} req/s"),
    AfterValidator(_servable_or_zero),
]
LatencyMs = Annotated[float, Field(gt=0, le=MAX_LATENCY_MS)]
Tokens = Annotated[int, Field(ge=1, le=MAX_TOKENS)]
Usd = Annotated[float, Field(ge=0, le=MAX_USD)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Degree = Annotated[int, Field(ge=1, le=1024)]
SloPercentile = Literal[50, 90, 95, 99]
SLO_PERCENTILES: tuple[int, ...] = get_args(SloPercentile)
"""The percentiles a latency SLO may be stated at (planner.performance.tail has their tails)."""


class SchemaWithDefaults(GenerateJsonSchema):
    """JSON Schema generator that also states the defaults made by a factory (``procurement: ["rent"]``,
    ``hardware.tp: [1, 2, 4, 8]``, a whole default section): pydantic leaves those out, and `planner schema`
    promises every field's default."""

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        factory = schema.get("default_factory")
        if factory is not None and not schema.get("default_factory_takes_data"):
            return factory()  # type: ignore[call-arg]
        return super().get_default_value(schema)


class Strict(BaseModel):
    """Strict, frozen base for scenario sections."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, str_strip_whitespace=True, strict=True, allow_inf_nan=False
    )


class Slo(Strict):
    """Latency targets of a workload (both are per request, at the peak arrival rate)."""

    ttft_ms: LatencyMs = Field(2000.0, description="Time to first token, ms: queue + prefill + RTT + upload.")
    tpot_ms: LatencyMs = Field(50.0, description="Time per output token (mean inter-token interval), ms.")
    ttft_percentile: SloPercentile | None = Field(
        None, description="TTFT SLO holds at this percentile (50, 90, 95, 99); default: the mean TTFT."
    )
    tpot_percentile: SloPercentile | None = Field(
        None, description="Per-request TPOT SLO holds at this percentile (50, 90, 95, 99); default: the mean."
    )


class Redundancy(Strict):
    """Spare capacity: the SLO holds with ``spare_replicas`` failure domains down (constraints/redundancy.py)."""

    spare_replicas: Annotated[int, Field(ge=0, le=16)] = Field(
        1, description="Failure domains that may be down at once while the SLO still holds (0 = none)."
    )
    failure_domain: Literal["replica", "node", "site"] = Field(
        "replica", description="What fails: one replica, one node (all replicas on it) or one site."
    )

    @property
    def sites_down(self) -> int:
        """Sites that may be down at once while the SLO holds (0 unless the failure domain is a site)."""
        return self.spare_replicas if self.failure_domain == "site" else 0




def _power_of_two_share(value: float) -> float:
    if value not in (0.5, 0.25):
        raise ValueError("a share of one GPU must be 0.5 or 0.25 (powers of two pack exactly)")
    return value


ShareFrac = Annotated[float, Field(gt=0, lt=1), AfterValidator(_power_of_two_share)]
"""A share of one GPU a replica may hold (planner/performance/sharing.py)."""


class SiteOverride(Strict):
    """A site added by the scenario, or fields overriding a catalog site of the same name."""

    name: Id = Field(description="Site id: a catalog site to override (`planner catalog sites`) or a new one.")
    kind: Literal["cloud", "datacenter", "edge"] | None = Field(
        None, description="cloud (rent), datacenter (buy, owned) or edge (installed devices)."
    )
    rtt_ms: Annotated[float, Field(ge=0, le=MAX_RTT_MS)] | None = Field(
        None, description="Round-trip time from the site to its users, ms."
    )
    uplink_mbit_per_s: Annotated[float, Field(gt=0, le=MAX_UPLINK_MBIT_PER_S)] | None = Field(
        None, description="Users' upload bandwidth to the site, Mb/s (prompt upload time)."
    )
    electricity_usd_per_kwh: Annotated[float, Field(ge=0, le=100)] | None = Field(
        None, description="Electricity price, USD per kWh."
    )
    pue: Annotated[float, Field(ge=1.0, le=10)] | None = Field(
        None, description="Power usage effectiveness (facility power / IT power)."
    )
    colocation_usd_per_kw_month: Annotated[float, Field(ge=0, le=1e6)] | None = Field(
        None, description="Colocation price per kW of GPU TDP, USD per month."
    )
    gpus_available: list[Id] | None = Field(
        None, min_length=1, max_length=MAX_LIST, description="GPU types that can be rented or installed here."
    )
    max_gpus: Count | None = Field(None, description="Most GPUs in use at the site at once.")
    max_power_kw: Annotated[float, Field(gt=0, le=1e8)] | None = Field(
        None, description="Most facility power at the site (GPU TDP × PUE), kW."
    )
    devices: dict[Id, Count] | None = Field(
        None, max_length=MAX_LIST, description="Edge sites: devices installed there, GPU type → count (owned)."
    )
    has_scale_out_fabric: bool | None = Field(
        None, description="Whether multi-node tensor/pipeline groups can be placed here."
    )


SCENARIO_KINDS = ("inference", "training")
"""``kind:`` of a scenario file: inference (the default, also written ``serving``) or training (``planner train``)."""


def serving_document(data: dict[Any, Any], path: str) -> dict[Any, Any]:
    """``data`` without an inference ``kind:`` (stated or not, it is a serving scenario); any other kind is
    refused with the valid ones (a ``kind: training`` file is refused earlier with a pointer to ``planner
    train``), and so is a plan's JSON output given as the scenario."""
    if "name" not in data and "workloads" not in data and {"status", "deployments"} <= set(data):
        raise ScenarioError(
            f"{path}: this is a plan's JSON output (status, deployments), not a scenario — give the scenario "
            "YAML it was planned from (`planner init` writes a starter one)"
        )
    if "kind" not in data and "workloads" not in data and "training_tokens" in data:
        raise ScenarioError(  # was: "workloads: required; hardware.max_gpus: unknown field; model: unknown field"
            f"{path}: kind: this is a training scenario (training_tokens:) without `kind: training` — add that "
            f"line and run `planner train {path}`"
        )
    if "kind" not in data:
        return data
    kind = data["kind"]
    if kind in ("inference", "serving"):
        return {k: v for k, v in data.items() if k != "kind"}
    hint = suggest_id(kind, SCENARIO_KINDS) if isinstance(kind, str) else " — valid values: inference, training"
    raise ScenarioError(
        f"{path}: kind: must be 'inference' (the default: leave it out) or 'training' (`planner train`) "
        f"(got {kind!r}){hint}"
    )


def scenario_id_tables(catalog: Catalog, data: Mapping[Any, Any]) -> IdTable:
    """The valid ids at a scenario location (for "did you mean" on an id in the wrong form)."""
    listed = data.get("sites")
    own_sites = [s.get("name") for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    site_ids = [*catalog.sites, *(str(n) for n in own_sites if isinstance(n, str))]
    tables: dict[str, Iterable[str]] = {
        "gpus": catalog.accelerators,
        "gpu": catalog.accelerators,
        "gpus_available": catalog.accelerators,
        "models": catalog.models,
        "draft_model": catalog.models,
        "quantizations": catalog.formats,
        "kv_dtypes": catalog.formats,
        "engine": catalog.engines,
        "site": site_ids,
        "rent_providers": sorted({p.provider for p in catalog.prices}),
    }

    def ids(loc: tuple[Any, ...]) -> Iterable[str] | None:
        names = [p for p in loc if isinstance(p, str)]
        if not names:
            return None
        if names[-1] == "sites" and names[0] == "workloads":
            return site_ids
        return tables.get(names[-1])

    return ids


def _period_peaks(rate: float | list[float], growth: float, horizon_months: int, period_months: int) -> list[float]:
    """Each period's peak rate as planned (planner.demand.demand_per_period, which imports the scenario)."""
    if isinstance(rate, list):
        return list(rate)
    return [
        max(rate * (1 + growth) ** m for m in range(t, min(t + period_months, horizon_months)))
        for t in range(0, horizon_months, period_months)
    ]


def _rounded_up(value: float) -> float:
    """``value`` rounded up to 2 significant digits (a bound the user can write that still holds)."""
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return math.ceil(round(value / step, 9)) * step


def period_problem(horizon_months: int, period_months: int) -> str | None:
    """``@period_months: ...`` when the periods do not tile the horizon, with the lengths that do."""
    if horizon_months % period_months == 0:
        return None
    fits = ", ".join(str(d) for d in range(1, horizon_months + 1) if horizon_months % d == 0)
    return f"@period_months: horizon_months must be a multiple of period_months — use period_months {fits}"


def demand_range_problem(workloads: list[Any], horizon_months: int, period_months: int) -> str | None:
    """``@field: problem`` (planner.validation_messages puts the field after the workload's location) when a
    workload's planned rates leave the range a plan serves: a growth that takes the rate above
    MAX_REQUESTS_PER_S or below MIN_REQUESTS_PER_S within the horizon, every period 0, or an hour of the
    profile below MIN_REQUESTS_PER_S — else None. A rate below the minimum was planned as no traffic."""
    for i, w in enumerate(workloads):
        at = f"@workloads[{i}]"
        peaks = _period_peaks(w.requests_per_s, w.growth_frac_per_month, horizon_months, period_months)
        served = [p for p in peaks if p > 0]
        if not served:
            return (f"{at}.requests_per_s: every period is 0 — give the periods with traffic their rate, or "
                    "remove the workload")
        g, r, last = w.growth_frac_per_month, w.requests_per_s, horizon_months - 1
        if g > 0 and max(peaks) > MAX_REQUESTS_PER_S:
            fit = (MAX_REQUESTS_PER_S / r) ** (1 / last) - 1
            return (f"{at}.growth_frac_per_month: {g:g} ({g * 100:g} % a month) takes {r:g} req/s to {max(peaks):.3g} req/s by month "
                    f"{last}, above the {MAX_REQUESTS_PER_S:g} req/s a workload may reach — lower it to "
                    f"{math.floor(fit * 1e4) / 1e4:g} or less, or shorten horizon_months")
        if g < 0 and min(peaks) < MIN_REQUESTS_PER_S * (1 - 1e-9):
            month = horizon_months - period_months  # the last period's peak is its first month
            fit = (MIN_REQUESTS_PER_S / r) ** (1 / month) - 1
            return (f"{at}.growth_frac_per_month: {g:g} ({g * 100:g} % a month) takes {r:g} req/s to {min(peaks):.3g} req/s by "
                    f"month {month}, below the {MIN_REQUESTS_PER_S:g} req/s a plan can tell from no traffic — raise "
                    f"it to {math.ceil(fit * 1e4) / 1e4:g} or more, or give requests_per_s one value per period "
                    "(0 where there is none)")
        hours = [f for f in w.hourly_profile_frac or [] if f > 0]
        if hours and min(hours) * min(served) < MIN_REQUESTS_PER_S * (1 - 1e-9):
            low = min(hours)
            hour = w.hourly_profile_frac.index(low)
            return (f"{at}.hourly_profile_frac[{hour}]: {low:g} of the peak is {low * min(served):.3g} req/s in the "
                    f"quietest period, below the {MIN_REQUESTS_PER_S:g} req/s a plan can tell from no traffic — "
                    f"write 0 for an hour without traffic, or at least {_rounded_up(MIN_REQUESTS_PER_S / min(served)):g}")
    return None
