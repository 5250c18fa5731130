"""A missed training deadline's advice must be a change that plans. 1e11 Qwen3-8B tokens in 0.1 days on at
most 512 H100 said "raise it [hardware.max_gpus] to at least 1,217" (card 4's count at the 512-GPU layout's
49 % MFU); at 1,217 the run was still infeasible ("raise it to at least 1,241"), and at 1,241 the advice
became "raise global_batch_tokens or deadline_days" although 2,048 GPUs (TP2 × DP1024) finish in 0.064 days.
The count named is now the fewest GPUs of a layout that finishes in time, and the run plans with it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
SCENARIO = {
    "kind": "training",
    "name": "Qwen3-8B in a tenth of a day",
    "model": "qwen3_8b",
    "training_tokens": 1.0e11,
    "seq_len_tokens": 4096,
    "global_batch_tokens": 4194304,
    "deadline_days": 0.1,
    "procurement": ["rent"],
}


def _train(tmp_path: Path, max_gpus: int) -> tuple[int, dict[str, object]]:
    path = tmp_path / f"train_{max_gpus}.yaml"
    data = {**SCENARIO, "hardware": {"gpus": ["h100_sxm"], "max_gpus": max_gpus}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = runner.invoke(app, ["train", str(path), "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_the_max_gpus_the_reason_names_plans_and_one_fewer_does_not(tmp_path: Path) -> None:
    code, data = _train(tmp_path, 512)
    assert code == 3
    (reason,) = data["infeasibility"]  # type: ignore[misc]
    assert reason == (
        "h100_sxm: needs ≥ 2,048 h100_sxm to train 1e+11 tokens in 0.1 days (TP2×PP1×DP1024 at 47% MFU: "
        "0.064 days); the allowed sites offer 512 within hardware.max_gpus 512 — raise it to at least 2,048 "
        "(fastest: 512 GPUs, 0.24 days)"
    )
    code, data = _train(tmp_path, 2048)
    assert code == 0
    assert (data["gpus"], data["tp"], data["dp"]) == (2048, 2, 1024)
    assert data["days"] <= 0.1  # type: ignore[operator]
    code, data = _train(tmp_path, 2047)
    assert code == 3


def test_a_fastest_run_past_the_deadline_shows_the_digits_that_miss_it(tmp_path: Path) -> None:
    """At most 1,217 GPUs the fastest run takes 0.12 days: it read "(fastest: 1024 GPUs, 0.1 days)" against
    the 0.1-day deadline."""
    code, data = _train(tmp_path, 1217)
    assert code == 3
    (reason,) = data["infeasibility"]  # type: ignore[misc]
    assert reason.endswith(
        "the allowed sites offer 1,217 within hardware.max_gpus 1,217 — raise it to at least 2,048 "
        "(fastest: 1,024 GPUs, 0.12 days)"
    )
