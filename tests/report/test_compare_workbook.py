"""`planner compare -o`: options, each option's ledger cash flow with the crossover, the recommended plan's
sheets.

Recomputed with LibreOffice: option totals, opex, cost per million tokens, the crossover month and the plan
sheets' total must match the options' cost ledgers (rel=1e-9); editing one month's cash out in the file
moves that option's total by the same amount.
"""

from __future__ import annotations

import dataclasses
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.readout.comparison import Comparison
from planner.report import compare_workbook as cmod
from planner.report import workbook as wbmod
from planner.report.charts import COMPARE_CUMULATIVE_PNG, COMPARE_OPTIONS_PNG
from planner.report.workbook_summary import TOTAL_LABEL
from tests.report.conftest import ROOT
from tests.report.workbook_io import SOFFICE, find_row, load_workbook, needs_soffice, recompute

REL = 1e-9
TOTAL = "Total cost (USD, present value)"
INJECT_FLIP = "=renting wins if the rent falls below 0.90× the catalog price"
EDIT_USD = 1000.0
EDIT_MONTH = 5
runner = CliRunner()


@pytest.fixture(scope="module")
def comparison(example_comparisons: dict[str, Comparison]) -> Comparison:
    """buy_vs_rent: buy-only infeasible (lead time), rent-only and hybrid feasible, a crossover month."""
    # Flip-point bisection takes dozens of solves; the sheet only prints the sentences, so inject two.
    return dataclasses.replace(
        example_comparisons["buy_vs_rent"],
        flip_points=[
            {"parameter": "rent_price_scale", "factor": 0.9, "sentence": INJECT_FLIP},
            {
                "parameter": "purchase_price_scale",
                "factor": 1.3,
                "sentence": "renting wins if the purchase price rises",
            },
        ],
    )


