"""The command line as a user meets it: one JSON convention, escaped user text, exit codes, basics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples/chat_70b_cloud/scenario.yaml"
runner = CliRunner()


def _scenario(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load(CHAT.read_text())
    data.update(changes)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


# --- 1. one JSON convention -------------------------------------------------------------------------


def test_plan_json_flag_prints_only_json_and_json_out_writes_the_same(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    res = runner.invoke(app, ["plan", str(CHAT), "--json", "--json-out", str(target), "--no-alternatives"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)  # stdout is exactly one JSON document
    assert json.loads(target.read_text()) == printed
    assert printed["status"] == "optimal" and printed["deployments"]
    assert f"wrote {target}" in res.stderr


def test_json_out_refuses_the_scenario_file_and_yaml(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    before = scenario.read_bytes()
    res = runner.invoke(app, ["plan", str(scenario), "--json-out", str(scenario)])
    assert res.exit_code == 2 and "YAML" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    copy = tmp_path / "s.json"
    copy.write_text("{}")
    res = runner.invoke(app, ["compare", str(scenario), "--json-out", str(tmp_path / "other.yml")])
    assert res.exit_code == 2
    assert scenario.read_bytes() == before and copy.read_text() == "{}"


def test_json_out_refuses_an_input_file_whatever_its_name(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"  # a scenario saved under a .json name is still an input
    scenario.write_text(CHAT.read_text())
    res = runner.invoke(app, ["plan", str(scenario), "--json-out", str(scenario)])
    assert res.exit_code == 2 and "input file" in res.stderr
    assert scenario.read_text() == CHAT.read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["catalog", "gpus", "h100_sxm"],
        ["catalog", "prices", "h100_sxm"],
        ["catalog", "interconnects"],
        ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm"],
        ["schema"],
    ],
)
def test_every_command_takes_json_and_json_out(tmp_path: Path, args: list[str]) -> None:
    target = tmp_path / "out.json"
    res = runner.invoke(app, [*args, "--json", "--json-out", str(target)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == json.loads(target.read_text())


def test_schema_prints_json_by_default() -> None:
    res = runner.invoke(app, ["schema"])
    assert res.exit_code == 0 and "horizon_months" in json.loads(res.stdout)["properties"]


def test_schema_describes_every_field() -> None:
    """`planner schema` promises every field with its meaning: 30 had none (budget lines, site overrides,
    inventory, volume tiers, the scenario's objective and sections)."""
    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    models = [("Scenario", schema), *schema["$defs"].items()]
    bare = [f"{name}.{field}" for name, model in models for field, spec in model.get("properties", {}).items()
            if not spec.get("description")]
    assert bare == []


def test_schema_states_the_defaults_made_by_a_factory() -> None:
    """procurement, rental_kinds, hardware.tp/pp and the default sections had no ``default`` in the schema
    (pydantic leaves out a default_factory's value)."""
    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    props, hardware = schema["properties"], schema["$defs"]["HardwareSpace"]["properties"]
    assert props["procurement"]["default"] == ["rent"] and props["rental_kinds"]["default"] == ["on_demand"]
    assert props["sites"]["default"] == [] and props["inventory"]["default"] == []
    assert hardware["tp"]["default"] == [1, 2, 4, 8] and hardware["pp"]["default"] == [1, 2]
    assert props["hardware"]["default"]["gpu_share_fracs"] == [0.5, 0.25]
    assert props["economics"]["default"]["resale_frac"] == 0.5


# --- 2. user text is data, not markup ----------------------------------------------------------------


def test_square_brackets_in_a_scenario_name_survive(tmp_path: Path) -> None:
    path = _scenario(tmp_path, name="chat plan [draft] v2")
    res = runner.invoke(app, ["plan", str(path), "--no-alternatives"])
    assert res.exit_code == 0, res.output
    assert "chat plan [draft] v2" in res.stdout


def test_error_text_with_an_id_pattern_is_printed_verbatim() -> None:
    from planner.cli.common import fail
    from planner.errors import InputError

    pattern = "^[a-z0-9]+(_[a-z0-9]+)*$"

    def boom() -> None:
        fail(InputError(f"ids match {pattern}"))

    import typer

    probe = typer.Typer()
    probe.command()(boom)
    res = runner.invoke(probe, [])
    assert res.exit_code == 2 and pattern in res.stderr


# --- 3. predict refuses configurations that cannot run -----------------------------------------------


def test_predict_tp_that_does_not_split_the_heads_exits_3() -> None:
    res = runner.invoke(app, ["predict", "--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "3"])
    assert res.exit_code == 3
    assert "64 attention heads" in res.stderr and "8 KV heads" in res.stderr and not res.stdout


def test_predict_that_does_not_fit_exits_3_and_force_shows_the_numbers() -> None:
    args = ["predict", "--model", "llama_3_1_70b", "--gpu", "rtx_4090"]
    res = runner.invoke(app, args)
    assert res.exit_code == 3 and "GB per GPU" in res.stderr and not res.stdout
    forced = runner.invoke(app, [*args, "--force", "--json"])
    assert forced.exit_code == 0
    data = json.loads(forced.stdout)
    assert data["fits"] is False and data["max_batch"] == 0 and data["memory_per_gpu_gb"] > 24


def test_predict_site_needs_a_load_and_a_known_site() -> None:
    """``--site`` adds the site's network time to TTFT under load: without --requests-per-s, or with an unknown
    site, exit 2 with one line naming the option (and a valid site)."""
    base = ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--site"]
    alone = runner.invoke(app, [*base, "us_east"])
    assert alone.exit_code == 2 and "--site" in alone.stderr and "--requests-per-s" in alone.stderr
    assert not alone.stdout
    typo = runner.invoke(app, [*base, "us_eats", "--requests-per-s", "1"])
    assert typo.exit_code == 2 and "unknown site 'us_eats'" in typo.stderr and "us_east" in typo.stderr
    assert "Traceback" not in typo.stderr and len(typo.stderr.strip().splitlines()) == 1
    for option, value, why in (("--ttft-percentile", "80", "one of 50, 90, 95, 99 (got 80)"),
                               ("--tpot-percentile", "90", "--requests-per-s")):
        bad = runner.invoke(app, [*base[:-1], option, value])
        assert bad.exit_code == 2 and option in bad.stderr and why in bad.stderr and not bad.stdout
    ok = runner.invoke(app, [*base, "us_east", "--requests-per-s", "1", "--json"])
    assert ok.exit_code == 0
    data = json.loads(ok.stdout)
    assert data["site"] == "us_east" and data["at_load"]["network_ms"] > 0


def test_predict_network_options_replace_the_sites_figures() -> None:
    """``--rtt-ms`` / ``--uplink-mbit-per-s`` (a scenario's ``sites:`` entry) replace the site's round trip and
    uplink; without ``--site`` both are needed. T_net = RTT + 8·P·b/U: us_east (15 ms, 100 Mbit/s) → 80 ms
    adds 65 ms; with an uplink of 1 Mbit/s the 2,048-token prompt's upload is 100x the 100 Mbit/s one."""
    base = ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "1", "--json"]

    def network_ms(*extra: str) -> float:
        res = runner.invoke(app, [*base, *extra])
        assert res.exit_code == 0, res.stderr
        return float(json.loads(res.stdout)["at_load"]["network_ms"])

    site = network_ms("--site", "us_east")
    upload = site - 15.0
    assert network_ms("--site", "us_east", "--rtt-ms", "80") == pytest.approx(site + 65.0, rel=1e-12)
    assert network_ms("--site", "us_east", "--uplink-mbit-per-s", "1") == pytest.approx(15.0 + 100 * upload, rel=1e-9)
    assert network_ms("--rtt-ms", "15", "--uplink-mbit-per-s", "100") == pytest.approx(site, rel=1e-12)
    for extra, why in (
        (["--rtt-ms", "15"], "--rtt-ms: without --site, give --uplink-mbit-per-s too"),
        (["--uplink-mbit-per-s", "100"], "--uplink-mbit-per-s: without --site, give --rtt-ms too"),
        (["--site", "us_east", "--uplink-mbit-per-s", "0"], "--uplink-mbit-per-s: must be in (0, 1e+07]"),
        (["--site", "us_east", "--rtt-ms", "70000"], "--rtt-ms: must be in [0, 60000] ms"),
        (["--site", "us_east", "--rtt-ms", "nan"], "finite"),
    ):
        res = runner.invoke(app, [*base, *extra])
        assert res.exit_code == 2 and why in res.stderr and not res.stdout, (extra, res.stderr)
        assert "Traceback" not in res.stderr
    unloaded = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--rtt-ms", "5"])
    assert unloaded.exit_code == 2 and "--rtt-ms acts on a replica under load" in unloaded.stderr
    shown = runner.invoke(app, [*base[:-1], "--site", "us_east", "--rtt-ms", "80"])
    assert shown.exit_code == 0 and "us_east, RTT 80 ms" in shown.stdout


def test_predict_optimizations_come_in_pairs_and_only_where_the_plan_would_deploy_them() -> None:
    """The prefix cache needs --prefix-hit-frac and --prefix-tokens, speculation --draft-model and
    --acceptance-frac (exit 2 naming the missing one); a draft that does not pay, or has another tokenizer, is
    one the planner never deploys: exit 3 with card 3's reason."""
    base = ["predict", "--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "2", "--quant", "fp8",
            "--requests-per-s", "1"]
    for extra, why in (
        (["--prefix-tokens", "100"], "--prefix-tokens: the prefix cache needs --prefix-hit-frac too"),
        (["--acceptance-frac", "0.5"], "--acceptance-frac: speculative decoding needs --draft-model too"),
        (["--prefix-tokens", "3000", "--prefix-hit-frac", "0.5"], "exceeds --input-tokens 2048"),
        (["--draft-model", "llama_3_1_8x", "--acceptance-frac", "0.5"], "did you mean llama_3_1_8b"),
        (["--prefix-tokens", "100", "--prefix-hit-frac", "1.5"], "must be at most 1"),
    ):
        res = runner.invoke(app, [*base, *extra])
        assert res.exit_code == 2 and why in res.stderr and not res.stdout, (extra, res.stderr)
    for draft, acceptance, why in (("llama_3_1_8b", "0.05", "tokens/round ≤"), ("qwen3_8b", "0.7", "tokenizer")):
        res = runner.invoke(app, [*base, "--draft-model", draft, "--acceptance-frac", acceptance])
        assert res.exit_code == 3 and why in res.stderr and "never turns it on" in res.stderr and not res.stdout
    ok = runner.invoke(app, [*base, "--draft-model", "llama_3_1_8b", "--acceptance-frac", "0.7", "--json"])
    assert ok.exit_code == 0
    assert json.loads(ok.stdout)["at_load"]["tokens_per_round"] == pytest.approx(1 + 0.7 + 0.7**2 + 0.7**3 + 0.7**4)


def test_predict_warns_when_the_load_overloads_the_replica() -> None:
    """An offered load above what the replica sustains printed exploding figures (2.6e14 running sequences)
    with only ``stable False`` to tell: a warning names the load it saturates at."""
    res = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "50"])
    assert res.exit_code == 0
    assert "warning: 50 requests/s overloads this replica: it sustains about 10.2 requests/s" in " ".join(
        res.stderr.split()
    )
    as_json = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "50", "--json"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["at_load"]["stable"] is False
    assert "overloads this replica" in as_json.stderr  # the warning is on stderr with --json too
    calm = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "5"])
    assert calm.exit_code == 0 and "overloads" not in calm.stderr


