"""Mean request lengths of a serving row from its own columns (planner/validate/sources_load.mean_lengths)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.validate.sources_load import mean_lengths


def _row(**values: float | None) -> dict[str, str]:
    return {k: "" if v is None else repr(v) for k, v in values.items()}


def test_inferencex_row_has_random_lengths() -> None:
    """github_issue_serving_points row 3 (DeepSeek-R1, SGLang, N = 32, nominal 1024/1024):
    G = 1 + (24020 − 426.5)/25.6 = 922.62 output tokens; P = G·(301.7 − 151.1)/151.1 = 919.57 prompt tokens
    (uniform lengths in [0.8, 1]·1024 have mean 921.6), not the nominal 1024."""
    row = _row(end_to_end_latency_ms=24020.0, mean_ttft_ms=426.5, mean_tpot_ms=25.6,
               output_tokens_per_s_per_gpu=151.1, total_tokens_per_s_per_gpu=301.7)
    p, g = mean_lengths(row, 1024.0, 1024.0)
    assert g == pytest.approx(1.0 + 23593.5 / 25.6)
    assert g == pytest.approx(922.62, abs=0.01)
    assert p == pytest.approx(g * 150.6 / 151.1)
    assert p == pytest.approx(919.57, abs=0.01)


def test_fixed_length_row_keeps_its_nominal_lengths() -> None:
    """tt-inference-server row 6 (128/1024, N = 1): 1 + (16505 − 27.3)/16.1 = 1024.5, within 2 % of 1024."""
    row = _row(end_to_end_latency_ms=16505.0, mean_ttft_ms=27.3, mean_tpot_ms=16.1)
    assert mean_lengths(row, 128.0, 1024.0) == (128.0, 1024.0)


def test_row_without_latencies_keeps_its_nominal_lengths() -> None:
    row = _row(end_to_end_latency_ms=None, mean_ttft_ms=None, mean_tpot_ms=None)
    assert mean_lengths(row, 256.0, 256.0) == (256.0, 256.0)


def test_prompt_scales_with_output_when_token_rates_are_missing() -> None:
    """No token rates: the prompt mean scales like the output mean (same range ratio): 1 + 900/1 = 901 → 512·901/1000."""
    row = _row(end_to_end_latency_ms=1000.0, mean_ttft_ms=100.0, mean_tpot_ms=1.0)
    p, g = mean_lengths(row, 512.0, 1000.0)
    assert g == pytest.approx(901.0)
    assert p == pytest.approx(512.0 * 901.0 / 1000.0)


@settings(max_examples=60, deadline=None)
@given(
    g=st.integers(2, 8192),
    p=st.integers(1, 32768),
    ttft_ms=st.floats(1.0, 5000.0),
    tpot_ms=st.floats(1.0, 500.0),
)
def test_consistent_fixed_length_rows_round_trip(g: int, p: int, ttft_ms: float, tpot_ms: float) -> None:
    """A row whose E2E is exactly TTFT + (G − 1)·TPOT gives back its nominal lengths."""
    row = _row(end_to_end_latency_ms=ttft_ms + (g - 1) * tpot_ms, mean_ttft_ms=ttft_ms, mean_tpot_ms=tpot_ms)
    assert mean_lengths(row, float(p), float(g)) == (float(p), float(g))
