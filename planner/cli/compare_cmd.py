"""``planner compare``: buy-only vs rent-only vs hybrid with the recommendation, its reason and flip points.

Exit 3 when no option has a plan (the causes of the rent-only and hybrid plans go to stderr).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import (
    JsonFlag,
    JsonOut,
    announce,
    emit,
    err,
    infeasible_heading,
    run_guarded,
    show,
    text,
    written_files,
)
from planner.cli.plan_cmd import PlotsDir, ScenarioArg, SolverOpt, check_outputs, check_solver
from planner.cli.progress import working
from planner.errors import InfeasiblePlan

CompareXlsx = Annotated[
    Path | None, typer.Option("-o", "--output", help="Write an Excel workbook (.xlsx); compare writes no HTML.")
]

DASH = "—"


def money(value: float | None) -> str:
    """USD for a table cell: cents below $100 (but 0 for nothing spent), whole dollars above, '—' for no value."""
    if value is None:
        return DASH
    if value == 0:
        return "0"
    return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"


def served_cell(option: dict[str, Any]) -> str:
    """The JSON's served_scale as the terminal writes it: '1.13', '0.888 from month 3', '—' without a plan."""
    scale = option.get("served_scale")
    if scale is None:
        return DASH
    from planner.units import three_digits_text

    since = option.get("served_from_month")
    return three_digits_text(scale) + (f" from month {since:g}" if since else "")


def print_comparison(data: dict[str, Any]) -> None:
    """Options table, the recommendation with its reason, crossover, break-even and flip sentences."""
    t = Table(title=text(f"{data['scenario']}: buy vs rent"))
    served = any(o.get("served_scale") is not None for o in data["options"])  # max_throughput: the answer
    columns = ("option", "status", *(("served ×",) if served else ()), "total $", "capex $", "opex $/month")
    for c in (*columns, "$/M output tokens"):
        t.add_column(c, justify="left" if c in ("option", "status") else "right")
    for o in data["options"]:
        mark = " ◀" if o["name"] == data["recommendation"] else ""
        t.add_row(
            text(o["name"] + mark),
            text(o["status"]),
            *((served_cell(o),) if served else ()),
            money(o["total_cost_usd"]),
            money(o["capex_usd"]),
            money(o["opex_usd_per_month"]),
            money(o["cost_usd_per_million_output_tokens"]),
        )
    show(t)
    for o in data["options"]:  # why an option has no plan, in the user's words (the JSON's infeasibility)
        for item in o["infeasibility"] if o["status"] == "infeasible" else []:
            fix = f" — {item['relaxation']}" if item.get("relaxation") else ""
            show(f"{text(o['name'])} has no plan: {text(item['message'])}{text(fix)}")
    show(
        f"recommendation: {text(data['recommendation'] or DASH)} — {text(data.get('recommendation_reason', ''))}"
    )
    crossover = data["crossover_month"]
    breakeven = data["breakeven_utilization_frac"]
    show(
        f"crossover month: {DASH if crossover is None else crossover}; break-even utilization "
        f"(reserved/on-demand): {DASH if breakeven is None else f'{breakeven:.0%}'}"
    )
    for f in data["flip_points"]:
        show(f"• {text(f['sentence'])}")


def _print_causes(data: dict[str, Any], source: Path) -> None:
    err.print(f"{infeasible_heading(source)}: no option (buy only, rent only, hybrid) has a plan", soft_wrap=True)
    causes: dict[tuple[str, str], list[str]] = {}
    for o in data["options"]:
        for item in o["infeasibility"]:
            causes.setdefault((item["message"], item.get("relaxation") or ""), []).append(o["name"])
    for (message, relaxation), names in causes.items():
        err.print(f"  • {text(', '.join(names))}: {text(message)}", soft_wrap=True)
        if relaxation:  # as `planner plan` prints it
            err.print(f"    smallest relaxation: {text(relaxation)}", soft_wrap=True)


def compare(
    scenario_path: ScenarioArg,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    output: CompareXlsx = None,
    plots: PlotsDir = None,
    solver: SolverOpt = "highs",
    no_flip_points: Annotated[
        bool, typer.Option("--no-flip-points", help="Skip the search for flip points.")
    ] = False,
) -> None:
    """Buy-only vs rent-only vs hybrid: TCO, cost per million tokens, recommendation and why (owned_only when the owned GPUs serve it all), crossover month, flip points. Exit 3 if no option is feasible."""
    from planner.cli.catalog_cmd import _catalog
    from planner.compare import compare as run_compare
    from planner.scenario import load_scenario
    from planner.training.scenario import refuse_training_file

    def go() -> Any:
        check_outputs(scenario_path, output, json_out, plots, (".xlsx",))
        chosen = check_solver(solver)
        catalog = _catalog()
        refuse_training_file(scenario_path, "compare")
        scenario = load_scenario(scenario_path, catalog)
        with working(f"comparing buy / rent / hybrid for {scenario.name}") as step:
            return run_compare(
                catalog, scenario, solver=chosen, flip_points=not no_flip_points, progress=step
            )

    comparison = run_guarded(go)
    data = comparison.to_json()
    if comparison.recommendation is None:
        _print_causes(data, scenario_path)
        emit(data, as_json, json_out, failed=True, outputs=(output,))  # --json still prints the answer
        raise typer.Exit(code=InfeasiblePlan.exit_code)
    written = write_compare_files(comparison, output, plots)
    if not emit(data, as_json, json_out):
        print_comparison(data)
    announce(written)


def write_compare_files(comparison: Any, output: Path | None, plots: Path | None) -> list[Path]:
    """Write the compare workbook and/or PNG charts; the files written, announced once stdout is done
    (files first: a reader that stops early cannot cost them)."""
    if output is None and plots is None:
        return []
    from planner.report.compare_workbook import write_compare_outputs

    with working("writing the workbook"):
        run_guarded(lambda: write_compare_outputs(comparison, workbook=output, plots_dir=plots))
    return written_files(output, plots)
