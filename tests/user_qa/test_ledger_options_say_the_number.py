"""`planner ledger` options given a k suffix get the number to write, with the field's convention first, as
`planner predict`'s and `predict-train`'s count options do: a whole-number ledger option said Click's "'4k' is
not a valid int." (no alternative), a number option "write 8000 (a plain number)" (one reading of two), and
paging-waste's --lengths "expected comma-separated integers" without naming the option."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
AS_LENGTH = "write 4096 (4k as a sequence length: 4 × 1024) or 4000 (4 × 1,000) as a plain number"
AS_COUNT = "write 8000 (8k as a token count: 8 × 1,000) or 8192 (8 × 1024, as context lengths are written) as a plain number"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # a sequence length (L, L_max): binary first
        (["paging-waste", "--max-tokens", "4k"], f"Invalid value for '--max-tokens': '4k' is not a whole number — {AS_LENGTH}"),
        (["flash-attention-io", "--seq-tokens", "4k"], f"Invalid value for '--seq-tokens': '4k' is not a whole number — {AS_LENGTH}"),
        (["paging-waste", "--lengths", "4k,8k"], "Invalid value: --lengths 4k,8k: expected comma-separated whole numbers; "
         f"'4k' is not one — {AS_LENGTH}"),
        (["paging-waste", "--lengths", "9,x"], "Invalid value: --lengths 9,x: expected comma-separated whole numbers; 'x' is not one"),
        # a number option holding a token count: decimal first, the option's name now read
        (["kv-handoff", "--tokens", "8k"], f"Invalid value for '--tokens': '8k' is not a number — {AS_COUNT}"),
    ],
)  # fmt: skip
def test_ledger_option_names_the_number_to_write(args: list[str], said: str) -> None:
    res = runner.invoke(app, ["ledger", *args])
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0] == f"error: {said} (see 'planner ledger {args[0]} --help')"


def test_lengths_as_written_still_compute() -> None:
    """9, 13, 5, 15 tokens in pages of 4: 42 used slots, 12 + 16 + 8 + 16 = 52 paged, 64 reserved at 16 each (book ch08 §8.3.1)."""
    res = runner.invoke(app, ["ledger", "paging-waste", "--lengths", "9, 13,5,15", "--json"])
    assert res.exit_code == 0, res.output
    assert '"used_slots": 42' in res.stdout and '"paged_slots": 52' in res.stdout and '"reserved_slots": 64' in res.stdout
