"""The plan workbook's Summary sheet: the plan in words, then its money — total (present value), capex,
resale, opex per month, cost per million output tokens — as formulas over the Costs sheet's ledger totals,
the SLO margins and the GPUs per type."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from planner.readout.budget import budget_use
from planner.report.formatting import (
    INT_FORMAT,
    MAX_COLUMN_WIDTH,
    NUMBER_FORMAT,
    PERCENT_FORMAT,
    USD_FORMAT,
    months_text,
    status_text,
)
from planner.report.gpu_use_text import GPU_USE_TITLE, gpu_use_lines
from planner.report.workbook_costs import (
    BUSIEST_OPEX_NAME,
    HORIZON_NAME,
    KIND_NAMES,
    SUPPLY_HEADERS,
    TOKENS_NAME,
    TOTAL_NAME,
)
from planner.report.workbook_tables import SLO_HEADERS
from planner.report.xlsx import (
    Formula,
    align,
    append_row,
    column_of,
    finish_sheet,
    set_cell,
    style_header,
    wrap_text_row,
    write_note,
)

if TYPE_CHECKING:
    from planner.readout import PlanResult

TOKENS_PER_MTOK = 1e6
TOTAL_LABEL = "Total cost (USD, present value)"
CAPEX_LABEL = "Capex (USD)"
RESALE_LABEL = "Resale credit (USD, last month)"
OPEX_LABEL = "Opex (USD/month)"
BUSIEST_OPEX_LABEL = "Opex, busiest month (USD/month)"
AVERAGE_LABEL = "Average cost (USD/month, present value)"
TOKENS_LABEL = "Output tokens served (Mtok over the horizon)"
PER_MTOK_LABEL = "Cost per million output tokens (USD/Mtok)"
MIN_TTFT_LABEL = "Min TTFT margin (%)"
MIN_TPOT_LABEL = "Min TPOT margin (%)"
RECOMMENDATION_LABEL = "Recommendation"
WARNING_LABEL = "Warning"
OPEX_FORMULA = f"=({KIND_NAMES['rent']}+{KIND_NAMES['running']}+{KIND_NAMES['discount']})/{HORIZON_NAME}"
"""Opex per month: the ledger's recurring kinds (rent, running, discount), nominal, over the horizon."""


def _money(usd: float) -> str:
    """Whole dollars, cents below $100 ($0.83 per million tokens); nothing reads "$0.00" (the terminal's capex $0)."""
    if usd == 0:
        return "$0"
    return f"${usd:,.2f}" if abs(usd) < 100 else f"${usd:,.0f}"


def _unit_text(s: Any) -> str:
    """How a supply line comes: " in 8-GPU instances" (two rent lines of one GPU and site, one per GPU and one
    by the node, read as the same line twice), " in 8-GPU nodes"; nothing for per-GPU units."""
    if s.unit_gpus <= 1:
        return ""
    return f" in {s.unit_gpus}-GPU {'instances' if s.procurement == 'rent' else 'nodes'}"


MAX_LISTED_DEPLOYMENTS = 10
"""Deployments the recommendation names one by one; a plan of more is summed up per GPU type (the 20-workload
bench plan's 30 deployments made a 3,000-character Summary cell) and Deployments lists each."""


def recommendation_text(result: PlanResult) -> str:
    """The plan in words: what to rent or buy, which deployment (and engine, with the workload's settings)
    serves each workload — or, past :data:`MAX_LISTED_DEPLOYMENTS`, how many serve on each GPU type — and its
    money."""
    ledger = result.ledger
    if ledger is None or not result.feasible:
        return "No feasible plan: see the infeasibility rows below."
    supply = "; ".join(
        f"{s.procurement}{' (' + s.rental_kind + ')' if s.rental_kind else ''} {s.gpus}x {s.gpu} at {s.site}"
        + _unit_text(s)
        + (f" (ordered in month {s.purchase_month})" if s.purchase_month is not None else "")
        for s in result.supply
    )
    per_mtok = ledger.cost_usd_per_million_output_tokens
    return (
        f"Supply: {supply or 'none'}. Serve {_served_text(result)}. Total {_money(ledger.total_usd)} over "
        f"{months_text(ledger.horizon_months)}: capex {_money(ledger.capex_usd)}, opex "
        f"{_money(ledger.opex_usd_per_month)}/month"
        + (f", resale credit {_money(ledger.residual_value_usd)}" if ledger.residual_value_usd else "")
        + (f"; {_money(per_mtok)} per million output tokens." if per_mtok is not None else ".")
    )


