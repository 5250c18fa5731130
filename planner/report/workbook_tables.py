"""The plan workbook's tables that carry no price: Deployments (replicas per period), SLOs (each operating
point against its SLOs), Alternatives, Constraints and Inputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planner.report.formatting import INT_FORMAT, NUMBER_FORMAT, PERCENT_FORMAT, USD_FORMAT
from planner.report.workbook_costs import TOTAL_NAME
from planner.report.xlsx import (
    Formula,
    Tables,
    align,
    column_of,
    finish_sheet,
    header_table,
    set_cell,
    wrap_columns,
    write_note,
)

if TYPE_CHECKING:
    from planner.readout import Deployment, PlanResult

SLO_MARGIN_WARN_FRAC = 0.10
SAME_REL = 1e-9
WHY_HEADER = "Optimizations: why (card 3)"
WHY_WIDTH = 60
"""Characters of the Deployments sheet's reasons column (longer reasons wrap)."""
DEPLOY_COST_HEADER = "Cost (USD/month, horizon mean, present value)"
"""The deployment's share of its GPUs' supply cost (planner.readout.Deployment.cost_usd_per_month, the terminal's
and the HTML's $/month); a deployment's rows carry the part of its periods."""
DEPLOY_TOTAL_LABEL = "Total (USD/month)"
DEPLOY_COST_NOTE = (
    "Cost: each deployment's share, by the GPUs it holds over the horizon (GPUs x periods), of the cost of the "
    "supply at its GPU type and site: present value of the horizon's cash (rent, running, capex less resale) "
    "divided by the horizon's months, as the terminal's $/month; a deployment's rows split it by their periods. "
    "The total is the plan's average cost per month (Summary). These are the plan's figures: editing a price on "
    "Assumptions changes the Costs sheet, not them."
)
DEPLOY_HEADERS = [
    "Workload",
    "Model",
    "GPU",
    "Site",
    "Placement",
    "Quantization",
    "KV dtype",
    "TP",
    "PP",
    "EP",
    "Periods",
    "From month",
    "To month",
    "Replicas",
    "GPUs",
    "Capacity per replica (req/s)",
    "Capacity (req/s)",
    "Served (req/s, daily mean)",
    DEPLOY_COST_HEADER,
    "Procurement",
    "Rental kind",
    "Engine",
    "Optimizations on",
    WHY_HEADER,
    "Role",
    "GPU share per replica",
    "Instance GPUs",
    "Shares GPU with",
]
REPRODUCE_HEADER = "Reproduce: planner predict (add --explain for every term)"
REPRODUCE_WIDTH = 60
"""Characters of the SLOs sheet's command column (the command wraps)."""
SLO_HEADERS = [
    "Workload",
    "Model",
    "GPU",
    "Site",
    "Placement",
    "Memory per GPU (GB)",
    "Batch",
    "TTFT (ms)",
    "TTFT SLO (ms)",
    "TTFT margin (%)",
    "TPOT (ms)",
    "TPOT SLO (ms)",
    "TPOT margin (%)",
    "Decode step (ms)",
    "Capacity limited by",
    "Sync ratio (%)",
    REPRODUCE_HEADER,
    "Latency statistic",
]
"""The last column says which statistic the TTFT/TPOT figures are (mean, or the stated percentile)."""


def slo_statistic(result: PlanResult, d: Deployment) -> str:
    """Which statistic a deployment's TTFT and TPOT are: "mean" or the workload's stated percentile, e.g.
    "TTFT p99, TPOT p90" (planner/performance/tail.py); a prefill or decode pool reports means (as its
    ``planner predict --role`` command does)."""
    if d.role != "colocated":
        return "mean"
    w = next((x for x in result.scenario.workloads if x.name == d.workload), None)
    ttft = None if w is None else w.slo.ttft_percentile
    tpot = None if w is None else w.slo.tpot_percentile
    if ttft is None and tpot is None:
        return "mean"
    return ", ".join(
        f"{name} {'mean' if pct is None else f'p{pct:g}'}" for name, pct in (("TTFT", ttft), ("TPOT", tpot))
    )
LOST_BECAUSE_WIDTH = 70
"""Characters of the Alternatives sheet's "Lost because" column (longer causes wrap)."""

