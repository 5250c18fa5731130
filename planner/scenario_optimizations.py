"""Per-workload serving optimizations a scenario may state: prefix caching and speculative decoding (card 3).

Stating a field gives the optimizer the choice: every candidate of the workload then also comes in an
"on" variant (when card 3's break-even rule says it can pay on that candidate), and the MILP keeps the
cheaper one. Omitting the field means "off" (no variants, same candidates as before).

    prefix_cache: {hit_frac: 0.8, prefix_tokens: 6144}
    speculative: {draft_model: llama_3_1_8b, acceptance_frac: 0.7, draft_tokens: 4}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.schema import Id
from planner.errors import ScenarioError, suggest_id
from planner.limits import DEFAULT_DRAFT_TOKENS, MAX_DRAFT_TOKENS, MAX_TOKENS

if TYPE_CHECKING:
    from planner.catalog.loader import Catalog



class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, str_strip_whitespace=True, strict=True, allow_inf_nan=False
    )


class PrefixCache(_Strict):
    """A prompt prefix shared by many requests (system prompt, RAG corpus header) kept in the KV cache."""

    hit_frac: Annotated[float, Field(ge=0, le=1)] = Field(
        description="Fraction of requests whose shared prefix is found in the cache, 0..1."
    )
    prefix_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = Field(
        description="Tokens of the shared prefix (part of input_tokens)."
    )


class Speculative(_Strict):
    """Speculative decoding with a smaller draft model of the same tokenizer on the same GPUs."""

    draft_model: Id = Field(description="Draft model id (catalogs/models.yaml), smaller than the target.")
    acceptance_frac: Annotated[float, Field(ge=0, le=1)] = Field(
        description="Per-position acceptance a of a drafted token, 0..1 (card 3: E[N] = 1 + a + … + a^k)."
    )
    draft_tokens: Annotated[int, Field(ge=1, le=MAX_DRAFT_TOKENS)] = Field(
        DEFAULT_DRAFT_TOKENS,
        description="Tokens drafted per round k (the target verifies k + 1 per sequence); default 4.",
    )


def check_optimizations(
    path: str, loc: str, *, models: list[str], prefix: PrefixCache | None, spec: Speculative | None,
    input_tokens: int, catalog: Catalog,
) -> None:
    """Cross-check a workload's optimization fields against the catalog and its own lengths (exit 2)."""
    if prefix is not None and prefix.prefix_tokens > input_tokens:
        raise ScenarioError(
            f"{path}: {loc}.prefix_cache.prefix_tokens: {prefix.prefix_tokens} exceeds input_tokens "
            f"{input_tokens} — the shared prefix is part of the prompt; use at most {input_tokens}"
        )
    if spec is None:
        return
    if spec.draft_model not in catalog.models:
        raise ScenarioError(
            f"{path}: {loc}.speculative.draft_model: unknown model '{spec.draft_model}'"
            f"{suggest_id(spec.draft_model, catalog.models)}"
        )
    draft = catalog.models[spec.draft_model]
    if all(catalog.models[t].vocab_size != draft.vocab_size for t in models):
        same = sorted(
            m.id for m in catalog.models.values()
            if m.vocab_size == catalog.models[models[0]].vocab_size and m.params_published_b < catalog.models[models[0]].params_published_b
        )
        hint = f" — e.g. {same[0]}" if same else ""
        raise ScenarioError(
            f"{path}: {loc}.speculative.draft_model: {spec.draft_model} has another tokenizer (vocab "
            f"{draft.vocab_size:,}) than {', '.join(models)}; a draft must share the target's tokenizer{hint}"
        )
    draft_b = draft.params_published_b
    for target in models:
        target_b = catalog.models[target].params_published_b
        if draft_b >= target_b:
            vocab = catalog.models[target].vocab_size  # a suggestion must also share the target's tokenizer
            smaller = sorted(
                (m.params_published_b, m.id) for m in catalog.models.values()
                if m.params_published_b < target_b and m.vocab_size == vocab
            )
            hint = f" — e.g. {smaller[-1][1]}" if smaller else ""
            raise ScenarioError(
                f"{path}: {loc}.speculative.draft_model: {spec.draft_model} ({draft_b:g}B) is not smaller than "
                f"the target {target} ({target_b:g}B); a draft must be smaller{hint}"
            )
