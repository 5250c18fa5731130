"""``planner train`` and ``planner predict-train`` in-process: JSON keys and values, determinism, the
workbook, bad input (exit 2, one line naming the file/field and an alternative, nothing written) and
infeasible deadlines (exit 3 with the cause)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from planner.cli.train import register
from tests.training.helpers import BASE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/train_8b/training.yaml"
runner = CliRunner()
app = typer.Typer()
register(app)

SMALL: dict[str, Any] = {
    **BASE,
    "training_tokens": 2.0e10,
    "hardware": {"gpus": ["h100_sxm"], "max_gpus": 8, "tp": [1, 2], "pp": [1], "micro_batches": [1]},
}
TRAIN_KEYS = {
    "status", "gpu", "gpus", "dp", "tp", "pp", "zero_stage", "recompute", "micro_batch", "iteration_time_s",
    "days", "total_cost_usd", "memory_per_gpu_gib", "mfu", "procurement", "breakdown",
}  # fmt: skip


def write(tmp_path: Path, data: dict[str, Any], name: str = "train.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_example_plan_json_is_deterministic(tmp_path: Path) -> None:
    first = runner.invoke(app, ["train", str(EXAMPLE), "--json", "--json-out", str(tmp_path / "plan.json")])
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    assert data.keys() >= TRAIN_KEYS
    assert data["status"] == "optimal" and data["gpu"] in ("h100_sxm", "h200_sxm")
    assert data["days"] <= 30.0
    assert data["gpus"] == data["dp"] * data["tp"] * data["pp"]
    assert data["total_cost_usd"] == pytest.approx(sum(line["usd"] for line in data["cost_lines"]))
    assert data["memory_per_gpu_gib"] <= data["memory_capacity_gib"]
    assert json.loads((tmp_path / "plan.json").read_text()) == data
    again = runner.invoke(app, ["train", str(EXAMPLE), "--json"])
    assert again.stdout == first.stdout


def test_table_and_workbook(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    path = write(tmp_path, SMALL)
    res = runner.invoke(
        app, ["train", str(path), "-o", str(tmp_path / "t.xlsx"), "--json-out", str(tmp_path / "t.json")]
    )
    assert res.exit_code == 0, res.stderr
    assert "best option per GPU type" in res.stdout
    data = json.loads((tmp_path / "t.json").read_text())
    wb = load_workbook(tmp_path / "t.xlsx")
    assert wb.sheetnames == ["Summary", "Iteration", "Costs", "Options"]
    summary = {r[0].value: r[1].value for r in wb["Summary"].iter_rows(min_row=2)}
    assert summary["gpus"] == data["gpus"] and summary["mfu"] == pytest.approx(data["mfu"])
    n = len(data["cost_lines"])  # the total sits under the cost column, after the lines (it was D1)
    assert summary["total_cost_usd"] == f"=Costs!D{n + 2}"
    assert wb["Costs"][f"D{n + 2}"].value == f"=SUM(D2:D{n + 1})"
    assert wb["Costs"][f"A{n + 2}"].value == "total_cost_usd (USD)"
    assert wb["Costs"]["D2"].value == "=C2*E2*F2*G2"  # rent: GPUs paid × hours × price × PV factor
    line = data["cost_lines"][0]
    recomputed = line["gpus"] * line["hours"] * line["usd_per_gpu_hour"] * line["present_value_factor"]
    assert recomputed == pytest.approx(line["usd"])


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"hardware": {"gpus": ["h100sxm"]}}, ["hardware.gpus[0]", "did you mean h100_sxm"]),
        ({"model": "qwen3_8"}, ["model", "did you mean"]),
        ({"deadline_days": -1}, ["deadline_days"]),
        ({"global_batch_tokens": 1000}, ["exactly one of global_batch_tokens or global_batch_sequences"]),
        ({"kind": "serving"}, ["kind", "planner plan"]),
        ({"procurement": ["lease"]}, ["procurement"]),
        ({"sites": ["us_eats"]}, ["sites[0]", "did you mean us_east"]),
    ],
)
def test_bad_scenario_exit_2_one_line_nothing_written(
    tmp_path: Path, change: dict[str, Any], fragments: list[str]
) -> None:
    path = write(tmp_path, {**SMALL, **change})
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["train", str(path), "--json-out", str(out), "-o", str(tmp_path / "t.xlsx")])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    assert path.name in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert not out.exists() and not (tmp_path / "t.xlsx").exists()


def test_bad_files_and_options(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: training\nmodel: [unclosed\n")
    assert runner.invoke(app, ["train", str(broken)]).exit_code == 2
    assert runner.invoke(app, ["train", str(tmp_path / "missing.yaml")]).exit_code == 2
    res = runner.invoke(app, ["train", str(write(tmp_path, SMALL)), "-o", str(tmp_path / "t.txt")])
    assert res.exit_code == 2 and ".xlsx" in res.stderr
    res = runner.invoke(
        app, ["train", str(write(tmp_path, SMALL)), "--json-out", str(tmp_path / "train.yaml")]
    )
    assert res.exit_code == 2 and "YAML" in res.stderr


def test_infeasible_deadline_exit_3_with_cause(tmp_path: Path) -> None:
    path = write(tmp_path, {**SMALL, "training_tokens": 1.0e11, "deadline_days": 3})
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 3
    data = json.loads(res.stdout)
    assert data["status"] == "infeasible" and data["gpu"] is None
    (reason,) = data["infeasibility"]
    assert reason.startswith("h100_sxm: needs ≥ ") and "the allowed sites offer 8" in reason
    assert "needs ≥" in res.stderr


def test_infeasible_run_names_every_output_it_did_not_write(tmp_path: Path) -> None:
    """The "not written" note named the --json-out file only; the workbook -o was kept silently."""
    path = write(tmp_path, {**SMALL, "training_tokens": 1.0e11, "deadline_days": 3})
    json_out, workbook = tmp_path / "plan.json", tmp_path / "plan.xlsx"
    for target in (json_out, workbook):
        target.write_bytes(b"previous")
    res = runner.invoke(app, ["train", str(path), "--json-out", str(json_out), "-o", str(workbook)])
    assert res.exit_code == 3
    assert res.stderr.splitlines()[0] == (
        f"not written: {json_out}, {workbook} (the run failed; existing files are left as they were)"
    )
    assert json_out.read_bytes() == b"previous" and workbook.read_bytes() == b"previous"
    alone = runner.invoke(app, ["train", str(path), "-o", str(workbook)])
    assert alone.exit_code == 3
    assert (
        alone.stderr.splitlines()[0]
        == f"not written: {workbook} (the run failed; an existing file is left as it was)"
    )


def test_buying_at_cloud_sites_only_exit_3_with_the_fix(tmp_path: Path) -> None:
    """Buying needs a datacenter site, as in `planner plan`: cloud sites only → exit 3, one line per GPU type
    naming the fields to change (sites, procurement)."""
    path = write(tmp_path, {**SMALL, "procurement": ["buy"], "deadline_days": 200})
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 3
    (reason,) = json.loads(res.stdout)["infeasibility"]
    assert reason == (
        "h100_sxm: buying needs a datacenter site; sites lists only us_east (cloud) — add dc1 to sites, "
        "or add rent to procurement"
    )
    assert res.stderr.strip() == f"{path}: infeasible: {reason}"


def test_model_that_fits_nowhere_is_explained(tmp_path: Path) -> None:
    change = {
        "model": "llama_3_1_405b",
        "hardware": {"gpus": ["rtx_4090"], "max_gpus": 8, "pp": [1], "tp": [1]},
    }
    res = runner.invoke(app, ["train", str(write(tmp_path, {**SMALL, **change})), "--json"])
    assert res.exit_code == 3
    (reason,) = json.loads(res.stdout)["infeasibility"]
    assert "does not fit with any layout up to 8 GPUs" in reason and "22.4 GiB" in reason


PREDICT = [
    "predict-train",
    "--model",
    "qwen3_8b",
    "--gpu",
    "h100_sxm",
    "--gpus",
    "16",
    "--tp",
    "2",
    "--pp",
    "2",
]
PREDICT += ["--micro-batch", "1", "--global-batch", "512", "--seq-len", "4096", "--recompute", "selective"]


def test_predict_train_json() -> None:
    res = runner.invoke(app, [*PREDICT, "--sequence-parallel", "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    for key in (
        "iteration_time_s",
        "memory_per_gpu_gib",
        "memory_states_gib_per_gpu",
        "memory_activations_gib_per_gpu",
        "mfu",
        "tokens_per_s",
    ):
        assert data[key] > 0, key
    assert data["dp"] == 4 and data["microbatches_per_step"] == 128
    assert data["memory_per_gpu_gib"] == pytest.approx(
        data["memory_states_gib_per_gpu"] + data["memory_activations_gib_per_gpu"] + 2.0
    )
    b = data["breakdown"]
    total = b["compute_s"] + b["bubble_s"] + b["tp_comm_s"] + b["pp_comm_s"] + b["dp_comm_exposed_s"]
    assert data["iteration_time_s"] == pytest.approx(total)
    assert data["tokens_per_s"] == pytest.approx(512 * 4096 / data["iteration_time_s"])
    assert b["bubble_s"] == pytest.approx(b["compute_s"] * 1 / 128)  # (p − 1)/m
    without_sp = json.loads(runner.invoke(app, [*PREDICT, "--json"]).stdout)
    assert without_sp["memory_activations_gib_per_gpu"] > data["memory_activations_gib_per_gpu"]


def test_predict_train_inline_architecture() -> None:
    args = ["predict-train", "--layers", "24", "--hidden-size", "2048", "--ffn-size", "5632", "--heads", "16"]
    res = runner.invoke(app, [*args, "--gpu", "a100_sxm_80gb", "--gpus", "8", "--json"])
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["model"] == "inline"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--gpus", "10"], "not a multiple of tp × pp = 2 × 2 = 4"),
        (["--gpus", "16", "--dp", "2"], "must equal tp × pp × dp = 2 × 2 × 2"),
        (["--recompute", "some"], "valid values are none, selective, full"),
        (["--gpu", "h100sxm"], "did you mean h100_sxm"),
        (["--model", "qwen3_8"], "did you mean"),
        (["--global-batch", "102"], "do not split"),
        (["--layers", "4"], "give a catalog model id"),
    ],
)
def test_predict_train_bad_input(args: list[str], fragment: str) -> None:
    base = dict(zip(PREDICT[1::2], PREDICT[2::2], strict=True))
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    res = runner.invoke(app, ["predict-train", *[x for kv in base.items() for x in kv], "--json"])
    assert res.exit_code == 2, res.output
    assert fragment in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert res.stdout == ""


def test_main_app_registers_train_schema_and_refuses_training_in_plan() -> None:
    from planner.cli.main import app as main_app

    assert "predict-train" in runner.invoke(main_app, ["--help"]).stdout
    schema = json.loads(runner.invoke(main_app, ["schema", "--kind", "training"]).stdout)
    assert {"training_tokens", "seq_len_tokens", "deadline_days", "gpu_mtbf_hours"} <= set(
        schema["properties"]
    )
    assert runner.invoke(main_app, ["schema", "--kind", "inference"]).exit_code == 0  # planner init's word
    bad = runner.invoke(main_app, ["schema", "--kind", "train"])
    assert bad.exit_code == 2 and "inference (or serving), training" in bad.stderr
    res = runner.invoke(main_app, ["plan", str(EXAMPLE)])
    assert res.exit_code == 2 and f"run `planner train {EXAMPLE}`" in res.stderr


def test_predict_train_layout_that_does_not_fit_exits_3_unless_forced() -> None:
    args = ["predict-train", "--model", "qwen3_8b", "--gpu", "rtx_4090", "--gpus", "32", "--zero-stage", "3"]
    args += ["--global-batch", "384", "--seq-len", "8192", "--recompute", "none", "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 3 and res.stdout == ""
    assert "does not fit the 22.4 GiB of rtx_4090" in res.stderr
    forced = runner.invoke(app, [*args, "--force"])
    assert forced.exit_code == 0
    data = json.loads(forced.stdout)
    assert data["fits"] is False and data["memory_per_gpu_gib"] > data["memory_capacity_gib"]
    # ZeRO-3 over PCIe + 10 GbE: 117.03 s of traffic against 78.3 s of compute at 40 % (card-4 example)
    assert data["breakdown"]["dp_comm_s"] == pytest.approx(117.03, abs=0.01)
