"""The less exercised commands as a demanding user runs them (catalog, predict, predict-train, validate-model,
the commands' --help): each refusal is exit 2 with one exact line, before any work, and no file is touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
PREVIOUS = b"previous output\n"


def _one_line(res: object) -> str:
    lines = res.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1, res.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in res.output  # type: ignore[attr-defined]
    return str(lines[0])


# --- catalog --json-out: it wrote over a YAML file (catalogs/*.yaml included) and into /proc's error path ---


@pytest.mark.parametrize(
    "args", [["catalog", "gpus"], ["catalog", "models", "qwen3_8b"], ["catalog", "prices", "h100_sxm"]]
)
def test_catalog_json_out_refuses_a_yaml_file_and_keeps_it(tmp_path: Path, args: list[str]) -> None:
    target = tmp_path / "sites.yaml"
    target.write_bytes(PREVIOUS)
    res = runner.invoke(app, [*args, "--json-out", str(target)])
    assert res.exit_code == 2, res.output
    assert (
        _one_line(res) == f"error: --json-out {target}: refusing to write over a YAML file — use a .json path"
    )
    assert res.stdout == ""
    assert target.read_bytes() == PREVIOUS


def test_catalog_json_out_names_the_option_under_proc() -> None:
    res = runner.invoke(app, ["catalog", "gpus", "--json-out", "/proc/gpus.json"])
    assert res.exit_code == 2
    assert _one_line(res) == (
        "error: --json-out /proc/gpus.json: cannot write under /proc — choose a path in a normal folder"
    )  # was "error: output /proc/gpus.json: …", after the table had been built


# --- predict: the scenario's ranges for a replica's load and workspace ---------------------------------


def test_predict_refuses_a_load_above_the_scenario_range() -> None:
    """1e308 requests/s printed numpy overflow warnings (RuntimeWarning: overflow encountered in multiply)."""
    res = runner.invoke(
        app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "1e308"]
    )
    assert res.exit_code == 2
    assert _one_line(res) == (
        "error: Invalid value for '--requests-per-s': must be at most 1e+06, not 1e308 (see 'planner predict --help')"
    )


def test_predict_refuses_a_workspace_above_the_scenario_range() -> None:
    """1e308 GiB of workspace answered "batch 1 needs inf GB per GPU" (exit 3)."""
    res = runner.invoke(
        app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--workspace-gib", "1e308"]
    )
    assert res.exit_code == 2
    assert _one_line(res) == (
        "error: Invalid value for '--workspace-gib': must be at most 1024, not 1e308 (see 'planner predict --help')"
    )


# --- predict-train: the training scenario's ranges --------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--tokens", "1e308", "must be at most 1e+16, not 1e308"),
        ("--seq-len", "1000000000000", "1000000000000 is not in the range 1<=x<=10000000."),
        ("--global-batch", "100000000000000", "100000000000000 is not in the range 1<=x<=1000000000."),
    ],
)
def test_predict_train_refuses_values_a_training_scenario_refuses(
    option: str, value: str, message: str
) -> None:
    """--tokens 1e308 printed "days 1.474e+298"; a 10^14-sequence batch 5.2e+12 s per step."""
    res = runner.invoke(
        app, ["predict-train", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--gpus", "8", option, value]
    )
    assert res.exit_code == 2
    assert (
        _one_line(res)
        == f"error: Invalid value for '{option}': {message} (see 'planner predict-train --help')"
    )


def test_predict_train_inline_layers_are_bounded() -> None:
    res = runner.invoke(
        app,
        ["predict-train", "--layers", "100000000000", "--hidden-size", "4096", "--ffn-size", "1", "--heads", "32",
         "--gpu", "h100_sxm", "--gpus", "8"],
    )  # fmt: skip
    assert res.exit_code == 2
    assert _one_line(res) == (
        "error: Invalid value for '--layers': 100000000000 is not in the range 1<=x<=100000. "
        "(see 'planner predict-train --help')"
    )  # was "--layers: Input should be less than or equal to 100000" from the record


# --- --help of a command lists its own options only ------------------------------------------------------


@pytest.mark.parametrize("command", ["train", "sweep", "budget", "predict", "validate-model", "schema"])
def test_command_help_has_no_completion_options(command: str) -> None:
    """Every command's --help listed --install-completion / --show-completion, which are the root's."""
    res = runner.invoke(app, [command, "--help"])
    assert res.exit_code == 0
    assert "--help" in res.stdout
    assert "completion" not in res.stdout


def test_root_help_keeps_the_completion_options() -> None:
    res = runner.invoke(app, ["--help"])
    assert "--install-completion" in res.stdout and "--show-completion" in res.stdout


# --- validate-model --out: refused before the predictions (it was exit 4 after ~3 minutes of work) ------------


@pytest.fixture
def measurements(tmp_path: Path) -> Path:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "rows.csv").write_text("source\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("/proc/reports", "cannot write under /proc — choose a path in a normal folder"),
        ("{tmp}/file.md", "is a file, expected a folder"),
        (
            "{tmp}/missing/reports",
            "folder {tmp}/missing does not exist — create it first or choose another path",
        ),
    ],
)
def test_validate_model_checks_out_before_predicting(
    tmp_path: Path, measurements: Path, monkeypatch: pytest.MonkeyPatch, out: str, message: str
) -> None:
    import planner.validate

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the measurements were predicted before --out was checked")

    monkeypatch.setattr(planner.validate, "run_validation", no_work)
    (tmp_path / "file.md").write_bytes(PREVIOUS)
    target = out.format(tmp=tmp_path)
    res = runner.invoke(app, ["validate-model", "--measurements", str(measurements), "--out", target])
    assert res.exit_code == 2, res.output
    assert _one_line(res) == f"error: --out {target}: {message.format(tmp=tmp_path)}"
    assert (tmp_path / "file.md").read_bytes() == PREVIOUS
    assert not (tmp_path / "missing").exists()


def test_validate_model_names_a_file_given_as_the_measurements_folder(tmp_path: Path) -> None:
    """A file given to --measurements was answered "folder not found"."""
    csv = tmp_path / "rows.csv"
    csv.write_text("source\n", encoding="utf-8")
    res = runner.invoke(app, ["validate-model", "--measurements", str(csv), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert _one_line(res) == f"error: --measurements {csv}: is a file, expected the folder of the measurement CSVs"
    assert not (tmp_path / "r").exists()
