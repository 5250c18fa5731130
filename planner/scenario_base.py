"""Field types and small sections of a scenario (planner.scenario re-exports them): the strict base model,
ranged number types, latency SLOs with their percentiles, redundancy, GPU shares and site overrides; and the
checks of the raw document before validation (its ``kind:``, a plan's JSON given as the scenario) and the
valid ids per field that "did you mean" answers with."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from planner.catalog.schema import Id
from planner.errors import ScenarioError
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
from planner.validation_messages import IdTable, suggest_id

if TYPE_CHECKING:
    from planner.catalog.loader import Catalog

PositiveFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]

Demand = Annotated[float, Field(gt=0, le=MAX_REQUESTS_PER_S)]
DemandValue = Annotated[float, Field(ge=0, le=MAX_REQUESTS_PER_S)]
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
