"""A training deadline missed because the global batch caps the useful GPU count names the batch, not
hardware.max_gpus: 4 sequences of 1M tokens on H100 said 'needs ≥ 149 … the allowed sites offer 1024
within hardware.max_gpus 1024 — raise it to at least 149' although 1,024 ≥ 149."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from planner.cli.main import app

runner = CliRunner()
SCENARIO = {
    "kind": "training",
    "name": "long sequences, tiny batch",
    "model": "qwen3_8b",
    "training_tokens": 1.0e11,
    "seq_len_tokens": 1_000_000,
    "global_batch_sequences": 4,
    "deadline_days": 30,
    "procurement": ["rent"],
    "hardware": {"gpus": ["h100_sxm"]},
}


def _train(tmp_path: Path, scenario: dict[str, Any]) -> Result:
    """`planner train` on ``scenario`` written to a file."""
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    return runner.invoke(app, ["train", str(path)])


def test_batch_bound_deadline_names_the_batch(tmp_path: Path) -> None:
    result = _train(tmp_path, SCENARIO)
    assert result.exit_code == 3
    out = result.output
    assert "raise it to at least" not in out and "hardware.max_gpus" not in out
    assert "the fastest uses 64 GPUs (TP8×PP2×DP4, 69.7 days)" in out
    assert "global batch of 4 sequences" in out
    assert "raise global_batch_tokens or deadline_days" in out


def test_gpu_bound_deadline_still_names_max_gpus(tmp_path: Path) -> None:
    """1e13 tokens in 5 days on at most 512 H100: the fewest GPUs of a layout in time are 4,096 (TP4×DP1024,
    4.6 days); card 4's count at the 512-GPU layout's 49 % MFU said 2,433, which no layout of a 1,024-sequence
    batch reaches in time."""
    data = {**SCENARIO, "seq_len_tokens": 4096, "global_batch_sequences": 1024, "training_tokens": 1e13,
            "deadline_days": 5, "hardware": {"gpus": ["h100_sxm"], "max_gpus": 512}}  # fmt: skip
    result = _train(tmp_path, data)
    assert result.exit_code == 3
    assert "needs ≥ 4,096 h100_sxm to train 1e+13 tokens in 5 days (TP4×PP1×DP1024 at 35% MFU: 4.6 days)" in result.output
    assert "within hardware.max_gpus 512 — raise it to at least 4,096 (fastest: 512 GPUs, 23.8 days)" in result.output


def test_a_deadline_no_gpu_count_meets_names_the_batch_not_max_gpus(tmp_path: Path) -> None:
    """1e13 tokens in 1 day (plural-free 'in 1 day'): said 'raise it to at least 12,161' (card 4's count at
    one MFU), but the fastest layout of a 1,024-sequence batch on any number of GPUs takes 3.3 days."""
    data = {**SCENARIO, "seq_len_tokens": 4096, "global_batch_sequences": 1024, "training_tokens": 1e13,
            "deadline_days": 1, "hardware": {"gpus": ["h100_sxm"], "max_gpus": 512}}  # fmt: skip
    result = _train(tmp_path, data)
    assert result.exit_code == 3
    assert "no layout finishes 1e+13 tokens in 1 day: the fastest uses 16,384 GPUs (TP8×PP2×DP1024, 3.3 days)" in result.output
    assert "raise it to at least" not in result.output