ALT_TPOT_HEADER = "Max TPOT at capacity (ms)"
"""An alternative's worst TPOT over its replicas at their planned capacity (their operating points: the
Deployments and SLOs sheets show TPOT at the load each replica serves, at most this)."""
ALT_COST_HEADER = "Total cost (USD, present value)"
"""An alternative's cost over the horizon, as the plan's total on the Summary (at present value when the scenario
has a cost of capital)."""
ALT_DELTA_HEADER = "Cost delta (USD, present value)"
"""An alternative's total less the plan's (the Summary's total cost)."""
ALT_HEADERS = [
    "Kind",
    "Option",
    "Status",
    ALT_COST_HEADER,
    ALT_DELTA_HEADER,
    "Cost (USD/month)",
    ALT_TPOT_HEADER,
    "Max TTFT at capacity (ms)",
    "Lost because",
]


@dataclass(frozen=True)
class Run:
    """Consecutive periods of one deployment with the same replicas and served load."""

    deployment: Deployment
    first_period: int
    last_period: int
    replicas: int
    served_requests_per_s: float

    @property
    def periods(self) -> str:
        a, b = self.first_period, self.last_period
        return str(a) if a == b else f"{a}-{b}"


def period_runs(d: Deployment) -> list[Run]:
    """The periods where ``d`` has replicas, consecutive equal periods merged into one run."""
    runs: list[Run] = []
    for t, (reps, served) in enumerate(
        zip(d.replicas_per_period, d.served_requests_per_s_per_period, strict=True)
    ):
        if reps <= 0:
            continue
        prev = runs[-1] if runs else None
        if (
            prev is not None
            and prev.last_period == t - 1
            and prev.replicas == reps
            and abs(prev.served_requests_per_s - served) <= SAME_REL * max(1.0, abs(served))
        ):
            runs[-1] = Run(d, prev.first_period, t, reps, prev.served_requests_per_s)
        else:
            runs.append(Run(d, t, t, int(reps), float(served)))
    return runs


def period_months(result: PlanResult, period: int) -> list[int]:
    """Months (0-based) of horizon period ``period``, from the schedule."""
    if period < len(result.schedule) and result.schedule[period].months:
        return list(result.schedule[period].months)
    pm = result.scenario.period_months
    return list(range(period * pm, (period + 1) * pm))


def write_deployments(ws: Any, tables: Tables, result: PlanResult) -> int:
    """One row per deployment and run of periods where it has replicas, with its cost; the costs' total and
    a note below the table."""
    from openpyxl.styles import Alignment, Font
    from openpyxl.utils import column_index_from_string

    tp, pp, ep, reps, cap, share = (
        column_of(DEPLOY_HEADERS, h)
        for h in ("TP", "PP", "EP", "Replicas", "Capacity per replica (req/s)", "GPU share per replica")
    )
    # by first period, then in the plan's order (the terminal's, the JSON's and the SLOs sheet's)
    order = {id(d): k for k, d in enumerate(result.deployments)}
    runs = sorted(
        (run for d in result.deployments for run in period_runs(d)),
        key=lambda run: (run.first_period, order[id(run.deployment)]),
    )
    rows: list[list[Any]] = []
    for run in runs:
        d, r = run.deployment, len(rows) + 2
        rows.append(
            [
                d.workload,
                d.model,
                d.gpu,
                d.site,
                d.placement,
                d.quantization,
                d.kv_dtype,
                d.tp,
                d.pp,
                d.ep,
                run.periods,
                period_months(result, run.first_period)[0],
                period_months(result, run.last_period)[-1],
                run.replicas,
                Formula(f"={reps}{r}*{tp}{r}*{ep}{r}*{pp}{r}*{share}{r}"),
                d.capacity_per_replica_requests_per_s,
                Formula(f"={reps}{r}*{cap}{r}"),
                run.served_requests_per_s,
                d.periods_cost_usd_per_month(run.first_period, run.last_period),
                d.procurement,
                d.rental_kind or "",
                d.engine,
                ", ".join(o["name"] for o in d.optimizations if o["on"]) or "none",
                " | ".join(o["why"] for o in d.optimizations),
                d.role,
                d.gpu_share_frac,
                ", ".join(str(g) for g in d.instance_gpus),
                ", ".join(d.shares_gpu_with),
            ]
        )
    formats: list[str | None] = (
        [None] * 7 + [INT_FORMAT] * 3 + [None] + [INT_FORMAT] * 3 + [NUMBER_FORMAT] * 4 + [USD_FORMAT]
        + [None] * 6
        + [NUMBER_FORMAT, None, None]
    )
    last = header_table(ws, tables, 1, DEPLOY_HEADERS, rows, formats, "Deployments")
    gpus = DEPLOY_HEADERS.index("GPUs") + 1
    for r, run in enumerate(runs, start=2):  # whole GPUs read "16", not "16.00" (shares keep 0.50)
        d = run.deployment
        if float(run.replicas * d.tp * d.ep * d.pp * d.gpu_share_frac).is_integer():
            ws.cell(row=r, column=gpus).number_format = INT_FORMAT
    centred = ("TP", "PP", "EP", "Periods", "From month", "To month", "Replicas", "GPUs")
    align(ws, [column_of(DEPLOY_HEADERS, h) for h in centred], 1, last, horizontal="center")
    # the reasons wrap within their column (they ran past it in print)
    wrap_columns(ws, [column_of(DEPLOY_HEADERS, WHY_HEADER)], 2, last)
    finish_sheet(ws, freeze="C2", widths={column_of(DEPLOY_HEADERS, WHY_HEADER): WHY_WIDTH})
    if runs:  # below the table: the costs' total, labeled, under their column, and what they are
        cost = column_of(DEPLOY_HEADERS, DEPLOY_COST_HEADER)
        # the label beside its figure: in column A it printed alone on the first page (the total's column
        # prints on a later one), and clipped on the others
        label = set_cell(ws, last + 2, column_index_from_string(cost) - 1, DEPLOY_TOTAL_LABEL)
        label.font, label.alignment = Font(bold=True), Alignment(horizontal="right")
        total = set_cell(ws, last + 2, column_index_from_string(cost), Formula(f"=SUM({cost}2:{cost}{last})"))
        total.number_format, total.font = USD_FORMAT, Font(bold=True)
        write_note(ws, last + 3, DEPLOY_COST_NOTE, past_repeated=True)
    return max(last, 2)


