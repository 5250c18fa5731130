"""Shared builders for the training tests: scenarios from dicts, run settings, one-layout evaluations."""

from __future__ import annotations

from typing import Any

from planner.catalog import Catalog
from planner.training.layout import Evaluation, Layout, RunSettings, evaluate_layout, layout_problem
from planner.training.scenario import TrainingScenario, parse_training_scenario
from planner.training.terms import gpu_terms, model_terms

BASE: dict[str, Any] = {
    "kind": "training",
    "name": "test",
    "model": "qwen3_8b",
    "training_tokens": 1.0e11,
    "seq_len_tokens": 8192,
    "global_batch_sequences": 384,
    "deadline_days": 30,
    "procurement": ["rent"],
    "sites": ["us_east"],
    "hardware": {"gpus": ["h100_sxm"], "max_gpus": 16},
}


def scenario(catalog: Catalog, **changes: Any) -> TrainingScenario:
    """BASE with top-level keys replaced."""
    return parse_training_scenario({**BASE, **changes}, catalog)


def run(tokens: float = 1.0e11, seqs: int = 384) -> RunSettings:
    """Card-4 defaults: 7 GB/s checkpoints, 337-day MTBF per GPU, 600 s restart, no setup, 2 GiB reserve."""
    return RunSettings(tokens, seqs, 7.0, 337.0 * 24.0, 600.0, 0.0, 2.0)


def evaluate(
    catalog: Catalog,
    layout: Layout,
    *,
    model: str = "qwen3_8b",
    seq_len: int = 8192,
    seqs: int = 384,
    mfu_frac: float | None = None,
    tokens: float = 1.0e11,
) -> Evaluation:
    """Evaluate one layout (asserting it can run)."""
    terms = model_terms(catalog.model(model), seq_len=seq_len)
    gpu = gpu_terms(catalog, layout.gpu, precision="bf16", mfu_frac=mfu_frac)
    assert layout_problem(layout, terms, gpu, seqs) is None
    return evaluate_layout(layout, terms, gpu, run(tokens, seqs))