@pytest.fixture(scope="module")
def written(comparison: Comparison, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("compare")
    path = folder / "compare.xlsx"
    cmod.write_compare_outputs(comparison, workbook=path, plots_dir=folder / "plots")
    return path


@pytest.fixture(scope="module")
def recomputed(written: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) not installed")
    folder = tmp_path_factory.mktemp("lo_compare")
    base, edited = folder / "compare.xlsx", folder / "edited.xlsx"
    shutil.copy(written, base)
    wb = load_workbook(written)
    cash = wb["CashFlow"]
    col = [c.value for c in cash[1]].index("rent_only cash out (USD)") + 1
    cell = cash.cell(row=EDIT_MONTH + 2, column=col)
    cell.value = float(cell.value) + EDIT_USD
    wb.save(edited)
    rated = folder / "rated.xlsx"
    wb = load_workbook(written)
    find_row(wb["Summary"], "Cost of capital (per year)")[1].value = RATED_FRAC_PER_YEAR
    wb.save(rated)
    out = recompute([base, edited, rated], folder, timeout_s=180)
    yield {name: load_workbook(out / f"{name}.xlsx", data_only=True) for name in ("compare", "edited", "rated")}


RATED_FRAC_PER_YEAR = 0.10


def _option_rows(ws: Any) -> dict[str, dict[str, Any]]:
    rows = {}
    for r in range(2, 2 + len(cmod.OPTION_HEADERS)):
        name = ws.cell(row=r, column=1).value
        if name in ("buy_only", "rent_only", "hybrid"):
            rows[name] = {h: ws.cell(row=r, column=k + 1).value for k, h in enumerate(cmod.OPTION_HEADERS)}
    return rows


# --------------------------------------------------------------------------------------------------
# Structure (openpyxl read-back)
# --------------------------------------------------------------------------------------------------


def test_sheets_compare_first_then_the_recommended_plan(comparison: Comparison, written: Path) -> None:
    wb = load_workbook(written)
    assert comparison.recommendation == "hybrid"
    plan_sheets = [cmod.PLAN_SUMMARY_TITLE, *wbmod.SHEETS[1:]]
    assert wb.sheetnames == [*cmod.COMPARE_SHEETS, *plan_sheets]
    assert [c.value for c in wb["Options"][1]] == cmod.OPTION_HEADERS
    assert "hybrid" in str(wb[cmod.PLAN_SUMMARY_TITLE]["A1"].value)
    # The plan sheets are the hybrid plan's: its supply lines and its deployments.
    hybrid = comparison.options["hybrid"].to_json()
    buy = wb["Supply"]
    assert [buy.cell(row=i + 2, column=3).value for i in range(len(hybrid["supply"]))] == [
        s["kind"] for s in hybrid["supply"]
    ]
    names = [t for ws in wb for t in ws.tables]
    assert len(names) == len({n.lower() for n in names}) and {"tbl_Options", "tbl_CashFlow"} <= set(names)


def test_options_values_and_live_formulas(comparison: Comparison, written: Path) -> None:
    wb = load_workbook(written)
    rows = _option_rows(wb["Options"])
    assert set(rows) == {"buy_only", "rent_only", "hybrid"}
    assert rows["buy_only"]["Status"] == "infeasible" and rows["buy_only"][TOTAL] is None
    assert "purchase lead time" in rows["buy_only"]["Note"]  # the cause in words (planner.optimize.explain)
    hybrid = comparison.options["hybrid"]
    assert hybrid.ledger is not None
    row = rows["hybrid"]
    assert str(row[TOTAL]).startswith("=SUMPRODUCT(CashFlow!") and row["Recommended"] == "yes"
    assert row["Capex (USD)"] == pytest.approx(hybrid.ledger.capex_usd, rel=1e-12)
    assert row["Resale credit (USD)"] == pytest.approx(hybrid.ledger.residual_value_usd, rel=1e-12)
    assert str(row["Opex (USD/month)"]).startswith("=(CashFlow!")
    assert str(row["Cost per million output tokens (USD/Mtok)"]).startswith("=IF(")
    assert row["Output tokens served (Mtok over the horizon)"] == pytest.approx(
        hybrid.ledger.output_tokens / 1e6, rel=1e-12
    )
    assert not [h for h in cmod.OPTION_HEADERS if h.startswith("Other")]
    cash = wb["CashFlow"]
    header = [c.value for c in cash[1]]
    assert header[:2] == ["Month", "Discount factor"] and header[-1] == cmod.BUYING_AHEAD
    col = header.index("hybrid cash out (USD)") + 1
    flow = [cash.cell(row=m + 2, column=col).value for m in range(hybrid.scenario.horizon_months)]
    assert flow == pytest.approx(hybrid.ledger.cash_flow_usd_per_month, rel=1e-12)
    assert flow[-1] < 0  # the resale credit is in the horizon's last month
    assert str(find_row(cash, "Total (USD)")[col - 1].value).startswith("=SUM(")


def test_summary_recommendation_flip_points_and_injection(comparison: Comparison, written: Path) -> None:
    wb = load_workbook(written)
    summary = wb["Summary"]
    text = find_row(summary, "Recommendation")[1].value
    assert (
        "hybrid is the cheapest option" in text
        and "rent_only costs $" in text
        and "buy_only is infeasible" in text
    )
    flip = find_row(summary, "Flip point 1")[1]
    assert flip.value == INJECT_FLIP and flip.data_type == "s"
    assert find_row(summary, "Flip point 2")[1].value.startswith("renting wins")
    assert str(find_row(summary, cmod.CROSSOVER_LABEL)[1].value).startswith("=IFERROR(INDEX(")


def test_native_charts_and_plots(written: Path) -> None:
    with zipfile.ZipFile(written) as z:
        xml = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    lines = [x for x in xml if "<lineChart>" in x and "Cumulative cash by option" in x]
    assert len(lines) == 1 and "crossover: month 35" in lines[0]
    assert "'CashFlow'!$E$2:$E$37" in lines[0] and "'CashFlow'!$F$2:$F$37" in lines[0]  # cumulative
    assert any("Total cost over the horizon by option" in x for x in xml)
    for name in (COMPARE_CUMULATIVE_PNG, COMPARE_OPTIONS_PNG):
        path = written.parent / "plots" / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_options_chart_sits_inside_its_column(written: Path) -> None:
    """Anchored on the edge of column A, which every printed page repeats, LibreOffice printed the chart's left
    border again on the Options sheet's next page (a stray line beside the Note column): it starts 2 mm into
    column B now."""
    with zipfile.ZipFile(written) as z:
        drawings = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/drawings/drawing")]
    options = [x for x in drawings if "<from><col>1</col><colOff>72000</colOff>" in x]
    assert options, "the Options chart is anchored 2 mm (72,000 EMU) into column B"


def test_all_options_infeasible_still_writes(comparison: Comparison, tmp_path: Path) -> None:
    buy_only = comparison.options["buy_only"]
    dead = Comparison({n: buy_only for n in ("buy_only", "rent_only", "hybrid")}, None, None, [])
    path = tmp_path / "dead.xlsx"
    cmod.write_compare_outputs(dead, workbook=path, plots_dir=tmp_path / "plots")
    wb = load_workbook(path)
    assert wb.sheetnames[:3] == list(cmod.COMPARE_SHEETS)
    assert find_row(wb["Summary"], "Recommended option")[1].value == "none"
    assert (tmp_path / "plots" / COMPARE_OPTIONS_PNG).exists()


# --------------------------------------------------------------------------------------------------
# LibreOffice recompute
# --------------------------------------------------------------------------------------------------


@needs_soffice
def test_recomputed_options_match_the_ledgers(comparison: Comparison, recomputed: dict[str, Any]) -> None:
    wb = recomputed["compare"]
    rows = _option_rows(wb["Options"])
    data = {o["name"]: o for o in comparison.to_json()["options"]}
    for name in ("rent_only", "hybrid"):
        got, want = rows[name], data[name]
        assert got[TOTAL] == pytest.approx(want["total_cost_usd"], rel=REL)
        assert got["Opex (USD/month)"] == pytest.approx(want["opex_usd_per_month"], rel=REL)
        assert got["Cost per million output tokens (USD/Mtok)"] == pytest.approx(
            want["cost_usd_per_million_output_tokens"], rel=REL
        )
    hybrid = comparison.options["hybrid"]
    assert hybrid.ledger is not None
    summary = wb["Summary"]
    want_summary = {
        "Recommended option total cost (USD, present value)": hybrid.total_cost_usd,
        "Recommended option capex (USD)": hybrid.ledger.capex_usd,
        "Recommended option opex (USD/month)": hybrid.ledger.opex_usd_per_month,
        "Recommended option cost per million output tokens (USD/Mtok)": hybrid.ledger.cost_usd_per_million_output_tokens,
        "Recommended plan total, live over the Assumptions prices (USD)": hybrid.total_cost_usd,
    }
    for label, value in want_summary.items():
        assert find_row(summary, label)[1].value == pytest.approx(value, rel=REL)
    assert find_row(wb[cmod.PLAN_SUMMARY_TITLE], TOTAL_LABEL)[1].value == pytest.approx(
        hybrid.total_cost_usd, rel=REL
    )
    assert find_row(summary, cmod.CROSSOVER_LABEL)[1].value == comparison.crossover_month == 35
    cash = wb["CashFlow"]
    header = [c.value for c in cash[1]]
    horizon = hybrid.scenario.horizon_months
    for name in ("rent_only", "hybrid"):
        col = header.index(f"{name} cumulative (USD)") + 1
        assert cash.cell(row=horizon + 1, column=col).value == pytest.approx(
            sum(data[name]["cash_flow_usd_per_month"]), rel=REL
        )


@needs_soffice
def test_editing_a_month_moves_the_option_total(comparison: Comparison, recomputed: dict[str, Any]) -> None:
    before = _option_rows(recomputed["compare"]["Options"])["rent_only"]
    after = _option_rows(recomputed["edited"]["Options"])["rent_only"]
    assert after[TOTAL] - before[TOTAL] == pytest.approx(EDIT_USD, rel=1e-6)  # no cost of capital: d = 1
    horizon = comparison.options["rent_only"].scenario.horizon_months
    assert after["Opex (USD/month)"] - before["Opex (USD/month)"] == pytest.approx(
        EDIT_USD / horizon, rel=1e-6
    )
    # Renting is now costlier, so buying is still ahead at the end: the crossover month stays 35.
    assert find_row(recomputed["edited"]["Summary"], cmod.CROSSOVER_LABEL)[1].value == 35


@needs_soffice
def test_one_cost_of_capital_drives_the_options_and_the_plan_sheets(recomputed: dict[str, Any]) -> None:
    """The Summary's cost of capital is the only rate: the recommended plan's sheets (Assumptions) read it, so at
    10 % a year the plan's total equals its option's (there were two inputs; changing one left the other)."""
    wb = recomputed["rated"]
    hybrid = _option_rows(wb["Options"])["hybrid"][TOTAL]
    assert find_row(wb[cmod.PLAN_SUMMARY_TITLE], TOTAL_LABEL)[1].value == pytest.approx(hybrid, rel=REL)
    assert hybrid < _option_rows(recomputed["compare"]["Options"])["hybrid"][TOTAL]  # discounted below 0 %'s


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------


def test_cli_compare_writes_workbook_and_plots(tmp_path: Path) -> None:
    target, plots = tmp_path / "compare.xlsx", tmp_path / "plots"
    result = runner.invoke(
        app,
        [
            "compare",
            str(ROOT / "examples/chat_70b_cloud/scenario.yaml"),
            "--no-flip-points",
            "-o",
            str(target),
            "--plots",
            str(plots),
        ],
    )
    assert result.exit_code == 0, result.output
    wb = load_workbook(target)
    assert wb.sheetnames[:3] == list(cmod.COMPARE_SHEETS)
    assert (plots / COMPARE_CUMULATIVE_PNG).exists() and (plots / COMPARE_OPTIONS_PNG).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.xlsx", "plots"]


@pytest.mark.parametrize(
    ("scenario", "output"),
    [
        ("examples/chat_70b_cloud/scenario.yaml", "compare.txt"),  # not an .xlsx name
        ("examples/no_such_example/scenario.yaml", "compare.xlsx"),  # missing scenario
        ("examples/chat_70b_cloud/scenario.yaml", "missing_folder/compare.xlsx"),
    ],
)
def test_cli_compare_bad_input_exits_2_without_a_file(tmp_path: Path, scenario: str, output: str) -> None:
    target = tmp_path / output
    result = runner.invoke(app, ["compare", str(ROOT / scenario), "--no-flip-points", "-o", str(target)])
    assert result.exit_code == 2, result.output
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == []


def test_cli_compare_bad_input_keeps_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "compare.xlsx"
    target.write_bytes(b"old workbook")
    result = runner.invoke(
        app, ["compare", str(ROOT / "examples/nope.yaml"), "--no-flip-points", "-o", str(target)]
    )
    assert result.exit_code == 2
    assert target.read_bytes() == b"old workbook" and [p.name for p in tmp_path.iterdir()] == ["compare.xlsx"]


def test_cli_compare_says_why_an_option_has_no_plan() -> None:
    """buy_vs_rent's buy-only option is infeasible (nothing bought arrives before month 2): the terminal
    table showed "infeasible" and no reason, which only the JSON and the workbook carried."""
    result = runner.invoke(app, ["compare", str(ROOT / "examples/buy_vs_rent/scenario.yaml"), "--no-flip-points"])
    assert result.exit_code == 0, result.output
    assert (
        "buy_only has no plan: chat: nothing bought arrives before month 2 (purchase lead time 2 months), so its "
        "demand before month 2 cannot be served — add inventory, or rent at us_east until month 2 (the hybrid option)"
    ) in " ".join(result.stdout.split())
    assert "rent_only has no plan" not in result.stdout and "hybrid has no plan" not in result.stdout
