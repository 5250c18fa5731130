"""Self-contained HTML report of a plan (``planner plan -o plan.html``): the workbook's tables and charts in
one file for people who read plans in a browser.

Sections: Summary (recommendation, total, capex, opex/month, $/Mtok — the plan's cost ledger), Deployments
(with KV dtype), SLOs (targets and headroom), Supply (with the quote's source), paid-but-idle GPUs,
Alternatives, binding constraints and the three charts of ``--plots`` embedded as base64 PNG. No external
CSS, script or font: the file opens offline. Every text is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.readout.budget import budget_use
from planner.readout.headroom import headroom_frac, min_headroom_frac
from planner.report.charts import write_plan_plots
from planner.report.files import atomic_write_text
from planner.report.formatting import binding_rows, period_runs_text, status_text
from planner.report.gpu_use_text import GPU_USE_TITLE, gpu_use_lines
from planner.report.workbook_idle import IDLE_HEADERS, idle_gpus
from planner.report.workbook_summary import (
    AVERAGE_LABEL,
    BUDGET_LINES,
    BUSIEST_OPEX_LABEL,
    CAPEX_LABEL,
    MIN_TPOT_LABEL,
    MIN_TTFT_LABEL,
    OPEX_LABEL,
    PER_MTOK_LABEL,
    RESALE_LABEL,
    TOKENS_LABEL,
    TOKENS_PER_MTOK,
    TOTAL_LABEL,
    WARNING_LABEL,
    recommendation_text,
)
from planner.report.workbook_tables import ALT_COST_HEADER, ALT_DELTA_HEADER, slo_statistic

if TYPE_CHECKING:
    from planner.readout import PlanResult

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1rem;color:#1b1b1b}
h1{color:#1F4E78}h2{color:#1F4E78;border-bottom:2px solid #1F4E78;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
th{background:#1F4E78;color:#fff;text-align:left;padding:.3rem .4rem}
td{border-bottom:1px solid #ddd;padding:.25rem .4rem}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#f3f6fa}img{max-width:100%;margin:.5rem 1rem .5rem 0}
.ok{color:#1e7a34}.warn{color:#b35c00}.wide{overflow-x:auto}
"""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f'<td class="n">{value:,.2f}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="n">{value:,}</td>'
    return f"<td>{html.escape('—' if value is None else str(value))}</td>"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An HTML table: escaped header and cells, numbers right-aligned."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _headroom(value: float, slo: float) -> str:
    frac = headroom_frac(value, slo)
    return "—" if frac is None else f"{frac:.0%}"


def _percent(frac: float | None) -> str:
    """A Summary share as the workbook's 0.0% format shows it ('—' without one)."""
    return "—" if frac is None else f"{frac:.1%}"


def _who(d: dict[str, Any]) -> str:
    """The workload, with the role of a prefill or decode pool as the terminal writes it: 'chat (prefill)'."""
    role = d.get("role", "colocated")
    return d["workload"] if role == "colocated" else f"{d['workload']} ({role})"


def _slo_cells(d: dict[str, Any], key: str, slo_key: str, applies: bool) -> list[Any]:
    """Observed, target and headroom of one latency; '—' for a figure the pool does not have (a prefill
    pool's TPOT, a decode pool's TTFT)."""
    if not applies:
        return ["—", d[slo_key], "—"]
    return [d[key], d[slo_key], _headroom(d[key], d[slo_key])]


def _charts(result: PlanResult) -> str:
    if result.ledger is None:
        return ""
    with tempfile.TemporaryDirectory() as folder:
        paths = write_plan_plots(
            Path(folder),
            categories_usd=result.ledger.costs_usd,
            monthly_usd=result.ledger.cash_flow_usd_per_month,
            alternatives=[a.to_json() for a in result.alternatives],
        )
        images = [base64.b64encode(p.read_bytes()).decode("ascii") for p in paths]
    return "".join(f'<img alt="chart" src="data:image/png;base64,{b64}">' for b64 in images)


