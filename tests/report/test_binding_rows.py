"""The terminal's binding-constraint lines (planner.report.formatting.binding_rows): the rows of one family
and key that differ only in their slice are one line, so twelve demand rows no longer hide the supply rows
behind the table's cut (buy_vs_rent showed 12 demand_coverage lines and nothing else)."""

from __future__ import annotations

from planner.report.formatting import binding_rows, number_runs_text


def test_runs_of_slices() -> None:
    assert number_runs_text([0, 1, 2, 5, 7, 8]) == "0–2, 5, 7–8"
    assert number_runs_text([3]) == "3" and number_runs_text([0, 1]) == "0–1"


def test_slices_of_one_key_are_one_line_in_first_appearance_order() -> None:
    binding = [{"family": "demand_coverage", "key": ["chat", str(t)]} for t in range(12)]
    binding += [
        {"family": "gpu_supply", "key": ["h100_sxm", "dc1", str(t)]} for t in (1, 2, 3, 6, 7, 8, 9, 11)
    ]
    binding += [
        {"family": "gpu_supply", "key": ["h200_sxm", "us_east", "8"]},
        {"family": "demand_coverage", "key": ["scale_floor"]},
    ]
    assert binding_rows(binding) == [
        ("demand_coverage", "chat/0–11"),
        ("gpu_supply", "h100_sxm/dc1/1–3, 6–9, 11"),
        ("gpu_supply", "h200_sxm/us_east/8"),
        ("demand_coverage", "scale_floor"),
    ]