def _served_text(result: PlanResult) -> str:
    """Each workload's deployments ("chat: llama_3_1_70b fp8 TP1xPP1 on mi325x at us_east with vllm (cloud, 1
    replica)"), or for a plan of more than :data:`MAX_LISTED_DEPLOYMENTS` their count per GPU type ("20
    workloads with 30 deployments: 12 on gb200, ..., each listed under Deployments")."""
    deployments = result.deployments
    if len(deployments) > MAX_LISTED_DEPLOYMENTS:
        per_gpu = Counter(d.gpu for d in deployments)
        gpus = ", ".join(f"{n} on {gpu}" for gpu, n in sorted(per_gpu.items(), key=lambda item: (-item[1], item[0])))
        workloads = len({d.workload for d in deployments})
        return (
            f"{workloads} workload{'s' if workloads != 1 else ''} with {len(deployments)} deployments: {gpus} "
            "(each listed under Deployments)"
        )
    served: dict[str, list[str]] = {}
    for d in deployments:
        most = max(d.replicas_per_period, default=d.replicas)
        steady = len({r for r in d.replicas_per_period if r}) <= 1
        count = f"{most} replica{'s' if most != 1 else ''}" if steady else f"up to {most} replicas"
        count += f", {d.role} pool" if d.role != "colocated" else ""
        count += f", {d.gpu_share_frac:g} of a GPU each" if d.gpu_share_frac < 1 else ""
        served.setdefault(d.workload, []).append(
            f"{d.model} {d.quantization} TP{d.tp}xPP{d.pp}{f'xEP{d.ep}' if d.ep > 1 else ''} on {d.gpu} at {d.site}"
            f" with {d.engine} ({d.placement}, {count})"
        )
    return "; ".join(f"{w}: {', '.join(sorted(set(v)))}" for w, v in served.items())


BUDGET_LINES = (
    ("capex_usd", "Capex budget (USD)", f"{KIND_NAMES['capex']}"),
    ("opex_usd_per_month", "Opex budget (USD/month)", BUSIEST_OPEX_NAME),
    ("total_usd", "Total budget (USD, present value)", TOTAL_NAME),
)
"""(budget field, label, live formula of the amount spent)."""


LIMIT_ABOVE = "[limit above]"
"""In a budget "used (%)" formula: the cell of the limit on the Summary row above it."""


def budget_rows(result: PlanResult, data: dict[str, Any]) -> list[tuple[str, Any, str | None]]:
    """For a max_throughput plan (``planner budget``) the served scale and req/s; for any plan with a budget each
    limit with the share used (live; opex: the busiest month) and the binding limit in words
    (planner.readout.budget)."""
    rows: list[tuple[str, Any, str | None]] = []
    if result.served_scale is not None:
        served = data.get("served_requests_per_s") or {}
        rows += [
            ("Served scale (x stated demand)", result.served_scale, NUMBER_FORMAT),
            ("Served (req/s, total)", served.get("total", 0.0), NUMBER_FORMAT),
        ]
    use = budget_use(result)
    if use is None:
        return rows
    for field, label, spent in BUDGET_LINES:
        limit = use.limits[field]
        if limit is None:  # a limit of 0 (nothing may be spent) is a line too, as in the terminal and the JSON
            continue
        rows.append((label, limit, USD_FORMAT))
        # of a 0 limit no share: the JSON's used_frac is null
        # divides by the limit's cell on the row above (LIMIT_ABOVE, filled in by the writer), so an edited
        # limit recomputes its share (it divided by the typed number)
        used: Any = Formula(f"=({spent})/{LIMIT_ABOVE}") if limit else "—"
        rows.append((f"{label.split(' (')[0]} used (%)", used, PERCENT_FORMAT))
    rows.append(("Binding limit", use.binding_limit, None))
    return rows