def build_html(result: PlanResult) -> str:
    """The report as one HTML string."""
    data = result.to_json()
    title = f"Capacity plan: {result.scenario.name}"
    status = status_text(result.status, result.gap, result.bound_usd)
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p>Status: <b>{html.escape(status)}</b></p>"]
    if not result.feasible:
        items = [[i["workload"], i["message"], i.get("relaxation")] for i in data["infeasibility"]]
        parts.append(table(["Workload", "Why infeasible", "Smallest relaxation"], items))
        return _page(title, parts)
    per_mtok = data["cost_usd_per_million_output_tokens"]
    summary = [
        ["Recommendation", recommendation_text(result)],
        ["Horizon (months)", data["horizon_months"]],
        [TOTAL_LABEL, data["total_cost_usd"]],  # the workbook Summary's labels (it read "Resale credit (USD,
        [CAPEX_LABEL, data["capex_usd"]],  # received in the last month)" for the workbook's "(USD, last month)")
        [RESALE_LABEL, data["residual_value_usd"] + 0.0],  # no "-0.00"
        [OPEX_LABEL, data["opex_usd_per_month"]],
        # the workbook Summary's rows (the terminal title's "$22,805/month" is the average)
        [BUSIEST_OPEX_LABEL, max(result.ledger.opex_usd_by_month.values(), default=0.0) if result.ledger else None],
        [AVERAGE_LABEL, data["cost_usd_per_month"]],
        [TOKENS_LABEL, data["output_tokens_served"] / TOKENS_PER_MTOK],
        [PER_MTOK_LABEL, per_mtok],
        [MIN_TTFT_LABEL, _percent(min_headroom_frac(result.deployments, "ttft"))],  # the workbook's MIN over
        [MIN_TPOT_LABEL, _percent(min_headroom_frac(result.deployments, "tpot"))],  # its SLOs sheet's margins
    ]
    if result.served_scale is not None:  # the workbook's rows: the scale and the req/s it serves
        summary.append(["Served scale (x stated demand)", result.served_scale])
        summary.append(["Served (req/s, total)", (data.get("served_requests_per_s") or {}).get("total", 0.0)])
    use = budget_use(result)
    if use is not None:
        labels = {field: label for field, label, _spent in BUDGET_LINES}  # the workbook Summary's words
        for key, limit in use.limits.items():
            if limit is not None:
                share = use.used_frac[key]  # None of a 0 limit: "$0 of $0" read "(0.0%)"
                spent = f"${use.spent[key]:,.0f} of ${limit:,.0f}" + (f" ({share:.1%})" if share is not None else "")
                summary.append([f"{labels.get(key, key)}: spent of limit", spent])
        summary.append(["Binding limit", use.binding_limit])
    summary += [[WARNING_LABEL, text] for text in data.get("warnings", [])]  # as on stderr and in the JSON
    parts += ["<h2>Summary</h2>", table(["Item", "Value"], summary), "<h2>Charts</h2>", _charts(result)]
    deployments = [
        [_who(d), d["model"], d["quantization"], d["kv_dtype"], d["gpu"], f"{d['site']} ({d['placement']})",
         f"{d['tp']}x{d['pp']}" + (f" EP{d['ep']}" if d.get("ep", 1) > 1 else ""), d["replicas"], d["gpus"], d["batch"],
         d["capacity_requests_per_s"], d["served_requests_per_s"], d["procurement"], period_runs_text(d["replicas_per_period"]),
         d["cost_usd_per_month"]]
        for d in data["deployments"]
    ]  # fmt: skip
    headers = ["Workload", "Model", "Weights", "KV dtype", "GPU", "Site (placement)", "TPxPP", "Replicas", "GPUs",
               "Batch", "Capacity (req/s)", "Served (req/s)", "Procurement", "Replicas per period", "USD/month"]
    # the deployments' USD/month add up to the plan's (the supply shared out by GPU-periods): its figure
    deployments.append(["Total (the plan's average USD/month)", *[""] * (len(headers) - 2), data["cost_usd_per_month"]])
    parts += [
        "<h2>Deployments</h2>",
        "<p>Replicas, GPUs and capacity in the workload's peak period (a deployment that runs none then: in its "
        "largest period, so it can show replicas that serve 0 req/s at the peak); served load in the workload's "
        "peak period; replicas per period: counts from "
        "period 0, 4×3 = 4 replicas for 3 periods; USD/month: the deployment's share of its GPUs' supply over "
        "the horizon.</p>",
        table(headers, deployments),
    ]  # fmt: skip
    statistic = [slo_statistic(result, d) for d in result.deployments]  # mean, or the stated percentiles
    slos = [
        [_who(d), d["gpu"], d["site"], *_slo_cells(d, "ttft_ms", "ttft_slo_ms", d.get("role") != "decode"),
         *_slo_cells(d, "tpot_ms", "tpot_slo_ms", d.get("role") != "prefill"), statistic[k],
         d.get("decode_step_ms"), f"{d.get('sync_ratio', 0.0):.1%}", d["memory_per_gpu_gb"],
         d["limited_by"], d.get("predict_command", "")]
        for k, d in enumerate(data["deployments"])
    ]  # fmt: skip
    parts += [
        "<h2>SLOs</h2>",
        table(
            ["Workload", "GPU", "Site", "TTFT (ms)", "TTFT SLO (ms)", "TTFT headroom", "TPOT (ms)", "TPOT SLO (ms)",
             "TPOT headroom", "Latency statistic", "Decode step (ms)", "Sync ratio", "Memory per GPU (GB)", "Capacity limited by", "Reproduce: planner predict (add --explain)"],
            slos,
        ),
    ]  # fmt: skip
    parts += _optimizations(data) + _disaggregation(data)
    supply = [
        [s["gpu"], s["site"], s["kind"], s["gpus"], s["cost_usd_per_month"], s["capex_usd"], s["source"]]
        for s in data["supply"]
    ]
    parts += [
        "<h2>Supply</h2>",
        table(["GPU", "Site", "Kind", "GPUs", "USD/month", "Capex (USD)", "Quote / source"], supply),
        "<h2>Paid but idle GPUs</h2>",
        table(IDLE_HEADERS, idle_gpus(result)) if idle_gpus(result) else "<p>none</p>",
        f"<h3>{html.escape(GPU_USE_TITLE)}</h3>",
        *(f"<p>{html.escape(sentence)}</p>" for _gpu, sentence in gpu_use_lines(result)),
    ]
    served = result.served_scale is not None  # max_throughput: alternatives rank on the traffic served first
    alternatives = [
        [
            a["kind"],
            a[a["kind"]],
            a["status"],
            a.get("total_cost_usd"),
            a.get("cost_delta_usd"),
            a.get("max_tpot_ms"),
            a.get("max_ttft_ms"),
            *([a.get("served_scale")] if served else []),
            a["lost_because"],
        ]
        for a in data["alternatives"]
    ]
    if alternatives:
        headers = ["Kind", "Option", "Status", ALT_COST_HEADER, ALT_DELTA_HEADER]
        headers += ["Max TPOT at capacity (ms)", "Max TTFT at capacity (ms)"]
        headers += ["Served (x stated demand)"] if served else []
        parts += ["<h2>Alternatives</h2>", table([*headers, "Why it lost"], alternatives)]
    # the terminal's lines: one per family and key, its periods merged ("chat/0–11"); every line, no cut
    binding = binding_rows(data["binding_constraints"], data.get("schedule") or ())
    if binding:
        parts += ["<h2>Binding constraints</h2>", table(["Family", "Key"], binding)]
    return _page(title, parts)


