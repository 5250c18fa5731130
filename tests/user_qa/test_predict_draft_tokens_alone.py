"""`planner predict --draft-tokens K` without --draft-model: the option was silently ignored (exit 0, the
plain step), so a user believed speculation of K tokens was in the figures. It is refused like
--prefix-tokens without --prefix-hit-frac, and with the draft model the default K = 4 is unchanged."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
BASE = ["predict", "--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "4", "--requests-per-s", "2"]
SPEC = ["--draft-model", "llama_3_1_8b", "--acceptance-frac", "0.7"]


def test_draft_tokens_alone_is_refused_in_one_line() -> None:
    res = runner.invoke(app, [*BASE, "--draft-tokens", "8"])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        "error: --draft-tokens: speculative decoding needs --draft-model and --acceptance-frac too"
    ]


def test_draft_tokens_defaults_to_four_with_a_draft_model() -> None:
    implicit = runner.invoke(app, [*BASE, *SPEC, "--json"])
    explicit = runner.invoke(app, [*BASE, *SPEC, "--draft-tokens", "4", "--json"])
    other = runner.invoke(app, [*BASE, *SPEC, "--draft-tokens", "2", "--json"])
    assert implicit.exit_code == explicit.exit_code == other.exit_code == 0, implicit.stderr
    assert json.loads(implicit.stdout) == json.loads(explicit.stdout)
    assert json.loads(implicit.stdout)["speculative"]["draft_tokens"] == 4
    assert json.loads(other.stdout)["at_load"]["tpot_ms"] != json.loads(implicit.stdout)["at_load"]["tpot_ms"]
