"""The serving engine as the user runs it: a scenario's ``engine_settings`` over catalogs/engines.yaml.

The settings users change on an engine's command line — vLLM ``--gpu-memory-utilization``,
``--max-num-seqs``, ``--max-num-batched-tokens``; SGLang ``--mem-fraction-static``; TensorRT-LLM
``free_gpu_memory_fraction`` — replace the catalog's defaults for one workload. The engine so set is named by
a key, ``ENGINE[field=value,...]`` (fields sorted, e.g. ``vllm[max_running_sequences=512,memory_claim_frac=0.95]``),
which is what a plan's deployments show in their ``engine`` column and what ``planner predict --engine``
takes, so that the plan and ``predict`` evaluate one and the same engine. A bare id is the catalog's engine.

Every consumer resolves a key through :meth:`planner.catalog.loader.Catalog.engine` (:func:`resolve`): one
record per (catalog, key).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.catalog.schema import Engine

if TYPE_CHECKING:
    from planner.catalog.loader import Catalog


class EngineSettings(BaseModel):
    """Engine settings of one workload; unset fields keep the catalog engine's value."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)  # as a scenario's

    memory_claim_frac: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None,
        description="Share of GPU memory the engine allocates for weights, workspace and KV cache (vLLM "
        "--gpu-memory-utilization, SGLang --mem-fraction-static); default: the engine's (vllm 0.9).",
    )
    kv_free_memory_frac: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None,
        description="Share of the memory left after weights and workspace that becomes KV cache (TensorRT-LLM "
        "free_gpu_memory_fraction); default: the engine's (trtllm 0.9, others 1).",
    )
    max_running_sequences: Annotated[int, Field(ge=1, le=65536)] | None = Field(
        None, description="Most sequences one step runs (vLLM --max-num-seqs); default: the engine's."
    )
    chunked_prefill_tokens: Annotated[int, Field(ge=16, le=1_048_576)] | None = Field(
        None,
        description="Token budget of one scheduler step (vLLM --max-num-batched-tokens); default: the engine's.",
    )

    def overrides(self) -> dict[str, float | int]:
        """The fields set, by name (read per candidate: no model_dump)."""
        return {k: v for k in type(self).model_fields if (v := getattr(self, k)) is not None}


KEY = re.compile(r"^(?P<id>[a-z0-9]+(?:_[a-z0-9]+)*)(?:\[(?P<settings>[^\[\]]*)\])?$")
"""``id`` or ``id[field=value,...]``."""


@functools.lru_cache(maxsize=256)
def engine_key(engine_id: str, settings: EngineSettings | None) -> str:
    """The key of ``engine_id`` with ``settings``: the bare id when none is set. Cached: every candidate
    configuration reads its workload's key (EngineSettings is frozen, so hashable)."""
    fields = {} if settings is None else settings.overrides()
    if not fields:
        return engine_id
    return f"{engine_id}[" + ",".join(f"{k}={v:.10g}" for k, v in sorted(fields.items())) + "]"


class EngineKeyError(ValueError):
    """An engine key that does not parse or whose settings are out of range (the message says which)."""


def parse_engine_key(key: str) -> tuple[str, EngineSettings | None]:
    """(engine id, settings) of a key; :class:`EngineKeyError` naming the problem and the valid form."""
    match = KEY.match(key.strip())
    if match is None:
        raise EngineKeyError(f"'{key}' is not an engine id or ENGINE[field=value,...], e.g. vllm[memory_claim_frac=0.95]")
    body = match["settings"]
    if body is None:
        return match["id"], None
    values: dict[str, float | int] = {}
    for item in filter(None, (part.strip() for part in body.split(","))):
        name, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError(item)
            values[name.strip()] = _number(value.strip())
        except ValueError:
            raise EngineKeyError(f"'{item}' in '{key}' is not field=number, e.g. memory_claim_frac=0.95") from None
    try:
        settings = EngineSettings.model_validate(values)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        known = ", ".join(EngineSettings.model_fields)
        raise EngineKeyError(f"'{key}': {where}: {problem['msg'].lower()} (settings: {known})") from None
    return match["id"], settings


def _number(text: str) -> float | int:
    """``text`` as an int when it is one, else a finite float (ValueError otherwise)."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


_RESOLVED: dict[tuple[int, str], tuple[Catalog, Engine]] = {}
_LOCK = threading.Lock()


def resolve(catalog: Catalog, key: str, base: Engine, settings: EngineSettings | None) -> Engine:
    """The engine of ``key`` in ``catalog``: ``base`` (the catalog engine of its id) with its parsed
    ``settings`` applied and validated as a catalog record is; one record per (catalog, key)."""
    if settings is None or not settings.overrides():
        return base
    with _LOCK:
        hit = _RESOLVED.get((id(catalog), key))
        if hit is not None and hit[0] is catalog:
            return hit[1]
    engine = Engine.model_validate({**base.model_dump(), **settings.overrides()})
    with _LOCK:
        _RESOLVED[(id(catalog), key)] = (catalog, engine)  # the catalog is held: its id is not reused
    return engine
