"""candidates.operating_point takes its M/D/1 queueing from the card-1 ledger; the numbers are the closed form."""

from __future__ import annotations

import numpy as np

from planner.candidates import operating_point


def test_operating_point_matches_the_md1_closed_form() -> None:
    rng = np.random.default_rng(11)
    step = rng.uniform(5e-3, 80e-3, size=(40, 1)) * np.linspace(1.0, 3.0, 64)[None, :]
    prefill = rng.uniform(20e-3, 2.0, size=(40, 1))
    out_tok = rng.uniform(50.0, 1000.0, size=(40, 1))
    net = rng.uniform(0.0, 0.2, size=(40, 1))
    slo = rng.uniform(0.5, 5.0, size=(40, 1))
    batch = np.arange(1, 65, dtype=float)[None, :]
    op = operating_point(
        step_s=step, prefill_s=prefill, output_tokens=out_tok, network_s=net, slo_ttft_s=slo, batch=batch,
        max_utilization_frac=0.8,
    )
    # the formulas of the candidates module docstring, written out
    fixed = prefill + step / 2.0 + net
    budget = np.maximum(slo - fixed, 0.0)
    rho_max = 2.0 * budget / (prefill + 2.0 * budget)
    capacity = 0.8 * np.minimum(batch / (out_tok * step + batch * prefill), rho_max / prefill)
    rho = np.minimum(capacity * prefill, 0.999999)
    ttft = rho * prefill / (2.0 * (1.0 - rho)) + fixed
    assert (budget == 0.0).any() and (budget > 0.0).any()
    np.testing.assert_allclose(op["capacity"], capacity, rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(op["ttft"], ttft, rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(op["tpot"], step + batch * prefill / out_tok, rtol=1e-12, atol=0.0)
    scalar = operating_point(
        step_s=float(step[3, 5]), prefill_s=float(prefill[3, 0]), output_tokens=float(out_tok[3, 0]),
        network_s=float(net[3, 0]), slo_ttft_s=float(slo[3, 0]), batch=6.0, max_utilization_frac=0.8,
    )
    assert float(scalar["ttft"]) == float(op["ttft"][3, 5])
    assert float(scalar["capacity"]) == float(op["capacity"][3, 5])
