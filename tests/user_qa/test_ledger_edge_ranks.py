"""Two `planner ledger` answers a user could not act on: `ring-allreduce --ranks 1` (nothing to send) said
"time_s must be positive, got 0.0", a name no option has; `tp-step --kv-local-ms 1` without --kv-heads said
"kv_local_s needs kv_heads". One rank now sends nothing in 0 s with the bandwidths undefined (— / null), and
tp-step names the option to add."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()


def test_a_ring_of_one_rank_sends_nothing() -> None:
    res = runner.invoke(app, ["ledger", "ring-allreduce", "--ranks", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {
        "time_s": 0.0, "time_us": 0.0, "rounds": 0, "bytes_per_rank": 0.0,
        "algbw_gb_per_s": None, "busbw_gb_per_s": None, "latency_crossover_bytes": None,
    }  # fmt: skip
    two = json.loads(runner.invoke(app, ["ledger", "ring-allreduce", "--ranks", "2", "--json"]).stdout)
    assert two["rounds"] == 2 and two["algbw_gb_per_s"] > 0 and two["busbw_gb_per_s"] == two["algbw_gb_per_s"]


def test_tp_step_names_the_missing_option() -> None:
    res = runner.invoke(app, ["ledger", "tp-step", "--kv-local-ms", "1"])
    assert res.exit_code == 2
    assert res.stderr.strip() == (
        "error: Invalid value: --kv-local-ms 1: needs --kv-heads (n_KV: the KV read shards over at most n_KV cards) "
        "(see 'planner ledger tp-step --help')"
    )
