"""A refused large number is shown as a user writes it: `training_tokens: -1e11` said
"(got -100000000000.0)"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _refusal(tmp_path: Path, line: str) -> str:
    """stderr of `planner train` on the bundled example with its line of ``line``'s key replaced (exit 2)."""
    key = line.split(":", 1)[0] + ":"
    text = (ROOT / "examples/train_8b/training.yaml").read_text()
    path = tmp_path / "training.yaml"
    path.write_text("\n".join(line if raw.startswith(key) else raw for raw in text.splitlines()))
    out = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", "train", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2
    return out.stderr


def test_a_negative_token_count_is_shown_in_e_notation(tmp_path: Path) -> None:
    assert "training_tokens: must be in (0, 1e+16] (got -1e+11)" in _refusal(
        tmp_path, "training_tokens: -1e11"
    )


def test_a_value_e_notation_would_round_is_shown_whole(tmp_path: Path) -> None:
    assert "(got -1234567891234.0)" in _refusal(tmp_path, "training_tokens: -1234567891234.0")


def test_a_fraction_for_a_whole_number_names_the_two_nearest(tmp_path: Path) -> None:
    assert "seq_len_tokens: expected a whole number (got 4096.5) — write 4096 or 4097" in _refusal(
        tmp_path, "seq_len_tokens: 4096.5"
    )