GPUS_BUSIEST_LABEL = "GPUs paid, busiest month"
GPUS_HOUR_WEIGHTED_LABEL = (
    "GPUs paid, busiest month (hour-weighted: the day's mean; the Supply sheet's GPUs (peak) run at once)"
)
"""The header when hourly rentals are billed for the hours they run: 0.54 b200 is one GPU rented 13 h a day (the
terminal and the Supply sheet say 1), not half a GPU."""


def gpus_busiest_month(
    result: PlanResult, units_col: dict[str, str], last_month_row: int
) -> dict[Any, tuple[str, bool]]:
    """Per (GPU, procurement): a live formula of the most GPUs paid for in one month, the Costs sheet's units
    × each line's GPUs per unit, summed over the type's lines month by month. Summing each line's own peak
    (the Supply sheet's "GPUs (peak)") counted GPUs of lines that never run at once: buy_vs_rent read 20
    rented h100_sxm, 16 at most in any month. A line without a Units column counts its peak units. With the
    formula: whether every unit count is whole (hour-weighted units of an hourly profile are not)."""
    groups: dict[Any, list[str]] = {}
    whole: dict[Any, bool] = {}
    unit_gpus = column_of(SUPPLY_HEADERS, "Unit GPUs")
    peak = column_of(SUPPLY_HEADERS, "GPUs (peak)")
    for k, s in enumerate(result.supply, start=2):  # Supply sheet row of the line
        col = units_col.get(s.id)
        term = (
            f"Costs!${col}$2:${col}${last_month_row}*Supply!${unit_gpus}${k}" if col else f"Supply!${peak}${k}"
        )
        groups.setdefault((s.gpu, s.procurement), []).append(term)
        whole[(s.gpu, s.procurement)] = whole.get((s.gpu, s.procurement), True) and all(
            float(u).is_integer() for u in s.units_per_month
        )
    return {key: (f"=SUMPRODUCT(MAX({'+'.join(terms)}))", whole[key]) for key, terms in groups.items()}


