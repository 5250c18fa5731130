"""`planner ledger` options that are times, prices, memory or counts took negative values and answered with
exit 0: `kv-quant --convert-ms -1` said the conversion "pays", `rtt-crossover --model-s -1` printed a negative
fixed time (-9.86 s), `api-call-cost --usd-per-m-output -1` a lower price per call. They are refused like the
options that already had a range (exit 2, one line naming the option and the least value)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()

NON_NEGATIVE = [
    ("remote-exec", "--compute-s"),
    ("rtt-crossover", "--model-s"),
    ("rtt-crossover", "--prep-s"),
    ("fixed-investment", "--delivery-delay-years"),
    ("rent-vs-api", "--new-tokens"),
    ("rent-vs-api", "--usd-per-m-output"),
    ("occupancy", "--shared-kib"),
    ("kv-quant", "--convert-ms"),
    ("round-time", "--new-tokens"),
    ("round-time", "--history-tokens"),
    ("round-time", "--fixed-ms"),
    ("round-time", "--us-per-new-token"),
    ("round-time", "--ns-per-pair"),
    ("cost-per-success", "--cpu-s"),
    ("cost-per-success", "--gib-s"),
    ("api-call-cost", "--usd-per-m-input"),
    ("api-call-cost", "--usd-per-m-output"),
    ("api-call-cost", "--usd-per-m-cache-write"),
    ("api-call-cost", "--usd-per-m-cache-hit"),
]

INTEGER = {("round-time", "--new-tokens"), ("round-time", "--history-tokens")}
"""Whole-number options: typer's own range message."""


@pytest.mark.parametrize(("command", "option"), NON_NEGATIVE)
def test_negative_value_is_refused(command: str, option: str) -> None:
    res = runner.invoke(app, ["ledger", command, option, "-1", "--json"])
    assert res.exit_code == 2
    assert res.stdout == ""
    why = "-1 is not in the range x>=0." if (command, option) in INTEGER else "must be at least 0, not -1"
    assert res.stderr.strip() == (
        f"error: Invalid value for '{option}': {why} (see 'planner ledger {command} --help')"
    )


def test_registers_per_thread_needs_one() -> None:
    res = runner.invoke(app, ["ledger", "occupancy", "--registers-per-thread", "0"])
    assert res.exit_code == 2
    assert "'--registers-per-thread': 0 is not in the range x>=1" in res.stderr


def test_zero_is_still_a_value() -> None:
    """0 s of model time is a real input (a cached answer): the fixed part is prep + rounds × (other + RTT)."""
    import json

    res = runner.invoke(app, ["ledger", "rtt-crossover", "--model-s", "0", "--prep-s", "0", "--json"])
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert out["fixed_s"] == pytest.approx(20 * (0.3 + 0.2))
    assert out["completion_s"] == pytest.approx(10.0 + 20 * 0.8 * 8 / 6.4)
