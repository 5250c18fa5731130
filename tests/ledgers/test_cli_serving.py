"""CLI subcommands of cards 3, 7, 9 and 12 (``planner ledger ...``), on an app built in the test."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from planner.cli.ledger_build import COMMANDS as _COMMANDS
from planner.cli.ledger_build import register


def _app() -> typer.Typer:
    app = typer.Typer()
    sub = typer.Typer()
    register(sub)
    app.add_typer(sub, name="ledger")
    return app


def _json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(_app(), ["ledger", *args, "--json"])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.output)
    return payload


def test_breakeven_utilization() -> None:
    out = _json(
        "breakeven-utilization", "--reserved-usd-per-hour", "6.79", "--on-demand-usd-per-hour", "8.64"
    )
    assert out["breakeven_utilization_frac"] == pytest.approx(0.786, abs=5e-4)


def test_kv_pool_capacity_long_request() -> None:
    out = _json("kv-pool-capacity", "--prompt-tokens", "8192", "--output-tokens", "256", "--pool-gib", "12")
    assert out == {"footprint_tokens": 8448, "footprint_mib": pytest.approx(1188.0), "capacity_requests": 10}


def test_buy_vs_rent_defaults_are_the_book_case() -> None:
    out = _json("buy-vs-rent", "--tasks-per-month", "3e6")
    assert out["fixed_usd_per_month"] == pytest.approx(19_555.2)
    assert out["breakeven_tasks_per_month"] / 1e6 == pytest.approx(2.41, abs=5e-3)
    assert out["payg_usd_per_month"] == pytest.approx(24_300.0)
    assert out["cheaper"] == "self-host"


def test_buy_vs_rent_api_always_wins_is_null() -> None:
    out = _json("buy-vs-rent", "--payg-usd-per-task", "0.001", "--marginal-usd-per-task", "0.002")
    assert out["breakeven_tasks_per_month"] is None  # c <= v: no finite break-even


def test_rtt_crossover_required_uplink() -> None:
    out = _json("rtt-crossover", "--deadline-s", "45")
    assert out["fixed_s"] == pytest.approx(11.6, abs=0.05)
    assert out["required_uplink_mbit_per_s"] == pytest.approx(3.8, abs=0.05)
    slow = _json("rtt-crossover", "--uplink-mbit-per-s", "3.5")
    assert slow["completion_s"] == pytest.approx(48.2, abs=0.05)
    assert slow["on_time"] is False
    late = _json("rtt-crossover", "--deadline-s", "1")  # the fixed 11.6 s alone misses it: no uplink is enough
    assert late["required_uplink_mbit_per_s"] is None


def test_an_unbounded_quantity_reads_as_infinity_in_the_table() -> None:
    """The table printed 'inf' (read as a typo) where JSON says null; it shows ∞ and says what it means."""
    result = CliRunner().invoke(_app(), ["ledger", "rtt-crossover", "--deadline-s", "1"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "required_uplink_mbit_per_s" in line)
    assert "∞" in row and "inf" not in row.replace("required_uplink", "")
    assert "∞: unbounded (null in --json)" in result.output


def test_rent_vs_api() -> None:
    out = _json("rent-vs-api")
    assert out["gpu_usd_per_m_output"] == pytest.approx(5.97, abs=5e-3)
    assert out["api_usd_per_m_output"] == pytest.approx(4.69, abs=5e-3)
    assert out["breakeven_rent_usd_per_card_hour"] == pytest.approx(5.334, abs=5e-4)
    assert out["cheaper"] == "api"


def test_spec_decode_and_cost_per_success() -> None:
    spec = _json("spec-decode", "--acceptance-frac", "0.25")
    assert spec["expected_tokens_per_round"] == pytest.approx(1.33, abs=5e-3)
    assert spec["ms_per_token"] == pytest.approx(19.8, abs=0.05)
    cost = _json("cost-per-success")
    assert cost["usd_per_1000_attempts"] == pytest.approx(8.61, abs=5e-3)
    assert cost["usd_per_1000_successes"] == pytest.approx(9.07, abs=5e-3)
    none = _json("cost-per-success", "--success-frac", "0")
    assert none["usd_per_1000_successes"] is None  # zero qualifying results: no finite average


def test_operator_commands() -> None:
    assert _json("host-copy")["copy_ms_total"] == pytest.approx(1.05, abs=5e-3)
    gemm = _json("gemm-tiles", "--tile", "32")
    assert gemm["tile_buffer_kib"] == pytest.approx(8.0)
    assert gemm["traffic_mib"] == pytest.approx(6168.0)
    assert _json("double-buffer")["pipelined_us"] == pytest.approx(5.44, abs=5e-3)
    assert _json("occupancy")["occupancy_frac"] == pytest.approx(0.25)
    assert _json("flash-attention-io")["flash_mib"] == pytest.approx(8.0)


def test_every_command_runs_bare_with_json() -> None:
    for name, _ in _COMMANDS:
        out = _json(name)
        assert out, name
        assert all(isinstance(key, str) for key in out)


def test_table_output_and_help() -> None:
    runner = CliRunner()
    result = runner.invoke(_app(), ["ledger", "paging-waste", "--shared-prefix-tokens", "8"])
    assert result.exit_code == 0, result.output
    assert "paged_with_sharing_slots" in result.output
    assert "44" in result.output
    help_result = runner.invoke(_app(), ["ledger", "buy-vs-rent", "--help"])
    assert help_result.exit_code == 0
    assert "card 12" in help_result.output


def test_every_command_names_formula_and_card() -> None:
    for name, command in _COMMANDS:
        doc = command.__doc__ or ""
        assert "card " in doc, name


def test_bad_input_is_a_usage_error() -> None:
    result = CliRunner().invoke(_app(), ["ledger", "kv-pool-capacity", "--output-tokens", "0", "--json"])
    assert result.exit_code == 2
