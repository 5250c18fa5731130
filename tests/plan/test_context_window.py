"""A request must fit its model's context window: prompt + answer ≤ max_context_tokens (planner/context_window.py),
one rule for the candidate table of `planner plan` and for `planner predict`. Before, the catalog's window was
read by nothing: a 60,000-token prompt on Qwen3-8B (window 40,960) was planned as an optimal $355,622 L40S
fleet that vLLM would refuse to serve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.candidates import build_candidates
from planner.catalog import default_catalog
from planner.cli.main import app
from planner.context_window import context_window_problem, longest_prompt_tokens
from planner.scenario import parse_scenario, validate_against_catalog

ROOT = Path(__file__).resolve().parents[2]
STARTER = {
    "name": "long-prompts",
    "horizon_months": 12,
    "workloads": [
        {
            "name": "chat",
            "models": ["qwen3_8b"],
            "quantizations": ["bf16"],
            "requests_per_s": 2,
            "input_tokens": 60000,
            "output_tokens": 250,
            "slo": {"ttft_ms": 30000, "tpot_ms": 100},
            "sites": ["us_east"],
        }
    ],
    "hardware": {"gpus": ["h100_sxm", "h200_sxm"], "tp": [1, 2, 4], "pp": [1]},
}


def _write(tmp_path: Path, **workload: object) -> Path:
    data = json.loads(json.dumps(STARTER))
    data["workloads"][0].update(workload)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_window_holds_prompt_plus_answer() -> None:
    qwen = default_catalog().models["qwen3_8b"]
    assert qwen.max_context_tokens == 40960
    assert context_window_problem(qwen, input_tokens=40000, output_tokens=960) == ""
    assert context_window_problem(qwen, input_tokens=40000, output_tokens=961) == (
        "a request's 40,961 tokens (prompt 40,000 + answer 961) exceed the 40,960-token context window of qwen3_8b"
    )
    llama = default_catalog().models["llama_3_1_8b"]
    assert longest_prompt_tokens([qwen, llama], output_tokens=250) == 131072 - 250


def test_candidates_of_a_model_too_short_for_the_request_cannot_run() -> None:
    catalog = default_catalog()
    data = json.loads(json.dumps(STARTER))
    data["workloads"][0]["models"] = ["qwen3_8b", "llama_3_1_8b"]
    scenario = parse_scenario(data)
    validate_against_catalog(scenario, catalog)
    cands = build_candidates(catalog, scenario).candidates
    qwen, llama = cands[cands["model"] == "qwen3_8b"], cands[cands["model"] == "llama_3_1_8b"]
    assert len(qwen) > 0 and not qwen["feasible"].any()
    assert qwen["reason"].str.contains("exceed the 40,960-token context window of qwen3_8b").all()
    assert llama["feasible"].any()


def test_plan_serves_with_the_model_whose_window_holds_the_request(tmp_path: Path) -> None:
    path = _write(tmp_path, models=["qwen3_8b", "llama_3_1_8b"])
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives", "--json"])
    assert res.exit_code == 0, res.stderr
    models = {d["model"] for d in json.loads(res.stdout)["deployments"]}
    assert models == {"llama_3_1_8b"}


@pytest.mark.parametrize(
    ("workload", "reason", "relaxation"),
    [
        (
            {},
            "a request's 60,250 tokens (prompt 60,000 + answer 250) exceed the 40,960-token context window of qwen3_8b",
            "shorten chat.input_tokens to 40,710, or list a model whose context window holds 60,250 tokens: "
            "llama_3_1_8b (131,072), gpt_oss_20b (131,072), llama_3_1_70b (131,072)",
        ),
        (
            {"input_tokens": 1000, "output_tokens": 50000},
            "a request's 51,000 tokens (prompt 1,000 + answer 50,000) exceed the 40,960-token context window of qwen3_8b",
            "shorten chat.output_tokens to 39,960, or list a model whose context window holds 51,000 tokens: "
            "llama_3_1_8b (131,072), gpt_oss_20b (131,072), llama_3_1_70b (131,072)",
        ),
    ],
)
def test_plan_of_requests_longer_than_every_window_is_infeasible_with_the_cause(
    tmp_path: Path, workload: dict[str, int], reason: str, relaxation: str
) -> None:
    path = _write(tmp_path, **workload)
    out = tmp_path / "plan.xlsx"
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives", "--json", "-o", str(out)])
    assert res.exit_code == 3, res.stderr
    (cause,) = json.loads(res.stdout)["infeasibility"]
    assert cause["requirement"] == "context_window"
    assert cause["message"] == f"chat: no allowed (model, format, GPU, TP, PP, site) fits in memory or can run: {reason}"
    assert cause["relaxation"] == relaxation
    assert not out.exists()


def test_predict_refuses_a_request_longer_than_the_window() -> None:
    args = ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--input-tokens", "60000"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 3
    assert "a request's 60,256 tokens (prompt 60,000 + answer 256) exceed the 40,960-token context window" in res.stderr
    forced = CliRunner().invoke(app, [*args, "--force", "--json"])
    assert forced.exit_code == 0 and "context window" in forced.stderr
    fits = CliRunner().invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--input-tokens", "40000",
                                    "--output-tokens", "960", "--json"])
    assert fits.exit_code == 0 and "context window" not in fits.stderr
