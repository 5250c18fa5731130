"""planner/inputs.py (safe YAML), planner/report/files.py (output safety) and planner/cli/guard.py (exit 4)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.errors import InputError, ScenarioError, id_spelling
from planner.inputs import MAX_DEPTH, load_yaml_file, parse_yaml_text, yaml_value
from planner.report.files import atomic_write_text, check_output_dir, check_output_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples/chat_70b_cloud/scenario.yaml"
runner = CliRunner()


def test_yaml_12_floats_and_plain_values() -> None:
    data = parse_yaml_text("a: 1e3\nb: 2.5E-4\nc: 7\nd: '1e3'\ne: -1e2\nf: .inf\n", "x.yaml")
    assert data == {"a": 1000.0, "b": 2.5e-4, "c": 7, "d": "1e3", "e": -100.0, "f": float("inf")}
    assert isinstance(data["c"], int)


def test_yaml_11_traps_are_read_as_yaml_12() -> None:
    """Base-60 (``1:30`` was 90), octal (``010`` was 8) and yes/no/on/off booleans (a site ``no`` was False)."""
    text = "a: 1:30\nb: 010\nc: no\nd: off\ne: yes\nf: true\ng: 1_000\nh: 0x1f\ni: 0o17\nj: 1.\nk: .5\nl: -0.25\n"
    data = parse_yaml_text(text, "x.yaml")
    assert data == {
        "a": "1:30", "b": 10, "c": "no", "d": "off", "e": "yes", "f": True, "g": 1000, "h": 31, "i": 15,
        "j": 1.0, "k": 0.5, "l": -0.25,
    }
    assert yaml_value("1:30") == "1:30" and yaml_value("on") == "on" and yaml_value("False") is False


def test_a_base_60_rate_is_refused_naming_the_field(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(EXAMPLE.read_text().replace("requests_per_s: 8", "requests_per_s: 1:30"))
    assert "1:30" in scenario.read_text()
    result = runner.invoke(app, ["plan", str(scenario)])
    assert result.exit_code == 2
    assert "workloads[0].requests_per_s: expected a number (got '1:30')" in result.output


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(
        ScenarioError, match=r"x.yaml: line 3, column 1: duplicate key 'b' \(first at line 2\)"
    ):
        parse_yaml_text("a: 1\nb: 2\nb: 3\n", "x.yaml", ScenarioError)


def test_merge_keys_and_a_few_aliases_are_fine() -> None:
    text = "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\nd: [*b, *b]\n"
    assert parse_yaml_text(text, "x.yaml")["c"] == {"x": 1, "y": 3}


def test_depth_limit_is_exact() -> None:
    # the top mapping is level 1, its value level 2, so k brackets reach level k + 1
    ok = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse_yaml_text(ok, "x.yaml") is not None
    deep = "a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH
    with pytest.raises(InputError, match=f"nesting deeper than {MAX_DEPTH}"):
        parse_yaml_text(deep, "x.yaml")


def test_not_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"name: ok\nsecond: ab\xffcd\n")
    with pytest.raises(ScenarioError, match=r"s.yaml: line 2, column 11: not UTF-8 text \(byte 0xff\)"):
        load_yaml_file(path, ScenarioError, "scenario")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"\xef\xbb\xbfname: caf\xc3\xa9\n")
    assert load_yaml_file(path) == {"name": "café"}


@pytest.mark.parametrize(
    ("raw", "fixed"), [("us-east", "us_east"), ("H100_SXM", "h100_sxm"), ("Llama 3.1 8B", "llama_3_1_8b")]
)
def test_id_spelling(raw: str, fixed: str) -> None:
    assert id_spelling(raw) == fixed


# --- output paths ------------------------------------------------------------------------------------


def test_read_only_target_is_refused_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("previous")
    os.chmod(target, 0o444)
    with pytest.raises(InputError, match="read-only"):
        atomic_write_text(target, "new")
    assert target.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("/proc/self/x.json", "under /proc"), ("/sys/x.json", "under /sys"), ("/dev/null", "under /dev")],
)
def test_system_paths_are_refused(name: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        check_output_file(Path(name), "--json-out")


def test_directory_and_input_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        check_output_file(tmp_path, "-o")
    source = tmp_path / "in.json"
    source.write_text("{}")
    with pytest.raises(InputError, match="input file"):
        check_output_file(tmp_path / "." / "in.json", "--json-out", [source])
    check_output_file(tmp_path / "new.json", "--json-out", [source])  # a fresh name is fine


def test_plots_dir_checks(tmp_path: Path) -> None:
    check_output_dir(tmp_path / "plots", "--plots")  # created later by the writer
    with pytest.raises(InputError, match="does not exist"):
        check_output_dir(tmp_path / "a" / "plots", "--plots")
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="expected a folder"):
        check_output_dir(tmp_path / "f", "--plots")


_INTERRUPTED_WRITER = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    from planner.cli.guard import sigterm_raises
    from planner.report.files import atomic_write

    target, sig = Path(sys.argv[1]), int(sys.argv[2])
    # Ctrl-C as at a terminal: a test run started in the background by a non-interactive shell inherits
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def writer(tmp):
        tmp.write_text("partial")
        os.kill(os.getpid(), sig)
        time.sleep(30)

    with sigterm_raises():
        atomic_write(target, writer)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_during_write_leaves_previous_output_and_no_temp_file(tmp_path: Path, sig: int) -> None:
    target = tmp_path / "plan.xlsx"
    target.write_text("previous")
    proc = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_WRITER, str(target), str(int(sig))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == (143 if sig == signal.SIGTERM else -signal.SIGINT), proc.stderr
    assert target.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx"]


# --- the CLI's top level -----------------------------------------------------------------------------


def _explode(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("float division by zero")


def test_unexpected_exception_is_exit_4_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("planner.scenario.load_scenario", _explode)
    res = runner.invoke(app, ["plan", str(EXAMPLE)])
    assert res.exit_code == 4
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    assert "internal error: ZeroDivisionError: float division by zero" in lines[0]
    assert "--debug" in lines[0]


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("planner.scenario.load_scenario", _explode)
    res = runner.invoke(app, ["--debug", "plan", str(EXAMPLE)])
    assert res.exit_code == 4
    assert "Traceback" in res.stderr and "_explode" in res.stderr
    res = runner.invoke(app, ["plan", str(EXAMPLE)])  # the flag does not stick to the next run
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize(
    ("exc", "code", "word"), [(KeyboardInterrupt, 130, "interrupted"), (MemoryError, 4, "MemoryError")]
)
def test_interrupt_and_memory_error(
    monkeypatch: pytest.MonkeyPatch, exc: type[BaseException], code: int, word: str
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise exc()

    monkeypatch.setattr("planner.scenario.load_scenario", boom)
    res = runner.invoke(app, ["plan", str(EXAMPLE)])
    assert res.exit_code == code
    assert len(res.stderr.strip().splitlines()) == 1 and word in res.stderr


def test_a_misspelt_required_field_is_one_problem_listed_first(tmp_path: Path) -> None:
    """``nme:`` for ``name:`` and ``model:`` for ``models:``: each is one problem (the unknown field, naming the
    required one it stands for), before the others; no separate "name: required" (it hid the typo behind
    "(and 2 more)")."""
    from planner.catalog import default_catalog
    from planner.errors import ScenarioError
    from planner.scenario import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text(
        "workloads:\n  - nme: chat\n    model: [llama_3_1_8b]\n    requests_per_s: 2\n"
        "    input_tokens: 512\n    output_tokens: 256\n"
    )
    with pytest.raises(ScenarioError) as err:
        load_scenario(path, default_catalog())
    problems = str(err.value).split("; ")
    assert [p.split(": ", 2)[1] for p in problems] == ["workloads[0].nme", "workloads[0].model", "name"]
    assert problems[0].endswith(
        "unknown field — did you mean `name:`? (required: Workload id (lowercase, digits, underscores))"
    )
    assert "did you mean `models:`? (required" in problems[1]
    assert problems[2].endswith("required — add `name:` (Scenario name (free text))")
    assert "workloads[0].name: required" not in str(err.value)


def test_a_second_yaml_document_is_named_with_the_fix() -> None:
    """The parser's 'but found another document' named neither the '---' nor what to do."""
    with pytest.raises(ScenarioError) as err:
        parse_yaml_text("name: a\n---\nname: b\n", "x.yaml", ScenarioError)
    assert str(err.value) == (
        "x.yaml: line 2, column 1: invalid YAML: a second YAML document starts here ('---'); a file holds one — "
        "delete this line and what follows it, or split the file"
    )


def test_a_folder_of_scenario_folders_names_one_of_them(tmp_path: Path) -> None:
    """`planner plan examples` said "is a directory, expected a scenario file" and no more: the folder holds
    scenario folders, not a scenario."""
    from planner.inputs import load_yaml_file

    for name in ("a_case", "b_case"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "scenario.yaml").write_text("name: x\n")
    with pytest.raises(InputError) as err:
        load_yaml_file(tmp_path)
    assert str(err.value).endswith(
        f"is a directory, expected a YAML file — give one scenario file, e.g. {tmp_path / 'a_case' / 'scenario.yaml'}"
        " (or another of its 2 scenario folders)"
    )