def test_predict_batch_limit_counts_the_engines_running_sequence_cap() -> None:
    """``--engine 'vllm[max_running_sequences=16]'`` served at the capped batch but reported batch_limit 157
    (the memory fit): the same figures as ``--max-batch 16``."""
    base = ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "5.5", "--json"]
    engine = json.loads(runner.invoke(app, [*base, "--engine", "vllm[max_running_sequences=16]"]).stdout)["at_load"]
    capped = json.loads(runner.invoke(app, [*base, "--max-batch", "16"]).stdout)["at_load"]
    assert engine["batch_limit"] == capped["batch_limit"] == 16
    assert engine["saturation_requests_per_s"] == pytest.approx(capped["saturation_requests_per_s"])


def test_head_split_rule() -> None:
    from planner.head_split import head_split_problems

    assert head_split_problems(64, 8, 8, mla=False) == []
    assert head_split_problems(64, 8, 16, mla=False) == []  # KV heads replicated twice
    assert len(head_split_problems(64, 8, 3, mla=False)) == 2
    assert head_split_problems(128, 1, 4, mla=True) == []


# --- 4. validate-model never overwrites reports without data -----------------------------------------


def test_validate_model_without_measurements_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    res = runner.invoke(app, ["validate-model", "--measurements", str(tmp_path / "none"), "--out", str(out)])
    assert res.exit_code == 2 and "--measurements" in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(app, ["validate-model", "--measurements", str(empty), "--out", str(out)])
    assert res.exit_code == 2 and "no .csv" in res.stderr
    assert not out.exists()


