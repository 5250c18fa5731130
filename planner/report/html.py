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
from planner.report.charts import write_plan_plots
from planner.report.files import atomic_write_text
from planner.report.workbook_summary import recommendation_text
from planner.report.workbook_tables import IDLE_HEADERS, idle_gpus

if TYPE_CHECKING:
    from planner.readout import PlanResult

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;color:#1b1b1b}
h1{color:#1F4E78}h2{color:#1F4E78;border-bottom:2px solid #1F4E78;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th{background:#1F4E78;color:#fff;text-align:left;padding:.3rem .6rem}
td{border-bottom:1px solid #ddd;padding:.25rem .6rem}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#f3f6fa}img{max-width:100%;margin:.5rem 1rem .5rem 0}
.ok{color:#1e7a34}.warn{color:#b35c00}
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
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _headroom(value: float, slo: float) -> str:
    return "—" if not slo else f"{1 - value / slo:.0%}"


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
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p>Status: <b>{html.escape(result.status)}</b></p>"]
    if not result.feasible:
        items = [[i["workload"], i["message"], i.get("relaxation")] for i in data["infeasibility"]]
        parts.append(table(["Workload", "Why infeasible", "Smallest relaxation"], items))
        return _page(title, parts)
    per_mtok = data["cost_usd_per_million_output_tokens"]
    summary = [
        ["Recommendation", recommendation_text(result)],
        ["Horizon (months)", data["horizon_months"]],
        ["Total cost (USD, present value)", data["total_cost_usd"]],
        ["Capex (USD)", data["capex_usd"]],
        ["Resale credit (USD)", data["residual_value_usd"]],
        ["Opex (USD/month)", data["opex_usd_per_month"]],
        ["Cost per million output tokens (USD)", per_mtok],
    ]
    if result.served_scale is not None:
        summary.append(["Served scale (x stated demand)", result.served_scale])
    use = budget_use(result)
    if use is not None:
        for key, limit in use.limits.items():
            if limit is not None:
                spent = f"{use.spent[key]:,.0f} of {limit:,.0f} ({use.used_frac[key] or 0.0:.1%})"
                summary.append([f"Budget {key}: spent of limit", spent])
        summary.append(["Binding limit", use.binding_limit])
    parts += ["<h2>Summary</h2>", table(["Item", "Value"], summary), "<h2>Charts</h2>", _charts(result)]
    deployments = [
        [_who(d), d["model"], d["quantization"], d["kv_dtype"], d["gpu"], d["site"], d["placement"],
         f"{d['tp']}x{d['pp']}" + (f" EP{d['ep']}" if d.get("ep", 1) > 1 else ""), d["replicas"], d["gpus"], d["batch"], d["procurement"],
         " ".join(str(r) for r in d["replicas_per_period"]), d["cost_usd_per_month"]]
        for d in data["deployments"]
    ]  # fmt: skip
    parts += [
        "<h2>Deployments</h2>",
        table(
            ["Workload", "Model", "Quantization", "KV dtype", "GPU", "Site", "Placement", "TPxPP", "Replicas",
             "GPUs", "Batch", "Procurement", "Replicas per period", "USD/month"],
            deployments,
        ),
    ]  # fmt: skip
    slos = [
        [_who(d), d["gpu"], d["site"], *_slo_cells(d, "ttft_ms", "ttft_slo_ms", d.get("role") != "decode"),
         *_slo_cells(d, "tpot_ms", "tpot_slo_ms", d.get("role") != "prefill"), d["memory_per_gpu_gb"],
         d["limited_by"], d.get("predict_command", "")]
        for d in data["deployments"]
    ]  # fmt: skip
    parts += [
        "<h2>SLOs</h2>",
        table(
            ["Workload", "GPU", "Site", "TTFT (ms)", "TTFT SLO (ms)", "TTFT headroom", "TPOT (ms)", "TPOT SLO (ms)",
             "TPOT headroom", "Memory per GPU (GB)", "Limited by", "Reproduce: planner predict (add --explain)"],
            slos,
        ),
    ]  # fmt: skip
    supply = [
        [s["gpu"], s["site"], s["kind"], s["gpus"], s["cost_usd_per_month"], s["capex_usd"], s["source"]]
        for s in data["supply"]
    ]
    parts += [
        "<h2>Supply</h2>",
        table(["GPU", "Site", "Kind", "GPUs", "USD/month", "Capex (USD)", "Quote / source"], supply),
        "<h2>Paid but idle GPUs</h2>",
        table(IDLE_HEADERS, idle_gpus(result)) if idle_gpus(result) else "<p>none</p>",
    ]
    alternatives = [
        [
            a["kind"],
            a[a["kind"]],
            a["status"],
            a.get("cost_delta_usd"),
            a.get("max_tpot_ms"),
            a["lost_because"],
        ]
        for a in data["alternatives"]
    ]
    if alternatives:
        headers = ["Kind", "Option", "Status", "Cost delta (USD)", "Max TPOT at capacity (ms)", "Why it lost"]
        parts += ["<h2>Alternatives</h2>", table(headers, alternatives)]
    binding = [[b["family"], "/".join(str(k) for k in b["key"])] for b in data["binding_constraints"]]
    if binding:
        parts += ["<h2>Binding constraints</h2>", table(["Family", "Key"], binding)]
    return _page(title, parts)


def _page(title: str, parts: list[str]) -> str:
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def write_plan_html(result: PlanResult, path: Path) -> None:
    """Write the HTML report to ``path`` atomically."""
    atomic_write_text(path, build_html(result))
