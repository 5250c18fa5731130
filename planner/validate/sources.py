"""Per-source readers: each measurement CSV of ``shared/reference/measurements`` → cases and skipped rows."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.units import MS_PER_S
from planner.validate.cases import (
    EDGE_GENERATION_TOKENS,
    EDGE_PROMPT_TOKENS,
    MAX_OFFLINE_BATCH,
    MLENERGY_INPUT_TOKENS,
    Case,
    Skipped,
    _Builder,
    _fitting_batch,
    _num,
    _read_csv,
    measurements_dir,
)
from planner.validate.edge_builds import DP4A_ENGINE, DP4A_NOTE, edge_engine
from planner.validate.names import MODEL_IDS
from planner.validate.sources_collectives import COLLECTIVE_READERS
from planner.validate.sources_load import LOAD_READERS
from planner.validate.sources_memory import MEMORY_READERS
from planner.validate.sources_serving import SERVING_READERS, UNREAD_SOURCES

BOOK_LOGGING_OFF_MS = re.compile(r"([0-9.]+) ms after disabling logging")
"""The §1.3 box's step time with request logging off, as the B = 1 row's notes print it."""

BOOK_LOGGING_REASON = (
    "request logging on (BOOK ch01 §1.3: 26.5 ms per step, 12.1 ms with it off): rounds held at a ≈ 26 ms "
    "logging floor from B = 1 to 16 (bytes +29 %); no catalog engine has it"
)


def _book(b: _Builder, rows: list[dict[str, str]]) -> None:
    """The book's RTX PRO 6000 rows. Their decode rounds, decode-only rates and serving rates were measured
    with request logging on, which holds every step at ≈ 26 ms whatever the batch: they are listed as
    skipped (BOOK_LOGGING_REASON). The same box's logging-off step (12.1 ms, B = 1, 2K) is predicted instead
    — not fitted: engines.yaml vllm host_step_ms (12.1 − 10.7 ms) and the card's decode_mbu_frac
    (8.62 / 10.7 ms) are derived from that box, so the row checks consistency, not generalization. The 2K
    prefill (96 ms, compute-bound, above the logging floor) is predicted as before."""
    src = "book_rtxpro6000_qwen3_8b"
    for row in rows:
        batch = _num(row, "batch_size_seqs") or 1.0
        ctx = _num(row, "context_tokens") or 0.0
        label = f"qwen3_8b rtx_pro_6000 bf16 B={batch:g} ctx={ctx:g}"
        cfg = b.terms(src, label, model="Qwen3-8B", gpu=row["gpu"], quant="BF16", engine="vllm")
        if cfg is None:
            continue
        if _num(row, "measured_round_ms") is not None:
            b.skip(src, label + " (isolated decode round)", BOOK_LOGGING_REASON)
        clean = BOOK_LOGGING_OFF_MS.search(row.get("notes", ""))
        if clean is not None and batch == 1:
            b.add(
                src,
                "tpot_itl",
                label + " (§1.3 box, logging off)",
                float(clean.group(1)),
                cfg,
                batch=batch,
                context_tokens=ctx,
                fitted=False,
                note="the box the vllm host cost and this card's MBU come from: a consistency check",
            )
        inp = _num(row, "input_tokens") or ctx
        if batch == 1 and _num(row, "ttft_ms") is not None:
            b.add(src, "ttft_or_prefill", label, _num(row, "ttft_ms"), cfg, prompt_tokens=inp, fitted=False,
                  note="prefill under request logging (above the logging floor): validated, not fitted")
        elif _num(row, "ttft_ms") is not None:
            b.skip(src, label + " ttft", "TTFT of a 64-request burst includes queueing, not a prefill time")
        if _num(row, "output_tokens_per_s") is not None:
            b.skip(src, label + " output tokens/s", BOOK_LOGGING_REASON)


MLENERGY_EP_NOTE = (
    "EP inside the TP group (vLLM -tp 8 --enable-expert-parallel: throughput x ITL = 7.6 and 1,742 running "
    "sequences, max_num_seqs of ONE engine, not of 8 DP ranks); validated, not fitted: vLLM DeepSeek decode "
    "sits near 16 ms at small batch (also the AWQ H100 TP8 batch-1 rows), which no term explains"
)
"""Why the ML.ENERGY DeepSeek-V3.1 "EP8" rows are predicted with ``ep_in_tp`` and are not fitted."""


def _mlenergy(b: _Builder, rows: list[dict[str, str]]) -> None:
    """ML.ENERGY vLLM sweeps. "EP8" rows: 8 GPUs, experts split 8 ways inside the TP group (MLENERGY_EP_NOTE):
    every row of the source, single-engine ones included, has throughput × median ITL ≈ 0.7-1 × max_num_seqs,
    which one engine gives; eight attention-DP engines would each run max_num_seqs (8× more)."""
    src = "mlenergy_vllm"
    for row in rows:
        par = row["parallelism"]
        tp = int(row["gpu_count"])
        ep = int(par[2:]) if par.startswith("EP") else 1
        seqs = _num(row, "max_num_seqs") or 1.0
        label = f"{row['model']} {row['gpu']} {par} {row['weights_precision']} max_num_seqs={seqs:g}"
        cfg = b.terms(
            src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp, engine="vllm",
            ep=ep, ep_in_tp=ep > 1,
        )
        if cfg is None:
            continue
        out = _num(row, "avg_output_len_tokens") or 256.0
        note = MLENERGY_EP_NOTE if ep > 1 else ""
        batch = _fitting_batch(cfg[2], context_tokens=MLENERGY_INPUT_TOKENS + out, cap=seqs)
        ctx = float(perf.mean_decode_context_tokens(MLENERGY_INPUT_TOKENS, out))
        b.add(
            src,
            "tpot_itl",
            label,
            _num(row, "median_itl_ms"),
            cfg,
            batch=batch,
            context_tokens=ctx,
            note=note,
            fitted=ep == 1,
            serving=True,
            prompt_tokens=MLENERGY_INPUT_TOKENS,
            output_tokens=out,
        )
        b.add(
            src,
            "throughput",
            label,
            _num(row, "output_tokens_per_s"),
            cfg,
            batch=batch,
            prompt_tokens=MLENERGY_INPUT_TOKENS,
            output_tokens=out,
            note=note,
            fitted=ep == 1,
        )


def _trtllm(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "trtllm_throughput"
    for row in rows:
        tp = int(row["tp_gpus"])
        isl = float(row["isl_tokens"])
        osl = float(row["osl_tokens"])
        label = f"{row['model']} {row['gpu']} TP{tp} {row['precision']} {isl:g}/{osl:g}"
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["precision"], tp=tp, engine="trtllm")
        if cfg is None:
            continue
        batch = _fitting_batch(cfg[2], context_tokens=isl + osl, cap=MAX_OFFLINE_BATCH)
        b.add(
            src,
            "throughput",
            label + f" (B={batch:g})",
            _num(row, "output_tokens_per_s"),
            cfg,
            batch=batch,
            prompt_tokens=isl,
            output_tokens=osl,
        )


def _trtllm_a100(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "trtllm_a100_llama7b"
    for row in rows:
        batch = _num(row, "batch_size") or 1.0
        isl = _num(row, "isl_tokens") or 1.0
        osl = _num(row, "osl_tokens")
        label = f"llama_2_7b a100 fp16 B={batch:g} {isl:g}/{osl or 0:g}"
        cfg = b.terms(
            src, label, model=row["model"], gpu=row["gpu"], quant="FP16", tp=int(row["tp_gpus"]), engine="trtllm"
        )
        if cfg is None:
            continue
        if osl is not None:
            b.add(
                src,
                "throughput",
                label,
                _num(row, "measured_output_tokens_per_s_per_gpu"),
                cfg,
                batch=batch,
                prompt_tokens=isl,
                output_tokens=osl,
                note="LLaMA-1 7B mapped to llama_2_7b (same shapes)",
            )
        b.add(
            src,
            "ttft_or_prefill",
            label,
            _num(row, "measured_first_token_latency_ms"),
            cfg,
            prompt_tokens=isl,
        )


def _fastertransformer(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "fastertransformer_13b"
    for row in rows:
        tp = int(row["tp_gpus"])
        label = f"13B dense {row['gpu']} TP{tp} ctx={row['context_tokens']}"
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant="FP16", tp=tp, engine="trtllm")
        if cfg is None:
            continue
        ctx = float(row["context_tokens"])
        b.add(src, "ttft_or_prefill", label, _num(row, "measured_prefill_ms"), cfg, prompt_tokens=ctx)
        b.add(src, "tpot_itl", label, _num(row, "measured_decode_ms_per_token"), cfg, context_tokens=ctx + 5)


def _edge(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "edge_llamacpp"
    for row in rows:
        label = f"{row['model']} {row['quant'] or '?'} on {row['device']} ({row['backend']})"
        quant = row["quant"] or ""
        release_format = "MXFP4" if str(MODEL_IDS.get(row["model"])).startswith("gpt_oss") else ""
        if not quant and release_format:
            quant = release_format  # gpt-oss is released (and served by Ollama) in MXFP4
        elif not quant and MODEL_IDS.get(row["model"]) is not None:
            b.skip(src, label, "quantisation not stated")
            continue
        engine = edge_engine(row)
        cfg = b.terms(src, label, model=row["model"], gpu=row["device"], quant=quant, engine=engine)
        if cfg is None:
            continue
        note = "not llama.cpp" if "llama.cpp" not in row["backend"] else ""
        note = DP4A_NOTE if engine == DP4A_ENGINE else note
        fitted = cfg[0].placement != "datacenter" and row["uncertain"] != "U"
        if cfg[0].placement == "datacenter":
            note = (note + "; " if note else "") + "llama.cpp on a datacenter GPU: validated, not fitted"
        if row["uncertain"] == "U":
            note = (note + "; " if note else "") + "secondary source [U]"
        gen_test = row["generation_test"]
        gen = float(gen_test[2:]) if gen_test.startswith("tg") else EDGE_GENERATION_TOKENS
        tg = _num(row, "token_generation_tokens_per_s")
        if tg is not None:
            b.add(
                src, "tpot_itl", label, MS_PER_S / tg, cfg, context_tokens=gen / 2.0, note=note, fitted=fitted
            )
        pp = _num(row, "prompt_processing_tokens_per_s")
        if pp is not None:
            test = row["prompt_test"]
            prompt = float(test[2:]) if test.startswith("pp") else EDGE_PROMPT_TOKENS
            b.add(
                src,
                "ttft_or_prefill",
                label,
                prompt / pp * MS_PER_S,
                cfg,
                prompt_tokens=prompt,
                note=note,
                fitted=fitted,
            )


READERS: dict[str, Callable[[_Builder, list[dict[str, str]]], None]] = {
    "book_rtxpro6000_qwen3_8b.csv": _book,
    "mlenergy_vllm.csv": _mlenergy,
    "trtllm_throughput.csv": _trtllm,
    "trtllm_a100_llama7b.csv": _trtllm_a100,
    "fastertransformer_13b.csv": _fastertransformer,
    **MEMORY_READERS,
    **COLLECTIVE_READERS,
    "edge_llamacpp.csv": _edge,
    **SERVING_READERS,
    **LOAD_READERS,
}
"""Every read measurement file → its reader, in report order (this module's and its siblings' tables)."""


def build_cases(catalog: Catalog, directory: Path | None = None) -> tuple[list[Case], list[Skipped]]:
    """Map every prediction-target row of the measurement CSVs to a case (or a skipped entry)."""
    d = directory or measurements_dir()
    b = _Builder(catalog)
    for name, reader in READERS.items():
        reader(b, _read_csv(d, name))
    for name, reason in UNREAD_SOURCES.items():
        for i, _row in enumerate(_read_csv(d, name)):
            b.skip(name.removesuffix(".csv"), f"row {i + 1}", reason)
    return b.cases, b.skipped
