"""Careless inputs a QA pass found (2026-12-05): a scenario piped in (read twice, so the second read found
the pipe empty), a device that never ends, training lists naming a value twice, an inventory the training
search left unused, ids in another spelling in training files, percentages on a ratio, a spot-only scenario
whose spot is never usable, an indentation slip, `planner init` on a folder and money written with commas
on the command line. Each test states the one line the user now gets."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.errors import ScenarioError
from planner.inputs import MAX_SCENARIO_BYTES, load_yaml_file
from planner.scenario import parse_scenario
from planner.training.scenario import parse_training_scenario
from tests.corpus.cases import TRAINING_BASE
from tests.plan.helpers import starter

runner = CliRunner()

SCENARIO = """\
name: piped
horizon_months: 1
workloads:
  - name: chat
    models: [qwen3_8b]
    quantizations: [bf16]
    requests_per_s: 1
    input_tokens: 500
    output_tokens: 100
    slo: {ttft_ms: 2000, tpot_ms: 60}
    sites: [us_east]
hardware: {gpus: [l40s], tp: [1], pp: [1]}
"""

TRAINING: dict[str, Any] = {**TRAINING_BASE, "name": "qa"}


def _one_line(args: list[str]) -> str:
    res = runner.invoke(app, args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, (res.exit_code, res.stderr)
    assert "Traceback" not in res.output and res.stdout == ""
    return lines[0]


# --- a scenario that is not a regular file -------------------------------------------------------------


def test_a_scenario_piped_to_dev_stdin_is_planned() -> None:
    """`cat s.yaml | planner plan /dev/stdin` (and `planner plan <(envsubst < s.yaml)`) said "expected a
    mapping at the top level": the training-file check read the pipe, and the loader found it empty."""
    code = "import sys; from planner.cli.main import app; sys.argv = ['planner', *sys.argv[1:]]; app()"
    done = subprocess.run(
        [sys.executable, "-c", code, "plan", "/dev/stdin", "--no-alternatives", "--json"],
        input=SCENARIO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["status"] == "optimal" and plan["scenario"] == "piped"
    assert [d["gpu"] for d in plan["deployments"]] == ["l40s"]


def test_a_stream_longer_than_the_limit_is_refused(tmp_path: Path) -> None:
    """A pipe or device has no size to check first (``/dev/zero`` was read until memory ran out, exit 4):
    at most the limit + 1 bytes are read."""
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), fifo.open("wb") as stream:
            stream.write(b"# padding\n" * 30_000)  # 300,000 bytes

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with pytest.raises(ScenarioError) as err:
        load_yaml_file(fifo, ScenarioError, what="scenario", max_bytes=MAX_SCENARIO_BYTES)
    writer.join(timeout=10)
    assert str(err.value) == f"{fifo}: more than 256,000 bytes — scenario files are limited to 256,000 bytes"


def test_dash_for_standard_input_names_dev_stdin() -> None:
    line = _one_line(["plan", "-"])
    assert line == "error: -: scenario file not found (to read standard input, give /dev/stdin)"


# --- training files ------------------------------------------------------------------------------------


def _training_refusal(catalog: Catalog, **changes: Any) -> str:
    data = copy.deepcopy(TRAINING)
    for key, value in changes.items():
        holder, name = (data["hardware"], key.removeprefix("hw_")) if key.startswith("hw_") else (data, key)
        holder[name] = value
    with pytest.raises(ScenarioError) as err:
        parse_training_scenario(data, catalog, path="t.yaml")
    return str(err.value)


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"sites": ["us_east", "us_east"]}, "t.yaml: sites: us_east is listed twice — list each value once: [us_east]"),
        ({"hw_gpus": ["h100_sxm", "h100_sxm"]}, "t.yaml: hardware.gpus: h100_sxm is listed twice"),
        ({"hw_tp": [1, 2, 1]}, "t.yaml: hardware.tp: 1 is listed twice — list each value once: [1, 2]"),
        ({"hw_pp": [2, 2]}, "t.yaml: hardware.pp: 2 is listed twice"),
        ({"hw_micro_batches": [4, 4]}, "t.yaml: hardware.micro_batches: 4 is listed twice"),
        ({"procurement": ["rent", "rent"]}, "t.yaml: procurement: rent is listed twice"),
    ],
)
def test_a_training_list_naming_a_value_twice_is_refused(
    catalog: Catalog, changes: dict[str, Any], line: str
) -> None:
    """Planned as if listed once (exit 0), as the serving scenario no longer does: another value was meant."""
    assert _training_refusal(catalog, **changes).startswith(line)


