"""``make validate``: predict every public measurement with the planner's performance model and score it.

Each row of ``shared/reference/measurements/*.csv`` that is a prediction target becomes a :class:`Case`
(a catalog configuration plus the quantity to predict); the prediction goes through the same code path as
``planner predict`` and ``planner plan`` (:func:`planner.performance.deployment_terms`, ``decode_step``,
``prefill_step``, ``max_batch``, ``weights_bytes_per_gpu``). Rows whose model, GPU or format is not in the
catalog are listed as skipped with the reason.

Prediction rules (one per metric):

- ``tpot_itl``: decode step at batch B and mean history P + G/2, ms.
- ``ttft_or_prefill``: one prefill of P tokens at batch 1, ms.
- ``throughput``: continuous batching at B sequences. Per B requests the engine runs G decode steps and
  B prefills (batched up to ``PREFILL_TOKEN_BUDGET`` tokens), so
  ``tok/s = B·G / (G·T_dec(B, P + G/2) + B·T_pre(P)/b_pre)``; offline max-throughput runs use the
  largest batch that fits memory at P + G, capped at ``MAX_OFFLINE_BATCH``.
- ``memory``: weight bytes per GPU, GiB.
- ``allreduce_busbw``: the all-reduce ledgers.collectives.allreduce_choice picks (ring, tree, hierarchical, NVLS) for the stated
  message, busbw = algbw · 2(n − 1)/n, GB/s.

Calibration (:func:`fit_calibration`): per serving engine, a regularised least-squares fit on
log(predicted / measured) of ``prefill_mfu_scale`` (on TTFT rows) and then ``decode_mbu_scale`` (on TPOT and
throughput rows), each by a plain Nelder–Mead simplex (no scipy; :data:`FIT_METRICS`). Scales without rows
keep their physics defaults. Leave-one-source-out error is the error of each source's rows under a fit made
without that source.
"""

from __future__ import annotations

from planner.validate.cases import (
    EDGE_GENERATION_TOKENS,
    EDGE_PROMPT_TOKENS,
    MAX_OFFLINE_BATCH,
    MEASUREMENTS_ENV,
    METRICS,
    MLENERGY_INPUT_TOKENS,
    TIME_METRICS,
    WORKSPACE_GIB,
    Case,
    Skipped,
    measurements_dir,
)
from planner.validate.fit import (
    FIT_METRICS,
    FIT_PARAMETERS,
    FIT_REGULARIZATION,
    LN_SCALE_MAX,
    LN_SCALE_MIN,
    MIN_FIT_ROWS,
    UNCALIBRATED_PARAMETERS,
    fit_calibration,
    fit_engine,
    leave_one_source_out,
    nelder_mead,
)
from planner.validate.fit import _uncalibrated_catalog as _uncalibrated_catalog
from planner.validate.names import FORMAT_IDS, GPU_IDS, MEMORY_MODEL_FORMATS, MODEL_IDS
from planner.validate.predictions import (
    PREFILL_TOKEN_BUDGET,
    case_efficiency,
    evaluate,
    predict_case,
    throughput_tokens_per_s,
)
from planner.validate.report import LARGE_ERROR_RATIO, TARGET_MEDIAN_PCT, ValidationReport, write_reports
from planner.validate.run import run_validation
from planner.validate.scores import ErrorSummary, ResultRow, abs_pct_error, summarize
from planner.validate.sources import build_cases

__all__ = [
    "EDGE_GENERATION_TOKENS",
    "EDGE_PROMPT_TOKENS",
    "FIT_METRICS",
    "FIT_PARAMETERS",
    "FIT_REGULARIZATION",
    "FORMAT_IDS",
    "GPU_IDS",
    "LARGE_ERROR_RATIO",
    "LN_SCALE_MAX",
    "LN_SCALE_MIN",
    "MAX_OFFLINE_BATCH",
    "MEASUREMENTS_ENV",
    "MEMORY_MODEL_FORMATS",
    "METRICS",
    "MIN_FIT_ROWS",
    "MLENERGY_INPUT_TOKENS",
    "MODEL_IDS",
    "PREFILL_TOKEN_BUDGET",
    "TARGET_MEDIAN_PCT",
    "TIME_METRICS",
    "UNCALIBRATED_PARAMETERS",
    "WORKSPACE_GIB",
    "Case",
    "ErrorSummary",
    "ResultRow",
    "Skipped",
    "ValidationReport",
    "abs_pct_error",
    "build_cases",
    "case_efficiency",
    "evaluate",
    "fit_calibration",
    "fit_engine",
    "leave_one_source_out",
    "measurements_dir",
    "nelder_mead",
    "predict_case",
    "run_validation",
    "summarize",
    "throughput_tokens_per_s",
    "write_reports",
]
