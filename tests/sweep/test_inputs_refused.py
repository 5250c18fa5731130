"""`planner sweep` / `planner compare` as a demanding user runs them: odd --vary inputs and output paths
are exit 2 with one line and nothing written, a shared-GPU plan reads as shared, and the compare texts say
what the numbers say. No MILP is solved here except two one-second chat plans for the compare workbook."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.compare_recommend import recommend
from planner.errors import InputError
from planner.readout.sweep import Choice, format_gpus
from planner.sweep.engine import DaskEngine
from planner.sweep.spec import MAX_VARIANTS, Axis, Variant, parse_axis, variants
from planner.sweep.task import row_from_plan
from tests.sweep.helpers import CHAT, chat_sweep, sweep_app


def _sweep(scenario: Path, *args: str) -> Any:
    return CliRunner().invoke(sweep_app(), ["sweep", str(scenario), "--workers", "1", *args])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------------------------------
# --vary values and paths
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option", ["workloads.chat.requests_per_s=,", "workloads.chat.requests_per_s= , ", "hardware.gpus=+"]
)
def test_a_vary_without_any_value_is_refused(option: str) -> None:
    """An empty value list used to make a sweep of 0 variants that printed an empty table and exited 0."""
    with pytest.raises(InputError, match="no value given"):
        parse_axis(option)


@pytest.mark.parametrize(
    ("vary", "shown"),
    [
        ("workloads.chat.requests_per_s=4,8,4", "4"),
        ("workloads.chat.requests_per_s=4,4.0", "4.0"),  # 4 == 4.0: the same plan twice
        ("hardware.gpus=b200,h100_sxm,b200", "b200"),
        ("hardware.gpus=b200,b200+", "b200"),  # 'b200' and ['b200'] are the same one-element list
    ],
)
def test_a_value_given_twice_is_refused(catalog: Catalog, vary: str, shown: str) -> None:
    """Two variants with one resume key: the second row would overwrite the first on --resume."""
    with pytest.raises(InputError) as info:
        chat_sweep(catalog, [vary])
    assert f"the value {shown} is given twice" in str(info.value)
    assert "\n" not in str(info.value)


def test_zip_has_the_same_variant_limit_as_grid() -> None:
    n = MAX_VARIANTS + 1
    with pytest.raises(InputError, match=f"{n:,} variants is over the limit"):
        variants([Axis("x", tuple(range(n))), Axis("y", tuple(range(n)))], "zip")
    assert len(variants([Axis("x", (1, 2)), Axis("y", (3, 4))], "zip")) == 2


@pytest.mark.parametrize(
    ("vary", "message"),
    [
        ("workloads.chat=1", "workloads.chat: that is a record (Workload), not a value"),
        ("economics=1", "economics: that is a record (Economics), not a value"),
        ("workloads.chat.slo=5", "workloads.chat.slo.ttft_ms"),
        ("workloads=1", "vary a field of one of them by its name, e.g. workloads.NAME."),
        ("inventory=1", "a sweep cannot vary it"),
        # was an internal TypeError, exit 4
        ("inventory.count=1", "inventory is a list of records without names"),
        (
            "economics.rent_volume_tiers.min_gpus=8",
            "economics.rent_volume_tiers is a list of records without names",
        ),
    ],
)
def test_a_path_to_a_record_names_its_fields(catalog: Catalog, vary: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        chat_sweep(catalog, [vary])
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_an_optional_record_may_still_be_left_out_with_null(catalog: Catalog) -> None:
    sweep = chat_sweep(catalog, ["workloads.chat.speculative=null"])
    assert sweep.variant_data(sweep.variants[0])["workloads"][0]["speculative"] is None


# --------------------------------------------------------------------------------------------------
# Output paths: refused before anything is solved, nothing written
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    shutil.copy(CHAT, path)
    return path


def test_json_out_over_the_scenario_is_refused_and_the_scenario_kept(scenario: Path) -> None:
    """It used to solve the sweep and write its JSON over the scenario file."""
    before = _digest(scenario)
    res = _sweep(scenario, "--vary", "economics.rent_price_scale=1,2", "--json-out", str(scenario))
    assert res.exit_code == 2
    assert "refusing to write over a YAML file" in res.output and len(res.output.strip().splitlines()) == 1
    assert _digest(scenario) == before


@pytest.mark.parametrize("option", ["--json-out", "--resume"])
def test_a_yaml_output_is_refused(scenario: Path, option: str) -> None:
    target = scenario.parent / "rows.yaml"
    res = _sweep(scenario, "--vary", "economics.rent_price_scale=1,2", option, str(target))
    assert res.exit_code == 2 and not target.exists()


def test_resume_and_json_out_on_one_file_is_refused(scenario: Path) -> None:
    """--json-out replaced the resume rows with one JSON document; the next --resume then failed on line 1."""
    rows = scenario.parent / "rows.jsonl"
    res = _sweep(
        scenario, "--vary", "economics.rent_price_scale=1,2", "--resume", str(rows), "--json-out", str(rows)
    )
    assert res.exit_code == 2 and "names the same file" in res.output
    assert not rows.exists()


@pytest.mark.parametrize(
    ("where", "message"), [("missing/rows.jsonl", "does not exist"), (".", "is a directory")]
)
def test_a_resume_path_that_cannot_be_written_is_exit_2(scenario: Path, where: str, message: str) -> None:
    """A resume file in a missing folder, or a folder, was an internal error (exit 4)."""
    res = _sweep(
        scenario, "--vary", "economics.rent_price_scale=1,2", "--resume", str(scenario.parent / where)
    )
    assert res.exit_code == 2 and message in res.output
    assert not (scenario.parent / "missing").exists()


@pytest.mark.parametrize(
    ("address", "message"), [("tcp://", "missing port"), ("tcp://foo:bar:baz", "invalid address")]
)
def test_a_malformed_dask_address_is_an_input_error(address: str, message: str) -> None:
    """It was an internal error (exit 4) followed by a 20 s hang and a traceback from the client's clean-up."""
    with pytest.raises(InputError, match=message), DaskEngine(address).session(None):  # type: ignore[arg-type]
        pass


