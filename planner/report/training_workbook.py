"""The training plan workbook: Summary, Iteration (time breakdown), Costs (the run's cash lines), Options.

Reads only :class:`planner.readout.training.TrainingPlan` (its JSON); the Costs total is a SUM over the
cash lines, and the Summary's total cost points at it, so no figure is typed twice. Every figure carries
its unit: the Summary's ``unit`` column (and the formula it comes from), the unit in every other header.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.readout.training import TrainingPlan
from planner.report.files import write_workbook
from planner.report.xlsx import (
    Formula,
    Tables,
    align,
    append_row,
    finish_sheet,
    header_table,
    set_cell,
    style_header,
    wrap_columns,
)

USD = '"$"#,##0'
NUM = "#,##0.000"
PCT = "0.0%"
PCT_FINE = "0.00%"
"""A share that is a fraction of a percent (checkpoint and failure overhead: 0.32%, the terminal's figure; 0.0%
read 0.3%)."""
INT = "#,##0"
SUMMARY_HEADERS = ["quantity", "value", "unit", "formula / source"]
SUMMARY_KEYS: tuple[tuple[str, str | None, str, str], ...] = (
    ("status", None, "", ""),
    ("scenario", None, "", ""),
    ("model", None, "", ""),
    ("n_params", INT, "parameters", "N, all weights (embeddings and every expert included)"),
    ("training_tokens", "0.00E+00", "tokens", "D"),
    ("train_flop", "0.00E+00", "FLOP", "D × 3·(linear + LM head + causal attention forward) per token"),
    ("deadline_days", NUM, "days", "scenario"),
    ("gpu", None, "", ""),
    ("gpus", "0", "GPUs", "n = tp × pp × dp"),
    ("procurement", None, "", ""),
    ("site", None, "", ""),
    ("tp", "0", "GPUs per stage", "tensor-parallel degree"),
    ("pp", "0", "stages", "pipeline stages (tp GPUs each)"),
    ("dp", "0", "model replicas", "data-parallel replicas (tp × pp GPUs each)"),
    ("zero_stage", "0", "", "ZeRO stage (3 = FSDP)"),
    ("recompute", None, "", "activation recomputation"),
    ("sequence_parallel", None, "", ""),
    ("micro_batch", "0", "sequences", "b"),
    ("microbatches_per_step", INT, "micro-batches", "m = global batch / (dp × b)"),
    ("schedule", None, "", "pipeline schedule"),
    ("iteration_time_s", NUM, "s", "t = compute + bubble + TP + PP + exposed DP (Iteration sheet)"),
    ("steps", INT, "optimizer steps", "⌈D / tokens per step⌉"),
    ("checkpoint_write_s", NUM, "s", "c = 14 B/param × N / write bandwidth (card 4)"),
    ("checkpoint_interval_s", NUM, "s", "τ* = sqrt(2c/λ), λ = n / MTBF per GPU"),
    ("failure_overhead_frac", PCT_FINE, "% of the step time", "L = c/τ* + λτ*/2 + λ·restart"),
    ("start_delay_days", NUM, "days", "delivery lead time of bought GPUs"),
    ("run_days", NUM, "days", "setup + steps × t × (1 + L) / 86,400"),
    ("days", NUM, "days", "start_delay_days + run_days"),
    ("memory_per_gpu_gib", NUM, "GiB (2^30 B)", "states + activations + workspace"),
    ("memory_states_gib_per_gpu", NUM, "GiB (2^30 B)", "16 B/param split by ZeRO over dp, and tp × pp"),
    ("memory_activations_gib_per_gpu", NUM, "GiB (2^30 B)", "Korthikanti et al. 2022 + FP32 logits"),
    ("memory_capacity_gib", NUM, "GiB (2^30 B)", "the GPU's memory"),
    ("mfu", PCT, "% of dense peak", "model FLOPs per step / (t × n × peak)"),
    ("tokens_per_s", INT, "tokens/s", "tokens per step / t"),
    ("gpu_hours", INT, "GPU-hours", "n × run_days × 24"),
)
CHECKPOINT_KEYS = {"checkpoint_write_s": "write_s", "checkpoint_interval_s": "interval_s",
                   "failure_overhead_frac": "failure_overhead_frac"}  # fmt: skip
OPTION_COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    ("gpu", "GPU", None),
    ("gpus", "GPUs", "0"),
    ("tp", "TP", "0"),
    ("pp", "PP", "0"),
    ("dp", "DP", "0"),
    ("zero_stage", "ZeRO stage", "0"),
    ("recompute", "Recompute", None),
    ("iteration_time_s", "Iteration time (s)", NUM),
    ("days", "Finish (days)", NUM),
    ("total_cost_usd", "Total cost (USD)", USD),
    ("mfu", "MFU (% of dense peak)", PCT),
    ("memory_per_gpu_gib", "Memory per GPU (GiB)", NUM),
    ("procurement", "Procurement", None),
    ("site", "Site", None),
)


CHOSEN_HEADER = "Chosen"
"""Options column: "yes" on the option the plan is (the best per GPU type did not say which one won)."""
CHOSEN_KEYS = ("gpu", "gpus", "tp", "pp", "dp", "zero_stage", "recompute", "procurement", "site")


def _chosen(option: dict[str, Any], data: dict[str, Any]) -> str:
    return "yes" if all(option.get(k) == data.get(k) for k in CHOSEN_KEYS) else ""


def _summary_value(data: dict[str, Any], key: str) -> Any:
    if key in CHECKPOINT_KEYS:
        return (data.get("checkpoint") or {}).get(CHECKPOINT_KEYS[key])
    value = data.get(key)
    return str(value) if isinstance(value, bool) else value


SUMMARY_LIVE = {"days": "={start_delay_days}+{run_days}", "gpu_hours": "={gpus}*{run_days}*24"}
"""Summary figures written as the formula their 'formula / source' cell states, over the cells they read."""


def _summary(ws: Any, data: dict[str, Any]) -> None:
    append_row(ws, 1, SUMMARY_HEADERS)
    style_header(ws, 1, len(SUMMARY_HEADERS))
    row = 1
    cells = {key: f"B{i}" for i, (key, *_rest) in enumerate(SUMMARY_KEYS, start=2)}
    for row, (key, fmt, unit, formula) in enumerate(SUMMARY_KEYS, start=2):
        append_row(ws, row, [key, None, unit, formula])
        value = (
            Formula(SUMMARY_LIVE[key].format(**cells)) if key in SUMMARY_LIVE else _summary_value(data, key)
        )
        set_cell(ws, row, 2, value, fmt)
    total = f"=Costs!{costs_total_cell(len(data['cost_lines']))}"
    append_row(ws, row + 1, ["total_cost_usd", Formula(total), "USD", "sum of the Costs sheet's lines"])
    ws.cell(row=row + 1, column=2).number_format = USD
    finish_sheet(ws, freeze="A2")


def _iteration(ws: Any, tables: Tables, data: dict[str, Any]) -> None:
    breakdown = data["breakdown"]
    total_row = len(breakdown) + 2
    rows: list[list[Any]] = [
        # dp_comm_s overlaps the backward: it is no share of the iteration (its exposed part is)
        [k, v, None if k == "dp_comm_s" else Formula(f"=B{i}/B{total_row}")]
        for i, (k, v) in enumerate(breakdown.items(), 2)
    ]
    last = header_table(
        ws, tables, 1, ["term", "time per iteration (s)", "share of iteration_time_s (%)"], rows,
        [None, NUM, PCT], "iteration",
    )  # fmt: skip
    set_cell(ws, last + 1, 1, "iteration_time_s")
    adds = [f"B{i}" for i, key in enumerate(breakdown, 2) if key != "dp_comm_s"]
    set_cell(ws, last + 1, 2, Formula(f"={'+'.join(adds)}"), NUM)  # = the JSON's iteration_time_s
    set_cell(
        ws, last + 2, 1, "dp_comm_s overlaps the backward; only dp_comm_exposed_s adds to the iteration."
    )
    finish_sheet(ws, freeze="A2")


COSTS_HEADERS = [
    "kind", "GPU", "GPUs paid", "cost (USD, present value)", "hours paid (h per GPU)", "price (USD per GPU-hour)",
    "present-value factor", "how it is computed",
]  # fmt: skip
"""Rent and owned running lines are live: cost = GPUs paid × hours × price × present-value factor (C×E×F×G);
capex, bought running, resale and discount lines are figures whose note says how they are made."""
COSTS_TOTAL_LABEL = "total_cost_usd (USD)"
"""The Costs sheet's total row: this label in column A, the SUM under the cost column."""