# --- 6. CLI basics -----------------------------------------------------------------------------------


def test_version_and_completion() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("planner ")
    assert "--install-completion" in runner.invoke(app, ["--help"]).stdout


def test_usage_mistakes_are_one_line() -> None:
    for args in (["plan", str(CHAT), "--bogus"], ["plan"], ["predict", "--gpu", "h100_sxm"], ["nope"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, args
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and "--help" in lines[0], res.stderr


def test_a_mistyped_command_gets_did_you_mean() -> None:
    """The commands are built lazily; typer's suggestion only knew the built ones (``planner plna``: none)."""
    for typed, meant in (("plna", "'plan'"), ("swep", "'sweep'"), ("ledgr", "'ledger'"), ("predcit", "'predict'")):
        res = runner.invoke(app, [typed, "x.yaml"])
        assert res.exit_code == 2
        assert f"error: No such command '{typed}'. Did you mean {meant}" in res.stderr, res.stderr
    assert "Did you mean" not in runner.invoke(app, ["zzz"]).stderr


def test_init_writes_a_starter_scenario_that_plans(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    res = runner.invoke(app, ["init", str(path)])
    assert res.exit_code == 0 and f"wrote {path}" in res.stderr
    assert path.read_text().count("#") > 10
    again = runner.invoke(app, ["init", str(path)])
    assert again.exit_code == 2 and "already exists" in again.stderr
    planned = runner.invoke(app, ["plan", str(path), "--json", "--no-alternatives"])
    assert planned.exit_code == 0, planned.output
    assert json.loads(planned.stdout)["status"] == "optimal"


def test_catalog_prices_per_provider_and_region() -> None:
    res = runner.invoke(app, ["catalog", "prices", "h100_sxm", "--json"])
    assert res.exit_code == 0
    rows = json.loads(res.stdout)
    assert rows and all(r["gpu"] == "h100_sxm" for r in rows)
    aws = [r for r in rows if r["provider"] == "aws"]
    assert aws and all(r["regions"] for r in aws)
    assert any("on_demand_usd_per_gpu_hour" in r for r in rows)
    # instance sizes as sold: per-card instances where a quote lists them, else the whole 8-GPU node
    sizes = {tuple(r["gpus_per_instance"]) for r in rows}
    assert (8,) in sizes and any(1 in s for s in sizes)
    table = runner.invoke(app, ["catalog", "prices", "h100_sxm"])
    assert table.exit_code == 0 and "GPUs per" in table.stdout
    assert runner.invoke(app, ["catalog", "prices", "h100sxm"]).exit_code == 2


def test_quiet_keeps_only_errors_and_wrote_lines(tmp_path: Path) -> None:
    """`planner plan X -q -o plan.xlsx` printed the whole plan table; -q now leaves only the 'wrote' line(s)
    and errors, in every command (a table-only command prints nothing; --json still prints its JSON)."""
    path = tmp_path / "s.yaml"
    res = runner.invoke(app, ["--quiet", "init", str(path)])
    assert res.exit_code == 0 and path.exists() and res.stderr == f"wrote {path}\n"
    book = tmp_path / "plan.xlsx"
    res = runner.invoke(app, ["plan", str(CHAT), "--no-alternatives", "-q", "-o", str(book)])
    assert res.exit_code == 0 and book.exists()
    assert res.stdout == "" and res.stderr == f"wrote {book}\n"
    res = runner.invoke(app, ["plan", str(CHAT), "--no-alternatives", "-q", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["status"] == "optimal" and res.stderr == ""
    commands = (
        ["catalog", "gpus"],
        ["ledger", "paging-waste"],
        ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm"],
        ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--tp", "3"],  # exit 3: the reason stays
    )
    for args in commands:
        quiet = runner.invoke(app, [*args, "-q"])
        loud = runner.invoke(app, args)
        assert quiet.exit_code == loud.exit_code and quiet.stdout == ""
        assert quiet.stderr == ("" if loud.exit_code == 0 else loud.stderr)  # an error still says why


@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_global_flags_may_follow_the_command(flag: str) -> None:
    """`planner predict ... -q` reads as `planner -q predict ...` (it was "No such option: -q"); a `-q` after
    `--` stays an argument."""
    from planner.cli.main import global_flags_first

    res = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", flag])
    assert res.exit_code == 0 and res.stdout == ""
    loud = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm"])
    assert loud.exit_code == 0 and "qwen3_8b" in loud.stdout
    assert global_flags_first(["plan", "s.yaml", "-v", "--", "-q"]) == ["-v", "plan", "s.yaml", "--", "-q"]


def test_plan_table_shows_slo_headroom_rentals_and_period_runs() -> None:
    from planner.report.formatting import period_runs_text as runs

    assert runs([1, 1, 1, 2, 3, 3]) == "1×3 2 3×2" and runs([]) == "" and runs([4]) == "4"
    res = runner.invoke(app, ["plan", str(CHAT), "--no-alternatives"])
    assert res.exit_code == 0, res.output
    assert "TTFT/SLO" in res.stdout and "/2000 " in res.stdout  # the chat SLO is 2000 ms
    assert "what to rent (quote paid)" in res.stdout and "/GPU-h" in res.stdout


def test_a_reader_that_stops_early_is_not_an_internal_error() -> None:
    """``planner predict --help | head -40`` printed "internal error: BrokenPipeError" (exit 4) when `head`
    left while the command was still writing: the guard took the closed pipe for a bug. It now passes it to
    typer, which silences the closed stream and exits 1 with no message."""
    import typer

    from planner.cli.guard import GuardedGroup

    demo = typer.Typer(cls=GuardedGroup)

    @demo.command()
    def show() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    @demo.command()
    def other() -> None:
        """A second command, so that ``show`` is a subcommand as planner's commands are."""

    res = CliRunner().invoke(demo, ["show"])
    assert res.exit_code == 1
    assert "internal error" not in res.output


def test_init_kind_training_writes_a_starter_that_trains(tmp_path: Path) -> None:
    path = tmp_path / "training.yaml"
    res = runner.invoke(app, ["init", str(path), "--kind", "training"])
    assert res.exit_code == 0 and path.read_text().startswith("# A starter training scenario")
    trained = runner.invoke(app, ["train", str(path), "--json"])
    assert trained.exit_code == 0, trained.output
    assert json.loads(trained.stdout)["status"] == "optimal"
    wrong = runner.invoke(app, ["init", str(tmp_path / "x.yaml"), "--kind", "train"])
    assert wrong.exit_code == 2 and "use inference or training" in wrong.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_json_has_no_negative_zero() -> None:
    """assistant_8b_edge's residual_value_usd printed -0.0 (a sum of no resale)."""
    from planner.cli.common import json_text

    assert json.loads(json_text({"residual_value_usd": -0.0, "x": [-0.0, 1.5]})) == {"residual_value_usd": 0.0, "x": [0.0, 1.5]}
    assert "-0.0" not in json_text({"residual_value_usd": -0.0})


def test_json_floats_carry_no_rounding_noise() -> None:
    """The figures are sums of products, whose last bits are noise: chat_70b_cloud's plan read
    245721.5999999995 and its tied alternative 245721.60000000003, a balanced flow 13.999999999991699. The JSON
    keeps 12 significant digits (planner.cli.common.JSON_SIGNIFICANT_DIGITS), so both read as they are meant."""
    from planner.cli.common import json_text

    noisy = {"plan": 245721.5999999995, "tie": 245721.60000000003, "flow": 13.999999999991699, "n": 3}
    assert json.loads(json_text(noisy)) == {"plan": 245721.6, "tie": 245721.6, "flow": 14.0, "n": 3}
    kept = {"usd": 812758.437696, "flop": 1.2345678901e26, "s": 3.25e-9, "x": [0.1, 2.5]}
    assert json.loads(json_text(kept)) == kept  # 12 or fewer significant digits come back as they were
    assert json.loads(json_text({"a": 1 / 3}))["a"] == 0.333333333333


def test_ledger_json_is_the_commands_json() -> None:
    """`planner ledger ... --json` renders through the one JSON convention (json_text): rounded floats."""
    res = runner.invoke(
        app, ["ledger", "spec-decode", "--acceptance-frac", "0.7", "--draft-tokens", "4", "--verify-ms", "30", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ms_per_token"] == pytest.approx(30 / 2.7731, rel=1e-9)
    floats = [v for v in data.values() if isinstance(v, float)]
    assert floats and all(v == float(f"{v:.12g}") for v in floats)  # 12 significant digits at most
