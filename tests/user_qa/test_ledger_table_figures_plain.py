"""`planner ledger` tables wrote figures of a million and more with an exponent ("gpu_hours 8.42261e+07",
"causal_pairs 2.09818e+06", "flop 3.35544e+07") and counts without separators ("steps 31790"); they read as
`planner predict`'s table does now: whole with thousands separators from 10,000 up, 6 significant digits below,
an exponent only from 10^15 (training FLOP)."""

from __future__ import annotations

import math

from typer.testing import CliRunner

from planner.cli.ledger_common import shown
from planner.cli.main import app

runner = CliRunner()


def test_shown() -> None:
    cells = [shown(v) for v in (84_226_145.3, 2_098_176.0, 31790, 9999.5, 94.77371, 0.0339139, 1.2e26, 2e13, 5)]
    assert cells == [
        "84,226,145", "2,098,176", "31,790", "9999.5", "94.7737", "0.0339139", "1.2e+26", "20,000,000,000,000", "5",
    ]  # fmt: skip
    assert [shown(v) for v in (None, math.nan, math.inf, -math.inf, True, "memory")] == [
        "—", "—", "∞", "−∞", "True", "memory",
    ]  # fmt: skip


def test_training_time_table_has_no_exponent_below_1e15() -> None:
    res = runner.invoke(app, ["ledger", "training-time"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in res.stdout.splitlines() if line.count("│") == 3}
    assert rows["train_flop"] == "1.2e+26" and rows["tokens"] == "20,000,000,000,000"
    assert rows["gpu_hours"].replace(",", "").isdigit() and "e+" not in rows["gpu_hours"]
