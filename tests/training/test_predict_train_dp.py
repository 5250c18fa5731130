"""`planner predict-train --gpus 8 --tp 3` (no --dp): DP defaults to --gpus / (tp × pp), which is no whole
number, and the error showed the floored default as if the user had given it: "--gpus 8: must equal tp × pp ×
dp = 3 × 1 × 2" (planner/training/predict.py). TP3 itself, which divides none of Qwen3-8B's 32 heads, is now
named first (tests/user_qa/test_predict_train_layout_fixes.py); --gpus 6 --tp 4 keeps this case."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.training.test_cli import app

BASE = ["predict-train", "--model", "qwen3_8b", "--gpu", "h100_sxm"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--gpus", "6", "--tp", "4"],
            "error: --gpus 6: not a multiple of tp × pp = 4 × 1 = 4 (DP defaults to --gpus / (tp × pp)) — give "
            "--gpus a multiple of 4, e.g. 4, or other --tp/--pp",
        ),
        (
            ["--gpus", "2", "--tp", "2", "--pp", "2"],
            "error: --gpus 2: not a multiple of tp × pp = 2 × 2 = 4 (DP defaults to --gpus / (tp × pp)) — give "
            "--gpus a multiple of 4, e.g. 4, or other --tp/--pp",
        ),
        (["--gpus", "8", "--tp", "2", "--dp", "2"], "error: --gpus 8: must equal tp × pp × dp = 2 × 1 × 2 — give --gpus 4 or --dp 4"),
    ],
)
def test_gpus_that_tp_and_pp_do_not_divide(args: list[str], line: str) -> None:
    res = CliRunner().invoke(app, [*BASE, *args, "--json"])
    assert res.exit_code == 2 and res.stdout == ""
    assert " ".join(res.stderr.split()) == line


def test_a_multiple_still_defaults_dp() -> None:
    res = CliRunner().invoke(app, [*BASE, "--gpus", "6", "--tp", "2", "--global-batch", "510", "--json"])
    assert res.exit_code == 0, res.output
    assert '"dp": 3' in res.stdout
