"""Which tensor-parallel degrees can shard a model's attention heads (one rule for `planner predict` and the
candidate table of `planner plan`).

TP must divide the query heads, and either divide the KV heads or be a multiple of them (each KV head is then
replicated TP / kv_heads times); an MLA model has one shared latent, so only the query heads count. Llama-3.1-70B
(64 query heads, 8 KV heads): TP 1, 2, 4, 8, 16, 32, 64 shard it; TP 3 or 6 do not.
"""

from __future__ import annotations

TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)
"""The degrees listed as valid alternatives in a refusal."""


def head_split_problems(q_heads: int, kv_heads: int, tp: int, mla: bool, *, label: str = "TP") -> list[str]:
    """Why TP ``tp`` cannot shard ``q_heads`` query and ``kv_heads`` KV heads (empty when it can); each reason
    starts with ``label`` + tp ("TP3", or "--tp 3" for the CLI)."""
    problems = []
    if q_heads % tp:
        problems.append(f"{label}{tp} does not divide the {q_heads} attention heads")
    if not mla and kv_heads % tp and tp % kv_heads:
        problems.append(f"{label}{tp} neither divides nor is a multiple of the {kv_heads} KV heads")
    return problems


def valid_tps(q_heads: int, kv_heads: int, mla: bool) -> str:
    """The degrees of :data:`TP_DEGREES` that shard the heads, e.g. '1, 2, 4, 8, 16, 32, 64'."""
    return ", ".join(str(t) for t in TP_DEGREES if not head_split_problems(q_heads, kv_heads, t, mla))