def test_a_training_inventory_without_owned_is_refused(catalog: Catalog) -> None:
    """The owned GPUs were silently left out: 8 × h100_sxm rented at $5,377 while 8 owned ones sat idle."""
    line = _training_refusal(catalog, inventory=[{"gpu": "h100_sxm", "count": 8, "site": "dc1"}])
    assert line == (
        "t.yaml: procurement: [rent] leaves the inventory unused — add owned (procurement: [rent, owned]) to "
        "train on the GPUs you own, or remove inventory"
    )


@pytest.mark.parametrize(
    ("changes", "meant"),
    [
        ({"model": "Qwen/Qwen3-8B"}, "model: ids are lowercase letters, digits and single underscores (got 'Qwen/Qwen3-8B') — did you mean qwen3_8b?"),
        ({"model": "meta-llama/Llama-3.1-8B-Instruct"}, "did you mean llama_3_1_8b?"),
        ({"hw_gpus": ["NVIDIA H100"]}, "hardware.gpus[0]: ids are lowercase letters, digits and single underscores (got 'NVIDIA H100') — did you mean h100_sxm?"),
        ({"sites": ["US-East-1"]}, "sites[0]: ids are lowercase letters, digits and single underscores (got 'US-East-1') — did you mean us_east?"),
        ({"hw_gpus": ["h100"]}, "hardware.gpus[0]: unknown gpu 'h100' — did you mean h100_sxm?"),
    ],
)  # fmt: skip
def test_a_training_id_in_another_spelling_gets_the_catalog_id(
    catalog: Catalog, changes: dict[str, Any], meant: str
) -> None:
    """They got their mechanical id form, which is no catalog id: "did you mean qwen_qwen3_8b?",
    "nvidia_h100?", "meta_llama_llama_3_1_8b_instruct?"."""
    line = _training_refusal(catalog, **changes)
    assert meant in line, line


# --- serving scenarios ---------------------------------------------------------------------------------


def _refusal(data: dict[str, Any]) -> str:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, path="s.yaml")
    assert "\n" not in str(err.value)
    return str(err.value)


@pytest.mark.parametrize(
    ("value", "line"),
    [
        (30, "s.yaml: max_sync_ratio: must be in (0, 1] (got 30) — a fraction: write 0.3 for 30 %"),
        ("30%", "s.yaml: max_sync_ratio: expected a number (got '30%') — write 0.3 (a fraction: 0.3 = 30 %)"),
    ],
)
def test_a_ratio_written_as_a_percentage_gets_the_fraction(value: object, line: str) -> None:
    assert _refusal(starter(max_sync_ratio=value)) == line


@pytest.mark.parametrize(
    ("economics", "line"),
    [
        (
            {"spot_availability_frac": 0},
            "s.yaml: economics.spot_availability_frac: 0: spot capacity is never available, and rental_kinds lists "
            "only spot, so no GPU can be rented — write e.g. 0.8 (the default), or add on_demand to rental_kinds",
        ),
        (
            {"spot_preemption_overhead_frac": 1},
            "s.yaml: economics.spot_preemption_overhead_frac: 1: preemption loses all the work done on spot, and "
            "rental_kinds lists only spot, so no GPU can be rented — write e.g. 0.1 (the default), or add "
            "on_demand to rental_kinds",
        ),
    ],
)
def test_spot_only_with_spot_never_usable_is_refused(economics: dict[str, float], line: str) -> None:
    """It was exit 3, "binding: no single limit (supply, site or budget) is used up", naming neither field."""
    assert _refusal(starter(rental_kinds=["spot"], economics=economics)) == line


def test_unusable_spot_beside_another_rental_kind_is_a_what_if() -> None:
    """With on_demand too, spot at 0 % availability is a what-if (a sweep over it), not a mistake."""
    data = starter(rental_kinds=["on_demand", "spot"], economics={"spot_availability_frac": 0})
    assert parse_scenario(data, path="s.yaml").economics.spot_availability_frac == 0


def test_a_top_level_section_indented_into_a_workload_is_named() -> None:
    data = starter({"hardware": {"gpus": ["l40s"]}})
    assert _refusal(data) == (
        "s.yaml: workloads[0].hardware: unknown field — hardware is a top-level section: write it at the start "
        "of its line, not indented"
    )


