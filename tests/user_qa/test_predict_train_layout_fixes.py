"""predict-train's layout refusals name a value that works: '--gpus 8 --dp 4' said only 'must equal tp × pp
× dp = 1 × 1 × 4'; '--global-batch 100' on DP8 said 'choose other … values' without one."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

BASE = ["predict-train", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--gpus", "8"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--dp", "4"], "error: --gpus 8: must equal tp × pp × dp = 1 × 1 × 4 — give --gpus 4 or --dp 8"),
        (["--tp", "2", "--dp", "8"], "error: --gpus 8: must equal tp × pp × dp = 2 × 1 × 8 — give --gpus 16 or --dp 4"),
        (["--global-batch", "100"],
         "error: layout: 100 sequences do not split into DP8 × micro-batch 1 — choose other "
         "--tp/--pp/--dp/--micro-batch/--global-batch values (e.g. --global-batch 96)"),
        (["--micro-batch", "3"],
         "error: layout: 512 sequences do not split into DP8 × micro-batch 3 — choose other "
         "--tp/--pp/--dp/--micro-batch/--global-batch values (e.g. --global-batch 504)"),
    ],
)  # fmt: skip
def test_refusal_names_a_value_that_works(args: list[str], line: str) -> None:
    res = CliRunner().invoke(app, [*BASE, *args, "--json"])
    assert res.exit_code == 2 and res.stdout == ""
    assert " ".join(res.stderr.split()) == line


@pytest.mark.parametrize(
    "args",
    [
        ["--gpus", "4", "--dp", "4"],
        ["--tp", "2", "--dp", "4"],
        ["--global-batch", "96"],
        ["--global-batch", "504", "--micro-batch", "3"],
    ],
)
def test_the_suggested_values_run(args: list[str]) -> None:
    res = CliRunner().invoke(app, [*BASE, *args, "--json"])
    assert res.exit_code in (0, 3), res.output  # 3: a valid layout that does not fit memory
    assert "must equal" not in res.output and "do not split" not in res.output


def test_inline_architecture_names_the_missing_option() -> None:
    """--layers/--hidden-size/--heads without --ffn-size said only 'give … all of …'."""
    args = ["predict-train", "--layers", "32", "--hidden-size", "4096", "--heads", "32", "--gpu", "h100_sxm"]
    res = CliRunner().invoke(app, [*args, "--gpus", "8", "--json"])
    assert res.exit_code == 2 and res.stdout == ""
    assert " ".join(res.stderr.split()) == (
        "error: --model: give a catalog model id, or all of --layers --hidden-size --ffn-size --heads "
        "(missing --ffn-size)"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # said '--gpus 8: not a multiple of tp × pp = 3 … give --gpus a multiple of 3, e.g. 6', and --gpus 6
        # then said 'layout: TP3 does not divide 32 heads — choose other … values' with none named
        (["--tp", "3"], "error: --tp 3: does not divide the 32 attention heads of qwen3_8b — use one of 1, 2, 4, 8"),
        (["--gpus", "6", "--tp", "3"],
         "error: --tp 3: does not divide the 32 attention heads of qwen3_8b — use one of 1, 2, 4, 8"),
        (["--gpus", "16", "--tp", "16"],
         "error: --tp 16: spans more than the 8 GPUs of one h100_sxm scale-up domain — use one of 1, 2, 4, 8"),
        (["--pp", "8"],
         "error: --pp 8: does not divide the 36 layers of qwen3_8b — use one of 1, 2, 3, 4, 6, 9, 12, 18, …"),
        (["--pp", "4", "--schedule", "interleaved"],
         "error: --pp 4: 4 stages × 2 chunks each (--schedule interleaved) do not divide the 36 layers of "
         "qwen3_8b — use one of 1, 2, 3, 6, 9, 18"),
    ],
)  # fmt: skip
def test_a_degree_no_layout_runs_is_named_with_the_degrees_that_do(args: list[str], line: str) -> None:
    res = CliRunner().invoke(app, [*BASE, *args, "--json"])
    assert res.exit_code == 2 and res.stdout == ""
    assert " ".join(res.stderr.split()) == line


@pytest.mark.parametrize(
    "args",
    [
        ["--gpus", "4", "--tp", "4"],
        ["--tp", "8"],
        ["--gpus", "9", "--pp", "9"],
        ["--gpus", "6", "--pp", "6", "--schedule", "interleaved"],
    ],
)
def test_the_named_degrees_run(args: list[str]) -> None:
    res = CliRunner().invoke(app, [*BASE, *args, "--json"])
    assert res.exit_code in (0, 3), res.output  # 3: a valid layout that does not fit memory
    assert "does not divide" not in res.output
