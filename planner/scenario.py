"""Scenario files: the question a user asks the planner (workloads, SLOs, hardware, sites, money).

A scenario is YAML validated by :class:`Scenario` (``planner schema`` prints its JSON Schema). Every field
has a unit in its name and a documented default. :func:`load_scenario` also checks every id against the
catalog and answers with "file: field: unknown gpu 'h100sxm' — did you mean h100_sxm?".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from planner.catalog.engine_settings import EngineSettings, engine_key
from planner.catalog.loader import Catalog, format_validation_error
from planner.catalog.schema import Id, RentalKind, Site
from planner.errors import ScenarioError, suggest_id
from planner.inputs import MAX_SCENARIO_BYTES, load_yaml_file
from planner.limits import (
    DEFAULT_MAX_BATCH,
    DEFAULT_WORKSPACE_GIB,
    MAX_BATCH,
    MAX_LIST,
    MAX_WORKLOADS,
    check_size,
)
from planner.scenario_base import (
    EMPTY_HINT,
    Degree,
    Demand,
    DemandValue,
    Fraction,
    Redundancy,
    ScenarioName,
    ShareFrac,
    SiteOverride,
    Slo,
    Strict,
    Tokens,
    UniqueList,
    demand_range_problem,
    owned_alone,
    period_problem,
    repeated_name,
    scenario_id_tables,
    serving_document,
)
from planner.scenario_economics import Budget as Budget  # re-exported: the scenario API
from planner.scenario_economics import Economics as Economics
from planner.scenario_economics import InventoryItem as InventoryItem
from planner.scenario_economics import unusable_spot
from planner.scenario_optimizations import PrefixCache, Speculative, check_optimizations
from planner.scenario_topology import (
    Disaggregation,
    EfficiencyOverride,
    check_efficiency_gpus,
    check_hardware,
    check_owned_supply,
    refuse_edge_inventory,
    refuse_kindless_site,
    refuse_misplaced_devices,
)
from planner.validation_messages import format_validation_error as _format_error


class Workload(Strict):
    """One stream of requests with its models, lengths, SLOs and allowed sites."""

    name: Id = Field(description="Workload id (lowercase, digits, underscores).")
    models: UniqueList[Id] = Field(
        min_length=1, max_length=MAX_LIST, description="Acceptable models (any one of them may serve it)."
    )
    quantizations: UniqueList[Id] = Field(
        min_length=1,
        max_length=MAX_LIST,
        default_factory=lambda: ["bf16", "fp8", "int8", "int4"],
        description="Allowed weight formats (quality policy); default bf16, fp8, int8, int4 and a model's quantized released format (gpt-oss: mxfp4).",
    )
    kv_dtypes: UniqueList[Id] = Field(
        default_factory=lambda: ["bf16"],
        min_length=1,
        max_length=MAX_LIST,
        description="Allowed KV-cache formats.",
    )
    engine: Id = Field(
        "vllm",
        description="Serving engine (catalogs/engines.yaml: vllm, vllm_v0, vllm_eager, sglang, trtllm, llamacpp); default vllm.",
    )
    engine_settings: EngineSettings | None = Field(
        None,
        description="The engine as you run it (memory_claim_frac, kv_free_memory_frac, max_running_sequences, "
        "chunked_prefill_tokens); unset fields keep catalogs/engines.yaml's values.",
    )
    max_quality_tier: Annotated[int, Field(ge=0, le=3)] = Field(
        3, description="Highest weight/KV quality tier allowed (0 = 16-bit or the released format, 1 = +fp8/int8, 2 = +4-bit)."
    )
    requests_per_s: Demand | Annotated[list[DemandValue], Field(min_length=1, max_length=1200)] = Field(
        description="Peak arrival rate, requests/s: one number, or exactly one value per period "
        "(horizon_months / period_months values)."
    )
    growth_frac_per_month: float = Field(
        0.0, ge=-0.5, le=1.0, description="Compound monthly growth of requests_per_s when it is a number."
    )
    hourly_profile_frac: list[Fraction] | None = Field(
        None,
        min_length=24,
        max_length=24,
        description="Optional 24 hourly load fractions of the peak (the base load can be bought, peaks rented).",
    )
    input_tokens: Tokens = Field(description="Prompt tokens per request.")
    output_tokens: Tokens = Field(description="Generated tokens per request.")
    slo: Slo = Field(default_factory=Slo, description="Latency targets: time to first token and per output token, ms.")
    redundancy: Redundancy | None = Field(
        None, description="Keep the SLO with replicas / a node / a site down; default: no spare capacity."
    )
    sites: UniqueList[Id] | None = Field(
        None, min_length=1, max_length=MAX_LIST, description="Sites it may run at; default: every cloud site."
    )
    prefix_cache: PrefixCache | None = Field(None, description="Shared prompt prefix kept in the KV cache (card 3).")
    speculative: Speculative | None = Field(None, description="Speculative decoding with a draft model (card 3).")
    disaggregation: Disaggregation = Field(
        "auto", description="Prefill/decode pools: auto (the optimizer picks), off (co-located only) or on."
    )
    max_sync_ratio: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None, description="Largest exposed communication / step time of its deployments; default: the scenario's."
    )

    @field_validator("hourly_profile_frac")
    @classmethod
    def _busiest_hour_is_the_peak(cls, profile: list[float] | None) -> list[float] | None:
        """The fractions are of the peak ``requests_per_s``, so the busiest hour is 1: a profile below it
        everywhere would plan for less than the stated peak (an all-zero one for nothing), unsaid."""
        top = 1.0 if profile is None else max(profile)
        if top < 1.0:
            fix = f"divide it by {top:g}" if top > 0 else "give the busiest hour 1"
            raise ValueError(
                f"the busiest hour must be 1 (fractions of the peak requests_per_s), the largest is {top:g} — {fix}, "
                "and state requests_per_s as that hour's rate"
            )
        return profile

    @model_validator(mode="after")
    def _growth_needs_one_number(self) -> Workload:
        """Growth compounds a single ``requests_per_s``; with one value per period it was silently ignored."""
        if isinstance(self.requests_per_s, list) and self.growth_frac_per_month != 0:
            raise ValueError(
                "growth_frac_per_month applies to a single requests_per_s; with one value per period, write the "
                "growth into the values, or give requests_per_s as one number (the first period's)"
            )
        return self

    @property
    def engine_key(self) -> str:
        """The engine with its settings, as deployments show it and ``Catalog.engine`` resolves it
        (planner.catalog.engine_settings): ``vllm``, ``vllm[memory_claim_frac=0.95]``."""
        return engine_key(self.engine, self.engine_settings)


class HardwareSpace(Strict):
    """The hardware search space; omitted fields mean 'everything in the catalog'."""

    gpus: UniqueList[Id] | None = Field(
        None, min_length=1, max_length=MAX_LIST, description="GPU types to consider; default all."
    )
    tp: UniqueList[Degree] = Field(
        default_factory=lambda: [1, 2, 4, 8], min_length=1, max_length=16, description="TP degrees."
    )
    pp: UniqueList[Degree] = Field(
        default_factory=lambda: [1, 2], min_length=1, max_length=16, description="PP degrees."
    )
    ep: UniqueList[Degree] | None = Field(
        None, min_length=1, max_length=16, description="EP degrees > 1 MoE models may use ([1]: TP only); default all."
    )
    efficiency: dict[Id, EfficiencyOverride] = Field(
        default_factory=dict,
        max_length=MAX_LIST,
        description="Stated MFU/MBU per GPU type in place of the catalog's, e.g. {h20: {decode_mbu_frac: 0.5}}.",
    )
    gpu_share_fracs: UniqueList[ShareFrac] = Field(
        default_factory=lambda: [0.5, 0.25],
        max_length=2,
        description="Shares of one GPU a TP1·PP1 replica may hold so small models share a GPU "
        "(planner/performance/sharing.py); [] = whole GPUs only.",
    )


Procurement = Literal["rent", "buy", "owned"]
"""owned: only the inventory (and edge devices) — nothing rented or bought."""


def _default_procurement() -> list[Procurement]:
    return ["rent"]


def _default_rental_kinds() -> list[RentalKind]:
    return ["on_demand"]


class Scenario(Strict):
    """A planning question: the cheapest plan that serves every workload within its SLOs."""

    name: ScenarioName
    horizon_months: Annotated[int, Field(ge=1, le=120)] = Field(36, description="Planning horizon, months.")
    period_months: Annotated[int, Field(ge=1, le=120)] = Field(
        1, description="Length of one demand period, months."
    )
    objective: Literal["min_cost", "max_throughput"] = Field(
        "min_cost",
        description="min_cost: the cheapest plan serving every workload; max_throughput: the most traffic (one "
        "common factor on every workload's demand) within the budget, then the cheapest plan serving it.",
    )
    workloads: list[Workload] = Field(
        min_length=1, max_length=MAX_WORKLOADS, description="The traffic to serve, one entry per workload."
    )
    hardware: HardwareSpace = Field(
        default_factory=HardwareSpace, description="GPU types and TP/PP/EP degrees to consider; default: all."
    )
    sites: list[SiteOverride] = Field(
        default_factory=list,
        max_length=MAX_LIST,
        description="Sites added by the scenario, or fields overriding a catalog site of the same name.",
    )
    procurement: Annotated[UniqueList[Procurement], AfterValidator(owned_alone)] = Field(
        default_factory=_default_procurement,
        min_length=1,
        max_length=3,
        description="How GPUs may be obtained: rent, buy, owned (the inventory only).",
    )
    rental_kinds: UniqueList[RentalKind] = Field(
        default_factory=_default_rental_kinds,
        min_length=1,
        max_length=4,
        description="Rental pricing kinds allowed: on_demand, reserved_1y, reserved_3y, spot.",
    )
    rent_providers: UniqueList[Id] | None = Field(
        None,
        min_length=1,
        max_length=MAX_LIST,
        description="Rent only from these providers (the contracts you have); default: the cheapest quote of any.",
    )
    budget: Budget | None = Field(
        None, description="Spending limits (any subset); required by objective max_throughput."
    )
    inventory: list[InventoryItem] = Field(
        default_factory=list, max_length=256, description="GPUs already owned (sunk cost: running costs only)."
    )
    economics: Economics = Field(
        default_factory=Economics, description="Cost-model parameters: depreciation, resale, spot, price what-ifs."
    )
    workspace_gib: Annotated[float, Field(gt=0, le=1024)] = Field(
        DEFAULT_WORKSPACE_GIB, description="Per-GPU workspace reservation, GiB (card 1 default)."
    )
    max_batch: Annotated[int, Field(ge=1, le=MAX_BATCH)] = Field(
        DEFAULT_MAX_BATCH, description="Largest batch breakpoint considered."
    )
    max_utilization_frac: Annotated[float, Field(gt=0, le=1)] = Field(
        0.9, description="Replicas are loaded to at most this fraction of their SLO capacity (headroom)."
    )
    max_sync_ratio: Annotated[float, Field(gt=0, le=1)] = Field(
        0.30,
        description="Largest sync ratio (exposed TP/PP communication / decode step) a deployment may have.",
    )

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        for problem in (  # "@field: ..." names the field (planner.validation_messages)
            repeated_name("workloads", [w.name for w in self.workloads], "workload names", "give each workload its own name"),
            repeated_name("sites", [s.name for s in self.sites], "site names in sites", "merge their fields into one entry per site"),
            period_problem(self.horizon_months, self.period_months),
            demand_range_problem(self.workloads, self.horizon_months, self.period_months),
            unusable_spot(list(self.rental_kinds), list(self.procurement), self.economics, bool(self.inventory) or any(s.devices for s in self.sites)),
        ):  # a repeated site entry silently replaced the earlier one's fields
            if problem is not None:
                raise ValueError(problem)
        if self.objective == "max_throughput" and (
            self.budget is None or all(v is None for v in self.budget.model_dump().values())
        ):  # budget: {} bounds nothing: the search ran to its 10,000× cap
            raise ValueError("@objective: objective max_throughput needs a budget — add budget: {opex_usd_per_month: ...} (or capex_usd, total_usd), or use objective: min_cost")
        return self

    @property
    def periods(self) -> int:
        """Number of demand periods over the horizon."""
        return self.horizon_months // self.period_months


def merged_sites(catalog: Catalog, scenario: Scenario) -> dict[str, Site]:
    """Catalog sites with the scenario's additions and overrides applied."""
    sites = dict(catalog.sites)
    for override in scenario.sites:
        given = {k: v for k, v in override.model_dump(exclude={"name"}).items() if v is not None}
        if "gpus_available" in given:
            given["gpus_available"] = tuple(given["gpus_available"])
        if override.name in sites:
            sites[override.name] = sites[override.name].model_copy(update=given)
        else:
            base = {
                "id": override.name,
                "name": override.name,
                "kind": "edge",
                "rtt_ms": 5.0,
                "electricity_usd_per_kwh": 0.15,
                "pue": 1.0,
                "source": "scenario file",
                "as_of": "2026",
            }
            base.update(given)
            try:
                sites[override.name] = Site.model_validate(base)
            except ValidationError as err:
                raise ScenarioError(
                    format_validation_error("scenario", err, prefix=f"sites[{override.name}]", model=Site)
                ) from None
    return sites