# --------------------------------------------------------------------------------------------------
# Shared GPUs in a row
# --------------------------------------------------------------------------------------------------


def _deployment(workload: str, gpu: str, gpus: float, share: float) -> dict[str, Any]:
    return {
        "workload": workload,
        "model": "qwen3_8b",
        "gpu": gpu,
        "tp": 1,
        "pp": 1,
        "ep": 1,
        "quantization": "bf16",
        "replicas": 1,
        "site": "us_east",
        "role": "colocated",
        "gpus": gpus,
        "gpu_share_frac": share,
    }


def test_two_half_gpu_replicas_read_as_one_shared_gpu() -> None:
    plan = {
        "deployments": [_deployment("a", "l40s", 0.5, 0.5), _deployment("b", "l40s", 0.5, 0.5)],
        "infeasibility": [],
        "status": "optimal",
        "gap": None,
        "total_cost_usd": 12096.0,
        "capex_usd": 0.0,
        "opex_usd_per_month": 1008.0,
        "cost_usd_per_million_output_tokens": 5.0,
        "binding_constraints": [],
        "solve_seconds": 0.1,
        "total_seconds": 0.2,
        "served_scale": None,
    }
    variant = Variant(0, (("x", 1),))
    row = row_from_plan(variant, plan)
    assert row.gpus_by_type == {"l40s": 1.0}
    assert format_gpus(row.gpus_by_type) == "1×l40s"  # was '1.0×l40s'
    assert [c.gpu_share_frac for c in row.choices] == [0.5, 0.5]
    # was '1× l40s TP1xPP1 bf16 at us_east' twice: read as two GPUs
    assert row.choices[0].label == "1× l40s TP1xPP1 bf16 at us_east (0.5 GPU each)"
    assert Choice("a", "m", "b200", 2, 1, "fp8", 3).label == "3× b200 TP2xPP1 fp8"
    assert format_gpus({"b200": 2, "l40s": 0.25}) == "2×b200 0.25×l40s"


# --------------------------------------------------------------------------------------------------
# compare: the recommendation's words
# --------------------------------------------------------------------------------------------------


def _option(cost: float, capex: float = 0.0, feasible: bool = True) -> Any:
    return SimpleNamespace(feasible=feasible, total_cost_usd=cost, capex_usd=capex)


def test_a_buy_only_tie_is_simpler_because_it_rents_nothing() -> None:
    """It said 'buy_only ... is simpler (it buys nothing)' of the option that buys everything."""
    best, reason = recommend(
        {"buy_only": _option(100, 50), "rent_only": _option(0, feasible=False), "hybrid": _option(100, 50)}
    )
    assert best == "buy_only"
    assert reason == "buy_only costs the same as hybrid and is simpler (it rents nothing)"
    best, reason = recommend(
        {"buy_only": _option(0, feasible=False), "rent_only": _option(100), "hybrid": _option(100)}
    )
    assert (best, reason) == (
        "rent_only",
        "rent_only costs the same as hybrid and is simpler (it buys nothing)",
    )


def test_a_cheaper_hybrid_that_buys_nothing_gives_no_negative_saving() -> None:
    best, reason = recommend(
        {"buy_only": _option(0, feasible=False), "rent_only": _option(100), "hybrid": _option(90)}
    )
    assert best == "rent_only" and "$-" not in reason and "hybrid at $90, buys nothing" in reason
    best, reason = recommend(
        {"buy_only": _option(120, 50), "rent_only": _option(100), "hybrid": _option(90, 10)}
    )
    assert reason == "hybrid is cheapest: $90 over the horizon, $10 (10.0%) less than rent_only"


def test_compare_workbook_states_the_reason_and_its_chart_leaves_the_note_readable(
    catalog: Catalog, tmp_path: Path
) -> None:
    from planner.plan import plan
    from planner.readout.comparison import Comparison
    from planner.report.compare_workbook import REASON_LABEL, write_compare_outputs
    from planner.scenario import load_scenario
    from tests.report.workbook_io import find_row

    scenario = load_scenario(CHAT, catalog)
    rent = plan(catalog, scenario, with_alternatives=False)
    buy = plan(catalog, scenario.model_copy(update={"procurement": ["buy"]}), with_alternatives=False)
    reason = "buying is not possible: no site of the workloads is a datacenter"
    comparison = Comparison(
        {"buy_only": buy, "rent_only": rent, "hybrid": rent}, "rent_only", None, [], reason
    )
    path = tmp_path / "compare.xlsx"
    write_compare_outputs(comparison, workbook=path, plots_dir=None)
    wb = load_workbook(path)
    assert find_row(wb["Summary"], REASON_LABEL)[1].value == reason  # the terminal's and the JSON's reason
    options = wb["Options"]
    # the note starts past column A, which every printed page repeats (it printed again there, clipped)
    note_rows = [c.row for c in options["B"] if isinstance(c.value, str) and c.value.startswith(("Each", "resale", "end"))]
    assert note_rows and not any(isinstance(c.value, str) and c.value.startswith("Each") for c in options["A"])
    (chart,) = options._charts
    # anchor rows are 0-based: the chart starts below the note's last line (it covered it)
    assert chart.anchor._from.row + 1 > max(note_rows)
