"""``kind: training`` scenario files: train a model on D tokens by a deadline at minimum cost.

A training scenario is YAML validated by :class:`TrainingScenario` (``planner schema --kind training``
prints its JSON Schema). Sites, inventory and economics reuse the serving scenario's types
(:mod:`planner.scenario`). :func:`scenario_kind` reads the ``kind`` key so a command can dispatch on it.
Defaults with a source: MTBF per GPU 8,088 h (Meta: one interruption per 7.9 h on 1,024 cards ≈ one per
card per 337 days, card 4), checkpoint write 7 GB/s (SuperPOD "Good" tier, card 4).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from difflib import get_close_matches
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from planner.catalog.loader import Catalog
from planner.catalog.schema import Id, Model
from planner.errors import ScenarioError, id_spelling, suggest_id
from planner.inputs import MAX_SCENARIO_BYTES, load_yaml_file
from planner.limits import MAX_COUNT, MAX_LIST, MAX_TOKENS, MAX_USD
from planner.scenario import Economics, InventoryItem
from planner.scenario_base import ScenarioName, Strict, UniqueList, scenario_id_tables
from planner.training.limits import (
    MAX_DAYS,
    MAX_DIMENSION,
    MAX_GLOBAL_BATCH_SEQUENCES,
    MAX_LAYERS,
    MAX_TRAINING_TOKENS,
    SERVING_ECONOMICS,
    SERVING_FIELDS,
)
from planner.validation_messages import IdTable, format_validation_error

Precision = Literal["bf16", "fp8"]
TrainingProcurement = Literal["rent", "buy", "owned"]
Recompute = Literal["none", "selective", "full"]
Schedule = Literal["1f1b", "interleaved", "fill_drain"]

DEFAULT_GPU_MTBF_HOURS = 337.0 * 24.0
"""One interruption per card per 337 days (Meta, 7.9 h on 1,024 cards), card 4."""
DEFAULT_CHECKPOINT_WRITE_GB_PER_S = 7.0
"""SuperPOD scalable unit "Good" storage tier, card 4."""

Layers = Annotated[int, Field(ge=1, le=MAX_LAYERS)]
Width = Annotated[int, Field(ge=1, le=MAX_DIMENSION)]
Degrees = Annotated[
    UniqueList[Annotated[int, Field(ge=1, le=1024)]], Field(min_length=1, max_length=MAX_LIST)
]
Days = Annotated[float, Field(gt=0, le=MAX_DAYS)]


def _rent() -> list[TrainingProcurement]:
    return ["rent"]


def _nearest_divisor(n: int, target: int) -> int:
    """The divisor of ``n`` closest to ``target`` (the smaller on a tie)."""
    divisors = {d for i in range(1, math.isqrt(n) + 1) if n % i == 0 for d in (i, n // i)}
    return min(sorted(divisors), key=lambda d: abs(d - target))


class Architecture(Strict):
    """An inline decoder-only architecture (dense or MoE), for a model not in the catalog."""

    layers: Layers
    hidden_size: Width
    ffn_size: Annotated[int, Field(ge=0, le=MAX_DIMENSION)] = Field(description="SwiGLU intermediate width.")
    heads: Width = Field(description="Query heads.")
    kv_heads: Width | None = Field(None, description="KV heads (default: heads).")
    vocab_size: Width = 32000
    experts: Annotated[int, Field(ge=1, le=100_000)] | None = Field(None, description="Routed experts (MoE).")
    experts_per_token: Annotated[int, Field(ge=1, le=100_000)] | None = None
    expert_ffn_size: Width | None = None

    @model_validator(mode="after")
    def _check(self) -> Architecture:
        if self.hidden_size % self.heads:  # the messages named no value that works
            near = _nearest_divisor(self.hidden_size, self.heads)
            raise ValueError(
                f"hidden_size must be a multiple of heads ({self.hidden_size} / {self.heads}) — e.g. heads: {near}"
            )
        if self.heads % (self.kv_heads or self.heads):
            near = _nearest_divisor(self.heads, self.kv_heads or self.heads)
            raise ValueError(
                f"heads must be a multiple of kv_heads ({self.heads} / {self.kv_heads}) — e.g. kv_heads: {near}"
            )
        moe = (self.experts, self.experts_per_token, self.expert_ffn_size)
        if any(v is not None for v in moe) and any(v is None for v in moe):
            raise ValueError("an MoE needs experts, experts_per_token and expert_ffn_size together")
        if (
            self.experts is not None
            and self.experts_per_token is not None
            and self.experts_per_token > self.experts
        ):
            raise ValueError(
                f"experts_per_token {self.experts_per_token} exceeds experts {self.experts} — "
                f"route each token to at most {self.experts} experts"
            )
        return self


class TrainingHardware(Strict):
    """GPU types, the largest cluster and the parallelism degrees the search may use."""

    gpus: Annotated[UniqueList[Id], Field(min_length=1)] | None = Field(
        None, description="GPU types to consider; default all datacenter GPUs."
    )
    max_gpus: Annotated[int, Field(ge=1, le=MAX_COUNT)] = Field(
        1024, description="Largest GPU count of the run."
    )
    tp: Degrees = Field(default_factory=lambda: [1, 2, 4, 8], description="TP degrees.")
    pp: Degrees = Field(default_factory=lambda: [1, 2, 4, 8], description="PP degrees.")
    micro_batches: Annotated[
        UniqueList[Annotated[int, Field(ge=1, le=MAX_GLOBAL_BATCH_SEQUENCES)]],
        Field(min_length=1, max_length=MAX_LIST),
    ] = Field(default_factory=lambda: [1, 2, 4], description="Micro-batch sizes, sequences.")


class TrainingScenario(Strict):
    """A training question: the cheapest run (or the earliest within a budget) that meets the deadline."""

    kind: Literal["training"]
    name: ScenarioName
    model: Id | Architecture = Field(description="Catalog model id or an inline architecture.")
    training_tokens: Annotated[float, Field(gt=0, le=MAX_TRAINING_TOKENS)] = Field(
        description="Training tokens D."
    )
    seq_len_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = Field(description="Sequence length, tokens.")
    global_batch_tokens: Annotated[int, Field(ge=1, le=MAX_GLOBAL_BATCH_SEQUENCES * MAX_TOKENS)] | None = (
        Field(None, description="Tokens per optimizer step.")
    )
    global_batch_sequences: Annotated[int, Field(ge=1, le=MAX_GLOBAL_BATCH_SEQUENCES)] | None = Field(
        None, description="Sequences per step."
    )
    deadline_days: Days = Field(description="Wall-clock days from start to the last step.")
    objective: Literal["min_cost", "earliest_finish"] = "min_cost"
    budget_usd: Annotated[float, Field(ge=0, le=MAX_USD)] | None = Field(
        None, description="Total cost cap, USD (earliest_finish needs it)."
    )
    precision: Precision = Field(
        "bf16", description="Matmul precision: bf16 or fp8 (states stay 16 B/param)."
    )
    procurement: UniqueList[TrainingProcurement] = Field(
        default_factory=_rent, description="rent, buy and/or owned."
    )
    hardware: TrainingHardware = Field(default_factory=TrainingHardware)
    sites: Annotated[UniqueList[Id], Field(min_length=1, max_length=MAX_LIST)] | None = Field(
        None, description="Catalog sites allowed; default every cloud/datacenter site."
    )
    inventory: list[InventoryItem] = Field(
        default_factory=list, description="GPUs already owned (procurement owned)."
    )
    economics: Economics = Field(default_factory=Economics)
    checkpoint_write_gb_per_s: Annotated[float, Field(ge=0.01, le=100_000)] = Field(
        DEFAULT_CHECKPOINT_WRITE_GB_PER_S, description="Checkpoint storage write bandwidth, GB/s."
    )
    gpu_mtbf_hours: Annotated[float, Field(ge=1, le=1e8)] = Field(
        DEFAULT_GPU_MTBF_HOURS, description="Mean time between failures per GPU, h."
    )
    restart_s: Annotated[float, Field(ge=0, le=604_800)] = Field(
        600.0, description="Restart after a failure (reload, warm-up), s (at most a week)."
    )
    setup_days: Annotated[float, Field(ge=0, le=MAX_DAYS)] = Field(
        0.0, description="Time before the first step (T_0), days."
    )
    workspace_gib: Annotated[float, Field(ge=0, le=1024)] = Field(
        2.0, description="Per-GPU reserve for buffers and fragmentation, GiB."
    )
    mfu_frac: Annotated[float, Field(ge=0.01, le=1)] | None = Field(
        None,
        description="Override the per-family kernel efficiency (compute share of peak before bubbles/comms).",
    )

    @field_validator("training_tokens", "budget_usd", mode="before")
    @classmethod
    def _yaml_exponent(cls, value: object) -> object:
        """YAML 1.1 reads ``1.0e11`` (no sign in the exponent) as a string; accept it as the number."""
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
        return value

    @model_validator(mode="after")
    def _check(self) -> TrainingScenario:
        """Cross-field rules; each message starts with the field to fix ("field: problem — alternative")."""
        if (self.global_batch_tokens is None) == (self.global_batch_sequences is None):
            raise ValueError(
                "global_batch_tokens: give exactly one of global_batch_tokens or global_batch_sequences "
                f"(e.g. global_batch_tokens: {self.seq_len_tokens * 1024} for 1,024 sequences)"
            )
        if self.global_batch_tokens is not None and self.global_batch_tokens % self.seq_len_tokens:
            lower = self.global_batch_tokens // self.seq_len_tokens * self.seq_len_tokens
            near = lower if lower > 0 else self.seq_len_tokens
            raise ValueError(
                f"global_batch_tokens: {self.global_batch_tokens} must be a multiple of seq_len_tokens "
                f"{self.seq_len_tokens} — use {near} ({near // self.seq_len_tokens:,} sequences)"
            )
        field = "global_batch_tokens" if self.global_batch_tokens is not None else "global_batch_sequences"
        if self.global_batch_seqs > MAX_GLOBAL_BATCH_SEQUENCES:
            raise ValueError(
                f"global_batch_tokens: {self.global_batch_seqs:,} sequences per step exceed the limit of "
                f"{MAX_GLOBAL_BATCH_SEQUENCES:,} — use at most {MAX_GLOBAL_BATCH_SEQUENCES * self.seq_len_tokens:,}"
            )
        step_tokens = self.global_batch_seqs * self.seq_len_tokens
        if step_tokens > self.training_tokens:
            most = int(self.training_tokens // self.seq_len_tokens)
            raise ValueError(
                f"{field}: one optimizer step of {step_tokens:,} tokens exceeds training_tokens "
                f"{self.training_tokens:.4g} — use at most {most:,} sequences per step"
            )
        if self.objective == "earliest_finish" and self.budget_usd is None:
            raise ValueError(
                "budget_usd: objective earliest_finish needs budget_usd (or use objective: min_cost)"
            )
        unread = sorted(self.economics.model_fields_set & SERVING_ECONOMICS)
        if unread:  # they were accepted and silently left out of the run's cost
            raise ValueError(
                f"economics.{unread[0]}: a serving plan's setting — a training run rents on demand (no spot) and "
                "orders its nodes once, so it is not read; remove it"
            )
        if not self.procurement:
            raise ValueError("procurement: list at least one of rent, buy, owned (e.g. [rent])")
        if "owned" in self.procurement and not self.inventory:
            raise ValueError(
                "inventory: procurement owned needs an inventory (e.g. [{gpu: h100_sxm, count: 8, site: dc1}]), "
                "or use procurement [rent]"
            )
        if self.inventory and "owned" not in self.procurement:  # the owned GPUs were silently left unused
            listed = ", ".join(self.procurement)
            raise ValueError(
                f"procurement: [{listed}] leaves the inventory unused — add owned (procurement: [{listed}, owned]) "
                "to train on the GPUs you own, or remove inventory"
            )
        return self

    @property
    def global_batch_seqs(self) -> int:
        """Sequences per optimizer step."""
        if self.global_batch_sequences is not None:
            return self.global_batch_sequences
        assert self.global_batch_tokens is not None
        return self.global_batch_tokens // self.seq_len_tokens


def architecture_model(arch: Architecture, *, model_id: str = "inline") -> Model:
    """A catalog :class:`Model` from an inline architecture (head_dim = hidden/heads), for the ledgers."""
    data: dict[str, object] = {
        "id": model_id,
        "name": model_id,
        "family": "inline",
        "layers": arch.layers,
        "hidden_size": arch.hidden_size,
        "q_heads": arch.heads,
        "kv_heads": arch.kv_heads or arch.heads,
        "head_dim": arch.hidden_size // arch.heads,
        "ffn_size": arch.ffn_size,
        "vocab_size": arch.vocab_size,
        "max_context_tokens": 1 << 20,
        "params_published_b": 1.0,
        "source": "scenario file",
        "as_of": "2026",
    }
    if arch.experts is not None:
        data["moe"] = {
            "experts_routed": arch.experts,
            "experts_per_token": arch.experts_per_token,
            "expert_ffn_size": arch.expert_ffn_size,
            "moe_layers": arch.layers,
        }
        data["ffn_size"] = 0
    return Model.model_validate(data)


def resolve_model(scenario: TrainingScenario, catalog: Catalog) -> Model:
    """The catalog model or the inline architecture as a :class:`Model`."""
    if isinstance(scenario.model, str):
        return catalog.model(scenario.model)
    return architecture_model(scenario.model)


def scenario_kind(data: object) -> str:
    """``kind`` of a decoded scenario document: 'training' or 'serving' (the default)."""
    if isinstance(data, dict) and data.get("kind") == "training":
        return "training"
    return "serving"


def read_yaml(path: Path | str) -> object:
    """Decode a scenario file with the safe YAML reader (ScenarioError naming the file, line and column)."""
    return load_yaml_file(path, ScenarioError, what="scenario", max_bytes=MAX_SCENARIO_BYTES)


def _check_ids(path: str, loc: str, values: list[str] | None, table: object, what: str) -> None:
    """Every id of the list field ``loc`` is in ``table`` (ScenarioError naming ``loc[i]`` otherwise)."""
    for i, value in enumerate(values or []):
        _check_id(path, f"{loc}[{i}]", value, table, what)


def _check_id(path: str, loc: str, value: str, table: object, what: str) -> None:
    """The id of the field ``loc`` (one value, e.g. ``inventory[0].site``) is in ``table``."""
    assert isinstance(table, dict)
    if value not in table:
        raise ScenarioError(f"{path}: {loc}: unknown {what} '{value}'{suggest_id(value, table)}")


def _id_tables(catalog: Catalog, data: dict[object, object]) -> IdTable:
    """The valid ids at a training location: the serving scenario's tables, plus ``model`` and the
    top-level ``sites`` (``model: Qwen/Qwen3-8B`` got "did you mean qwen_qwen3_8b?", no catalog id)."""
    serving = scenario_id_tables(catalog, data)

    def ids(loc: tuple[object, ...]) -> Iterable[str] | None:
        if loc[:1] == ("model",) and len(loc) == 1:
            return catalog.models
        if loc[:1] == ("sites",):
            return catalog.sites
        return serving(loc)

    return ids


def parse_training_scenario(data: object, catalog: Catalog, *, path: str = "scenario") -> TrainingScenario:
    """Validate a decoded document into a TrainingScenario and check its ids against the catalog."""
    if not isinstance(data, dict):
        empty = " (the file is empty or only comments — `planner init FILE --kind training` writes a starter)"
        raise ScenarioError(f"{path}: expected a mapping at the top level{empty if data is None else ''}")
    kind = data.get("kind")
    if kind is None and "training_tokens" in data and "workloads" not in data:
        raise ScenarioError(
            f"{path}: kind: required — add `kind: training` (the file reads as a training scenario)"
        )
    kinds = ("training", "inference", "serving")
    if (
        isinstance(kind, str)
        and kind != "training"
        and get_close_matches(id_spelling(kind), kinds, 1, 0.75) == ["training"]
    ):
        raise ScenarioError(f"{path}: kind: must be 'training' (got {kind!r}) — did you mean training?")
    if kind != "training":
        raise ScenarioError(f"{path}: kind: expected 'training' (a serving scenario goes to `planner plan`)")
    carried = next((key for key in SERVING_FIELDS if key in data), None)
    if carried is not None:
        raise ScenarioError(
            f"{path}: {carried}: a serving scenario's field (`planner plan`) — `planner train` does not read it; remove "
            "it (a training run rents on demand from the cheapest provider; budget_usd caps its cost)"
        )
    try:
        scenario = TrainingScenario.model_validate(data)
    except ValidationError as err:
        errors = err.errors()
        if len(errors) == 1 and errors[0]["loc"] == () and "error" in errors[0].get("ctx", {}):
            # a cross-field rule of TrainingScenario._check: its message names the field itself
            raise ScenarioError(f"{path}: {errors[0]['ctx']['error']}") from None
        raise ScenarioError(
            format_validation_error(path, err, model=TrainingScenario, ids=_id_tables(catalog, data))
        ) from None
    if isinstance(scenario.model, str) and scenario.model not in catalog.models:
        raise ScenarioError(
            f"{path}: model: unknown model '{scenario.model}'{suggest_id(scenario.model, catalog.models)}"
        )
    _check_ids(path, "hardware.gpus", scenario.hardware.gpus, catalog.accelerators, "gpu")
    _check_ids(path, "sites", scenario.sites, catalog.sites, "site")
    for i, item in enumerate(scenario.inventory):
        _check_id(path, f"inventory[{i}].gpu", item.gpu, catalog.accelerators, "gpu")
        _check_id(path, f"inventory[{i}].site", item.site, catalog.sites, "site")
    return scenario


def load_training_scenario(path: Path | str, catalog: Catalog) -> TrainingScenario:
    """Read, validate and cross-check a ``kind: training`` scenario file."""
    return parse_training_scenario(read_yaml(path), catalog, path=str(path))


def refuse_training_file(path: Path | str, command: str) -> None:
    """The hook serving commands call first: a ``kind: training`` file gets one line pointing at
    ``planner train`` (ScenarioError, exit 2). Unreadable files pass through to the command's own loader."""
    try:
        data = read_yaml(path)
    except ScenarioError:
        return
    if scenario_kind(data) == "training":
        raise ScenarioError(
            f"{path}: kind: training is a training scenario — `planner {command}` plans serving; run `planner train {path}`"
        )
