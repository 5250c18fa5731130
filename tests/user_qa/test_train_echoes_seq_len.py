"""`planner train` showed no sequence length: a user who wrote 4000 after "write 4000" for `seq_len_tokens: 4k`
(a model card's 4k is 4,096) could not see which was planned. The title now names the model, the tokens and the
sequence length used."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app
from planner.cli.train import tokens_text

runner = CliRunner()


def test_train_title_names_the_sequence_length_used(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    assert runner.invoke(app, ["init", str(path), "--kind", "training", "-q"]).exit_code == 0
    path.write_text(path.read_text().replace("seq_len_tokens: 4096", "seq_len_tokens: 8192"))
    res = runner.invoke(app, ["train", str(path)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "(qwen3_8b, 100B tokens in 8,192-token sequences)" in res.stdout
    assert (tokens_text(1e11), tokens_text(2.5e12), tokens_text(7.5e8), tokens_text(512), tokens_text(1e15)) == ("100B", "2.5T", "750M", "512", "1,000T")
