"""A rent quote's source line prints its price in cents and its instance sizes as the CLI writes them (QA: the
terminal, workbook, HTML and JSON said "$1.9/GPU-h" and "1-4-GPU instances" where `planner train` says $1.90
and 1/2/4)."""

from __future__ import annotations

from planner.problem.supply import instance_sizes_text, usd_per_gpu_hour_text


def test_prices_in_cents_and_sizes_as_powers_of_two() -> None:
    assert usd_per_gpu_hour_text(1.9) == "$1.90" and usd_per_gpu_hour_text(2.69) == "$2.69"
    assert usd_per_gpu_hour_text(0.165) == "$0.165"  # a finer quote keeps its digits
    assert instance_sizes_text(1, 4) == "1/2/4" and instance_sizes_text(1, 8) == "1/2/4/8"
    assert instance_sizes_text(2, 4) == "2/4" and instance_sizes_text(8, 8) == "8"
