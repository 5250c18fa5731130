"""`planner ledger` subcommands of cards 5 and 8 (planner.cli.ledger_table_accelerator, _distributed), driven with CliRunner."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from planner.cli.ledger_build import register

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    sub = typer.Typer()
    register(sub)
    app.add_typer(sub, name="ledger")
    return app


def _json(*args: str) -> dict[str, Any]:
    result = runner.invoke(_app(), ["ledger", *args, "--json"])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.output)
    return payload


def test_critical_batch_h100_one_byte_per_param() -> None:
    out = _json(
        "critical-batch", "--bytes-per-weight", "1", "--peak-tflops", "989.4", "--bandwidth-gb-per-s", "3350"
    )
    assert out["critical_batch_seqs"] == pytest.approx(147.7, abs=0.05)
    assert out["ridge_flop_per_byte"] == pytest.approx(295.3, abs=0.05)
    assert out["bound"] == "memory"


def test_roofline_rtx4090() -> None:
    out = _json(
        "roofline", "--peak-tflops", "165.2", "--bandwidth-gb-per-s", "1008", "--intensity-flop-per-byte", "1"
    )
    assert out["ridge_flop_per_byte"] == pytest.approx(164, abs=0.5)
    assert out["attainable_tflops"] == pytest.approx(1.008)
    assert out["bound"] == "memory"


def test_peak_and_hbm() -> None:
    assert _json("peak-compute")["peak_tflops"] == pytest.approx(989.4, abs=0.05)
    out = _json("hbm-bandwidth", "--stacks", "6", "--pin-rate-gbit-per-s", "6.25")
    assert out["stack_gb_per_s"] == 800
    assert out["bandwidth_gb_per_s"] == 4800


def test_memory_parallelism_and_storage() -> None:
    out = _json("memory-parallelism")  # RTX 4090, 128 B, 500 ns, 128 outstanding
    assert out["effective_gb_per_s"] == pytest.approx(32.8, abs=0.05)
    assert out["outstanding_needed_requests"] == 3938
    assert _json("quantized-storage")["storage_mib"] == 8.5


def test_tp_step_c8_3() -> None:
    # Qwen3-32B on H100: weights 19.09 ms, KV (128K) 10.26 ms single-card; TP8 -> TP16 over IB.
    out = _json(
        "tp-step",
        "--local-ms",
        "19.093",
        "--kv-local-ms",
        "10.257",
        "--kv-heads",
        "8",
        "--tp",
        "8",
        "--layers",
        "64",
        "--allreduce-us",
        "11.57",
        "--allreduce-doubled-us",
        "32.74",
    )
    assert out["step_ms"] == pytest.approx(5.15, abs=0.005)
    assert out["doubled_step_ms"] == pytest.approx(6.67, abs=0.005)
    assert out["doubling_pays"] is False


def test_pd_rate_c8_7() -> None:
    out = _json("pd-rate", "--arrival-per-s", "3.5")
    assert out["pd_rate_per_s"] == pytest.approx(4.55, abs=0.005)
    assert out["binding"] == "decode"
    assert out["link_rate_per_s"] == pytest.approx(20.7, abs=0.05)
    assert out["stable"] is True


def test_handoffs_and_save_vs_recompute() -> None:
    assert _json("kv-handoff", "--latency-us", "0")["handoff_ms"] == pytest.approx(48.3, abs=0.05)
    assert _json("af-handoff")["equal_time_latency_us"] == pytest.approx(680, abs=0.5)
    nvme = _json("save-vs-recompute", "--write-gb-per-s", "4.2", "--read-gb-per-s", "7.1")
    assert nvme["save_path_ms"] == pytest.approx(458, abs=0.5)
    assert nvme["decision"] == "save"
    assert nvme["critical_gb_per_s"] == pytest.approx(1.41, abs=0.005)
    ten_gbe = _json("save-vs-recompute", "--write-gb-per-s", "1.25", "--read-gb-per-s", "1.25")
    assert ten_gbe["decision"] == "recompute"


def test_ep_alltoall_and_routing() -> None:
    assert _json("ep-alltoall", "--fabric-gb-per-s", "200")["dispatch_ms"] == pytest.approx(0.336, abs=0.0005)
    assert _json("ep-alltoall", "--fabric-gb-per-s", "50")["dispatch_ms"] == pytest.approx(1.342, abs=0.0005)
    out = _json("cache-routing", "--alternative-ms", "907")
    assert out["miss_ms"] == pytest.approx(967.2, abs=0.05)
    assert out["expected_ms"] == pytest.approx(196.5, abs=0.05)
    assert out["breakeven_hit_frac"] == pytest.approx(0.070, abs=0.0005)
    assert _json("cost-per-request")["cost_per_1000_requests"] == pytest.approx(0.63, abs=0.005)


def test_table_output_and_bad_input() -> None:
    result = runner.invoke(_app(), ["ledger", "roofline"])
    assert result.exit_code == 0
    assert "ridge_flop_per_byte" in result.output
    assert "295.343" in result.output
    bad = runner.invoke(_app(), ["ledger", "roofline", "--bandwidth-gb-per-s", "0"])
    assert bad.exit_code == 2
    assert "bandwidth_gb_per_s must be positive" in bad.output


def test_every_command_has_a_card_in_its_help() -> None:
    result = runner.invoke(_app(), ["ledger", "--help"])
    assert result.exit_code == 0
    for name in ("roofline", "critical-batch", "tp-step", "pd-rate", "ep-alltoall", "cache-routing"):
        assert name in result.output
    assert result.output.count("card") >= 17