def test_slo_fields_left_at_the_workload_level_are_named() -> None:
    """``slo:`` with its fields not indented under it: "tpot_ms: unknown field — did you mean output_tokens?"."""
    workload = {"slo": None, "ttft_ms": 1500, "tpot_ms": 60}
    assert _refusal(starter(workload)) == (
        "s.yaml: workloads[0].slo: expected a mapping (got None) — the section is empty: indent its fields under "
        "it; s.yaml: workloads[0].ttft_ms: unknown field — ttft_ms is a field of slo: indent it under `slo:`; "
        "s.yaml: workloads[0].tpot_ms: unknown field — tpot_ms is a field of slo: indent it under `slo:`"
    )


def test_a_section_field_written_at_the_top_level_is_named() -> None:
    assert _refusal(starter(gpus=["l40s"])) == (
        "s.yaml: gpus: unknown field — gpus is a field of hardware: indent it under `hardware:`"
    )


# --- command line ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "name"), [("inference", "scenario.yaml"), ("training", "training.yaml")])
def test_init_on_a_folder_asks_for_a_file_name(tmp_path: Path, kind: str, name: str) -> None:
    """It said "already exists — pass --force", and --force then refused the folder."""
    for force in ([], ["--force"]):
        line = _one_line(["init", str(tmp_path), "--kind", kind, *force])
        assert line == f"error: {tmp_path}: is a directory — give a file name, e.g. {tmp_path / name}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("raw", "hint"),
    [("5,000", "write 5000 (a plain number)"), ("$5000", "write 5000 (a plain number)"), ("5k", "write 5000 (a plain number)")],
)
def test_money_written_with_separators_gets_the_number(tmp_path: Path, raw: str, hint: str) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    line = _one_line(["budget", str(scenario), "--total-usd", raw])
    assert f"Invalid value for '--total-usd': '{raw}' is not a number — {hint}" in line


def test_a_time_limit_with_its_unit_gets_the_number() -> None:
    line = _one_line(["plan", "x.yaml", "--time-limit", "30s"])
    assert "Invalid value for '--time-limit': '30s' is not a number — write 30 (no unit)" in line


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("", "s.yaml: name: must not be empty — give the scenario a name, e.g. name: chat-2027 (got '')"),
        ("  ", "s.yaml: name: must not be empty"),
        ("chat\nplan", "s.yaml: name: must be one line of text without control characters (a newline, tab or escape code)"),
        ("\x1b[31mred", "s.yaml: name: must be one line of text without control characters"),
        ("x" * 201, "s.yaml: name: at most 200 characters (got 201) — shorten it"),
    ],
)
def test_a_scenario_name_is_one_line_of_text(catalog: Catalog, name: str, line: str) -> None:
    """An empty name titled the plan ": optimal — $…"; a newline split the title, an escape code reached the
    terminal. Training files take the same rule."""
    assert _refusal(starter(name=name)).startswith(line)
    assert _training_refusal(catalog, name=name).startswith(line.replace("s.yaml", "t.yaml"))
    assert parse_scenario(starter(name="Zürich chat — 2027 · ü"), path="s.yaml").name == "Zürich chat — 2027 · ü"


def test_a_workspace_larger_than_every_gpu_is_refused(catalog: Catalog) -> None:
    """workspace_gib: 200 (per GPU) was infeasible with "allow larger TP/PP degrees, a 4-bit format or GPUs with
    more memory", none of which frees a GPU's workspace."""
    from planner.scenario import validate_against_catalog

    data = starter(workspace_gib=200, hardware={"gpus": ["l40s", "h200_sxm"]})
    with pytest.raises(ScenarioError) as err:
        validate_against_catalog(parse_scenario(data, path="s.yaml"), catalog, "s.yaml")
    assert str(err.value) == (
        "s.yaml: workspace_gib: 200 GiB per GPU leaves no memory on any GPU of hardware.gpus (the largest, "
        "h200_sxm, has 131.3 GiB) — it is the per-GPU reserve for buffers, in GiB (default 2)"
    )
    data["workspace_gib"] = 100  # fits on h200_sxm: a question for the plan, not a mistake
    validate_against_catalog(parse_scenario(data, path="s.yaml"), catalog, "s.yaml")