def write_slos(ws: Any, tables: Tables, result: PlanResult) -> int:
    """One row per deployment: memory, batch, latencies and their SLO margins, and what limits the batch."""
    from openpyxl.formatting.rule import FormulaRule
    from openpyxl.styles import PatternFill

    rows: list[list[Any]] = []
    for k, d in enumerate(result.deployments):
        r = k + 2
        ttft, tpot = d.role != "decode", d.role != "prefill"  # a pool has one of the two latencies
        rows.append(
            [
                d.workload if d.role == "colocated" else f"{d.workload} ({d.role})",
                d.model,
                d.gpu,
                d.site,
                d.placement,
                d.memory_per_gpu_gb,
                d.batch,
                d.ttft_ms if ttft else None,
                d.ttft_slo_ms,
                Formula(f"=1-H{r}/I{r}") if ttft else None,
                d.tpot_ms if tpot else None,
                d.tpot_slo_ms,
                Formula(f"=1-K{r}/L{r}") if tpot else None,
                d.decode_step_ms if tpot else None,
                d.limited_by,
                d.sync_ratio,
                d.predict_command,
                slo_statistic(result, d),
            ]
        )
    formats: list[str | None] = (
        [None] * 5
        + [NUMBER_FORMAT, INT_FORMAT]
        + [NUMBER_FORMAT] * 2
        + [PERCENT_FORMAT]
        + [NUMBER_FORMAT] * 2
        + [PERCENT_FORMAT, NUMBER_FORMAT, None, PERCENT_FORMAT, None, None]
    )
    last = header_table(ws, tables, 1, SLO_HEADERS, rows, formats, "SLOs")
    red = PatternFill("solid", start_color="F8CBAD", end_color="F8CBAD")
    green = PatternFill("solid", start_color="C6EFCE", end_color="C6EFCE")
    for header in ("TTFT margin (%)", "TPOT margin (%)"):
        col = column_of(SLO_HEADERS, header)
        rng, first = f"{col}2:{col}{max(last, 2)}", f"{col}2"
        # a pool's blank margin (a decode pool has no TTFT) is no SLO miss: a bare "< 0.1" painted it red
        low, high = (f"AND(ISNUMBER({first}),{first}{op}{SLO_MARGIN_WARN_FRAC})" for op in ("<", ">="))
        ws.conditional_formatting.add(rng, FormulaRule(formula=[low], fill=red))
        ws.conditional_formatting.add(rng, FormulaRule(formula=[high], fill=green))
    wrap_columns(ws, [column_of(SLO_HEADERS, REPRODUCE_HEADER)], 2, last)
    finish_sheet(ws, freeze="B2", widths={column_of(SLO_HEADERS, REPRODUCE_HEADER): REPRODUCE_WIDTH})
    return max(last, 2)