STATED_OPTIMIZATIONS = ("prefix_cache", "speculative")
"""Optimizations a workload states; the section lists every optimization of the deployments that have one,
as the terminal's "optimizations" table does."""


def _optimizations(data: dict[str, Any]) -> list[str]:
    """On/off and why (card 3's break-even) per deployment with a stated optimization; nothing otherwise."""
    rows = [
        [_who(d), d["gpu"], f"{d['tp']}x{d['pp']}", o["name"], "on" if o["on"] else "off", o["why"]]
        for d in data["deployments"]
        if any(o["name"] in STATED_OPTIMIZATIONS for o in d.get("optimizations", []))
        for o in d["optimizations"]
    ]
    if not rows:
        return []
    headers = ["Workload", "GPU", "TPxPP", "Optimization", "On", "Why (card 3 break-even)"]
    return ["<h2>Optimizations</h2>", table(headers, rows)]


def _disaggregation(data: dict[str, Any]) -> list[str]:
    """One row per prefill/decode group: P:D GPUs and replicas, served load and the KV link load."""
    rows = [
        [g["pd_group"], g["pd_ratio"], f"{g['prefill_replicas']}:{g['decode_replicas']}",
         g["served_requests_per_s"], f"{g['kv_gb_per_request']:.3f}", g["kv_link_load_gb_per_s"],
         g["kv_link_capacity_gb_per_s"], f"{g['kv_link_load_frac']:.0%}"]
        for g in data.get("disaggregation", [])
    ]  # fmt: skip
    if not rows:
        return []
    headers = ["PD group", "P:D GPUs", "P:D replicas", "Served (req/s)", "KV per request (GB)",
               "KV link load (GB/s)", "KV link capacity (GB/s)", "KV link load (%)"]  # fmt: skip
    return ["<h2>Prefill/decode groups</h2>", table(headers, rows)]


def _page(title: str, parts: list[str]) -> str:
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def write_plan_html(result: PlanResult, path: Path) -> None:
    """Write the HTML report to ``path`` atomically."""
    atomic_write_text(path, build_html(result))