@pytest.mark.parametrize(
    ("workload", "hardware", "line"),
    [
        ({"quantizations": "fp8"}, None, "workloads[0].quantizations: expected a list (got 'fp8') — a list is written [fp8]"),
        ({"sites": "us_east, us_west"}, None, "workloads[0].sites: expected a list (got 'us_east, us_west') — a list is written [us_east, us_west]"),
        ({}, {"tp": 8}, "hardware.tp: expected a list (got 8) — a list is written [8]"),
        ({}, {"tp": ["1 2 4 8"]}, "hardware.tp[0]: expected a whole number (got '1 2 4 8') — a list is written [1, 2, 4, 8]"),
        ({"models": ["qwen3_8b", None]}, None, "workloads[0].models[1]: expected text (got None) — an empty list item: delete the lone '-'"),
        ({"engine": None}, None, "workloads[0].engine: expected text (got None) — write the value after the colon"),
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_shape_gets_the_shape_to_write(
    workload: dict[str, Any], hardware: dict[str, Any] | None, line: str
) -> None:
    """`quantizations: fp8` said "expected a list (got 'fp8')" and no more; a trailing `- ` said "expected text
    (got None)"."""
    data = starter(workload) if hardware is None else starter(workload, hardware=hardware)
    assert _refusal(data) == f"s.yaml: {line}"


@pytest.mark.parametrize(
    ("where", "field", "text", "hint"),
    [
        ("slo", "ttft_ms", "2s", "— write 2000 (2 s in ms)"),
        ("slo", "ttft_ms", "1.5 seconds", "— write 1500 (1.5 seconds in ms)"),
        ("top", "horizon_months", "3 years", "— write 36 (3 years in months)"),
        ("top", "horizon_months", "2y", "— write 24 (2 y in months)"),
        ("slo", "tpot_ms", "50ms", "— write 50 (the unit is in the field name)"),
        ("workload", "requests_per_s", "8 s", "— write 8 (the unit is in the field name)"),  # a rate: not converted
        # was "write 4e+06"; a token count's k/M has two readings, the count's (decimal) first
        ("workload", "input_tokens", "4M", "— write 4000000 (4M as a token count: 4 × 1,000,000) or 4194304 "
         "(4 × 1024², as context lengths are written) as a plain number"),
    ],
)
def test_a_time_in_another_unit_is_converted_to_the_fields(where: str, field: str, text: str, hint: str) -> None:
    """`ttft_ms: 2s` got "write 2 (the unit is in the field name)" (a 2 ms SLO, 1,000× too tight) and
    `horizon_months: 3 years` "write 3"."""
    data = starter()
    holder = {"top": data, "workload": data["workloads"][0], "slo": data["workloads"][0]["slo"]}[where]
    holder[field] = text
    line = _refusal(data)
    assert line.endswith(f"(got '{text}') {hint}"), line


def test_a_training_time_in_weeks_or_a_year_is_converted(catalog: Catalog) -> None:
    """`deadline_days: 1 month` got "write 1" (a one-day deadline)."""
    assert _training_refusal(catalog, deadline_days="1 month").endswith("— write 30 (1 month in days)")
    assert _training_refusal(catalog, deadline_days="2 weeks").endswith("— write 14 (2 weeks in days)")
    assert _training_refusal(catalog, gpu_mtbf_hours="1 year").endswith("— write 8760 (1 year in hours)")
    assert _training_refusal(catalog, restart_s="10 min").endswith("— write 600 (10 min in s)")


def test_hugging_face_config_names_get_the_architecture_fields(catalog: Catalog) -> None:
    """A config.json's `intermediate_size:` got "did you mean hidden_size?" beside "ffn_size: required"."""
    model = {"layers": 32, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32}
    assert _training_refusal(catalog, model=model) == (
        "t.yaml: model.intermediate_size: unknown field — did you mean `ffn_size:`? (required: SwiGLU intermediate "
        "width); t.yaml: model.num_attention_heads: unknown field — did you mean `heads:`? (required: Query heads)"
    )


@pytest.mark.parametrize(
    ("model", "line"),
    [
        ({"heads": 30}, "t.yaml: model: hidden_size must be a multiple of heads (4096 / 30) — e.g. heads: 32"),
        ({"heads": 32, "kv_heads": 5}, "t.yaml: model: heads must be a multiple of kv_heads (32 / 5) — e.g. kv_heads: 4"),
    ],
)
def test_an_inline_architecture_that_does_not_divide_names_a_value_that_does(
    catalog: Catalog, model: dict[str, int], line: str
) -> None:
    assert _training_refusal(catalog, model={"layers": 32, "hidden_size": 4096, "ffn_size": 14336, **model}) == line


def test_a_dangling_link_or_a_quoted_tilde_is_named(tmp_path: Path) -> None:
    """A dangling link answered "did you mean <the link itself>?"; a quoted ~ "folder ~ does not exist"."""
    link = tmp_path / "scenario.yaml"
    link.symlink_to(tmp_path / "gone.yaml")
    line = _one_line(["plan", str(link)])
    assert line == f"error: {link}: scenario file not found (a link to {tmp_path / 'gone.yaml'}, which does not exist)"
    line = _one_line(["plan", "~/scenario.yaml"])
    assert line.endswith("scenario file not found (~ is expanded by the shell only outside quotes: write the full path)")


def test_no_home_folder_switches_the_parsed_catalog_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container's arbitrary uid has no $HOME and no passwd entry: `Path.home()` raised and every command
    that reads the catalog was "internal error: RuntimeError: Could not determine home directory", exit 4."""
    from planner import parsed_yaml_cache

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    for name in ("PLANNER_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert parsed_yaml_cache.cache_dir() is None
    assert parsed_yaml_cache.parsed(b"a: 1\n", lambda: {"a": 1}) == {"a": 1}
    res = runner.invoke(app, ["catalog", "formats", "--json"])
    assert res.exit_code == 0, res.stderr
    assert "fp8" in [f["id"] for f in json.loads(res.stdout)]


@pytest.mark.parametrize(
    "args",
    [["catalog", "gpus"], ["schema"], ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm"]],
    ids=["catalog", "schema", "predict"],
)
def test_json_out_dash_is_not_a_file_named_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    """`--json-out -` (stdout, as many tools read it) wrote a file named '-' in the current folder, exit 0."""
    monkeypatch.chdir(tmp_path)
    line = _one_line([*args, "--json-out", "-"])
    assert line == "error: --json-out -: not standard output here — to print the JSON on stdout, use --json"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kind", "line"),
    [
        (None, "t.yaml: kind: required — add `kind: training` (the file reads as a training scenario)"),
        ("Training", "t.yaml: kind: must be 'training' (got 'Training') — did you mean training?"),
        ("trainig", "t.yaml: kind: must be 'training' (got 'trainig') — did you mean training?"),
        ("inference", "t.yaml: kind: expected 'training' (a serving scenario goes to `planner plan`)"),
    ],
)
def test_a_training_file_with_a_missing_or_misspelt_kind(catalog: Catalog, kind: str | None, line: str) -> None:
    """All three said "kind: expected 'training' (a serving scenario goes to `planner plan`)"."""
    data = {k: v for k, v in TRAINING.items() if k != "kind"}
    if kind is not None:
        data["kind"] = kind
    with pytest.raises(ScenarioError) as err:
        parse_training_scenario(data, catalog, path="t.yaml")
    assert str(err.value) == line


def test_a_training_file_without_its_kind_given_to_plan_is_named() -> None:
    """`planner plan` on it listed "workloads: required; hardware.max_gpus: unknown field; model: unknown field"."""
    data = {k: v for k, v in TRAINING.items() if k != "kind"}
    assert _refusal(data) == (
        "s.yaml: kind: this is a training scenario (training_tokens:) without `kind: training` — add that line "
        "and run `planner train s.yaml`"
    )


@pytest.mark.parametrize(
    ("slo", "line"),
    [
        ({"ttft_percentile": "99"}, "must be 50, 90, 95 or 99 (got '99') — write 99 without quotes"),
        ({"ttft_percentile": "p99"}, "must be 50, 90, 95 or 99 (got 'p99') — write 99"),
        ({"tpot_percentile": 0.9}, "must be 50, 90, 95 or 99 (got 0.9) — write 90 (a percentile, not a fraction)"),
    ],
)
def test_a_percentile_in_another_form_gets_the_one_to_write(slo: dict[str, object], line: str) -> None:
    data = starter({"slo": {"ttft_ms": 1500, "tpot_ms": 60, **slo}})
    assert _refusal(data) == f"s.yaml: workloads[0].slo.{next(iter(slo))}: {line}"


@pytest.mark.parametrize(
    ("field", "value", "line"),
    [
        ("procurement", ["Rent"], "procurement[0]: must be 'rent', 'buy' or 'owned' (got 'Rent') — did you mean rent?"),
        ("rental_kinds", ["on-demand"], "rental_kinds[0]: must be 'on_demand', 'reserved_1y', 'reserved_3y' or 'spot' (got 'on-demand') — did you mean on_demand?"),
        ("procurement", ["lease"], "procurement[0]: must be 'rent', 'buy' or 'owned' (got 'lease')"),
    ],
)  # fmt: skip
def test_a_choice_in_another_spelling_gets_did_you_mean(field: str, value: list[str], line: str) -> None:
    assert _refusal(starter(**{field: value})) == f"s.yaml: {line}"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("name: x\nhorizon_months:12\nperiod_months: 1\n", "line 3, column 1: invalid YAML: could not find expected ':' — line 2 is not a `key: value` line (a colon needs a space after it: 'horizon_months: 36')"),
        ("name: x\nhardware:\n  gpus: [h100_sxm\n  tp: [1]\n", "invalid YAML: did not find expected ',' or ']' — close the list opened at line 3 with ']' (values separated by ', ')"),
        ("name: x\nslo: {ttft_ms: 1, tpot_ms: 2\nmax_batch: 4\n", "invalid YAML: did not find expected ',' or '}' — close the mapping opened at line 2 with '}' (entries separated by ', ')"),
        ('name: "x\nmax_batch: 4\n', "invalid YAML: found unexpected end of stream — a quote or bracket opened at line 1 is never closed"),
        ("name: plan: 2027\n", "line 1, column 11: invalid YAML: mapping values are not allowed in this context — quote a value that holds ': '"),
    ],
)  # fmt: skip
def test_a_yaml_slip_gets_its_usual_fix(tmp_path: Path, text: str, line: str) -> None:
    """The parser's own words ("could not find expected ':'" at the line after the slip) named no fix."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text, encoding="utf-8")
    assert line in _one_line(["plan", str(scenario)])


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"rental_kinds": ["spot"]}, "t.yaml: rental_kinds: a serving scenario's field (`planner plan`) — `planner train` does not read it; remove it"),
        ({"rent_providers": ["aws"]}, "t.yaml: rent_providers: a serving scenario's field (`planner plan`)"),
        ({"economics": {"spot_availability_frac": 0.5}}, "t.yaml: economics.spot_availability_frac: a serving plan's setting — a training run rents on demand (no spot)"),
        ({"economics": {"purchase_every_months": 1}}, "t.yaml: economics.purchase_every_months: a serving plan's setting"),
    ],
)  # fmt: skip
def test_a_serving_field_in_a_training_file_is_named(catalog: Catalog, changes: dict[str, Any], line: str) -> None:
    """`rental_kinds:` got "unknown field — did you mean restart_s?"; economics' spot fields were accepted and
    never read (the run's cost did not change)."""
    assert _training_refusal(catalog, **changes).startswith(line)


