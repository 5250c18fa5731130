"""A missing scenario file gets "did you mean" only for a name close to the one typed: the shared ".yaml"
made `planner plan nothere.yaml` answer "did you mean t7.yaml?" (difflib ratio 0.63 on the whole names), an
unrelated scenario a user might then plan; names are compared without their suffix now."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("nothere.yaml", None), ("scenaro.yaml", "scenario.yaml"), ("scenario.yml", "scenario.yaml"), ("t8.yaml", None)],
)
def test_missing_file_suggestion(tmp_path: Path, typed: str, suggested: str | None) -> None:
    for name in ("scenario.yaml", "t7.yaml"):
        (tmp_path / name).write_text("name: x\n", encoding="utf-8")
    res = runner.invoke(app, ["plan", str(tmp_path / typed)])
    assert res.exit_code == 2
    hint = f" — did you mean {tmp_path / suggested}?" if suggested else ""
    assert res.stderr.strip() == f"error: {tmp_path / typed}: scenario file not found{hint}"
