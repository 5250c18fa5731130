"""``planner sweep``: one plan per variant of a scenario, on local processes or a Dask cluster.

Errors, JSON and 'wrote' lines go through planner.cli.common like every command; it registers on any
``typer.Typer`` with :func:`register`. ``planner --quiet`` (planner.cli.common.VERBOSITY) hides the progress bar and the table. Heavy
modules load inside the command. Progress goes to stderr; ``--json`` keeps stdout for the JSON alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from planner.cli.common import emit, err, finite_float, run_guarded, show, warn, wrote
from planner.units import three_digits_text

if TYPE_CHECKING:
    from planner.sweep import Engine, SweepResult, SweepRow


def _engine(workers: int | None, dask: str | None) -> Engine:
    from planner.errors import InputError
    from planner.sweep import DaskEngine, LocalEngine, default_workers

    if dask is not None and workers is not None:
        raise InputError("sweep: give --workers N (local processes) or --dask ADDRESS (a cluster), not both")
    if dask is not None:
        address = dask if "://" in dask else f"tcp://{dask}"
        return DaskEngine(address)
    return LocalEngine(workers or default_workers())


def _check_files(scenario: Path, output: Path | None, json_out: Path | None, resume: Path | None) -> None:
    """Before anything is solved: no output over the scenario (or any YAML file), each output's folder
    exists, and the resume file is none of the outputs (a JSON or a workbook written over it would lose
    its rows)."""
    from planner.cli.common import check_distinct_outputs, check_output_path
    from planner.errors import InputError

    check_output_path(output, "-o", [scenario])
    check_output_path(json_out, "--json-out", [scenario])
    check_output_path(resume, "--resume", [scenario])
    check_distinct_outputs(("-o", output), ("--json-out", json_out))
    if resume is None:
        return
    for option, path in (("--json-out", json_out), ("-o", output)):
        if path is not None and path.resolve() == resume.resolve():
            raise InputError(
                f"--resume {resume}: {option} names the same file, which would replace its rows — "
                "give the resume file its own name, e.g. rows.jsonl"
            )


def _money(value: float | None) -> str:
    """Whole dollars from $100 up, cents below (a $/Mtok figure); nothing is 0, as `planner compare` prints it."""
    if value is None:
        return ""
    return "0" if value == 0 else f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"


def _served(row: SweepRow) -> str:
    """``4.48 (1.28×)``: requests/s served and the fraction of the stated demand (max_throughput rows)."""
    if row.served_requests_per_s is None or row.served_scale is None:
        return ""
    return f"{row.served_requests_per_s:,.2f} ({three_digits_text(row.served_scale)}×)"


def _print_table(result: SweepResult) -> None:
    from rich.table import Table

    from planner.readout.sweep import format_gpus, format_value

    t = Table(title=f"{result.scenario}: {len(result.rows)} variants ({result.mode}) on {result.engine}")
    served = any(r.served_scale is not None for r in result.rows)  # max_throughput: how much is the answer
    columns = [
        *result.paths,
        "status",
        *(["served req/s"] if served else []),
        "total $",
        "capex $",
        "opex $/month",
        "$/M tok",
        "GPUs serving",
        "choice",
        "solve s",
    ]
    for c in columns:
        t.add_column(c, justify="left" if c in ("status", "GPUs serving", "choice") or c in result.paths else "right")
    for r in result.rows:
        gpus = format_gpus(r.gpus_by_type)
        choice = "; ".join(f"{c.workload}: {c.label}" for c in r.choices) or (r.error or "")
        t.add_row(
            *(format_value(r.values[p]) for p in result.paths),
            r.status + (f" (gap {r.gap:.1%})" if r.gap else ""),
            *([_served(r)] if served else []),
            _money(r.total_cost_usd),
            _money(r.capex_usd),
            _money(r.opex_usd_per_month),
            _money(r.cost_usd_per_million_output_tokens),
            gpus,
            choice,
            f"{r.solve_seconds:.2f}",
        )
    show(t)
    for r in result.rows:  # as `planner plan` warns (planner.readout.warnings)
        for warning in r.warnings:
            warn(f"variant {r.index}: {warning}")


def _run(
    scenario_path: Path,
    vary: list[str],
    mode: str,
    engine: Engine,
    time_limit: float | None,
    resume: Path | None,
    quiet: bool,
) -> SweepResult:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from planner.catalog import default_catalog
    from planner.cli.guard import set_stopped_note
    from planner.cli.progress import working
    from planner.scenario import load_scenario
    from planner.sweep import parse_axis, plan_sweep, run_sweep
    from planner.training.scenario import refuse_training_file

    catalog = default_catalog()
    refuse_training_file(scenario_path, "sweep")
    scenario = load_scenario(scenario_path, catalog)
    axes = [parse_axis(v) for v in vary]
    with working(f"checking every variant of {scenario_path.name} before solving any"):  # ~1 ms a variant
        sweep = plan_sweep(scenario, catalog, axes, "zip" if mode == "zip" else "grid", path=str(scenario_path))
    progress = Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err,
        disable=quiet or not err.is_terminal,  # a log or pipe gets the table, not a bar
        transient=False,
    )
    with progress:
        task = progress.add_task("", total=len(sweep.variants))

        kept = [0]

        def arrived(row: SweepRow) -> None:
            progress.update(task, advance=1, description=f"last: {row.key} → {row.status}")
            kept[0] += 1
            if resume is not None:  # each finished row is appended there at once: an interrupted run keeps them
                set_stopped_note(
                    f"{kept[0]} finished row{'s' if kept[0] != 1 else ''} of this run kept in {resume} (run the same command "
                    "to resume); no other output was changed"
                )

        result = run_sweep(catalog, sweep, engine, time_limit_s=time_limit, resume=resume, on_row=arrived)
        progress.update(task, completed=len(sweep.variants))
    return result


def sweep(
    scenario_path: Annotated[Path, typer.Argument(help="Scenario YAML file (the base of every variant).")],
    vary: Annotated[
        list[str],
        typer.Option(
            "--vary",
            help="PATH=V1,V2,... over a dotted scenario path, e.g. workloads.chat.requests_per_s=4,8,16, "
            "workloads.chat.slo.tpot_ms=30,50, economics.rent_price_scale=0.7,1, hardware.gpus=h100_sxm+h200_sxm,b200 "
            "(a+b is a list). Repeat for more axes.",
        ),
    ],
    grid: Annotated[
        bool,
        typer.Option(
            "--grid/--zip", help="Every combination of the values (grid), or the i-th values together (zip)."
        ),
    ] = True,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Local worker processes (default: the CPU cores).", min=1)
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            "--dask", help="Run on an existing dask.distributed scheduler, e.g. tcp://10.0.0.5:8786."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON to stdout.")] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Write the rows as JSON to PATH.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write a workbook with a Sweep sheet (.xlsx).")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Results file (JSON lines): rows found there are not solved again; new rows are appended as they finish.",
        ),
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Wall-clock cap on the optimizer per variant, seconds, at least 0.1.",
            parser=finite_float(0.1),
            metavar="SECONDS",
        ),
    ] = None,
) -> None:
    """One plan per variant (--vary PATH=V1,V2,...): cost, capex, opex, $/Mtok, GPUs, choices and binding constraints per row."""
    from planner.errors import InputError

    def go() -> SweepResult:
        if output is not None and output.suffix.lower() != ".xlsx":
            raise InputError(f"-o {output}: the workbook name must end in .xlsx")
        _check_files(scenario_path, output, json_out, resume)
        engine = _engine(workers, dask)
        return _run(scenario_path, vary, "grid" if grid else "zip", engine, time_limit, resume, quiet=quiet)

    from planner.cli.common import VERBOSITY

    quiet = VERBOSITY.quiet

    result = run_guarded(go)
    if output is not None:  # files before stdout: a reader that stops early cannot cost them
        from planner.report.sweep_workbook import write_sweep_workbook

        run_guarded(lambda: write_sweep_workbook(result, output))
    emit(result.to_json(), as_json, json_out)
    if not as_json:
        _print_table(result)
    if output is not None:  # after the table, as every command announces its files
        wrote(output)
    if result.failed:
        err.print(
            f"{len(result.failed)} of {len(result.rows)} variants failed (status 'error' rows)",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    """Add ``planner sweep`` to ``app``."""
    app.command("sweep")(sweep)
