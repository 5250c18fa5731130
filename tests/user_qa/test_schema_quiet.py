"""`planner -q schema` still prints the schema: the JSON schema is the command's answer, printed as JSON with or
without --json, and -q keeps the JSON a command is asked for (README "Commands"); with only --json-out the
schema goes to the file and -q leaves the 'wrote' line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()


def test_quiet_schema_prints_the_schema_and_nothing_else() -> None:
    quiet, loud = runner.invoke(app, ["-q", "schema"]), runner.invoke(app, ["schema"])
    assert quiet.exit_code == loud.exit_code == 0
    assert quiet.stdout == loud.stdout and quiet.stderr == ""
    assert json.loads(quiet.stdout)["title"] == "Scenario"


def test_quiet_schema_to_a_file_says_only_where(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    res = runner.invoke(app, ["schema", "--json-out", str(path), "-q"])
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == f"wrote {path}\n"
    assert json.loads(path.read_text())["title"] == "Scenario"
