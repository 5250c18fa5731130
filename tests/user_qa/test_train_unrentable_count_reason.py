"""A GPU type that fits only on more GPUs than any instance a provider sells names the instances: a10g (rented
only as 1-GPU g5.xlarge instances; qwen3_8b needs 8) said 'needs ≥ 36 a10g … the allowed sites offer 1024
within hardware.max_gpus 1024 — raise it to at least 36 (fastest: 1024 GPUs, 1.0 days)'."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app

SCENARIO = {
    "kind": "training",
    "name": "a10g only",
    "model": "qwen3_8b",
    "training_tokens": 1.0e11,
    "seq_len_tokens": 4096,
    "global_batch_tokens": 4194304,
    "deadline_days": 30,
    "procurement": ["rent"],
    "hardware": {"gpus": ["a10g"]},
}


def test_unrentable_count_names_the_instances(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(SCENARIO), encoding="utf-8")
    out = tmp_path / "t.xlsx"
    result = CliRunner().invoke(app, ["train", str(path), "-o", str(out)])
    assert result.exit_code == 3 and not out.exists()
    assert (
        "a10g: the allowed sites rent it only as 1-GPU instances, and the smallest layout that fits needs 8 GPUs "
        "on one instance or whole 8-GPU nodes — list another GPU in hardware.gpus"
    ) in result.output
    assert "raise it to at least" not in result.output
