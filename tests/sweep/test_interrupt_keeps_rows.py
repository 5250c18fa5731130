"""Ctrl-C during a sweep with --resume says what it kept: the finished rows are in the resume file (appended
as each arrives) and the same command resumes from them. The line said "no output was changed"."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import planner.sweep as sweep_package
from planner.cli.main import app

SCENARIO = "examples/small_models_shared/scenario.yaml"


def test_an_interrupted_sweep_names_the_rows_it_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = sweep_package.engine.run_variants

    def one_then_ctrl_c(
        engine: Any, context: Any, pending: list[Any], on_row: Callable[..., None], **kw: Any
    ) -> Iterator[Any]:
        yield from real(engine, context, pending[:1], on_row, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_package, "run_variants", one_then_ctrl_c)
    rows = tmp_path / "rows.jsonl"
    args = ["sweep", SCENARIO, "--vary", "economics.rent_price_scale=0.8,1", "--workers", "1", "--resume", str(rows)]
    stopped = CliRunner().invoke(app, args)
    assert stopped.exit_code == 130
    assert stopped.stderr.strip() == (
        f"error: interrupted — 1 finished row of this run kept in {rows} (run the same command to resume); "
        "no other output was changed"
    )
    assert len(rows.read_text().splitlines()) == 2  # a header line and the finished row
    monkeypatch.setattr(sweep_package, "run_variants", real)
    resumed = CliRunner().invoke(app, [*args, "--json"])
    assert resumed.exit_code == 0, resumed.output
    assert '"resumed": 1' in resumed.stdout


def test_other_commands_still_change_nothing_when_interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("planner.scenario.load_scenario", boom)
    res = CliRunner().invoke(app, ["plan", SCENARIO])
    assert res.exit_code == 130 and res.stderr.strip() == "error: interrupted — no output was changed"
