"""The ``planner`` command line (typer + rich). Thin: parse, call, print, map errors to exit codes.

Exit codes: 0 success (a plan was found), 2 invalid input, 3 infeasible, 4 solver/audit failure.
Diagnostics go to stderr so ``--json`` output on stdout stays machine-readable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from planner.cli import ledger_build
from planner.cli import train as train_cmd
from planner.cli import sweep as sweep_cmd
from planner.errors import InfeasiblePlan, PlannerError

app = typer.Typer(
    name="planner",
    help="Capacity planner for AI infrastructure: ledgers, MILP plans, Excel reports.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
catalog_app = typer.Typer(
    help="List or show catalog records (gpus, models, formats, sites).", no_args_is_help=True
)
ledger_app = typer.Typer(
    help="One formula family of the 12 ledger cards per subcommand.", no_args_is_help=True
)
app.add_typer(catalog_app, name="catalog")
app.add_typer(ledger_app, name="ledger")
ledger_build.register(ledger_app)
train_cmd.register(app)
sweep_cmd.register(app)

out = Console(width=max(160, Console().width))
err = Console(stderr=True)
T = TypeVar("T")


def run_guarded(fn: Callable[[], T]) -> T:
    """Run ``fn``; print a one-line error and exit with the error's code on PlannerError."""
    try:
        return fn()
    except PlannerError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=exc.exit_code) from None


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf → None, numpy scalars → Python numbers."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def emit_json(obj: Any, target: str | None = "-") -> None:
    """Write ``obj`` as JSON to stdout (``-``) or to a file path (atomically)."""
    text = json.dumps(_clean(obj), indent=2)
    if target in (None, "-"):
        typer.echo(text)
        return
    from planner.report.files import atomic_write_text

    atomic_write_text(Path(target), text + "\n")


# --------------------------------------------------------------------------------------------------
# catalog
# --------------------------------------------------------------------------------------------------


def _catalog() -> Any:
    from planner.catalog import default_catalog

    return run_guarded(default_catalog)


def _show_records(kind: str, record_id: str | None, as_json: bool) -> None:
    from planner.errors import CatalogError, did_you_mean

    catalog = _catalog()
    table = {
        "gpus": catalog.accelerators,
        "models": catalog.models,
        "formats": catalog.formats,
        "sites": catalog.sites,
    }[kind]
    if record_id is not None:
        if record_id not in table:
            run_guarded(
                lambda: (_ for _ in ()).throw(
                    CatalogError(f"unknown {kind[:-1]} '{record_id}'{did_you_mean(record_id, table)}")
                )
            )
        record = table[record_id]
        payload = record.model_dump(mode="json")
        if kind == "models":
            from planner.ledgers import architecture as arch

            payload["derived"] = {
                "params": arch.params_total(record),
                "params_active_per_token": arch.params_active_per_token(record),
                "kv_bytes_per_token_bf16": arch.kv_bytes_per_token(record),
                "attention": record.attention_kind,
            }
        if as_json:
            emit_json(payload)
            return
        t = Table(title=f"{kind[:-1]} {record_id}", show_header=True)
        t.add_column("field")
        t.add_column("value")
        for key, value in payload.items():
            t.add_row(key, json.dumps(value) if isinstance(value, dict | list) else str(value))
        out.print(t)
        return
    if as_json:
        emit_json([r.model_dump(mode="json") for r in table.values()])
        return
    columns = {
        "gpus": [
            "id",
            "name",
            "placement",
            "memory_gb",
            "memory_bandwidth_gb_per_s",
            "tdp_w",
            "gpus_per_node",
        ],
        "models": ["id", "name", "layers", "hidden_size", "q_heads", "kv_heads", "params_published_b"],
        "formats": ["id", "name", "bits_per_value", "group_size_values", "compute_format", "quality_tier"],
        "sites": ["id", "name", "kind", "rtt_ms", "electricity_usd_per_kwh", "pue"],
    }[kind]
    t = Table(title=f"catalog {kind} ({len(table)})")
    for c in columns:
        t.add_column(c)
    for r in table.values():
        t.add_row(*(str(getattr(r, c)) for c in columns))
    out.print(t)


JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON to stdout.")]
IdArg = Annotated[str | None, typer.Argument(help="Record id to show (omit to list all).")]


@catalog_app.command("gpus")
def catalog_gpus(record_id: IdArg = None, as_json: JsonFlag = False) -> None:
    """List accelerators, or show one (e.g. `planner catalog gpus h100_sxm`)."""
    _show_records("gpus", record_id, as_json)


@catalog_app.command("models")
def catalog_models(record_id: IdArg = None, as_json: JsonFlag = False) -> None:
    """List models, or show one with its derived parameter and KV figures."""
    _show_records("models", record_id, as_json)


@catalog_app.command("formats")
def catalog_formats(record_id: IdArg = None, as_json: JsonFlag = False) -> None:
    """List numeric formats (bytes per value include group scales)."""
    _show_records("formats", record_id, as_json)


@catalog_app.command("sites")
def catalog_sites(record_id: IdArg = None, as_json: JsonFlag = False) -> None:
    """List sites (cloud regions, data centers, edge locations)."""
    _show_records("sites", record_id, as_json)


# --------------------------------------------------------------------------------------------------
# predict
# --------------------------------------------------------------------------------------------------


@app.command()
def predict(
    model: Annotated[str, typer.Option(help="Model id, e.g. qwen3_8b.")],
    gpu: Annotated[str, typer.Option(help="Accelerator id, e.g. h100_sxm.")],
    tp: Annotated[int, typer.Option(help="Tensor-parallel degree.", min=1)] = 1,
    pp: Annotated[int, typer.Option(help="Pipeline-parallel degree.", min=1)] = 1,
    quant: Annotated[str, typer.Option(help="Weight format id.")] = "bf16",
    kv_dtype: Annotated[str, typer.Option("--kv-dtype", help="KV-cache format id.")] = "bf16",
    batch: Annotated[int, typer.Option(help="Concurrent sequences.", min=1)] = 1,
    input_tokens: Annotated[int, typer.Option(help="Prompt tokens per request.", min=1)] = 2048,
    output_tokens: Annotated[int, typer.Option(help="Generated tokens per request.", min=1)] = 256,
    workspace_gib: Annotated[float, typer.Option(help="Per-GPU workspace reservation, GiB.", min=0)] = 2.0,
    ideal: Annotated[
        bool, typer.Option("--ideal", help="Roofline lower bound: efficiency 1, no overheads.")
    ] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Print the per-term time breakdown.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """The inference ledger of one configuration: memory, FLOPs, bytes, TTFT, decode step, throughput (cards 1, 2, 5, 8)."""
    from planner.performance import PredictRequest
    from planner.performance import predict as run_predict

    catalog = _catalog()
    request = PredictRequest(
        model, gpu, tp, pp, quant, kv_dtype, batch, input_tokens, output_tokens, workspace_gib, ideal
    )
    result = run_guarded(lambda: run_predict(catalog, request)).to_json()
    if as_json:
        emit_json(result)
        return
    t = Table(
        title=f"{model} on {gpu} TP{tp}xPP{pp} {quant} (kv {kv_dtype}), batch {batch}{' — ideal' if ideal else ''}"
    )
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for key in (
        "params",
        "weights_gb",
        "kv_bytes_per_token",
        "kv_cache_gb",
        "memory_per_gpu_gb",
        "fits",
        "max_batch",
        "prefill_tflop",
        "decode_gflop_per_step",
        "ttft_ms",
        "decode_step_ms",
        "output_tokens_per_s",
        "bound",
    ):
        value = result[key]
        t.add_row(key, f"{value:,.4g}" if isinstance(value, float) else str(value))
    out.print(t)
    if explain:
        for phase in ("decode", "prefill"):
            b = Table(title=f"{phase} step breakdown (efficiency applied)")
            b.add_column("term")
            b.add_column("ms", justify="right")
            for key, value in result["breakdown"][phase].items():
                b.add_row(key, f"{value:.4f}")
            out.print(b)
        e = Table(title="efficiency terms")
        e.add_column("term")
        e.add_column("value", justify="right")
        for key, value in result["breakdown"]["efficiency"].items():
            e.add_row(key, f"{value:.4g}")
        out.print(e)


# --------------------------------------------------------------------------------------------------
# schema and plan
# --------------------------------------------------------------------------------------------------


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files (every field with its unit and default)."""
    from planner.scenario import Scenario

    typer.echo(json.dumps(Scenario.model_json_schema(), indent=2))


ScenarioArg = Annotated[Path, typer.Argument(help="Scenario YAML file.")]
JsonTarget = Annotated[
    str | None, typer.Option("--json", help="Write the plan as JSON to PATH, or '-' for stdout.")
]
OutputXlsx = Annotated[Path | None, typer.Option("-o", "--output", help="Write an Excel workbook (.xlsx).")]
SolverOpt = Annotated[str, typer.Option(help="MILP solver: highs (default) or cbc.")]
TimeLimit = Annotated[float | None, typer.Option("--time-limit", help="Solver time limit, seconds.", min=0.1)]
PlotsDir = Annotated[
    Path | None, typer.Option("--plots", help="Also write the charts as PNG files to this folder.")
]


def _check_solver(solver: str) -> Any:
    from planner.errors import InputError

    if solver not in ("highs", "cbc"):
        raise InputError(f"--solver: unknown solver '{solver}' — valid values: highs, cbc")
    return solver


def _check_output(path: Path | None) -> None:
    from planner.errors import InputError

    if path is not None and path.suffix.lower() != ".xlsx":
        raise InputError(f"-o {path}: the workbook name must end in .xlsx")


def _print_plan(result: Any) -> None:
    data = result.to_json()
    if data["status"] == "infeasible":
        err.print("[bold red]infeasible[/]")
        for item in data["infeasibility"]:
            err.print(f"  • {item['message']}", highlight=False, soft_wrap=True)
            if item.get("relaxation"):
                err.print(f"    smallest relaxation: {item['relaxation']}", highlight=False, soft_wrap=True)
        return
    per_mtok = data["cost_usd_per_million_output_tokens"]
    t = Table(
        title=f"{data['scenario']}: {data['status']} — ${data['total_cost_usd']:,.0f} over {data['horizon_months']} months "
        f"(${data['cost_usd_per_month']:,.0f}/month; capex ${data['capex_usd']:,.0f}, opex "
        f"${data['opex_usd_per_month']:,.0f}/month"
        + (f"; ${per_mtok:,.2f} per million output tokens)" if per_mtok is not None else ")")
    )
    multi_period = any(len(d["replicas_per_period"]) > 1 for d in data["deployments"])
    columns = ["workload", "model", "quant", "gpu", "TPxPP", "site", "placement", "repl", "GPUs", "batch"]
    columns += ["TTFT ms", "TPOT ms", "req/s cap", "$/month"] + (["replicas per period"] if multi_period else [])
    for c in columns:
        left = c in ("workload", "model", "quant", "gpu", "site", "placement", "replicas per period")
        t.add_column(c, justify="left" if left else "right")
    for d in data["deployments"]:
        row = [
            d["workload"],
            d["model"],
            d["quantization"],
            d["gpu"],
            f"{d['tp']}x{d['pp']}",
            d["site"],
            d["placement"],
            str(d["replicas"]),
            str(d["gpus"]),
            str(d["batch"]),
            f"{d['ttft_ms']:.0f}",
            f"{d['tpot_ms']:.1f}",
            f"{d['capacity_requests_per_s']:.2f}",
            f"{d['cost_usd_per_month']:,.0f}",
        ]
        if multi_period:
            row.append(" ".join(str(r) for r in d["replicas_per_period"]))
        t.add_row(*row)
    out.print(t)
    orders = sorted((s for s in data["supply"] if s["kind"] == "buy"), key=lambda s: s["purchase_month"])
    if orders:
        o = Table(title="what to buy when (purchase orders)")
        for c in ("order month", "gpu", "site", "GPUs", "usable from month", "capex $", "resale at horizon $"):
            o.add_column(c, justify="left" if c in ("gpu", "site") else "right")
        for s in orders:
            o.add_row(
                str(s["purchase_month"]),
                s["gpu"],
                s["site"],
                str(s["gpus"]),
                f"{s['available_from_month']:g}",
                f"{s['capex_usd']:,.0f}",
                f"{s['residual_usd']:,.0f}",
            )
        out.print(o)
    if data["binding_constraints"]:
        b = Table(title="binding constraints")
        b.add_column("family")
        b.add_column("key")
        for row in data["binding_constraints"][:12]:
            b.add_row(row["family"], "/".join(row["key"]))
        out.print(b)
    if data["alternatives"]:
        a = Table(title="alternatives (best plan per GPU type and per site)")
        for c in ("kind", "value", "status", "cost delta $", "max TPOT ms", "why it lost"):
            a.add_column(c)
        for row in data["alternatives"]:
            delta = row.get("cost_delta_usd")
            tpot = row.get("max_tpot_ms")
            a.add_row(
                row["kind"],
                row[row["kind"]],
                row["status"],
                "" if delta is None else f"{delta:,.0f}",
                "" if tpot is None else f"{tpot:.1f}",
                row["lost_because"],
            )
        out.print(a)


@app.command()
def plan(
    scenario_path: ScenarioArg,
    json_target: JsonTarget = None,
    output: OutputXlsx = None,
    solver: SolverOpt = "highs",
    time_limit: TimeLimit = None,
    plots: PlotsDir = None,
    no_alternatives: Annotated[
        bool, typer.Option("--no-alternatives", help="Skip the per-GPU/per-site re-solves.")
    ] = False,
) -> None:
    """Cheapest plan meeting every SLO: GPU types, counts, TP×PP, quantization, sites. Exit 3 if infeasible."""
    from planner.plan import plan as run_plan
    from planner.scenario import load_scenario

    def go() -> Any:
        _check_output(output)
        chosen = _check_solver(solver)
        catalog = _catalog()
        scenario = load_scenario(scenario_path, catalog)
        return run_plan(
            catalog, scenario, solver=chosen, time_limit_s=time_limit, with_alternatives=not no_alternatives
        )

    result = run_guarded(go)
    if json_target is not None:
        emit_json(result.to_json(), json_target)
    if json_target != "-":
        _print_plan(result)
    if result.status == "infeasible":
        raise typer.Exit(code=InfeasiblePlan.exit_code)
    if output is not None or plots is not None:
        from planner.report.workbook import write_plan_outputs

        run_guarded(lambda: write_plan_outputs(result, _catalog(), workbook=output, plots_dir=plots))
        if json_target != "-" and output is not None:
            err.print(f"wrote {output}")


@app.command()
def compare(
    scenario_path: ScenarioArg,
    json_target: JsonTarget = None,
    output: OutputXlsx = None,
    plots: PlotsDir = None,
    solver: SolverOpt = "highs",
    no_flip_points: Annotated[
        bool, typer.Option("--no-flip-points", help="Skip the bisection for flip points.")
    ] = False,
) -> None:
    """Buy-only vs rent-only vs hybrid: TCO, cost per million tokens, crossover month, flip points."""
    from planner.compare import compare as run_compare
    from planner.scenario import load_scenario

    def go() -> Any:
        _check_output(output)
        chosen = _check_solver(solver)
        catalog = _catalog()
        return run_compare(
            catalog, load_scenario(scenario_path, catalog), solver=chosen, flip_points=not no_flip_points
        )

    comparison = run_guarded(go)
    data = comparison.to_json()
    if json_target is not None:
        emit_json(data, json_target)
    if output is not None or plots is not None:
        from planner.report.compare_workbook import write_compare_outputs

        run_guarded(lambda: write_compare_outputs(comparison, workbook=output, plots_dir=plots))
        if json_target != "-" and output is not None:
            err.print(f"wrote {output}")
    if json_target == "-":
        return
    t = Table(title=f"{data['scenario']}: buy vs rent (recommendation: {data['recommendation']})")
    for c in ("option", "status", "total $", "capex $", "opex $/month", "$/M output tokens"):
        t.add_column(c)
    for o in data["options"]:

        def money(v: Any) -> str:
            return "" if v is None else f"{v:,.2f}" if abs(v) < 100 else f"{v:,.0f}"

        t.add_row(
            o["name"],
            o["status"],
            money(o["total_cost_usd"]),
            money(o["capex_usd"]),
            money(o["opex_usd_per_month"]),
            money(o["cost_usd_per_million_output_tokens"]),
        )
    out.print(t)
    out.print(
        f"crossover month: {data['crossover_month']}; break-even utilization (reserved/on-demand): "
        f"{data['breakeven_utilization_frac']}"
    )
    for f in data["flip_points"]:
        out.print(f"• {f['sentence']}")


@app.command()
def budget(
    scenario_path: ScenarioArg,
    capex_usd: Annotated[
        float | None, typer.Option("--capex-usd", help="Capital budget, USD.", min=0)
    ] = None,
    opex_usd_per_month: Annotated[
        float | None, typer.Option("--opex-usd-per-month", help="Monthly budget, USD.", min=0)
    ] = None,
    total_usd: Annotated[
        float | None, typer.Option("--total-usd", help="Horizon budget, USD.", min=0)
    ] = None,
    json_target: JsonTarget = None,
    output: OutputXlsx = None,
    solver: SolverOpt = "highs",
) -> None:
    """The most traffic (all workloads scaled together) that a budget serves within every SLO."""
    from planner.errors import InputError
    from planner.plan import plan as run_plan
    from planner.scenario import Budget, load_scenario

    def go() -> Any:
        _check_output(output)
        if capex_usd is None and opex_usd_per_month is None and total_usd is None:
            raise InputError("budget: give at least one of --capex-usd, --opex-usd-per-month, --total-usd")
        chosen = _check_solver(solver)
        catalog = _catalog()
        scenario = load_scenario(scenario_path, catalog)
        limits = Budget(capex_usd=capex_usd, opex_usd_per_month=opex_usd_per_month, total_usd=total_usd)
        scenario = scenario.model_copy(update={"objective": "max_throughput", "budget": limits})
        return run_plan(catalog, scenario, solver=chosen, with_alternatives=False)

    result = run_guarded(go)
    data = result.to_json()
    data["budget_used"] = {
        "capex_usd": data["capex_usd"],
        "opex_usd_per_month": data["opex_usd_per_month"],
        "total_usd": data["total_cost_usd"],
        "limits": {"capex_usd": capex_usd, "opex_usd_per_month": opex_usd_per_month, "total_usd": total_usd},
    }
    if json_target is not None:
        emit_json(data, json_target)
    if json_target != "-":
        _print_plan(result)
        if data["served_scale"] is not None:
            out.print(
                f"served: {data['served_scale']:.3f} × the stated demand = {data['served_requests_per_s'].get('total', 0):.2f} req/s"
            )
    if result.status == "infeasible":
        raise typer.Exit(code=InfeasiblePlan.exit_code)
    if output is not None:
        from planner.report.workbook import write_plan_outputs

        run_guarded(lambda: write_plan_outputs(result, _catalog(), workbook=output, plots_dir=None))


@app.command("validate-model")
def validate_model(
    as_json: JsonFlag = False,
    reports: Annotated[
        Path, typer.Option("--reports", help="Folder for validation.md and validation.csv.")
    ] = Path("reports"),
) -> None:
    """Predict every public measurement with the plan/predict code path; print and write the error report."""
    from planner.validate import run_validation, write_reports

    catalog = _catalog()
    report = run_guarded(lambda: run_validation(catalog))
    run_guarded(lambda: write_reports(report, reports))
    if as_json:
        emit_json(report.to_json())
    else:
        typer.echo(report.to_markdown())


def main() -> None:  # pragma: no cover - console entry point convenience
    """Entry point for ``python -m planner.cli.main``."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
