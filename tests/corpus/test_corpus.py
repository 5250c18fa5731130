"""Every broken input of tests/corpus/cases.py: exit 2 (or 3), one line on stderr, no traceback, nothing written.

Scenario cases run the real CLI in-process (``planner plan FILE --json-out OUT``) next to an existing
output file and read-only files; the folder must hold exactly the same files with the same bytes afterwards.
Catalog cases load a mutated copy of catalogs/ and expect one CatalogError line naming the file.
"""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.catalog import load_catalog
from planner.catalog.loader import DEFAULT_CATALOG_DIR
from planner.cli.main import app
from planner.errors import CatalogError
from tests.corpus.cases import (
    BASE,
    CATALOG_CASES,
    CATALOG_TEXT_CASES,
    INFEASIBLE_CASES,
    SCENARIO_CASES,
    Case,
)

runner = CliRunner()
PREVIOUS = b"previous output\n"


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for folders)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def _prepare(tmp_path: Path, case: Case) -> tuple[Path, list[str]]:
    """Write the scenario and the bystander files; return the scenario path and the CLI arguments."""
    scenario = tmp_path / "scenario.yaml"
    if case.text is not None:
        scenario.write_bytes(case.text)
    else:
        data = copy.deepcopy(case.extra.get("base", BASE))  # TRAINING_CASES start from TRAINING_BASE
        if case.mutate is not None:
            case.mutate(data)
        scenario.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (tmp_path / "out.json").write_bytes(PREVIOUS)
    (tmp_path / "adir.xlsx").mkdir()
    for name in ("readonly.json", "readonly.xlsx"):
        (tmp_path / name).write_bytes(PREVIOUS)
        os.chmod(tmp_path / name, 0o444)
    target = scenario
    options = list(case.options)
    if "--scenario-missing" in options:
        options.remove("--scenario-missing")
        target = tmp_path / "missing.yaml"
    if "--scenario-directory" in options:
        options.remove("--scenario-directory")
        target = tmp_path / "adir.xlsx"
    options = [o.format(tmp=tmp_path, scenario=scenario) for o in options]
    if "--json-out" not in options:
        options += ["--json-out", str(tmp_path / "out.json")]
    if case.command == "plan":
        options.append("--no-alternatives")
    return target, [case.command, str(target), *options]


@pytest.mark.parametrize("case", SCENARIO_CASES, ids=[c.id for c in SCENARIO_CASES])
def test_broken_scenario_is_one_line_and_writes_nothing(tmp_path: Path, case: Case) -> None:
    target, args = _prepare(tmp_path, case)
    before = _snapshot(tmp_path)
    res = runner.invoke(app, args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == case.exit_code, (res.exit_code, res.stderr, res.stdout)
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.output and "Traceback" not in res.stderr
    for fragment in case.fragments:
        assert fragment in lines[0], (fragment, lines[0])
    if case.mutate is not None or case.text is not None:
        assert target.name in lines[0], "the message names the file"
    assert res.stdout == "", "nothing on stdout for a refused input"
    assert _snapshot(tmp_path) == before, "a failed run changed or added a file"


@pytest.mark.parametrize("case", INFEASIBLE_CASES, ids=[c.id for c in INFEASIBLE_CASES])
def test_infeasible_is_exit_3_with_the_cause(tmp_path: Path, case: Case) -> None:
    _, args = _prepare(tmp_path, case)
    before = set(_snapshot(tmp_path))
    res = runner.invoke(app, args)
    assert res.exit_code == 3, (res.stderr, res.stdout)
    assert "Traceback" not in res.output and "Traceback" not in res.stderr
    for fragment in case.fragments:
        assert fragment in res.stderr, (fragment, res.stderr)
    assert set(_snapshot(tmp_path)) == before, "no file added (no temporary file left)"


def test_corpus_has_at_least_150_cases() -> None:
    assert len(SCENARIO_CASES) + len(CATALOG_CASES) + len(CATALOG_TEXT_CASES) >= 150


def _catalog_copy(tmp_path: Path) -> Path:
    root = tmp_path / "catalogs"
    shutil.copytree(DEFAULT_CATALOG_DIR, root)
    return root


def _assert_one_line(root: Path, file_name: str, fragments: tuple[str, ...]) -> None:
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(root)
    message = str(excinfo.value)
    assert "\n" not in message
    assert file_name in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("case", CATALOG_CASES, ids=[c.id for c in CATALOG_CASES])
def test_broken_catalog_record(tmp_path: Path, case: Case) -> None:
    assert case.catalog is not None
    file_name, mutate = case.catalog
    root = _catalog_copy(tmp_path)
    path = root / file_name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    mutate(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    _assert_one_line(root, file_name, case.fragments)


@pytest.mark.parametrize(
    ("file_name", "text", "fragments"),
    [c[1:] for c in CATALOG_TEXT_CASES],
    ids=[c[0] for c in CATALOG_TEXT_CASES],
)
def test_broken_catalog_file(tmp_path: Path, file_name: str, text: bytes, fragments: tuple[str, ...]) -> None:
    root = _catalog_copy(tmp_path)
    (root / file_name).write_bytes(text)
    _assert_one_line(root, file_name, fragments)