def test_training_economics_it_reads_are_accepted(catalog: Catalog) -> None:
    data = copy.deepcopy(TRAINING)
    data["economics"] = {"rent_price_scale": 0.5, "resale_frac": 0.3}
    assert parse_training_scenario(data, catalog, path="t.yaml").economics.rent_price_scale == 0.5


def test_an_output_under_a_file_or_at_dev_stdout_is_named(tmp_path: Path) -> None:
    """`-o s.yaml/plan.xlsx` said "folder s.yaml does not exist" (it does: a file); `--json-out /dev/stdout`
    "cannot write under /proc"."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    line = _one_line(["plan", str(scenario), "-o", f"{scenario}/plan.xlsx"])
    assert line == f"error: -o {scenario}/plan.xlsx: {scenario} is a file, not a folder — choose a path in a folder"
    line = _one_line(["catalog", "gpus", "--json-out", "/dev/stdout"])
    assert line == "error: --json-out /dev/stdout: not standard output here — to print the JSON on stdout, use --json"


@pytest.mark.parametrize(
    ("workload", "line"),
    [
        ({"gpus": ["l40s"]}, "workloads[0].gpus: unknown field — gpus is a field of hardware: move it under the top-level `hardware:`"),
        ({"rtt_ms": 5}, "workloads[0].rtt_ms: unknown field — rtt_ms is a field of sites: move it under the top-level `sites:`"),
        ({"input_token": 5}, "workloads[0].input_token: unknown field — did you mean input_tokens?"),  # a typo stays one
    ],
)  # fmt: skip
def test_a_top_level_sections_field_written_in_a_workload_is_named(workload: dict[str, Any], line: str) -> None:
    """A per-workload `gpus:` got "unknown field — valid values: disaggregation, engine, ..."."""
    assert _refusal(starter(workload)) == f"s.yaml: {line}"


def test_entries_keyed_by_name_get_the_list_form() -> None:
    """`workloads: {chat: {...}}` and `workloads: [chat]` said "expected a list (got a mapping)" / "expected a
    mapping (got 'chat')" and no more; an inventory (entries without a name) gets no `- name:` advice."""
    chat = starter()["workloads"][0]
    keyed = starter(workloads={"chat": {k: v for k, v in chat.items() if k != "name"}})
    assert _refusal(keyed) == (
        "s.yaml: workloads: expected a list (got a mapping) — one entry per item: write `- name: chat` with its "
        "fields indented under it"
    )
    assert _refusal(starter(workloads=["chat"])) == (
        "s.yaml: workloads[0]: expected a mapping (got 'chat') — an entry is `- name: chat` with its fields "
        "indented under it"
    )
    assert _refusal(starter(inventory=["h100_sxm"])) == "s.yaml: inventory[0]: expected a mapping (got 'h100_sxm')"


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ({"workloads": ["chat\nbot"]}, "workloads[0]: expected a mapping (got 'chat\\nbot') — an entry is `- name: 'chat\\nbot'` with its fields indented under it"),
        ({"workloads": {"chat\nbot": {}}}, "workloads: expected a list (got a mapping) — one entry per item: write `- name: 'chat\\nbot'` with its fields indented under it"),
        ({"horizon\nmonths": 12}, "'horizon\\nmonths': unknown field"),
    ],
)  # fmt: skip
def test_text_holding_a_newline_is_quoted_escaped(change: dict[str, Any], line: str) -> None:
    """A name or key with a newline was echoed as written (`- name: chat` + newline + `bot`): the one-line
    refusal became two lines (tests/corpus/test_mutations.py found it; hypothesis reported it as flaky)."""
    assert _refusal({**starter(), **change}).startswith(f"s.yaml: {line}")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["predict", "--model", "chat\nbot", "--gpu", "h100_sxm"], "error: --model: unknown model 'chat\\nbot' — "),
        (["predict", "--model", "\x1b[31mred", "--gpu", "h100_sxm"], "error: --model: unknown model '\\x1b[31mred' — "),
        (["plan", "a\nb.yaml"], "error: a\\nb.yaml: scenario file not found"),
        (["predict", "--model", "llama_3_1_8b", "--gpu", "h100_sxm", "--batch", "8\t16"], "error: Invalid value for '--batch': '8\\t16' is not a whole number"),
    ],
)  # fmt: skip
def test_an_option_holding_a_newline_or_escape_code_is_one_error_line(args: list[str], line: str) -> None:
    """`--model $'chat\\nbot'` printed "unknown model 'chat" and "bot' — ..." on two lines, and an escape code in a
    value reached the terminal; click's own quoting ('8\\t16') was escaped twice ('8\\\\t16')."""
    assert _one_line(args).startswith(line)


