"""The README's command examples run as documented, and the values it quotes (`# ... → 295.3`) are printed.

Every `planner ...` line of a bash block in the "Commands" section runs through the CLI in a scratch folder
(`| jq ...` dropped; `compare` with `--no-flip-points` to stay quick — the flip points have their own tests;
`sweep` lines belong to the sweep tests). A documented value after "→" must be one of the JSON numbers, to
the digits shown (a trailing % means the JSON holds the fraction).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.catalog import load_catalog
from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _commands() -> list[str]:
    section = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    lines: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        joined = block.replace("\\\n", " ")
        lines += [line.strip() for line in joined.splitlines() if line.strip().startswith("planner ")]
    return [line for line in lines if not line.startswith("planner sweep")]


COMMANDS = _commands()


def _numbers(obj: Any) -> list[float]:
    if isinstance(obj, dict):
        return [n for v in obj.values() for n in _numbers(v)]
    if isinstance(obj, list):
        return [n for v in obj for n in _numbers(v)]
    return [float(obj)] if isinstance(obj, int | float) and not isinstance(obj, bool) else []


def test_the_readme_documents_each_command() -> None:
    names = {c.split()[1] for c in COMMANDS}
    assert {"catalog", "predict", "ledger", "plan", "compare"} <= names


@pytest.mark.parametrize("line", COMMANDS)
def test_readme_command_runs_as_documented(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command, _, comment = line.partition("#")
    command = command.split("|", 1)[0]
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in shlex.split(command)[1:]]
    if args[0] == "compare":
        args.append("--no-flip-points")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, f"{line}\n{res.output}"
    written = [a for i, a in enumerate(args) if i and args[i - 1] == "-o"]
    for name in written:
        assert (tmp_path / name).stat().st_size > 1000, name
        assert f"wrote {name}" in res.stderr
    documented = re.search(r"→\s*([0-9.]+)\s*(%?)", comment)
    if documented:
        text, percent = documented.groups()
        digits = len(text.split(".")[1]) if "." in text else 0
        wanted = float(text) / (100 if percent else 1)
        tolerance = 0.5 * 10**-digits / (100 if percent else 1)
        values = _numbers(json.loads(res.stdout))
        assert any(abs(v - wanted) <= tolerance + 1e-12 for v in values), (line, values)


def test_the_tour_counts_the_catalog() -> None:
    """"21 accelerators, 21 models, 7 numeric formats" in the ten-line tour: the catalog's record counts (it
    said 21 accelerators after gb200_nvl72 made them 22)."""
    catalog = load_catalog()
    said = re.search(r"(\d+) accelerators, (\d+) models, (\d+) numeric formats", README)
    assert said is not None
    assert [int(n) for n in said.groups()] == [len(catalog.accelerators), len(catalog.models), len(catalog.formats)]
