"""The optimizations of a deployment as readout records: ``[{name, on, why}]`` (card 3).

``prefix_cache`` and ``speculative`` appear when the workload states them (the candidate variant says
whether it is on and why, from its break-even rule); ``kv_quantization`` and ``chunked_prefill`` are always
listed: the KV format the plan chose among the allowed ones, and the engine's chunked-prefill budget (off,
budget 0, for an engine without chunked prefill).
"""

from __future__ import annotations

import math
from typing import Any

from planner.scenario import Workload

PLAIN_KV_DTYPES = ("bf16", "fp16")
"""KV formats that are not a quantization."""


def deployment_optimizations(cand: Any, workload: Workload, *, engine: str) -> list[dict[str, Any]]:
    """[{name, on, why}] for one candidate row (pandas Series or mapping) of ``workload``."""
    out: list[dict[str, Any]] = []
    if workload.prefix_cache is not None:
        out.append(
            {"name": "prefix_cache", "on": bool(cand.get("prefix_cache", False)), "why": str(cand.get("prefix_cache_why", ""))}
        )
    if workload.speculative is not None:
        out.append(
            {"name": "speculative", "on": bool(cand.get("speculative", False)), "why": str(cand.get("speculative_why", ""))}
        )
    kv = str(cand["kv_dtype"])
    allowed = ", ".join(workload.kv_dtypes)
    quantized = kv not in PLAIN_KV_DTYPES
    why = (
        f"KV cache in {kv}: the cheaper choice among the allowed kv_dtypes ({allowed})"
        if len(workload.kv_dtypes) > 1
        else f"KV cache in {kv}: the only allowed kv_dtype"
    )
    out.append({"name": "kv_quantization", "on": quantized, "why": why})
    chunk = float(cand.get("chunk_tokens", math.nan))
    if math.isnan(chunk):
        return out
    if chunk == 0:  # the candidate table's chunk budget of an engine without chunked prefill
        why = f"engine {engine} has no chunked prefill: each prompt is prefilled in a pass of its own while decoding waits"
        out.append({"name": "chunked_prefill", "on": False, "why": why})
        return out
    out.append(
        {
            "name": "chunked_prefill",
            "on": True,
            "why": f"engine {engine} splits prompts into steps of at most {chunk:,.0f} tokens shared with decode",
        }
    )
    return out


def is_on(optimizations: list[dict[str, Any]], name: str) -> bool:
    """Whether the optimization ``name`` is on in a deployment's records."""
    return any(o["name"] == name and o["on"] for o in optimizations)
