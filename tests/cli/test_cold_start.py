"""Cold start (issue 16 item 5): `planner --help` and `planner catalog gpus` must not pay for the heavy
libraries. Checked by what a fresh interpreter has imported, not by timing (the CI machine is shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

HEAVY = ("pandas", "pulp", "openpyxl", "matplotlib", "numpy", "scipy")

_PROBE = """
import json, sys
from planner.cli.main import app
try:
    app(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})), file=sys.stderr)
"""


def _imported(*args: str) -> list[str]:
    code = _PROBE.format(heavy=set(HEAVY) | {"pydantic", "yaml", "click"})  # click: typer runs on its own copy
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return sorted({m.split(".")[0] for m in loaded})


def test_help_imports_no_heavy_library_nor_pydantic() -> None:
    assert _imported("--help") == []


def test_catalog_listing_imports_no_heavy_library() -> None:
    loaded = _imported("catalog", "gpus")
    assert "pydantic" in loaded  # it does read (and validate) the catalog
    assert [m for m in loaded if m in HEAVY] == []


def test_parsing_options_imports_no_pydantic() -> None:
    """Typer 0.29 builds a pydantic adapter for every option it parses (0.12-0.19 s per start, hence the
    `typer<0.29` pin): a command refused while its options are parsed has read nothing heavy."""
    assert _imported("budget", "no-such-scenario.yaml", "--solver", "highs", "--capex-usd", "nan") == []


def test_a_command_builds_only_its_own_options(monkeypatch: Any) -> None:
    """Top-level commands are built when used (planner.cli.main.LAZY_COMMANDS): `catalog gpus` builds none
    of them, `plan --help` only plan, and `--help` lists every one in registration order."""
    import typer
    from typer.testing import CliRunner

    from planner.cli import main

    built: list[str] = []
    real = typer.main.get_command
    names = {id(one): name for name, one in main.LAZY_COMMANDS.items()}

    def recording(app: typer.Typer) -> Any:
        if id(app) in names:
            built.append(names[id(app)])
        return real(app)

    monkeypatch.setattr(typer.main, "get_command", recording)
    runner = CliRunner()
    assert runner.invoke(main.app, ["catalog", "gpus"]).exit_code == 0
    assert built == []
    assert runner.invoke(main.app, ["plan", "--help"]).exit_code == 0
    assert built == ["plan"]
    built.clear()
    listing = runner.invoke(main.app, ["--help"]).stdout
    assert built == list(main.LAZY_COMMANDS)
    where = [listing.index(f"│ {name} ") for name in [*main.LAZY_COMMANDS, "catalog", "ledger"]]
    assert where == sorted(where)
