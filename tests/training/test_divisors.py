"""The DP degrees of a training layout are the divisors of the global batch: found in O(sqrt n) trials (a
global batch of 10^9 sequences tried 10^9 numbers per TP × PP pair, and `planner train` hung)."""

from __future__ import annotations

import time

from planner.training.search import divisors


def test_divisors_match_the_definition() -> None:
    for n in range(1, 600):
        assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]
    assert divisors(1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert divisors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]


def test_divisors_of_a_large_batch_take_no_time() -> None:
    start = time.perf_counter()
    found = divisors(10**9)
    assert time.perf_counter() - start < 1.0
    assert len(found) == 100 and found[0] == 1 and found[-1] == 10**9 and found == sorted(found)
