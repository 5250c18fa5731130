"""``planner train`` and ``planner predict-train`` (issue 14). Thin: parse, call, print, map errors.

JSON convention: ``--json`` prints JSON to stdout (nothing else there), ``--json-out PATH`` writes it.
Exit codes: 0 a plan, 2 invalid input (one line: file, field, a valid alternative), 3 infeasible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import (
    JsonFlag,
    JsonOut,
    check_distinct_outputs,
    check_output_path,
    emit,
    err,
    fail,
    finite_float,
    infeasible_heading,
    run_guarded,
    show,
    text,
    warn,
    wrote,
)
from planner.errors import InfeasiblePlan, InputError
from planner.limits import MAX_TOKENS
from planner.training.limits import MAX_DIMENSION, MAX_GLOBAL_BATCH_SEQUENCES, MAX_LAYERS, MAX_TRAINING_TOKENS
from planner.units import days_decimals

NOTE_WIDTH = 60
"""Characters of the plan table's note column (longer notes wrap, as the README's prose columns)."""


def usd(value: float) -> str:
    """'$5,377', and '-$159,115' for a credit (a resale line): the sign before the dollar."""
    return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"


def num(value: float) -> str:
    """4 significant digits with thousands separators: '53.25', '78,771', '293,217' (',.4g' printed
    '7.877e+04' tokens/s and '1.092e+04' s from 10,000 up)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.4g}"


def _catalog() -> Any:
    from planner.catalog import default_catalog

    return run_guarded(default_catalog)


def tokens_text(tokens: float) -> str:
    """A token total in decimal units, as a training run states it: '100B', '2.5T', '750M' (1e+11 read badly)."""
    from planner.units import three_digits_text

    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if tokens >= size:
            return f"{three_digits_text(tokens / size)}{suffix}"
    return f"{tokens:,.0f}"


def _print_plan(data: dict[str, Any], source: Path, seq_len_tokens: int | None = None) -> None:
    if data["status"] != "optimal":
        err.print(infeasible_heading(source), soft_wrap=True)
        for reason in data["infeasibility"]:
            err.print(f"  • {text(reason)}", soft_wrap=True)
        return
    # the sequence length used, as a number: a "4k" in the file is refused (4096 or 4000?), so it is the one written
    run = "" if seq_len_tokens is None else (
        f" ({data['model']}, {tokens_text(data['training_tokens'])} tokens in {seq_len_tokens:,}-token sequences)"
    )
    # days with the decimals that tell the options apart (earliest_finish chooses by them: 0.232 vs 0.238 days)
    decimals = days_decimals([data["days"], *(o["days"] for o in data["alternatives"])])
    title = (
        f"{text(data['scenario'])}{text(run)}: {data['gpus']:,} × {data['gpu']} ({data['procurement']}, "
        f"{data['site']}) — {data['days']:,.{decimals}f} days, {usd(data['total_cost_usd'])}"
    )
    t = Table(title=title)
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("note", overflow="fold", max_width=NOTE_WIDTH)
    for key in (
        "dp", "tp", "pp", "zero_stage", "recompute", "sequence_parallel", "micro_batch", "microbatches_per_step",
        "schedule", "iteration_time_s", "steps", "memory_per_gpu_gib", "memory_states_gib_per_gpu",
        "memory_activations_gib_per_gpu", "memory_capacity_gib", "mfu", "tokens_per_s", "gpu_hours",
    ):  # fmt: skip
        value = data[key]
        shown = (
            f"{value:.1%}" if key == "mfu" else num(value) if isinstance(value, float) else str(value)
        )
        if isinstance(value, int) and not isinstance(value, bool):
            shown = f"{value:,}"
        t.add_row(key, shown)  # MFU as the options table prints it
    for key, value in data["breakdown"].items():
        t.add_row(f"breakdown.{key}", num(value))
    checkpoint = data["checkpoint"]
    t.add_row("checkpoint.write_s", num(checkpoint["write_s"]), "c = 14 B/param × N / write bandwidth")
    t.add_row("checkpoint.interval_s", num(checkpoint["interval_s"]), "τ* = sqrt(2c/λ), λ = GPUs / MTBF")
    t.add_row(
        "checkpoint.failure_overhead_frac",
        f"{checkpoint['failure_overhead_frac']:.2%}",
        "L = c/τ* + λτ*/2 + λr",
    )
    t.add_row("run_days", num(data["run_days"]), "setup + steps × iteration_time_s × (1 + L)")
    t.add_row("start_delay_days", num(data["start_delay_days"]), "delivery of bought GPUs")
    t.add_row("days", num(data["days"]), "start_delay_days + run_days")
    for line in data["cost_lines"]:
        t.add_row(f"cost.{line['kind']}", usd(line["usd"]), text(line["note"]))
    show(t)
    alt = Table(title="best option per GPU type")
    for col in ("gpu", "gpus", "tp×pp×dp", "days", "cost USD", "mfu"):
        alt.add_column(col, justify="right")
    for o in data["alternatives"]:
        alt.add_row(
            o["gpu"], f"{o['gpus']:,}", f"{o['tp']}×{o['pp']}×{o['dp']}", f"{o['days']:,.{decimals}f}",
            f"{o['total_cost_usd']:,.0f}", f"{o['mfu']:.1%}",
        )  # fmt: skip
    show(alt)