def _check_ids(path: str, loc: str, values: list[str] | None, table: Mapping[str, object], what: str) -> None:
    for i, value in enumerate(values or []):
        if value not in table:
            raise ScenarioError(f"{path}: {loc}[{i}]: unknown {what} '{value}'{suggest_id(value, table)}")


def _check_id(path: str, loc: str, value: str, table: Mapping[str, object], what: str) -> None:
    """:func:`_check_ids` for a field that holds one id (``inventory[0].site``, not ``...site[0]``)."""
    if value not in table:
        raise ScenarioError(f"{path}: {loc}: unknown {what} '{value}'{suggest_id(value, table)}")


def validate_against_catalog(scenario: Scenario, catalog: Catalog, path: str = "scenario") -> None:
    """Check every id in the scenario exists in the catalog (or the scenario's own sites), and the size."""
    sites = merged_sites(catalog, scenario)
    _check_ids(path, "hardware.gpus", scenario.hardware.gpus, catalog.accelerators, "gpu")
    check_efficiency_gpus(path, scenario.hardware.gpus, list(scenario.hardware.efficiency), catalog.accelerators)
    check_hardware(path, scenario, catalog)
    for i, w in enumerate(scenario.workloads):
        loc = f"workloads[{i}]"
        _check_ids(path, f"{loc}.models", w.models, catalog.models, "model")
        _check_ids(path, f"{loc}.quantizations", w.quantizations, catalog.formats, "format")
        _check_ids(path, f"{loc}.kv_dtypes", w.kv_dtypes, catalog.formats, "format")
        for j, kv in enumerate(w.kv_dtypes or []):
            if not catalog.formats[kv].kv_cache:
                raise ScenarioError(f"{path}: {loc}.kv_dtypes[{j}]: {catalog.kv_format_refusal(kv)}")
        if w.engine not in catalog.engines:
            raise ScenarioError(
                f"{path}: {loc}.engine: unknown engine '{w.engine}'{suggest_id(w.engine, catalog.engines)}"
            )
        engine = catalog.engine(w.engine_key)
        if not engine.chunked_prefill and w.input_tokens > engine.chunked_prefill_tokens:
            raise ScenarioError(
                f"{path}: {loc}.engine: {w.engine} has no chunked prefill and prefills at most "
                f"{engine.chunked_prefill_tokens:,} tokens per pass, input_tokens is {w.input_tokens:,} (use vllm)"
            )
        _check_ids(path, f"{loc}.sites", w.sites, sites, "site")
        check_optimizations(path, loc, models=w.models, prefix=w.prefix_cache, spec=w.speculative,
                            input_tokens=w.input_tokens, catalog=catalog)
        if isinstance(w.requests_per_s, list) and len(w.requests_per_s) != scenario.periods:
            raise ScenarioError(
                f"{path}: {loc}.requests_per_s: {len(w.requests_per_s)} values for {scenario.periods} periods of "
                f"{scenario.period_months} month(s) — give {scenario.periods} values, one per period, or one number"
            )
    for i, s in enumerate(scenario.sites):
        devices = list((s.devices or {}).keys())
        _check_ids(path, f"sites[{i}].devices", devices, catalog.accelerators, "gpu")
        _check_ids(path, f"sites[{i}].gpus_available", s.gpus_available, catalog.accelerators, "gpu")
        refuse_misplaced_devices(path, i, s.name, sites[s.name].kind, s.devices or {})
        refuse_kindless_site(path, i, s.name, s.kind is None and s.name not in catalog.sites and not s.devices)
    providers = {p.provider: p for p in catalog.prices}
    _check_ids(path, "rent_providers", scenario.rent_providers, providers, "provider")
    for i, item in enumerate(scenario.inventory):
        _check_id(path, f"inventory[{i}].gpu", item.gpu, catalog.accelerators, "gpu")
        _check_id(path, f"inventory[{i}].site", item.site, sites, "site")
        refuse_edge_inventory(path, i, item.gpu, item.count, item.site, sites[item.site].kind)
    check_owned_supply(scenario, sites, path)
    check_size(scenario, catalog, sites, path)


def parse_scenario(data: object, *, path: str = "scenario", catalog: Catalog | None = None) -> Scenario:
    """Validate a decoded YAML document into a Scenario (ScenarioError with one line per problem).
    ``catalog``: answer an id in the wrong form with the catalog id it means."""
    if not isinstance(data, dict):  # an empty file said only this: the starter to begin from
        raise ScenarioError(f"{path}: expected a mapping at the top level{EMPTY_HINT if data is None else ''}")
    data = serving_document(data, path)
    try:
        return Scenario.model_validate(data)
    except ValidationError as err:
        ids = scenario_id_tables(catalog, data) if catalog is not None else None
        raise ScenarioError(_format_error(path, err, model=Scenario, ids=ids)) from None


def load_scenario(path: Path | str, catalog: Catalog) -> Scenario:
    """Read, validate and cross-check a scenario YAML file."""
    p = Path(path)
    data = load_yaml_file(p, ScenarioError, what="scenario", max_bytes=MAX_SCENARIO_BYTES)
    scenario = parse_scenario(data, path=str(p), catalog=catalog)
    validate_against_catalog(scenario, catalog, str(p))
    return scenario