def write_summary(
    ws: Any,
    result: PlanResult,
    *,
    slo_last: int,
    units_col: dict[str, str] | None = None,
    last_month_row: int = 2,
) -> None:
    """Summary: scenario and recommendation, then the live money rows, SLO margins and GPUs per type."""
    from openpyxl.styles import Alignment, Font

    data = result.to_json()
    set_cell(ws, 1, 1, "Capacity plan")
    ws["A1"].font = Font(bold=True, size=14)
    append_row(ws, 3, ["Item", "Value"])
    style_header(ws, 3, 2)
    rows: list[tuple[str, Any, str | None]] = [
        ("Scenario", result.scenario.name, None),
        ("Status", status_text(result.status, result.gap, result.bound_usd), None),
        ("Objective", data.get("objective", ""), None),
        (RECOMMENDATION_LABEL, recommendation_text(result), None),
    ]
    r = 4
    for label, value, fmt in rows:
        append_row(ws, r, [label, value], [None, fmt])
        r += 1
    wrap_text_row(ws, 7, 2)
    ws.cell(row=7, column=1).alignment = Alignment(vertical="top")
    if not result.feasible:
        for item in data.get("infeasibility", []):
            append_row(ws, r, [f"Infeasible: {item.get('workload')}", item.get("message", "")])
            append_row(ws, r + 1, ["Relaxation", item.get("relaxation", "")])
            r += 2
        finish_sheet(ws, freeze="A4")
        ws.column_dimensions["B"].width = MAX_COLUMN_WIDTH * 2
        return
    ttft, tpot = column_of(SLO_HEADERS, "TTFT margin (%)"), column_of(SLO_HEADERS, "TPOT margin (%)")
    live: list[tuple[str, Any, str | None]] = [
        ("Horizon (months)", Formula(f"={HORIZON_NAME}"), INT_FORMAT),
        (TOTAL_LABEL, Formula(f"={TOTAL_NAME}"), USD_FORMAT),
        (CAPEX_LABEL, Formula(f"={KIND_NAMES['capex']}"), USD_FORMAT),
        (RESALE_LABEL, Formula(f"=-{KIND_NAMES['resale']}"), USD_FORMAT),
        (OPEX_LABEL, Formula(OPEX_FORMULA), USD_FORMAT),
        (BUSIEST_OPEX_LABEL, Formula(f"={BUSIEST_OPEX_NAME}"), USD_FORMAT),
        (AVERAGE_LABEL, Formula(f"={TOTAL_NAME}/{HORIZON_NAME}"), USD_FORMAT),
        (TOKENS_LABEL, Formula(f"={TOKENS_NAME}/{TOKENS_PER_MTOK:.0f}"), NUMBER_FORMAT),
        (
            PER_MTOK_LABEL,
            Formula(f"=IF({TOKENS_NAME}=0,NA(),{TOTAL_NAME}/{TOKENS_NAME}*{TOKENS_PER_MTOK:.0f})"),
            USD_FORMAT,
        ),
        (MIN_TTFT_LABEL, Formula(f"=MIN(SLOs!${ttft}$2:${ttft}${slo_last})"), PERCENT_FORMAT),
        (MIN_TPOT_LABEL, Formula(f"=MIN(SLOs!${tpot}$2:${tpot}${slo_last})"), PERCENT_FORMAT),
    ]
    live += budget_rows(result, data)
    # what the scenario states that no plan can use (JSON warnings, stderr): a reader of the workbook saw none
    live += [(WARNING_LABEL, text, None) for text in data.get("warnings", [])]
    for label, value, fmt in live:
        if isinstance(value, Formula) and LIMIT_ABOVE in value.text:
            value = Formula(value.text.replace(LIMIT_ABOVE, f"B{r - 1}"))
        append_row(ws, r, [label, value], [None, fmt])
        if label == WARNING_LABEL:
            wrap_text_row(ws, r, 2)
        r += 1
    r += 1
    busiest = gpus_busiest_month(result, units_col or {}, last_month_row)
    whole_units = all(whole for _total, whole in busiest.values())
    append_row(ws, r, ["GPU type (procurement)", GPUS_BUSIEST_LABEL if whole_units else GPUS_HOUR_WEIGHTED_LABEL])
    style_header(ws, r, 2)
    for (gpu, proc), (total, whole) in busiest.items():
        r += 1
        append_row(ws, r, [f"{gpu} ({proc})", Formula(total)], [None, INT_FORMAT if whole else NUMBER_FORMAT])
    # why the GPUs paid exceed those running replicas (planner.readout.gpu_use): a reader saw both counts,
    # 28 paid and 24 serving, with no reason
    explained = gpu_use_lines(result)
    if explained:
        r += 2
        append_row(ws, r, ["GPU type", GPU_USE_TITLE])
        style_header(ws, r, 2)
        for gpu, sentence in explained:
            r += 1
            append_row(ws, r, [gpu, sentence])
            wrap_text_row(ws, r, 2)
    align(ws, ["B"], 4, r, horizontal="left")
    finish_sheet(ws, freeze="A4")
    ws.column_dimensions["B"].width = MAX_COLUMN_WIDTH * 2
    # Written after the widths are set so the note spills over instead of widening column A.
    write_note(
        ws,
        r + 2,
        "Money is the plan's cost ledger (sheet Costs): capex in the order month, recurring costs while in use, the "
        "resale credit in the horizon's last month. Total = present value; opex = recurring costs / horizon.",
    )
