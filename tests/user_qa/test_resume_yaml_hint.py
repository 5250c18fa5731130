"""`planner sweep S --resume scenario.yaml` said "use a .json path" — --resume writes JSON lines, and its help
and README name rows.jsonl. The refusal names the file kind the option writes; nothing is written."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app

SCENARIO = Path(__file__).resolve().parents[2] / "examples/chat_70b_cloud/scenario.yaml"


def test_resume_over_a_yaml_file_names_jsonl(tmp_path: Path) -> None:
    target = tmp_path / "rows.yaml"
    target.write_text("keep: me\n")
    res = CliRunner().invoke(
        app, ["sweep", str(SCENARIO), "--vary", "workloads.chat.requests_per_s=4", "--resume", str(target)]
    )
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        f"error: --resume {target}: refusing to write over a YAML file — use a .jsonl path (e.g. rows.jsonl)"
    ]
    assert target.read_text() == "keep: me\n"


def test_json_out_keeps_its_hint(tmp_path: Path) -> None:
    target = tmp_path / "plan.yaml"
    res = CliRunner().invoke(app, ["plan", str(SCENARIO), "--json-out", str(target)])
    assert res.exit_code == 2
    assert res.stderr.strip().endswith("refusing to write over a YAML file — use a .json path")
    assert not target.exists()
