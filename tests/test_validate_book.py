"""The book's RTX PRO 6000 rows (BOOK ch01 §1.3, ch08 §8.2): how make validate reads them, and the card's
decode MBU against the one logging-off measurement of that box."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner import performance as perf
from planner import validate as v
from planner.catalog.loader import Catalog
from planner.performance.steps import host_s
from planner.validate.sources import BOOK_LOGGING_REASON

GPU_TEXT = "RTX PRO 6000 Blackwell WS (96 GB, 1.792 TB/s, 503.8 TFLOP/s BF16 dense)"
HEADER = [
    "gpu", "model", "precision", "engine", "batch_size_seqs", "context_tokens", "input_tokens", "output_tokens",
    "bytes_read_per_round_gb", "lower_bound_round_ms", "measured_round_ms", "mbu_pct", "prefill_mfu_pct",
    "output_tokens_per_s", "ttft_ms", "itl_ms", "tpot_ms", "notes", "source",
]
ROW_B1 = [
    GPU_TEXT, "Qwen3-8B", "BF16", "vLLM 0.23", "1", "2048", "2048", "256", "15.44", "8.62", "26.26", "33", "62",
    "37", "96", "27", "26.5",
    "bytes = weights 15.14 GB + KV 0.302 GB; TPOT 26.5 ms from the Sec. 1.3 box (eager mode); same box: "
    "12.1 ms after disabling logging, 10.7 ms GPU-only step", "BOOK",
]
ROW_B16 = [GPU_TEXT, "Qwen3-8B", "BF16", "vLLM 0.23", "16", "2048", "2048", "256", "19.97", "11.14", "27.44",
           "41", "61", "", "", "", "", "", "BOOK"]


def _qwen_terms(catalog: Catalog) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model("qwen3_8b"), gpu=catalog.gpu("rtx_pro_6000"),
        weight_format=catalog.format("bf16"), kv_format=catalog.format("bf16"), engine="vllm",
    )


def test_logging_rows_are_skipped_and_the_logging_off_step_is_predicted(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (tmp_path / "book_rtxpro6000_qwen3_8b.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerow(ROW_B1)
        w.writerow(ROW_B16)
    monkeypatch.setenv(v.MEASUREMENTS_ENV, str(tmp_path))
    rep = v.run_validation(catalog, cross_validate=False)
    by_metric = {r.metric: r for r in rep.rows}
    assert sorted(by_metric) == ["tpot_itl", "ttft_or_prefill"]
    tpot = by_metric["tpot_itl"]
    assert tpot.measured == 12.1 and "logging off" in tpot.label
    step_ms = float(perf.decode_step(_qwen_terms(catalog), batch=1.0, context_tokens=2048.0).total_s) * 1e3
    assert tpot.predicted == pytest.approx(step_ms, rel=1e-12)
    assert by_metric["ttft_or_prefill"].measured == 96.0
    logging = [s for s in rep.skipped if s.reason == BOOK_LOGGING_REASON]
    # B = 1: its decode round and serving rate; B = 16: its decode round.
    assert sorted(s.label for s in logging) == [
        "qwen3_8b rtx_pro_6000 bf16 B=1 ctx=2048 (isolated decode round)",
        "qwen3_8b rtx_pro_6000 bf16 B=1 ctx=2048 output tokens/s",
        "qwen3_8b rtx_pro_6000 bf16 B=16 ctx=2048 (isolated decode round)",
    ]


def test_rtx_pro_6000_decode_reproduces_the_logging_off_box(catalog: Catalog) -> None:
    """BOOK ch01 §1.3, Qwen3-8B BF16, B = 1 at 2K: GPU-only step 10.7 ms, 12.1 ms with vLLM's host work
    (logging off). The model's GPU part (step − engine host time) and its whole step land within 2 %."""
    terms = _qwen_terms(catalog)
    step = perf.decode_step(terms, batch=1.0, context_tokens=2048.0)
    gpu_ms = (float(step.total_s) - float(host_s(terms, 1.0))) * 1e3
    assert gpu_ms == pytest.approx(10.7, rel=0.02)
    assert float(step.total_s) * 1e3 == pytest.approx(12.1, rel=0.02)
    # The 2K prefill of the same box (96 ms measured, compute-bound) stays within 10 %.
    assert float(perf.prefill_step(terms, prompt_tokens=2048.0).total_s) * 1e3 == pytest.approx(96.0, rel=0.1)


SHIPPED = Path(__file__).resolve().parents[2] / "shared" / "reference" / "measurements"


@pytest.mark.skipif(not (SHIPPED / "book_rtxpro6000_qwen3_8b.csv").is_file(), reason="shared measurements not present")
def test_shipped_book_file_gives_the_logging_off_step(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped CSV's B = 1 notes carry the 12.1 ms logging-off step; every decode round is skipped."""
    monkeypatch.delenv(v.MEASUREMENTS_ENV, raising=False)
    cases, skipped = v.build_cases(catalog, SHIPPED)
    book = [c for c in cases if c.source == "book_rtxpro6000_qwen3_8b"]
    assert sorted((c.metric, c.measured) for c in book) == [("tpot_itl", 12.1), ("ttft_or_prefill", 96.0)]
    rounds = [s for s in skipped if s.source == "book_rtxpro6000_qwen3_8b" and "decode round" in s.label]
    assert len(rounds) == 5 and all(s.reason == BOOK_LOGGING_REASON for s in rounds)