@pytest.mark.parametrize(
    ("written", "meant"),
    [("awq", "int4"), ("AWQ", "int4"), ("Q4_K_M", "int4"), ("w8a8", "int8"), ("fp8_e4m3", "fp8")],
)
def test_a_quantization_method_gets_its_storage_format(catalog: Catalog, written: str, meant: str) -> None:
    """`quantizations: [awq]` listed the valid values; AWQ/GPTQ/Q4_K_M store 4-bit weights (int4), W8A8 int8."""
    from planner.scenario import validate_against_catalog

    data = starter({"quantizations": [written]})
    with pytest.raises(ScenarioError) as err:
        validate_against_catalog(parse_scenario(data, path="s.yaml", catalog=catalog), catalog, "s.yaml")
    assert str(err.value).startswith("s.yaml: workloads[0].quantizations[0]: ")
    assert str(err.value).endswith(f" — did you mean {meant}?")


def test_an_empty_file_points_at_the_starter(catalog: Catalog) -> None:
    """A file of comments only said "expected a mapping at the top level" and nothing to do about it."""
    assert _refusal(None) == (  # type: ignore[arg-type]
        "s.yaml: expected a mapping at the top level (the file is empty or only comments — `planner init FILE` "
        "writes a starter scenario)"
    )
    with pytest.raises(ScenarioError) as err:
        parse_training_scenario(None, catalog, path="t.yaml")
    assert str(err.value).endswith("— `planner init FILE --kind training` writes a starter)")
    assert _refusal(["a"]) == "s.yaml: expected a mapping at the top level"  # type: ignore[arg-type]