def write_alternatives(ws: Any, tables: Tables, result: PlanResult) -> int:
    """The best plan per GPU type and per site, with its cost delta to this plan (live); a max_throughput plan
    adds the fraction of the stated demand each serves (its alternatives rank on that first)."""
    served = result.served_scale is not None
    rows: list[list[Any]] = []
    for k, alt in enumerate(result.alternatives):
        a = alt.to_json()
        r = k + 2
        cost = a.get("total_cost_usd")
        rows.append(
            [
                a["kind"],
                a.get(a["kind"], ""),
                a.get("status", ""),
                cost,
                Formula(f"=D{r}-{TOTAL_NAME}") if cost is not None else None,
                a.get("cost_usd_per_month"),
                a.get("max_tpot_ms"),
                a.get("max_ttft_ms"),
                a.get("lost_because") or "",
                *([a.get("served_scale")] if served else []),
            ]
        )
    formats: list[str | None] = [None] * 3 + [USD_FORMAT] * 3 + [NUMBER_FORMAT] * 2 + [None]
    headers = ALT_HEADERS + ["Served (x stated demand)"] if served else ALT_HEADERS
    formats += [NUMBER_FORMAT] if served else []
    last = header_table(ws, tables, 1, headers, rows, formats, "Alternatives")
    # a cause can be a sentence: wrapped in its column, the row grows
    wrap_columns(ws, [column_of(ALT_HEADERS, "Lost because")], 2, last)
    # Kind and Option stay in view, and print on every page (the causes printed on a page of their own)
    finish_sheet(ws, freeze="C2", widths={column_of(ALT_HEADERS, "Lost because"): LOST_BECAUSE_WIDTH})
    return last


def _constraint_cell(value: Any) -> Any:
    """A key as the terminal and the HTML write one row's ("h100_sxm/dc1/3"; a list cell read "h100_sxm, dc1, 3")."""
    return "/".join(str(v) for v in value) if isinstance(value, list | tuple) else value


def write_constraints(
    ws: Any, tables: Tables, binding: Sequence[dict[str, Any]], schedule: Sequence[Any] = ()
) -> None:
    """The binding constraint rows the solver reported, every one (the terminal and the HTML merge a key's
    slices into one line: "chat/0–11"), headed as the HTML's table: Family, Key, Slack, then Periods: those
    the row's slice stands for (a key ends in a slice id, not a period: planner.report.binding_periods)."""
    from planner.report.binding_periods import row_periods, slice_periods
    from planner.report.formatting import number_runs_text

    keys: list[str] = []
    for b in binding:
        keys.extend(k for k in b if k not in keys)
    fields = keys or ["family"]
    rows = [[_constraint_cell(b.get(k)) for k in fields] for b in binding]
    headers = [k.replace("_", " ").capitalize() for k in fields]
    if binding and schedule:
        maps = slice_periods(schedule)
        periods = [row_periods(b, maps) for b in binding]
        rows = [[*r, number_runs_text(p) if p else ""] for r, p in zip(rows, periods, strict=True)]
        headers.append("Periods")
    header_table(ws, tables, 1, headers, rows, [None] * len(headers), "Constraints")
    if not binding:
        set_cell(ws, 2, 1, "no binding constraint reported")
    finish_sheet(ws, freeze="A2")


def _flatten(value: Any, prefix: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        out: list[tuple[str, Any]] = []
        for k, v in value.items():
            out.extend(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        out = []
        for i, v in enumerate(value):
            out.extend(_flatten(v, f"{prefix}[{i}]"))
        return out
    return [(prefix, value)]


def write_inputs(ws: Any, tables: Tables, scenario: Any) -> None:
    """The scenario, one key path per row."""
    dump = scenario.model_dump(mode="json")
    rows = [[k, v] for k, v in _flatten(dump, "")]
    header_table(ws, tables, 1, ["Key", "Value"], rows, [None, None], "Inputs")
    finish_sheet(ws, freeze="A2")
