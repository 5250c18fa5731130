"""``planner schema``, ``planner plan`` and ``planner budget``: the scenario schema and the MILP plans."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import (
    JsonFlag,
    JsonOut,
    announce,
    check_distinct_outputs,
    check_output_path,
    emit,
    err,
    finite_float,
    infeasible_heading,
    note,
    run_guarded,
    show,
    text,
    warn,
    written_files,
)
from planner.cli.progress import working
from planner.cli.sharing_view import gpus_cell, sharing_lines
from planner.errors import InfeasiblePlan, InputError
from planner.limits import MAX_USD
from planner.units import count_text, three_digits_text

ScenarioArg = Annotated[Path, typer.Argument(help="Scenario YAML file.")]
OutputXlsx = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="Write an Excel workbook (.xlsx) or an HTML report (.html), by the name's ending."),
]
SolverOpt = Annotated[str, typer.Option(help="MILP solver: highs (default) or cbc.")]
TimeLimit = Annotated[
    float | None,
    typer.Option(
        "--time-limit", help="Wall-clock cap on the optimizer (plan and alternatives), seconds, at least 0.1; candidate evaluation and the audit run outside it.", parser=finite_float(0.1), metavar="SECONDS"
    ),
]
PlotsDir = Annotated[
    Path | None, typer.Option("--plots", help="Also write the charts as PNG files to this folder.")
]


def schema(
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    kind: Annotated[
        str, typer.Option(help="Scenario kind: inference (planner plan; also 'serving') or training (planner train).")
    ] = "inference",
) -> None:
    """Print the JSON Schema of scenario files (every field with its unit and default) to stdout; with only --json-out, write it to that file instead."""
    from planner.scenario import Scenario
    from planner.scenario_base import SchemaWithDefaults
    from planner.training.scenario import TrainingScenario

    def check() -> None:
        if kind not in ("inference", "serving", "training"):
            raise InputError(f"--kind {kind}: valid values are inference (or serving), training")
        check_output_path(json_out, "--json-out")

    run_guarded(check)
    model = TrainingScenario if kind == "training" else Scenario
    emit(model.model_json_schema(schema_generator=SchemaWithDefaults), as_json or json_out is None, json_out)


def check_solver(solver: str) -> Any:
    """``solver`` if it is a known MILP solver, else an input error naming the valid ones."""
    if solver not in ("highs", "cbc"):
        raise InputError(f"--solver: unknown solver '{solver}' — valid values: highs, cbc")
    return solver


def check_outputs(
    scenario_path: Path,
    output: Path | None,
    json_out: Path | None,
    plots: Path | None = None,
    suffixes: tuple[str, ...] = (".xlsx", ".html"),
) -> None:
    """Refuse output paths that would overwrite the scenario, or a report name with another suffix."""
    if output is not None and output.suffix.lower() not in suffixes:
        raise InputError(f"-o {output}: the report name must end in {' or '.join(suffixes)}")
    check_output_path(output, "-o", [scenario_path])
    check_output_path(json_out, "--json-out", [scenario_path])
    check_distinct_outputs(("-o", output), ("--json-out", json_out), ("--plots", plots))
    if plots is not None:
        from planner.report.files import check_output_dir

        check_output_dir(plots, "--plots")


def _ms(value: float, slo: float) -> str:
    """Observed latency, its SLO and the headroom (planner.readout.headroom): '812/2000 59%'."""
    from planner.readout.headroom import headroom_frac

    frac = headroom_frac(value, slo)
    return f"{value:.0f}/{slo:.0f} {frac:.0%}" if frac is not None else f"{value:.0f}"


NO_WRAP = (
    "workload",
    "model",
    "quant/kv",
    "gpu",
    "site",
    "TPxPP",
    "TTFT/SLO ms",
    "TPOT/SLO ms",
)
"""Plan table columns printed whole (ids); the others wrap."""


def _print_infeasible(data: dict[str, Any], source: Path | None = None) -> None:
    err.print(infeasible_heading(source), soft_wrap=True)
    for item in data["infeasibility"]:
        err.print(f"  • {text(item['message'])}", soft_wrap=True)
        if item.get("relaxation"):
            err.print(f"    smallest relaxation: {text(item['relaxation'])}", soft_wrap=True)


def print_plan(result: Any, source: Path | None = None) -> None:
    """The plan as terminal tables: deployments (with SLO headroom), purchase orders, binding limits,
    alternatives; an infeasible plan's causes go to stderr under the scenario file's name (``source``)."""
    data = result.to_json()
    if data["status"] == "infeasible":
        _print_infeasible(data, source)
        return
    if data.get("time_limit_s") is not None:
        note(
            f"optimizer {data['optimizer_seconds']:.2f} s of the --time-limit {data['time_limit_s']:g} s "
            f"(candidate evaluation and the audit run outside it; total {data['total_seconds']:.2f} s)"
        )
    per_mtok = data["cost_usd_per_million_output_tokens"]
    from planner.report.formatting import months_text, period_runs_text, status_text

    paid_after = (data["cash_flow_usd_per_month"] or [])[data["horizon_months"] :]
    if paid_after:  # a reservation's term runs past the horizon (planner.problem.cost_terms.term_tail)
        note(
            f"reserved terms run {months_text(len(paid_after))} past the horizon: ${sum(paid_after):,.0f} "
            "(nominal) of the total is paid then; cost per month = total / horizon months"
        )

    served = data.get("served_scale")  # max_throughput: the answer is the served share, said first
    serves = "" if served is None else (
        f", serves {three_digits_text(served)}× the stated demand "
        f"({three_digits_text(data['served_requests_per_s']['total'])} req/s)"
    )
    title = (
        f"{data['scenario']}: {status_text(data['status'], data.get('gap'), data.get('bound_usd'))}{serves} — ${data['total_cost_usd']:,.0f} over "
        f"{months_text(data['horizon_months'])} "
        f"(${data['cost_usd_per_month']:,.0f}/month; capex ${data['capex_usd']:,.0f}, opex "
        f"${data['opex_usd_per_month']:,.0f}/month"
        + (f"; ${per_mtok:,.2f} per million output tokens)" if per_mtok is not None else ")")
    )
    multi_period = any(len(d["replicas_per_period"]) > 1 for d in data["deployments"])
    t = Table(
        title=text(title),
        caption="TTFT/SLO, TPOT/SLO: observed / target ms and the headroom 1 − observed/target; "
        "sync: exposed TP/PP communication / decode step (≤ max_sync_ratio)"
        + (
            "; repl, GPUs, req/s cap: in the workload's peak period (for a deployment idle then, its largest period); "
            "$/month: its share of its GPUs' supply over the horizon"
            if multi_period
            else ""
        ),
    )
    left = ("workload", "model", "quant/kv", "gpu", "site", "placement", "replicas per period")
    columns = ["workload", "model", "quant/kv", "gpu", "TPxPP", "site", "placement", "repl", "GPUs", "batch"]
    columns += ["TTFT/SLO ms", "TPOT/SLO ms", "sync", "req/s cap", "$/month"]
    columns += ["replicas per period"] if multi_period else []
    for c in columns:
        t.add_column(c, justify="left" if c in left else "right", no_wrap=c in NO_WRAP)
    for d in data["deployments"]:
        role = d.get("role", "colocated")
        row = [
            d["workload"] if role == "colocated" else f"{d['workload']} ({role})",
            d["model"],
            f"{d['quantization']}/{d['kv_dtype']}",
            d["gpu"],
            f"{d['tp']}x{d['pp']}" + (f" EP{d['ep']}" if d.get("ep", 1) > 1 else ""),
            d["site"],
            d["placement"],
            f"{d['replicas']:,}",
            gpus_cell(d),
            str(d["batch"]),
            "—" if role == "decode" else _ms(d["ttft_ms"], d["ttft_slo_ms"]),
            "—" if role == "prefill" else _ms(d["tpot_ms"], d["tpot_slo_ms"]),
            f"{d.get('sync_ratio', 0.0):.2f}",
            f"{d['capacity_requests_per_s']:,.2f}",
            f"{d['cost_usd_per_month']:,.0f}",
        ]
        if multi_period:
            row.append(period_runs_text(d["replicas_per_period"]))
        t.add_row(*(text(c) for c in row))
    show(t)
    _print_optimizations(data)
    _print_disaggregation(data)
    for line in sharing_lines(data):
        show(text(line))
    _print_rentals(data)
    _print_orders(data)
    _print_gpu_use(result)
    _print_binding_and_alternatives(data)


GPU_USE_LINE_CHARS = 110
"""Line length of the paid-vs-running sentences (prose: wrapped, as a table's prose column is)."""


def _print_gpu_use(result: Any) -> None:
    """Why a GPU type's paid GPUs exceed those running replicas (the workbook Summary's sentences,
    planner.report.gpu_use_text): mixed_fleet's tables showed 7 GPUs serving and 8 rented, unexplained."""
    import textwrap

    from planner.report.gpu_use_text import EVERY_GPU_RUNS, gpu_use_lines

    for _gpu, sentence in gpu_use_lines(result):
        if not sentence.endswith(EVERY_GPU_RUNS):  # wrapped: piped, a line is as long as its text (391 chars)
            show(text(textwrap.fill(sentence, GPU_USE_LINE_CHARS, subsequent_indent="  ")))


def _print_optimizations(data: dict[str, Any]) -> None:
    """Optimizations the workloads stated (prefix cache, speculative decoding): on/off per deployment and why
    (card 3's break-even); KV quantization and chunked prefill are listed alongside. Nothing when none stated."""
    stated = {"prefix_cache", "speculative"}
    deps = [d for d in data["deployments"] if any(o["name"] in stated for o in d.get("optimizations", []))]
    if not deps:
        return
    t = Table(title="optimizations (why: card 3 break-even)")
    for c in ("deployment", "optimization", "on", "why"):
        t.add_column(c, justify="left", no_wrap=c != "why")
    for d in deps:
        name = f"{d['workload']} {d['gpu']} {d['tp']}x{d['pp']}"
        for o in d["optimizations"]:
            t.add_row(text(name), text(o["name"]), "on" if o["on"] else "off", text(o["why"]))
    show(t)


def _print_disaggregation(data: dict[str, Any]) -> None:
    """One line per prefill/decode group: P:D ratio (GPUs and replicas), served req/s and the KV link load."""
    for g in data.get("disaggregation", []):
        show(
            text(
                f"prefill/decode {g['pd_group']}: P:D = {g['pd_ratio']} GPUs ({g['prefill_replicas']}:"
                f"{g['decode_replicas']} replicas), {g['served_requests_per_s']:.2f} req/s; KV link "
                f"{g['kv_link_load_gb_per_s']:.2f} of {g['kv_link_capacity_gb_per_s']:.0f} GB/s "
                f"({g['kv_link_load_frac']:.0%}, {g['kv_gb_per_request']:.3f} GB per request)"
            )
        )


def _print_rentals(data: dict[str, Any]) -> None:
    """Rented supply: GPU, site, kind, peak GPUs, $/month and the quote paid (provider, price, source)."""
    rentals = [s for s in data["supply"] if str(s["kind"]).startswith("rent")]
    if not rentals:
        return
    from planner.report.formatting import number_runs_text

    r = Table(
        title="what to rent (quote paid)",
        caption="months: those with units rented (from 0); $/month: the horizon's mean, as every $/month of the plan",
    )
    for c in ("gpu", "site", "kind", "GPUs", "months", "$/month", "quote"):
        r.add_column(c, justify="right" if c in ("GPUs", "$/month") else "left")
    for s in rentals:
        used = [m for m, units in enumerate(s["units_per_month"]) if units > 1e-9]
        months = "all" if len(used) == len(s["units_per_month"]) else number_runs_text(used) if used else "none"
        r.add_row(
            text(s["gpu"]),
            text(s["site"]),
            text(s["kind"]),
            count_text(s["gpus"]),
            months,
            f"{s['cost_usd_per_month']:,.0f}",
            text(s["source"]),
        )
    show(r)


def _print_orders(data: dict[str, Any]) -> None:
    orders = sorted((s for s in data["supply"] if s["kind"] == "buy"), key=lambda s: s["purchase_month"])
    if not orders:
        return
    o = Table(title="what to buy when (purchase orders)")
    for c in ("order month", "gpu", "site", "GPUs", "usable from month", "capex $", "resale at horizon $"):
        o.add_column(c, justify="left" if c in ("gpu", "site") else "right")
    for s in orders:
        o.add_row(
            str(s["purchase_month"]),
            text(s["gpu"]),
            text(s["site"]),
            count_text(s["gpus"]),
            f"{s['available_from_month']:g}",
            f"{s['capex_usd']:,.0f}",
            f"{s['residual_usd']:,.0f}",
        )
    show(o)


MAX_BINDING_ROWS = 20
"""Binding-constraint lines the terminal shows (after :func:`binding_rows` merges slices)."""


def _print_binding_and_alternatives(data: dict[str, Any]) -> None:
    if data["binding_constraints"]:
        from planner.report.formatting import binding_rows

        rows = binding_rows(data["binding_constraints"], data.get("schedule") or ())
        shown = rows[:MAX_BINDING_ROWS]
        more = len(rows) - len(shown)
        b = Table(
            title="binding constraints",
            caption=f"… and {more} more (--json lists every row)" if more else None,
        )
        b.add_column("family")
        b.add_column("key")
        for family, key in shown:
            b.add_row(text(family), text(key))
        show(b)
    if data["alternatives"]:
        a = Table(
            title="alternatives (best plan per GPU type and per site)",
            caption="max TPOT: the worst over its replicas at their planned capacity (the deployments above: at the load they serve)",
        )
        for c in ("kind", "value", "status", "cost delta $", "max TPOT ms", "why it lost"):
            a.add_column(c)
        for row in data["alternatives"]:
            delta, tpot = row.get("cost_delta_usd"), row.get("max_tpot_ms")
            a.add_row(
                text(row["kind"]),
                text(row[row["kind"]]),
                text(row["status"]),
                "—" if delta is None else f"{delta:,.0f}",
                "—" if tpot is None else f"{tpot:.1f}",
                text(row["lost_because"]),
            )
        show(a)


def write_workbook(result: Any, output: Path | None, plots: Path | None) -> list[Path]:
    """Write the plan workbook or HTML report and/or PNG charts; the files written, to announce with
    :func:`~planner.cli.common.announce` once stdout is done. Files come before stdout, so a reader that
    stops early (``planner plan X -o plan.xlsx | head``) cannot cost them."""
    if output is None and plots is None:
        return []
    from planner.report.workbook import write_plan_outputs

    html = output is not None and output.suffix.lower() == ".html"
    with working("writing the report"):
        if html and output is not None:
            from planner.report.html import write_plan_html

            run_guarded(lambda: write_plan_html(result, output))
        workbook = None if html else output
        run_guarded(lambda: write_plan_outputs(result, None, workbook=workbook, plots_dir=plots))
    return written_files(output, plots)


def plan(
    scenario_path: ScenarioArg,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    output: OutputXlsx = None,
    solver: SolverOpt = "highs",
    time_limit: TimeLimit = None,
    plots: PlotsDir = None,
    no_alternatives: Annotated[
        bool, typer.Option("--no-alternatives", help="Skip the per-GPU/per-site re-solves.")
    ] = False,
) -> None:
    """Cheapest plan meeting every SLO (objective max_throughput: the most traffic within the budget): GPU types, counts, TP×PP, quantization, sites. Exit 3 if infeasible."""
    from planner.cli.catalog_cmd import _catalog
    from planner.plan import plan as run_plan
    from planner.scenario import load_scenario
    from planner.training.scenario import refuse_training_file

    def go() -> Any:
        check_outputs(scenario_path, output, json_out, plots)
        chosen = check_solver(solver)
        catalog = _catalog()
        refuse_training_file(scenario_path, "plan")
        scenario = load_scenario(scenario_path, catalog)
        with working(f"planning {scenario.name}"):
            return run_plan(
                catalog,
                scenario,
                solver=chosen,
                time_limit_s=time_limit,
                with_alternatives=not no_alternatives,
            )

    result = run_guarded(go)
    written = [] if result.status == "infeasible" else write_workbook(result, output, plots)
    data = result.to_json()
    for warning in data["warnings"]:
        warn(warning)
    if not emit(data, as_json, json_out, failed=result.status == "infeasible", outputs=(output, plots)):
        print_plan(result, scenario_path)
        print_budget_lines(data)
    elif result.status == "infeasible":
        _print_infeasible(data, scenario_path)
    if result.status == "infeasible":
        raise typer.Exit(code=InfeasiblePlan.exit_code)
    announce(written)


def budget(
    scenario_path: ScenarioArg,
    capex_usd: Annotated[
        float | None,
        typer.Option("--capex-usd", help="Capital budget, USD.", parser=finite_float(0, MAX_USD), metavar="USD"),
    ] = None,
    opex_usd_per_month: Annotated[
        float | None,
        typer.Option(
            "--opex-usd-per-month", help="Monthly budget, USD.", parser=finite_float(0, MAX_USD), metavar="USD"
        ),
    ] = None,
    total_usd: Annotated[
        float | None,
        typer.Option("--total-usd", help="Horizon budget, USD.", parser=finite_float(0, MAX_USD), metavar="USD"),
    ] = None,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    output: OutputXlsx = None,
    solver: SolverOpt = "highs",
) -> None:
    """The most traffic (all workloads scaled together) that a budget serves within every SLO. Give at least one of --capex-usd, --opex-usd-per-month, --total-usd."""
    from planner.cli.catalog_cmd import _catalog
    from planner.plan import plan as run_plan
    from planner.scenario import Budget, load_scenario
    from planner.training.scenario import refuse_training_file

    def go() -> Any:
        check_outputs(scenario_path, output, json_out)
        if capex_usd is None and opex_usd_per_month is None and total_usd is None:
            raise InputError("budget: give at least one of --capex-usd, --opex-usd-per-month, --total-usd")
        chosen = check_solver(solver)
        catalog = _catalog()
        refuse_training_file(scenario_path, "budget")
        scenario = load_scenario(scenario_path, catalog)
        limits = Budget.from_options(
            scenario.budget, capex_usd=capex_usd, opex_usd_per_month=opex_usd_per_month, total_usd=total_usd
        )
        scenario = scenario.model_copy(update={"objective": "max_throughput", "budget": limits})
        with working(f"largest demand within the budget of {scenario.name}"):
            return run_plan(catalog, scenario, solver=chosen, with_alternatives=False)

    result = run_guarded(go)
    data = result.to_json()
    written = [] if result.status == "infeasible" else write_workbook(result, output, None)
    if not emit(data, as_json, json_out, failed=result.status == "infeasible", outputs=(output,)):
        print_plan(result, scenario_path)
        print_budget(data)
    if result.status == "infeasible":
        raise typer.Exit(code=InfeasiblePlan.exit_code)
    announce(written)


def print_budget(data: dict[str, Any]) -> None:
    """Served scale and each budget line: spent, limit, share used (binding ones marked)."""
    if data["served_scale"] is None:
        return
    total = data["served_requests_per_s"].get("total", 0)
    since = data.get("served_from_month") or 0
    when = (
        f" from month {since:g} (the first period after a purchase is delivered; earlier months serve what they can)"
        if since
        else ""
    )
    varies = data["horizon_months"] > data["period_months"] or any(e.get("hour_blocks") for e in data["schedule"])
    peak = " (each workload at its peak)" if varies else ""
    # 6 significant digits: the plan holds the first stage's scale to within HOLD_REL = 1e-7 (80,000 req/s
    # read back as 79,999.99 under '10,000.000 ×')
    show(f"served: {data['served_scale']:,.3f} × the stated demand = {total:,.6g} req/s{peak}{when}")
    print_budget_lines(data)


def print_budget_lines(data: dict[str, Any]) -> None:
    """Each stated budget line: spent (opex: the busiest month), limit, share used, and the binding limit."""
    used = data.get("budget_used")
    if used is None:
        return
    for key, limit in used["limits"].items():
        if limit is None:
            continue
        mark = " (binding)" if key in used["binding"] else ""
        frac = used["used_frac"].get(key)  # None for a limit of 0: no share of nothing
        share = f" ({frac:.1%})" if frac is not None else ""
        show(f"{key}: {used[key]:,.0f} of {limit:,.0f}{share}{mark}")
    show(f"binding limit: {text(used['binding_limit'])}")
