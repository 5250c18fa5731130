"""A reader that stops early (``planner plan X -o plan.xlsx | head``): the command's stdout breaks, and the
files it was asked for are still written. Before, the workbook came after the printed plan, so the broken
pipe ended the command first and no workbook was written. Files now come before stdout; the ``wrote``
lines, announced after it, are what a broken pipe skips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.cli import plan_cmd
from planner.cli import train as train_cmd
from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _closed_pipe(*_args: Any, **_kwargs: Any) -> None:
    raise BrokenPipeError(32, "Broken pipe")


def test_plan_workbook_is_written_when_stdout_breaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openpyxl import load_workbook

    out = tmp_path / "plan.xlsx"
    monkeypatch.setattr(plan_cmd, "print_plan", _closed_pipe)
    scenario = ROOT / "examples/chat_70b_cloud/scenario.yaml"
    res = runner.invoke(app, ["plan", str(scenario), "--no-alternatives", "-o", str(out)])
    assert res.exit_code == 1  # typer's exit for a closed stdout, not an internal error (4)
    assert "internal error" not in res.output
    assert "Summary" in load_workbook(out).sheetnames
    assert "wrote" not in res.stderr  # announced after stdout, which broke first


def test_plan_announces_the_workbook_after_the_table(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    res = runner.invoke(app, ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "--no-alternatives", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stderr.strip().endswith(f"wrote {out}") and out.stat().st_size > 0


def test_training_workbook_is_written_when_stdout_breaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openpyxl import load_workbook

    out = tmp_path / "train.xlsx"
    monkeypatch.setattr(train_cmd, "_print_plan", _closed_pipe)
    res = runner.invoke(app, ["train", str(ROOT / "examples/train_8b/training.yaml"), "-o", str(out)])
    assert res.exit_code == 1 and "internal error" not in res.output
    assert load_workbook(out).sheetnames
