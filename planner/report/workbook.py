"""Excel workbook of a plan (first version: Summary and Deployments sheets; values, not yet live formulas)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.report.files import atomic_write


def safe_text(value: Any) -> Any:
    """Store user text as text: strings starting with =, +, -, @ would otherwise become formulas."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def write_plan_workbook(result: Any, catalog: Any, path: Path) -> None:
    """Write the plan workbook to ``path`` atomically."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    data = result.to_json()

    def build(tmp: Path) -> None:
        wb = Workbook()
        ws = wb.active
        ws.title = "Summary"
        ws.append(["Scenario", safe_text(data["scenario"])])
        ws.append(["Status", data["status"]])
        ws.append(["Total cost (USD)", data["total_cost_usd"]])
        ws.append(["Cost per month (USD)", data["cost_usd_per_month"]])
        dep = wb.create_sheet("Deployments")
        columns = [
            "workload",
            "model",
            "quantization",
            "gpu",
            "tp",
            "pp",
            "site",
            "placement",
            "replicas",
            "gpus",
            "batch",
            "ttft_ms",
            "tpot_ms",
            "capacity_requests_per_s",
            "served_requests_per_s",
            "cost_usd_per_month",
        ]
        dep.append(columns)
        for cell in dep[1]:
            cell.font = Font(bold=True)
        for d in data["deployments"]:
            dep.append([safe_text(d[c]) for c in columns])
        wb.save(tmp)

    atomic_write(path, build)


def write_plan_outputs(result: Any, catalog: Any, *, workbook: Path | None, plots_dir: Path | None) -> None:
    """Write the requested workbook and plot files."""
    if workbook is not None:
        write_plan_workbook(result, catalog, workbook)
