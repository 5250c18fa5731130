"""`planner compare --help` described -o as "Write an Excel workbook (.xlsx); plan and budget also write an HTML
report (.html)" — another command's behaviour in compare's help, while compare refuses .html. Each command's
help now says what its own -o writes, and compare's refusal agrees with it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
SCENARIO = Path(__file__).resolve().parents[2] / "examples/chat_70b_cloud/scenario.yaml"


def _help(command: str) -> str:
    res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "300"})
    assert res.exit_code == 0
    return " ".join(res.stdout.split())


def test_compare_help_names_only_its_workbook() -> None:
    text = _help("compare")
    assert "Write an Excel workbook (.xlsx); compare writes no HTML." in text
    assert "plan and budget" not in text


def test_plan_and_budget_help_name_both_reports() -> None:
    for command in ("plan", "budget"):
        assert "Write an Excel workbook (.xlsx) or an HTML report (.html), by the name's ending." in _help(
            command
        )


def test_compare_refuses_html_as_its_help_says(tmp_path: Path) -> None:
    target = tmp_path / "c.html"
    res = runner.invoke(app, ["compare", str(SCENARIO), "-o", str(target), "--no-flip-points"])
    assert res.exit_code == 2
    assert res.stderr.strip() == f"error: -o {target}: the report name must end in .xlsx"
    assert not target.exists()
