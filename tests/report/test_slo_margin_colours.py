"""The SLOs sheet colours a margin red below 10 % and green above; a prefill or decode pool has one of the
two latencies, and its other margin cell is blank. The rule "cell < 0.1" read the blank as 0 and painted
it red (examples/moe_ep: maverick_chat's decode pool showed a red TTFT margin, its prefill pool a red TPOT
margin) — a finance reader takes red as an SLO miss. The rules test for a number first."""

from __future__ import annotations

import dataclasses

from planner.report.workbook import build_workbook
from planner.report.workbook_tables import SLO_HEADERS, SLO_MARGIN_WARN_FRAC
from planner.report.xlsx import column_of
from tests.report import synthetic_plan as syn


def _pools_workbook() -> object:
    first = syn.DEPLOYMENTS[0]
    pools = [
        dataclasses.replace(first, role="prefill", tpot_ms=0.0, decode_step_ms=0.0),
        dataclasses.replace(first, role="decode", ttft_ms=0.0),
    ]
    return build_workbook(syn.plan_result(deployments=pools))


def test_blank_margins_of_pools_are_not_coloured() -> None:
    ws = _pools_workbook()["SLOs"]  # type: ignore[index]
    ttft, tpot = column_of(SLO_HEADERS, "TTFT margin (%)"), column_of(SLO_HEADERS, "TPOT margin (%)")
    assert ws[f"{ttft}2"].value == "=1-H2/I2" and ws[f"{tpot}2"].value is None  # prefill: no TPOT
    assert ws[f"{ttft}3"].value is None and ws[f"{tpot}3"].value == "=1-K3/L3"  # decode: no TTFT
    rules = {
        str(rng.sqref): [(r.type, r.formula, r.dxf.fill.fgColor.rgb) for r in rng.rules]
        for rng in ws.conditional_formatting
    }
    warn = SLO_MARGIN_WARN_FRAC
    for col in (ttft, tpot):
        assert rules[f"{col}2:{col}3"] == [
            ("expression", [f"AND(ISNUMBER({col}2),{col}2<{warn})"], "00F8CBAD"),
            ("expression", [f"AND(ISNUMBER({col}2),{col}2>={warn})"], "00C6EFCE"),
        ]
