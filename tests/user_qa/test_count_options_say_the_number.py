"""A count option given with a unit or suffix ('--seq-len 4k', '--input-tokens 2k', '--gpus 8x') is refused
with the number to write, as float options and scenario fields are; it said Click's "'4k' is not a valid
int range." (no alternative)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
PREDICT_TRAIN = ["predict-train", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--gpus", "8"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([*PREDICT_TRAIN, "--seq-len", "4k"], "'--seq-len': '4k' is not a whole number — write 4096 (4k as a "
         "sequence length: 4 × 1024) or 4000 (4 × 1,000) as a plain number"),
        ([*PREDICT_TRAIN, "--seq-len", "1,024"], "'--seq-len': '1,024' is not a whole number — write 1024 (a plain number)"),
        ([*PREDICT_TRAIN[:-1], "8x"], "'--gpus': '8x' is not a whole number — write 8 (no unit)"),
        ([*PREDICT_TRAIN, "--seq-len", "2.5"], "'--seq-len': '2.5' is not a whole number"),
        (["predict", "--model", "llama_3_1_8b", "--gpu", "h100_sxm", "--input-tokens", "2k"],
         "'--input-tokens': '2k' is not a whole number — write 2000 (2k as a token count: 2 × 1,000) or 2048 "
         "(2 × 1024, as context lengths are written) as a plain number"),
    ],
)  # fmt: skip
def test_count_option_names_the_number_to_write(args: list[str], said: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0] == f"error: Invalid value for {said} (see 'planner {args[0]} --help')"
