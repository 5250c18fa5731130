"""--plots is an output too: it may not name the workbook or the JSON file (QA: `-o x.html --plots x.html`
wrote x.html, then failed with "internal error: FileExistsError", exit 4), and a folder name the system
refuses (over 255 bytes) is exit 2, not "internal error: OSError"."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_70b_cloud" / "scenario.yaml"


def test_plots_on_the_workbook_path_is_refused_before_any_work(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    shutil.copy(EXAMPLE, scenario)
    res = runner.invoke(app, ["plan", str(scenario), "-o", str(tmp_path / "x.html"), "--plots", str(tmp_path / "x.html")])
    assert res.exit_code == 2
    assert "--plots" in res.stderr and "-o names the same file" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]  # nothing written


def test_a_plots_folder_name_too_long_is_exit_2(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    shutil.copy(EXAMPLE, scenario)
    res = runner.invoke(app, ["plan", str(scenario), "--plots", str(tmp_path / ("a" * 300))])
    assert res.exit_code == 2
    assert "File name too long — choose another folder" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
