"""M/D/1 queueing ledger (card 1): scalars, numpy arrays element-wise, and the wait ↔ utilisation inverse."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ledgers import inference as inf


def test_md1_wait_scalar() -> None:
    # ρ = 5/s · 0.1 s = 0.5 → W_q = 0.5 · 0.1 / (2 · 0.5) = 0.05 s
    assert inf.md1_queue_wait_s(5.0, service_s=0.1) == pytest.approx(0.05, rel=1e-12)
    assert inf.md1_queue_wait_s(10.0, service_s=0.1) == math.inf
    assert inf.md1_queue_wait_s(0.0, service_s=0.1) == 0.0


def test_md1_wait_on_arrays_matches_scalars() -> None:
    arrival = np.array([[0.0, 2.0, 5.0, 9.99, 10.0, 20.0]])
    service = np.array([[0.1], [0.05]])
    waits = inf.md1_queue_wait_s(arrival, service_s=service)
    assert waits.shape == (2, 6)
    for i in range(2):
        for j in range(6):
            expected = inf.md1_queue_wait_s(float(arrival[0, j]), service_s=float(service[i, 0]))
            assert waits[i, j] == expected


@settings(deadline=None, max_examples=50)
@given(
    service_s=st.floats(min_value=1e-4, max_value=10.0),
    max_wait_s=st.floats(min_value=1e-4, max_value=100.0),
)
def test_md1_max_utilization_inverts_the_wait(service_s: float, max_wait_s: float) -> None:
    rho = inf.md1_max_utilization_frac(service_s=service_s, max_wait_s=max_wait_s)
    assert 0.0 < rho < 1.0
    wait = inf.md1_queue_wait_s(rho / service_s, service_s=service_s)
    assert wait == pytest.approx(max_wait_s, rel=1e-9)