def test_a_fraction_option_given_as_a_percentage_gets_the_fraction() -> None:
    """`--prefix-hit-frac 50` said "must be at most 1, not 50" (the scenario field says "write 0.5 for 50 %")."""
    line = _one_line(["predict", "--model", "llama_3_1_8b", "--gpu", "h100_sxm", "--prefix-hit-frac", "50"])
    assert "Invalid value for '--prefix-hit-frac': must be at most 1, not 50 — a fraction: write 0.5 for 50 %" in line


def test_a_count_with_a_word_after_it_is_not_sent_to_the_field_name() -> None:
    """`count: 8 GPUs` got "(the unit is in the field name)"; `count` names no unit."""
    data = starter(inventory=[{"gpu": "h100_sxm", "count": "8 GPUs", "site": "dc1"}])
    assert _refusal(data) == "s.yaml: inventory[0].count: expected a whole number (got '8 GPUs') — write 8 (no unit)"


def test_unusable_spot_with_gpus_bought_or_owned_is_left_to_the_plan() -> None:
    """Buying or an inventory may still serve the demand: only a scenario with no GPU at all is refused."""
    for extra in ({"procurement": ["rent", "buy"]}, {"inventory": [{"gpu": "l40s", "count": 1, "site": "dc1"}]}):
        data = starter(rental_kinds=["spot"], economics={"spot_availability_frac": 0}, **extra)
        assert parse_scenario(data, path="s.yaml").economics.spot_availability_frac == 0


