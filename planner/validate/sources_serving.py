"""Readers of the serving sweeps added for issue 12 (Lambda vLLM TP sweep) and the list of files not read yet."""

from __future__ import annotations

from planner import performance as perf
from planner.validate.cases import _Builder, _fitting_batch, _num


def _lambda(b: _Builder, rows: list[dict[str, str]]) -> None:
    """Lambda's vLLM 0.5.4 TP sweep: 320 ShareGPT prompts (230 in / 224 out) at rate inf, max_num_seqs 256.

    vLLM 0.5 runs a Python scheduler and input preparation per step (engine ``vllm_eager``'s host costs);
    rows 37-45 (v0.5.4 vs v0.6.0 tables with no GPU type) are skipped.
    """
    src = "lambda_vllm_a100_h100"
    for i, row in enumerate(rows):
        label = f"{row['model']} {row['gpu'] or '?'} TP{row['tp']} {row['weights_precision']}"
        if not row["gpu"]:
            b.skip(src, f"row {i + 1} {label}", "GPU type not stated (v0.5.4 vs v0.6.0 table)")
            continue
        tp = int(row["tp"])
        cfg = b.terms(
            src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp,
            engine="vllm_eager",
        )
        if cfg is None:
            continue
        seqs = _num(row, "max_num_seqs") or 256.0
        batch = _fitting_batch(
            cfg[2], context_tokens=LAMBDA_INPUT_TOKENS + LAMBDA_OUTPUT_TOKENS, cap=seqs)
        common = {"batch": batch, "prompt_tokens": LAMBDA_INPUT_TOKENS, "output_tokens": LAMBDA_OUTPUT_TOKENS}
        ctx = float(perf.mean_decode_context_tokens(LAMBDA_INPUT_TOKENS, LAMBDA_OUTPUT_TOKENS))
        b.add(
            src, "tpot_itl", label, _num(row, "median_itl_ms"), cfg, context_tokens=ctx, serving=True,
            fitted=False, note="vLLM 0.5 TP workers: per-step input broadcast not modelled", **common,
        )
        b.skip(
            src, f"{label} throughput",
            "a burst of 320 ShareGPT prompts at rate inf (ramp and long-output tail), not a steady-state load",
        )


LAMBDA_INPUT_TOKENS = 230.0
LAMBDA_OUTPUT_TOKENS = 224.0
"""Mean ShareGPT lengths of the Lambda runs (raw result file of Mistral-7B TP1 on H100, README)."""


SERVING_READERS = {"lambda_vllm_a100_h100.csv": _lambda}
"""Measurement file → reader (called by planner.validate.sources.build_cases)."""

UNREAD_SOURCES: dict[str, str] = {}
"""Measurement files whose rows are not predicted yet, with the reason listed in the report."""
