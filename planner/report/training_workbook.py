"""The training plan workbook: Summary, Iteration (time breakdown), Costs (the run's cash lines), Options.

Reads only :class:`planner.readout.training.TrainingPlan` (its JSON); the Costs total is a SUM over the
cash lines, and the Summary's total cost points at it, so no figure is typed twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.readout.training import TrainingPlan
from planner.report.files import atomic_write
from planner.report.xlsx import (
    Formula,
    Tables,
    align,
    append_row,
    finish_sheet,
    header_table,
    set_cell,
    style_header,
)

USD = '"$"#,##0'
NUM = "#,##0.000"
PCT = "0.0%"
SUMMARY_KEYS: tuple[tuple[str, str | None], ...] = (
    ("status", None), ("scenario", None), ("model", None), ("n_params", "#,##0"), ("training_tokens", "0.00E+00"),
    ("train_flop", "0.00E+00"), ("deadline_days", NUM), ("gpu", None), ("gpus", "0"), ("procurement", None),
    ("site", None), ("tp", "0"), ("pp", "0"), ("dp", "0"), ("zero_stage", "0"), ("recompute", None),
    ("sequence_parallel", None), ("micro_batch", "0"), ("schedule", None), ("iteration_time_s", NUM),
    ("steps", "#,##0"), ("days", NUM), ("memory_per_gpu_gib", NUM), ("memory_states_gib_per_gpu", NUM),
    ("memory_activations_gib_per_gpu", NUM), ("mfu", PCT), ("tokens_per_s", "#,##0"), ("gpu_hours", "#,##0"),
)  # fmt: skip


def _summary(ws: Any, data: dict[str, Any]) -> None:
    append_row(ws, 1, ["quantity", "value"])
    style_header(ws, 1, 2)
    row = 1
    for row, (key, fmt) in enumerate(SUMMARY_KEYS, start=2):
        set_cell(ws, row, 1, key)
        value = data.get(key)
        set_cell(ws, row, 2, str(value) if isinstance(value, bool) else value, fmt)
    set_cell(ws, row + 1, 1, "total_cost_usd")
    set_cell(ws, row + 1, 2, Formula("=Costs!D1"), USD)
    finish_sheet(ws, freeze="A2")


def _iteration(ws: Any, tables: Tables, data: dict[str, Any]) -> None:
    breakdown = data["breakdown"]
    rows: list[list[Any]] = [
        [k, v, Formula(f"=B{i}/B{len(breakdown) + 2}")] for i, (k, v) in enumerate(breakdown.items(), 2)
    ]
    last = header_table(
        ws, tables, 1, ["term", "seconds", "share of the iteration"], rows, [None, NUM, PCT], "iteration"
    )
    set_cell(ws, last + 1, 1, "iteration_time_s")
    set_cell(ws, last + 1, 2, data["iteration_time_s"], NUM)
    set_cell(
        ws, last + 2, 1, "dp_comm_s overlaps the backward; only dp_comm_exposed_s adds to the iteration."
    )
    finish_sheet(ws, freeze="A2")


def _costs(ws: Any, tables: Tables, data: dict[str, Any]) -> None:
    lines = data["cost_lines"]
    set_cell(ws, 1, 3, "total_cost_usd")
    set_cell(ws, 1, 4, Formula(f"=SUM(D4:D{3 + len(lines)})"), USD)
    rows = [[c["kind"], c["gpu"], c["gpus"], c["usd"], c["note"]] for c in lines]
    header_table(
        ws, tables, 3, ["kind", "gpu", "gpus", "usd", "note"], rows, [None, None, "0", USD, None], "costs"
    )
    finish_sheet(ws, freeze="A4")


def _options(ws: Any, tables: Tables, data: dict[str, Any]) -> None:
    cols = ["gpu", "gpus", "tp", "pp", "dp", "zero_stage", "recompute", "days", "total_cost_usd", "mfu",
            "memory_per_gpu_gib", "procurement", "site"]  # fmt: skip
    formats = [None, "0", "0", "0", "0", "0", None, NUM, USD, PCT, NUM, None, None]
    rows = [[o[c] for c in cols] for o in data["alternatives"]]
    last = header_table(ws, tables, 1, cols, rows, formats, "options")
    align(ws, ["B", "C", "D", "E", "F", "G"], 1, last, horizontal="center")
    finish_sheet(ws, freeze="A2")


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
    atomic_write(path, lambda p: wb.save(p))