def train(
    scenario_path: Annotated[Path, typer.Argument(help="Training scenario YAML (kind: training).")],
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write an Excel workbook (.xlsx).")
    ] = None,
) -> None:
    """Cheapest way to train a model by a deadline: GPU type, count, DP/TP/PP, ZeRO, recompute (card 4). Exit 3 if infeasible."""
    from planner.training.plan import plan_training
    from planner.training.scenario import load_training_scenario

    def go() -> Any:
        if output is not None and output.suffix.lower() != ".xlsx":
            raise InputError(f"-o {output}: the workbook name must end in .xlsx")
        check_output_path(json_out, "--json-out", (scenario_path,))
        check_output_path(output, "-o", (scenario_path,))  # before the search: the error names -o
        check_distinct_outputs(("-o", output), ("--json-out", json_out))
        catalog = _catalog()
        scenario = load_training_scenario(scenario_path, catalog)
        return plan_training(catalog, scenario), scenario.seq_len_tokens

    plan, seq_len = run_guarded(go)
    data = plan.to_json()
    for reason in plan.excluded:
        warn(reason)
    # files before stdout: a reader that stops early (`| head`) cannot cost them
    if output is not None and plan.status == "optimal":
        from planner.report.training_workbook import write_training_workbook

        run_guarded(lambda: write_training_workbook(plan, output))
    emit(data, as_json, json_out, failed=plan.status != "optimal", outputs=(output,))  # names -o too
    if not as_json:
        _print_plan(data, scenario_path, seq_len)
    elif plan.status != "optimal":
        for reason in plan.reasons:
            err.print(f"{text(str(scenario_path))}: infeasible: {text(reason)}", soft_wrap=True)
    if plan.status != "optimal":
        raise typer.Exit(code=InfeasiblePlan.exit_code)
    if output is not None:
        wrote(output)


