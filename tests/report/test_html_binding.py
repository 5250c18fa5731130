"""The HTML report's binding constraints read as the terminal's: one line per family and key with the periods
merged (planner.report.formatting.binding_rows), so twelve ``demand_coverage chat/0`` … ``chat/11`` rows are
one ``chat/0–11`` line in both (the HTML listed every row, one per period)."""

from __future__ import annotations

import re

from planner.report.html import build_html
from tests.report import synthetic_plan as syn


def _binding_section(page: str) -> list[tuple[str, str]]:
    section = page.split("<h2>Binding constraints</h2>", 1)[1]
    body = section.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [(a, b) for a, b in re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td></tr>", body)]


def test_html_binding_lines_merge_the_periods_of_one_key_as_the_terminal() -> None:
    binding = [{"family": "demand_coverage", "key": ["chat", str(t)], "slack": 0.0} for t in range(12)]
    binding += [
        {"family": "gpu_supply", "key": ["h100_sxm", "dc1", str(t)], "slack": 0.0}
        for t in (1, 2, 3, 6, 7, 11)
    ]
    page = build_html(syn.plan_result(binding_constraints=binding))
    assert _binding_section(page) == [
        ("demand_coverage", "chat/0–11"),
        ("gpu_supply", "h100_sxm/dc1/1–3, 6–7, 11"),
    ]
    assert "chat/0</td>" not in page and "chat/11</td>" not in page
