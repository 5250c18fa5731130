"""CLI subcommands of cards 4, 6, 10 and 11 (`planner ledger ...`), checked on book numbers."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from planner.cli.ledger_build import COMMANDS as _COMMANDS
from planner.cli.ledger_build import register


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    root = typer.Typer()
    sub = typer.Typer()
    register(sub)
    root.add_typer(sub, name="ledger")
    return root


def _run_json(app: typer.Typer, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["ledger", *args, "--json"])
    assert result.exit_code == 0, result.output
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def test_ring_allreduce_json(app: typer.Typer) -> None:
    out = _run_json(
        app,
        "ring-allreduce",
        "--message-bytes",
        "8388608",
        "--ranks",
        "8",
        "--bandwidth-gb-per-s",
        "50",
        "--latency-us",
        "5",
    )
    assert out["time_us"] == pytest.approx(363.6, abs=0.05)  # C6.5: 364 µs
    assert out["rounds"] == 14
    assert out["busbw_gb_per_s"] == pytest.approx(out["algbw_gb_per_s"] * 1.75)


def test_ring_tree_crossover_json(app: typer.Typer) -> None:
    out = _run_json(
        app, "ring-tree-crossover", "--ranks", "8", "--bandwidth-gb-per-s", "450", "--latency-us", "0.822"
    )
    assert out["crossover_kib"] == pytest.approx(680, abs=0.5)  # C11.7


def test_sharp_vs_ring_json(app: typer.Typer) -> None:
    out = _run_json(app, "sharp-vs-ring", "--servers", "32")
    assert out["ring_ms"] == pytest.approx(1.027, abs=5e-4)  # C11.1
    assert out["sharp_ms"] == pytest.approx(0.504, abs=5e-4)


def test_clos_json(app: typer.Typer) -> None:
    out = _run_json(app, "clos", "--radix", "64", "--tiers", "2", "--oversubscription-ratio", "3")
    assert (out["endpoints"], out["switches"]) == (3072, 80)  # C11.3
    assert out["bisection_tb_per_s"] == pytest.approx(25.6)


def test_training_time_json(app: typer.Typer) -> None:
    out = _run_json(
        app, "training-time", "--params", "1e12", "--peak-tflops", "2250", "--deadline-days", "90"
    )
    assert out["train_flop"] == pytest.approx(1.2e26)  # C4.13
    assert out["calendar_days"] == pytest.approx(94, abs=0.5)
    assert out["cards_for_deadline"] == 17_147


def test_power_limited_size_json(app: typer.Typer) -> None:
    out = _run_json(app, "power-limited-size", "--power-budget-kw", "120", "--server-power-kw", "10.2")
    assert (out["servers"], out["cards"], out["servers_per_rack"]) == (11, 88, 3)  # C10.1


def test_straggler_json(app: typer.Typer) -> None:
    out = _run_json(app, "straggler", "--mean-s", "52.78", "--sigma-s", "2.61", "--workers", "48")
    assert out["expected_max_sigmas"] == pytest.approx(2.23, abs=0.005)
    assert out["expected_step_s"] == pytest.approx(58.6, abs=0.05)  # C4.9


def test_sync_ratio_json(app: typer.Typer) -> None:
    out = _run_json(app, "sync-ratio", "--exposed-comm-s", "0.318", "--step-s", "0.939")
    assert out["sync_ratio_frac"] == pytest.approx(0.34, abs=0.005)
    assert out["threshold_frac"] == 0.30
    assert out["acceptable"] is False


def test_hierarchical_allreduce_pcie_box(app: typer.Typer) -> None:
    out = _run_json(
        app,
        "hierarchical-allreduce",
        "--ranks-per-node",
        "4",
        "--local-bandwidth-gb-per-s",
        "32",
        "--nic-bandwidth-gb-per-s",
        "8",
        "--flat-bandwidth-gb-per-s",
        "32",
        "--latency-us",
        "0",
    )
    assert out["hierarchical_ms"] == pytest.approx(15.7, abs=0.05)  # C6.3
    assert out["flat_ring_ms"] == pytest.approx(11.0, abs=0.05)
    assert out["hierarchical_faster"] is False
    assert out["breakeven_local_gb_per_s"] == pytest.approx(64, abs=0.5)


def test_checkpoint_and_zero_json(app: typer.Typer) -> None:
    ckpt = _run_json(app, "checkpoint-interval", "--checkpoint-s", "60", "--job-mtbf-hours", "1")
    assert ckpt["optimal_interval_s"] == pytest.approx((2 * 60 * 3600) ** 0.5)
    zero = _run_json(app, "zero-memory", "--dp-ranks", "8")
    assert zero["zero0_gb_per_card"] == pytest.approx(131.05, abs=0.005)  # C4.1, 16 B/param


def test_infinite_value_is_null(app: typer.Typer) -> None:
    out = _run_json(app, "incast", "--senders", "1")
    assert out["excess_gb_per_s"] == 0.0
    assert out["tolerable_feedback_us"] is None


def test_table_output_and_bad_input(app: typer.Typer) -> None:
    runner = CliRunner()
    table = runner.invoke(app, ["ledger", "pipeline-bubble", "--microbatches", "8", "--stages", "4"])
    assert table.exit_code == 0
    assert "utilization_frac" in table.stdout
    bad = runner.invoke(app, ["ledger", "clos", "--oversubscription-ratio", "2", "--json"])
    assert bad.exit_code == 2
    assert "whole ports" in bad.output


@pytest.mark.parametrize("name", [name for name, _ in _COMMANDS])
def test_every_command_runs_bare_and_has_help(app: typer.Typer, name: str) -> None:
    result = CliRunner().invoke(app, ["ledger", name, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)
    command = dict(_COMMANDS)[name]
    assert command.__doc__ is not None
    assert "card" in command.__doc__