def costs_total_cell(n_lines: int) -> str:
    """The Costs sheet's total cell: under the cost column, the row after the ``n_lines`` cash lines."""
    return f"D{n_lines + 2}"


def _costs(ws: Any, tables: Tables, data: dict[str, Any]) -> None:
    from openpyxl.styles import Font

    lines = data["cost_lines"]
    rows = [
        [c["kind"], c["gpu"], c["gpus"], c["usd"] if c.get("hours") is None else Formula(f"=C{i}*E{i}*F{i}*G{i}"),
         c.get("hours"), c.get("usd_per_gpu_hour"), c.get("present_value_factor"), c["note"]]
        for i, c in enumerate(lines, 2)
    ]  # fmt: skip
    formats = [None, None, "0", USD, "#,##0.00", '"$"#,##0.0000', "0.0000", None]
    last = header_table(ws, tables, 1, COSTS_HEADERS, rows, formats, "costs")
    # the total under its column, labeled (it sat at D1, above the header, where no reader looks for it)
    total = costs_total_cell(len(lines))
    set_cell(ws, last + 1, 1, COSTS_TOTAL_LABEL).font = Font(bold=True)
    set_cell(ws, ws[total].row, 4, Formula(f"=SUM(D2:D{last})"), USD).font = Font(bold=True)
    set_cell(ws, last + 1, 8, "the sum of the lines above (USD, present value)")
    wrap_columns(ws, ["H"], 2, last)
    finish_sheet(ws, freeze="A2", widths={"H": 60})


def _options(ws: Any, tables: Tables, data: dict[str, Any]) -> None:
    headers = [label for _key, label, _fmt in OPTION_COLUMNS] + [CHOSEN_HEADER]
    formats = [fmt for _key, _label, fmt in OPTION_COLUMNS] + [None]
    rows = [[o[key] for key, _label, _fmt in OPTION_COLUMNS] + [_chosen(o, data)] for o in data["alternatives"]]
    last = header_table(ws, tables, 1, headers, rows, formats, "options")
    align(ws, ["B", "C", "D", "E", "F", "G"], 1, last, horizontal="center")
    finish_sheet(ws, freeze="B2")  # the GPU column prints on every page of a wide table


def write_training_workbook(plan: TrainingPlan, path: Path) -> None:
    """Write the workbook of a feasible training plan to ``path`` (atomically)."""
    from openpyxl import Workbook

    data = plan.to_json()
    wb = Workbook()
    tables = Tables()
    summary = wb.active
    summary.title = "Summary"
    _summary(summary, data)
    _iteration(wb.create_sheet("Iteration"), tables, data)
    _costs(wb.create_sheet("Costs"), tables, data)
    _options(wb.create_sheet("Options"), tables, data)
    write_workbook(path, wb)