def predict_train(
    gpu: Annotated[str, typer.Option(help="Accelerator id, e.g. h100_sxm.")],
    gpus: Annotated[int, typer.Option(help="GPUs N = tp × pp × dp.", min=1)],
    model: Annotated[
        str | None, typer.Option(help="Catalog model id (or give --layers ... instead).")
    ] = None,
    layers: Annotated[
        int | None, typer.Option(help="Inline architecture: layers.", min=1, max=MAX_LAYERS)
    ] = None,
    hidden_size: Annotated[
        int | None, typer.Option(help="Inline architecture: hidden size.", min=1, max=MAX_DIMENSION)
    ] = None,
    ffn_size: Annotated[
        int | None, typer.Option(help="Inline architecture: SwiGLU FFN width.", min=0, max=MAX_DIMENSION)
    ] = None,
    heads: Annotated[
        int | None, typer.Option(help="Inline architecture: query heads.", min=1, max=MAX_DIMENSION)
    ] = None,
    kv_heads: Annotated[
        int | None,
        typer.Option(help="Inline architecture: KV heads (default heads).", min=1, max=MAX_DIMENSION),
    ] = None,
    vocab_size: Annotated[
        int, typer.Option(help="Inline architecture: vocabulary.", min=1, max=MAX_DIMENSION)
    ] = 32000,
    tp: Annotated[int, typer.Option(help="Tensor-parallel degree.", min=1)] = 1,
    pp: Annotated[int, typer.Option(help="Pipeline-parallel degree.", min=1)] = 1,
    dp: Annotated[int | None, typer.Option(help="Data-parallel degree (default N/(tp·pp)).", min=1)] = None,
    zero_stage: Annotated[int, typer.Option("--zero-stage", help="ZeRO stage 0-3 (3 = FSDP).")] = 1,
    micro_batch: Annotated[int, typer.Option(help="Micro-batch, sequences.", min=1)] = 1,
    global_batch: Annotated[
        int, typer.Option(help="Global batch, sequences per step.", min=1, max=MAX_GLOBAL_BATCH_SEQUENCES)
    ] = 512,
    seq_len: Annotated[int, typer.Option(help="Sequence length, tokens.", min=1, max=MAX_TOKENS)] = 4096,
    recompute: Annotated[
        str, typer.Option(help="Activation recomputation: none, selective or full.")
    ] = "selective",
    sequence_parallel: Annotated[
        bool, typer.Option("--sequence-parallel", help="Megatron sequence parallelism.")
    ] = False,
    schedule: Annotated[
        str, typer.Option(help="Pipeline schedule: 1f1b, interleaved or fill_drain.")
    ] = "1f1b",
    precision: Annotated[str, typer.Option(help="Matmul precision: bf16 or fp8.")] = "bf16",
    tokens: Annotated[
        float,
        typer.Option(
            help="Training tokens (for days).", parser=finite_float(1, MAX_TRAINING_TOKENS), metavar="TOKENS"
        ),
    ] = 1e11,
    force: Annotated[
        bool, typer.Option("--force", help="Show the numbers even when the layout does not fit.")
    ] = False,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
) -> None:
    """The training ledgers of one layout: memory per GPU, iteration time, MFU, tokens/s, breakdown (card 4)."""
    from pydantic import ValidationError

    from planner.training.predict import PredictTrainRequest
    from planner.training.predict import predict_train as run_predict
    from planner.training.scenario import Architecture

    def choice(option: str, value: str, valid: tuple[str, ...]) -> Any:
        if value not in valid:
            raise InputError(f"{option} {value}: valid values are {', '.join(valid)}")
        return value

    def go() -> dict[str, Any]:
        check_output_path(json_out, "--json-out")
        arch_options = {"--layers": layers, "--hidden-size": hidden_size, "--ffn-size": ffn_size, "--heads": heads}
        arch_given = [v is not None for v in arch_options.values()]
        if (model is None and not all(arch_given)) or (model is not None and any(arch_given)):
            missing = [o for o, v in arch_options.items() if v is None]  # name what an inline architecture lacks
            lacks = f" (missing {' '.join(missing)})" if model is None and any(arch_given) else ""
            raise InputError(
                f"--model: give a catalog model id, or all of --layers --hidden-size --ffn-size --heads{lacks}"
            )
        arch: str | Architecture
        if model is not None:
            arch = model
        else:
            try:
                arch = Architecture.model_validate(
                    {"layers": layers, "hidden_size": hidden_size, "ffn_size": ffn_size, "heads": heads,
                     "kv_heads": kv_heads, "vocab_size": vocab_size}
                )  # fmt: skip
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                option = (
                    f"--{where.replace('_', '-')}" if where else "--layers/--hidden-size/--heads/--kv-heads"
                )
                problem = str(first.get("ctx", {}).get("error", first["msg"]))  # the validator's own words
                raise InputError(f"{option}: {problem}") from None
        req = PredictTrainRequest(
            arch, gpu, gpus, tp, pp, dp, zero_stage, micro_batch, global_batch, seq_len,
            choice("--recompute", recompute, ("none", "selective", "full")), sequence_parallel,
            choice("--schedule", schedule, ("1f1b", "interleaved", "fill_drain")),
            choice("--precision", precision, ("bf16", "fp8")), tokens,
        )  # fmt: skip
        return run_predict(_catalog(), req)

    data = run_guarded(go)
    if not data["fits"] and not force:
        fail(
            InfeasiblePlan(
                f"{data['memory_per_gpu_gib']:.1f} GiB per GPU does not fit the {data['memory_capacity_gib']:.1f} GiB "
                f"of {gpu} — try --recompute selective|full, --sequence-parallel, a higher --zero-stage or more "
                "--tp/--pp; --force shows the numbers"
            )
        )
    emit(data, as_json, json_out)
    if as_json:
        return
    t = Table(
        title=f"{data['model']} on {data['gpus']} × {gpu}: TP{tp}×PP{pp}×DP{data['dp']}, ZeRO-{zero_stage}"
    )
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for key, value in data.items():
        if key == "mfu":
            t.add_row(key, f"{value:.1%}")  # as `planner train` prints it
        elif key != "breakdown":
            t.add_row(key, num(value) if isinstance(value, float) else str(value))
    for key, value in data["breakdown"].items():
        t.add_row(f"breakdown.{key}", num(value))
    show(t)


def register(app: typer.Typer) -> None:
    """Add ``train`` and ``predict-train`` to the ``planner`` app."""
    app.command("train")(train)
    app.command("predict-train")(predict_train)
