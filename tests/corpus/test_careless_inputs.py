"""Inputs a hurried user writes, beyond tests/corpus/cases.py: each case is the scenario YAML, the exit code
and phrases the one line on stderr must hold. Every case runs the real CLI next to existing ``-o`` and
``--json-out`` files, which must keep their bytes; the line names the file, and nothing goes to stdout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
PREVIOUS = b"previous output\n"

BASE = """\
name: probe
horizon_months: 12
workloads:
  - name: chat
    models: [llama_3_1_8b]
    quantizations: [fp8]
    requests_per_s: 2
    input_tokens: 500
    output_tokens: 100
    slo: {ttft_ms: 2000, tpot_ms: 50}
    sites: [us_east]
hardware: {gpus: [h100_sxm], tp: [1]}
procurement: [rent]
"""

TRAINING = """\
kind: training
name: probe training
model: qwen3_8b
training_tokens: 1.0e11
seq_len_tokens: 4096
global_batch_tokens: 4194304
deadline_days: 30
procurement: [rent]
hardware: {gpus: [h100_sxm, h200_sxm], max_gpus: 512}
"""


@dataclass(frozen=True)
class Probe:
    id: str
    text: str
    phrases: tuple[str, ...]
    exit_code: int = 2
    command: str = "plan"


def sub(old: str, new: str, base: str = BASE) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


SCENARIO_PROBES = [
    # ids in another spelling: the catalog id they mean, not their mechanical id form
    Probe(
        "hf-model-name",
        sub("models: [llama_3_1_8b]", "models: [meta-llama/Llama-3.1-8B-Instruct]"),
        ("workloads[0].models[0]", "did you mean llama_3_1_8b?"),
    ),
    Probe(
        "gpu-marketing-name",
        sub("gpus: [h100_sxm]", "gpus: [NVIDIA H100 80GB HBM3]"),
        ("hardware.gpus[0]", "did you mean h100_sxm?"),
    ),
    Probe(
        "engine-product-name",
        sub("requests_per_s: 2", "requests_per_s: 2\n    engine: tensorrt-llm"),
        ("workloads[0].engine", "did you mean trtllm?"),
    ),
    Probe(
        "site-name-accent",
        BASE + "sites: [{name: zürich, kind: datacenter}]\n",
        ("sites[0].name", "did you mean zurich?"),
    ),
    Probe(
        "workload-name-cyrillic",
        sub("- name: chat", "- name: чат"),
        ("workloads[0].name", "e.g. workload_1"),
    ),
    # kind: the inference default may be stated; a misspelt kind is not an unknown field
    Probe(
        "kind-misspelt",
        "kind: inferense\n" + BASE,
        ("kind: must be 'inference'", "did you mean inference?"),
    ),
    Probe("kind-training-misspelt", "kind: trainig\n" + BASE, ("kind:", "did you mean training?")),
    # a field by another name
    Probe(
        "optimizations-block",
        sub("requests_per_s: 2", "requests_per_s: 2\n    optimizations: {prefix_cache: {hit_frac: 0.8}}"),
        ("workloads[0].optimizations", "did you mean `prefix_cache:` or `speculative:`?"),
    ),
    Probe(
        "site-id-for-name",
        BASE + "sites: [{id: us_east, rtt_ms: 30}]\n",
        ("sites[0].id", "did you mean `name:`?"),
    ),
    # the list member's item is wrong: one problem, not also "expected a number (got a list)"
    Probe(
        "demand-list-string-item",
        sub("requests_per_s: 2", "requests_per_s: [2, '3', 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]"),
        ("workloads[0].requests_per_s[1]: expected a number (got '3')",),
    ),
    # percentages and floats where fractions and whole numbers go
    Probe(
        "resale-percent",
        BASE + "economics: {resale_frac: 50}\n",
        ("economics.resale_frac", "write 0.5 for 50 %"),
    ),
    Probe("tokens-1e3", sub("input_tokens: 500", "input_tokens: 1e3"), ("input_tokens", "write 1000")),
    # YAML 1.1 would read these as booleans and numbers; the reader is YAML 1.2 (planner.inputs), so they stay words
    Probe(
        "key-on-is-a-word",
        sub("    sites: [us_east]\n", "    sites: [us_east]\n    on: true\n"),
        ("workloads[0].on: unknown field",),
    ),
    Probe(
        "efficiency-for-an-unlisted-gpu",
        sub("hardware: {gpus: [h100_sxm], tp: [1]}", "hardware: {gpus: [h100_sxm], tp: [1], efficiency: {h200_sxm: {decode_mbu_frac: 0.5}}}"),
        ("hardware.efficiency.h200_sxm: h200_sxm is not in hardware.gpus (h100_sxm)", "add h200_sxm to hardware.gpus"),
    ),
    Probe("rate-base-60", sub("requests_per_s: 2", "requests_per_s: 1:30"), ("expected a number (got '1:30')",)),
    Probe("key-number", BASE + "12: x\n", ("key 12 is not text",)),
    Probe("site-named-no", sub("sites: [us_east]", "sites: [no]"), ("workloads[0].sites[0]: unknown site 'no'",)),
    Probe("name-is-a-date", sub("name: probe", "name: 2024-01-01"), ("name: expected text", "quote it: '2024-01-01'")),
    # tabs
    Probe(
        "tab-indent",
        sub("  - name: chat", "\t- name: chat"),
        ("line 4, column 1", "indented with a tab", "spaces only"),
    ),
    # silently ignored or silently merged before
    Probe(
        "duplicate-site-override",
        BASE + "sites: [{name: us_east, rtt_ms: 30}, {name: us_east, rtt_ms: 40}]\n",
        ("duplicate site names in sites: ['us_east']", "one entry per site"),
    ),
    Probe(
        "growth-with-demand-list",
        sub("requests_per_s: 2", "requests_per_s: [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]\n    growth_frac_per_month: 0.2"),
        ("workloads[0]", "growth_frac_per_month applies to a single requests_per_s"),
    ),
    Probe(
        "max-throughput-empty-budget",
        BASE + "objective: max_throughput\nbudget: {}\n",
        ("objective max_throughput needs a budget",),
    ),
    Probe("sites-a-number", BASE + "sites: 1.5\n", ("sites: expected a list (got 1.5)",)),  # was a TypeError
    # one id field: no [0] after it
    Probe(
        "inventory-unknown-site",
        BASE + "inventory: [{gpu: h100_sxm, count: 8, site: dc9}]\n",
        ("inventory[0].site: unknown site 'dc9'", "did you mean dc1?"),
    ),
    Probe(
        "inventory-gpu-upper",
        BASE + "inventory: [{gpu: h100, count: 8, site: dc1}]\n",
        ("inventory[0].gpu: unknown gpu 'h100'", "did you mean h100_sxm?"),
    ),
    # already refused with one line: pinned here as a careless user writes them
    Probe("demand-with-unit", sub("requests_per_s: 2", "requests_per_s: 5 req/s"), ("expected a number (got '5 req/s')",)),
    Probe("ttft-in-seconds", sub("ttft_ms: 2000", "ttft_s: 2"), ("slo.ttft_s", "did you mean ttft_ms?")),
    Probe("ttft-with-unit", sub("ttft_ms: 2000", "ttft_ms: 2s"), ("slo.ttft_ms", "expected a number")),
    Probe("hourly-25", sub("requests_per_s: 2", "requests_per_s: 2\n    hourly_profile_frac: [" + ", ".join(["1"] * 25) + "]"), ("hourly_profile_frac", "at most 24")),
    Probe("hourly-null-item", sub("requests_per_s: 2", "requests_per_s: 2\n    hourly_profile_frac: [" + "1, " * 23 + "null]"), ("hourly_profile_frac[23]", "expected a number")),
    Probe("workspace-gb", BASE + "workspace_gb: 2\n", ("workspace_gb", "did you mean workspace_gib?")),
    Probe("rental-kind-dash", BASE + "rental_kinds: [on-demand]\n", ("rental_kinds[0]", "'on_demand'")),
    Probe("provider-upper", BASE + "rent_providers: [AWS]\n", ("rent_providers[0]", "did you mean aws?")),
    Probe("quant-upper", sub("quantizations: [fp8]", "quantizations: [FP8]"), ("quantizations[0]", "did you mean fp8?")),
    Probe(
        "plan-json-as-scenario",
        '{"scenario": "probe", "status": "optimal", "deployments": []}',
        ("a plan's JSON output", "not a scenario"),
    ),
    Probe("utf16-file", "", ("not UTF-8",)),  # text replaced below by UTF-16 bytes
    Probe("binary-elf", "", ("not a text file (a program)",)),  # text replaced below by an ELF header
    Probe("workbook-as-scenario", "", ("not a text file (a zip archive or an Excel workbook)",)),
]

TRAINING_PROBES = [
    Probe("train-kind-typo", sub("kind: training", "kind: trainig", TRAINING), ("kind",), command="train"),
    Probe("train-tokens-unit", sub("training_tokens: 1.0e11", "training_tokens: 100B", TRAINING), ("training_tokens", "expected a number"), command="train"),
    Probe("train-deadline-weeks", sub("deadline_days: 30", "deadline_weeks: 4", TRAINING), ("deadline_weeks", "did you mean `deadline_days:`?"), command="train"),
    Probe("train-gpu-typo", sub("gpus: [h100_sxm, h200_sxm]", "gpus: [h100, h200_sxm]", TRAINING), ("hardware.gpus[0]", "did you mean h100_sxm?"), command="train"),
    Probe("train-batch-not-multiple", sub("global_batch_tokens: 4194304", "global_batch_tokens: 1000", TRAINING), ("global_batch_tokens", "multiple of seq_len_tokens"), command="train"),
    Probe("train-precision-upper", TRAINING + "precision: FP8\n", ("precision", "'bf16' or 'fp8'"), command="train"),
]

RAW = {
    "utf16-file": BASE.encode("utf-16"),
    "binary-elf": b"\x7fELF\x02\x01\x01" + bytes(100),
    "workbook-as-scenario": b"PK\x03\x04\x14\x00\x06\x00" + bytes(100),
}


def _run(tmp_path: Path, probe: Probe) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_bytes(RAW.get(probe.id, probe.text.encode("utf-8")))
    json_out, xlsx_out = tmp_path / "out.json", tmp_path / "out.xlsx"
    json_out.write_bytes(PREVIOUS)
    xlsx_out.write_bytes(PREVIOUS)
    before = sorted(p.name for p in tmp_path.iterdir())
    args = [probe.command, str(scenario), "-o", str(xlsx_out), "--json-out", str(json_out)]
    if probe.command == "plan":
        args.append("--no-alternatives")
    res = runner.invoke(app, args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == probe.exit_code, (res.exit_code, res.stderr, res.stdout)
    assert "Traceback" not in res.output and "Traceback" not in res.stderr
    if probe.exit_code == 2:
        assert len(lines) == 1, res.stderr
        assert scenario.name in lines[0], "the message names the file"
        assert res.stdout == ""
        for phrase in probe.phrases:
            assert phrase in lines[0], (phrase, lines[0])
    else:
        for phrase in probe.phrases:
            assert phrase in res.stderr, (phrase, res.stderr)
    assert json_out.read_bytes() == PREVIOUS and xlsx_out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "no file added"


@pytest.mark.parametrize("probe", SCENARIO_PROBES + TRAINING_PROBES, ids=lambda p: p.id)
def test_careless_input_is_one_line_and_writes_nothing(tmp_path: Path, probe: Probe) -> None:
    _run(tmp_path, probe)


def test_stated_inference_kind_plans(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("kind: inference\n" + BASE, encoding="utf-8")
    res = runner.invoke(app, ["plan", str(scenario), "--no-alternatives", "--json"])
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        ("scenaro.yaml", "did you mean"),  # a misspelt file name beside scenario.yaml
        ("", "did you mean"),  # the example's folder instead of its scenario.yaml
    ],
    ids=["misspelt-file", "folder"],
)
def test_scenario_path_mistakes(tmp_path: Path, name: str, phrase: str) -> None:
    (tmp_path / "scenario.yaml").write_text(BASE, encoding="utf-8")
    target = tmp_path / name if name else tmp_path
    res = runner.invoke(app, ["plan", str(target)])
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.stderr
    assert phrase in lines[0] and str(tmp_path / "scenario.yaml") in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["catalog", "gpus", "NVIDIA H100"], "did you mean h100_sxm?"),
        (["catalog", "models", "meta-llama/Llama-3.1-8B"], "did you mean llama_3_1_8b?"),
        (["catalog", "models", "Qwen/Qwen3-8B"], "did you mean qwen3_8b?"),
        (["catalog", "formats", "FP8"], "did you mean fp8?"),
        (["catalog", "sites", "US-EAST"], "did you mean us_east?"),
        (["catalog", "prices", "aws"], "'aws' is a provider: give a GPU id"),
    ],
    ids=["gpu-marketing", "model-hf", "model-org", "format-upper", "site-upper", "prices-provider"],
)
def test_catalog_lookup_mistakes(args: list[str], phrase: str) -> None:
    res = runner.invoke(app, args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.stderr
    assert phrase in lines[0], lines[0]
    assert res.stdout == ""
