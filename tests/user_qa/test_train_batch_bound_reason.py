"""A training deadline missed because the global batch caps the useful GPU count names the batch, not
hardware.max_gpus: 4 sequences of 1M tokens on H100 said 'needs ≥ 149 … the allowed sites offer 1024
within hardware.max_gpus 1024 — raise it to at least 149' although 1,024 ≥ 149."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

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


def test_batch_bound_deadline_names_the_batch(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(SCENARIO), encoding="utf-8")
    result = runner.invoke(app, ["train", str(path)])
    assert result.exit_code == 3
    out = result.output
    assert "raise it to at least" not in out and "hardware.max_gpus" not in out
    assert "the fastest uses 64 GPUs (69.7 days)" in out
    assert "global batch of 4 sequences" in out
    assert "raise global_batch_tokens or deadline_days" in out


def test_gpu_bound_deadline_still_names_max_gpus(tmp_path: Path) -> None:
    data = {**SCENARIO, "seq_len_tokens": 4096, "global_batch_sequences": 1024, "training_tokens": 1e13,
            "deadline_days": 1, "hardware": {"gpus": ["h100_sxm"], "max_gpus": 512}}  # fmt: skip
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = runner.invoke(app, ["train", str(path)])
    assert result.exit_code == 3
    assert "to train 1e+13 tokens in 1 day; the allowed sites offer 512" in result.output  # was "in 1 days"
    assert "within hardware.max_gpus 512 — raise it to at least 12,161" in result.output