@pytest.mark.parametrize(
    ("models", "ep", "line"),
    [
        (["qwen3_235b_a22b"], [3], "hardware.ep[0]: EP 3 fits no workload's MoE model with hardware.tp [1, 2, 4, 8] (ep must divide the expert count and tp × ep be one of hardware.tp) — use ep: [1, 2, 4, 8]"),
        (["qwen3_8b"], [1, 8], "hardware.ep[1]: EP 8 fits no workload's MoE model with hardware.tp [1, 2, 4, 8] (ep must divide the expert count and tp × ep be one of hardware.tp) — leave ep out (no listed model is a mixture of experts)"),
    ],
)  # fmt: skip
def test_an_ep_degree_no_model_can_use_is_refused(catalog: Catalog, models: list[str], ep: list[int], line: str) -> None:
    """`ep: [3]` for 128 experts planned with tensor parallelism only, silently ($6.20M where EP gives $5.89M)."""
    from planner.scenario import validate_against_catalog

    data = starter({"models": models}, hardware={"gpus": ["h200_sxm"], "tp": [1, 2, 4, 8], "ep": ep})
    with pytest.raises(ScenarioError) as err:
        validate_against_catalog(parse_scenario(data, path="s.yaml"), catalog, "s.yaml")
    assert str(err.value) == f"s.yaml: {line}"
    data["hardware"]["ep"] = [1, 8] if models == ["qwen3_235b_a22b"] else [1]
    validate_against_catalog(parse_scenario(data, path="s.yaml"), catalog, "s.yaml")


def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path: Path) -> None:
    """A 300-byte file name was "internal error: OSError: [Errno 36] File name too long", exit 4."""
    long = tmp_path / ("a" * 300)
    assert _one_line(["init", f"{long}.yaml"]) == f"error: {long}.yaml: File name too long — choose another name"
    line = _one_line(["catalog", "gpus", "--json-out", f"{long}.json"])
    assert line == f"error: --json-out {long}.json: File name too long — choose another path"
    assert list(tmp_path.iterdir()) == []


def test_a_gpu_id_in_capitals_gets_the_ids_it_begins(tmp_path: Path) -> None:
    # hardware.gpus: [A100] was answered "did you mean a10g?" (the id-form check's closest match)
    from planner.errors import suggest_id

    gpus = ["a100_pcie_80gb", "a100_sxm_80gb", "a10g", "h100_sxm"]
    assert suggest_id("A100", gpus) == " — did you mean a100_pcie_80gb or a100_sxm_80gb?"
    assert suggest_id("H100-SXM", gpus) == " — did you mean h100_sxm?"
    assert suggest_id("NVIDIA A10G", gpus) == " — did you mean a10g?"  # the vendor's name, as before


@pytest.mark.parametrize(
    ("field", "text", "hint"),
    [
        ("seq_len_tokens", "4k", "— write 4096 (4k as a sequence length: 4 × 1024) or 4000 (4 × 1,000) as a plain number"),
        ("training_tokens", "100B", "— write 100000000000 (a plain number)"),  # B: no binary reading
    ],
)  # fmt: skip
def test_a_sequence_length_in_k_names_both_readings(catalog: Catalog, field: str, text: str, hint: str) -> None:
    """`seq_len_tokens: 4k` said "write 4000": a user copying a model card's 4k context (4,096 tokens) trained
    on 4,000-token sequences. A sequence length's k is 1024 by convention, a count's 1000: both are named, the
    field's first, and nothing is read with a suffix, so the number written is the one used."""
    assert _training_refusal(catalog, **{field: text}).endswith(f"(got '{text}') {hint}")
