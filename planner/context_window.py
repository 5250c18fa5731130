"""Whether a request fits a model's context window (one rule for `planner predict` and the candidate table of
`planner plan`, `compare`, `budget` and `sweep`).

    P + G ≤ C

P the prompt tokens, G the answer tokens of a request, C the model's ``max_context_tokens`` (catalogs/models.yaml:
the maximum position count of its released config). Engines refuse a longer sequence: vLLM's ``max_model_len``
and SGLang's ``context_length`` default to that count and reject a request whose prompt plus ``max_tokens``
exceeds it (serving beyond it takes a RoPE-scaling override, e.g. YaRN for Qwen, which changes the model's
quality and is not in the catalog). Qwen3-8B, C = 40,960: a 40,000-token prompt with a 1,000-token answer
does not fit (41,000 > 40,960); with a 960-token answer it does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `planner predict` imports this module at start-up, before any pydantic model is needed
    from planner.catalog.schema import Model

REASON_START = "a request's"
"""How :func:`context_window_problem`'s reasons start (planner.optimize.explain picks its relaxation by it)."""


def context_window_problem(model: Model, *, input_tokens: int, output_tokens: int) -> str:
    """Why a request of ``input_tokens`` + ``output_tokens`` does not fit the context window of ``model``
    (empty when it fits)."""
    need = input_tokens + output_tokens
    if need <= model.max_context_tokens:
        return ""
    return (
        f"{REASON_START} {need:,} tokens (prompt {input_tokens:,} + answer {output_tokens:,}) exceed the "
        f"{model.max_context_tokens:,}-token context window of {model.id}"
    )


def longest_prompt_tokens(models: list[Model], *, output_tokens: int) -> int:
    """The longest prompt any of ``models`` takes with an ``output_tokens`` answer: max C − G (≤ 0: none). By
    symmetry also the longest answer after a prompt of that many tokens."""
    return max(m.max_context_tokens for m in models) - output_tokens
