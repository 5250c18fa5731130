"""The scheduler's fixed point (planner/performance/fixed_point.py, used by load.py): the root it finds, and evaluation on the
still-moving rows of a large table giving the same numbers as evaluating every row."""

from __future__ import annotations

import numpy as np
import pytest

from planner import performance as perf
from planner.catalog import Catalog
from planner.performance import fixed_point, load
from planner.performance.stack import stack_terms


def test_secant_and_falsi_find_the_smallest_root_or_none() -> None:
    """f(T) = a + b·T²: the smallest root (1 − sqrt(1 − 4ab)) / 2b where 4ab < 1, none (not converged) above."""
    a = np.array([0.01, 0.02, 0.2, 0.3])[:, None]
    b = np.array([1.0, 10.0, 1.0, 1.0])[:, None]
    t, converged = load.fixed_point_s(lambda s: a + b * s * s, a)
    roots = (1 - np.sqrt(np.maximum(1 - 4 * a * b, 0.0))) / (2 * b)
    assert converged.ravel().tolist() == [True, True, True, False]
    assert t[:3] == pytest.approx(roots[:3], rel=1e-10)


def test_a_large_table_gives_the_same_numbers_on_its_moving_rows_alone(catalog: Catalog) -> None:
    """600 deployments × loads from idle to overloaded: the stacked fixed point (which evaluates only the
    moving rows once they are at most half of a table of ≥ 512) equals the same rows solved in small groups
    (every row evaluated each round), bit for bit."""
    assert fixed_point.COMPACT_MIN_ROWS <= 600
    models = ["llama_3_1_8b", "qwen3_8b", "llama_3_1_70b"]
    gpus = ["h100_sxm", "a100_sxm_80gb", "l40s", "h200_sxm"]
    rows = []
    for i in range(600):
        model, gpu = catalog.models[models[i % 3]], catalog.accelerators[gpus[(i // 3) % 4]]
        tp = 4 if model.id == "llama_3_1_70b" else 1  # BF16 70B: 35 GB per GPU at TP4
        rows.append(perf.deployment_terms(
            catalog, model=model, gpu=gpu, weight_format=catalog.formats["bf16"], kv_format=catalog.formats["bf16"],
            tp=tp,
        ))
    terms = stack_terms(rows)
    lam = np.linspace(0.05, 60.0, 600)[:, None]
    kw = {"input_tokens": 1000.0, "output_tokens": 200.0, "max_batch": 256.0, "network_s": 0.02}
    whole = load.serve_at_load(terms, requests_per_s=lam, **kw)
    from planner.performance.stack import take_terms

    parts = [
        load.serve_at_load(take_terms(terms, np.arange(k, k + 100)), requests_per_s=lam[k : k + 100], **kw)
        for k in range(0, 600, 100)
    ]
    for name in ("step_s", "ttft_s", "tpot_s", "stable"):
        joined = np.concatenate([getattr(p, name) for p in parts])
        assert np.array_equal(getattr(whole, name), joined, equal_nan=True), name
    stable = np.asarray(whole.stable).ravel()
    assert stable.any() and not stable.all()  # both kinds of rows are in the table
