"""Plan workbook of a hand-built plan (tests/report/synthetic_plan.py): sheets, the Costs sheet built from the
cost ledger's lines, live formulas, safety, LibreOffice recompute.

Tolerances: values written as numbers are compared with pytest.approx(rel=1e-12); figures recomputed by
LibreOffice are compared with the ledger's within rel=1e-9 (they are the same sums).
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.readout import CashLine, CostLedger
from planner.readout.comparison import Comparison
from planner.report import workbook as wbmod
from planner.report.charts import ALTERNATIVES_PNG, COST_BY_CATEGORY_PNG, CUMULATIVE_COST_PNG
from planner.report.compare_workbook import OPTION_HEADERS, write_compare_outputs
from planner.report.cost_streams import KIND_ORDER, cost_streams
from planner.report.files import atomic_write
from planner.report.formatting import sanitize_defined_name, sanitize_sheet_title
from planner.report.workbook_costs import CASH, CUMULATIVE, OPEX, PRESENT_VALUE, SUPPLY_HEADERS, TOTAL_NAME
from planner.report.workbook_summary import (
    CAPEX_LABEL,
    OPEX_LABEL,
    PER_MTOK_LABEL,
    RESALE_LABEL,
    TOKENS_LABEL,
    TOTAL_LABEL,
)
from planner.report.workbook_tables import ALT_HEADERS, DEPLOY_HEADERS, SLO_HEADERS
from planner.report.xlsx import PRINT_CHARS_PER_PAGE
from tests.report import synthetic_plan as syn
from tests.report.workbook_io import (
    SOFFICE,
    find_row,
    load_workbook,
    needs_soffice,
    recompute,
    soffice,
    table_last_row,
)

PDFTOPPM = shutil.which("pdftoppm")
REL = 1e-9
PRICE_A_NAME = "Price_1_mi300x_us_east_rent_on_demand"
CAPEX_C_NAME, RESALE_C_NAME = "Capex_3_h200_sxm_dc1_buy", "Resale_3_h200_sxm_dc1_buy"
EDIT_USD = 100.0


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wb")
    path = folder / "plan.xlsx"
    wbmod.write_plan_outputs(syn.plan_result(), None, workbook=path, plots_dir=folder / "plots")
    return path


@pytest.fixture(scope="module")
def recomputed(written: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """LibreOffice recomputes the workbook and a copy whose price of line A was raised by $100."""
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) not installed")
    folder = tmp_path_factory.mktemp("lo")
    edited = folder / "edited.xlsx"
    wb = load_workbook(written)
    find_row(wb["Assumptions"], PRICE_A_NAME)[2].value = syn.PRICE_A + EDIT_USD
    wb.save(edited)
    base = folder / "plan.xlsx"
    shutil.copy(written, base)
    # The compare workbook of the same plan: its totals discount the ledger's cash at the same rate.
    comparison = Comparison({"hybrid": syn.plan_result()}, "hybrid", None, [])
    write_compare_outputs(comparison, workbook=folder / "compare.xlsx", plots_dir=None)
    out = recompute([base, edited, folder / "compare.xlsx"], folder, timeout_s=120)
    yield {
        name: load_workbook(out / f"{name}.xlsx", data_only=True) for name in ("plan", "edited", "compare")
    }


def _header(ws: Any) -> list[Any]:
    return [c.value for c in ws[1]]


def _column(ws: Any, header: str, rows: int) -> list[Any]:
    col = _header(ws).index(header) + 1
    return [ws.cell(row=r, column=col).value for r in range(2, rows + 2)]


# --------------------------------------------------------------------------------------------------
# Structure and values (openpyxl read-back)
# --------------------------------------------------------------------------------------------------


def test_sheet_names_and_headers_with_units(written: Path) -> None:
    wb = load_workbook(written)
    assert wb.sheetnames == list(wbmod.SHEETS)
    assert _header(wb["Deployments"]) == DEPLOY_HEADERS
    assert _header(wb["SLOs"]) == SLO_HEADERS
    assert _header(wb["Supply"]) == SUPPLY_HEADERS
    assert _header(wb["Alternatives"]) == ALT_HEADERS
    assert _header(wb["Costs"]) == [
        "Month",
        "Discount factor",
        "Units 1: mi300x @ us_east rent_on_demand (8-GPU instances)",
        "Units 2: h100_sxm @ us_west rent_on_demand (GPUs)",
        "Units 3: h200_sxm @ dc1 buy (8-GPU nodes)",
        "Rent 1: mi300x @ us_east rent_on_demand (USD)",
        "Volume discount 1: mi300x @ us_east rent_on_demand (USD)",
        "Rent 2: h100_sxm @ us_west rent_on_demand (USD)",
        "Capex 3: h200_sxm @ dc1 buy (USD)",
        "Running 3: h200_sxm @ dc1 buy (USD)",
        "Resale 3: h200_sxm @ dc1 buy (USD)",
        CASH,
        PRESENT_VALUE,
        CUMULATIVE,
        OPEX,
    ]


def test_deployments_show_replicas_per_period_and_placement(written: Path) -> None:
    dep = load_workbook(written)["Deployments"]
    keys = ("Workload", "GPU", "Placement", "Periods", "From month", "To month", "Replicas")
    rows = [
        tuple(dep.cell(row=r, column=DEPLOY_HEADERS.index(k) + 1).value for k in keys)
        for r in range(2, table_last_row(dep, "tbl_Deployments") + 1)  # below it: the costs' total
    ]
    assert rows == [
        ("chat", "mi300x", "cloud", "0", 0, 1, 1),
        ("chat", "mi300x", "cloud", "1", 2, 3, 2),
        ("summarize", "h100_sxm", "cloud", "1-2", 2, 5, 2),  # same replicas and load: one row
        ("summarize", "h200_sxm", "datacenter", "1", 2, 3, 1),
        ("chat", "mi300x", "cloud", "2", 4, 5, 1),
        ("summarize", "h200_sxm", "datacenter", "2", 4, 5, 1),  # same replicas, another load
    ]
    served = DEPLOY_HEADERS.index("Served (req/s, daily mean)") + 1
    assert [dep.cell(row=r, column=served).value for r in (2, 5, 7)] == [8.0, 4.0, 3.0]
    assert dep["O2"].value == "=N2*H2*J2*I2*Z2"  # GPUs = replicas x TP x EP x PP x GPU share (G: KV dtype)
    assert dep.cell(row=2, column=DEPLOY_HEADERS.index("KV dtype") + 1).value == "bf16"


def test_costs_sheet_is_built_from_the_ledger_lines(written: Path) -> None:
    model = cost_streams(syn.plan_result())
    assert model.all_live and [s.live for s in model.streams] == [True, False, True, True, True, True]
    costs = load_workbook(written)["Costs"]
    assert _column(costs, "Units 1: mi300x @ us_east rent_on_demand (8-GPU instances)", 6) == syn.per_month(syn.UNITS_A)
    # Bought nodes run from delivery (month 1), before the period they serve in starts (month 2).
    assert _column(costs, "Units 3: h200_sxm @ dc1 buy (8-GPU nodes)", 6) == [0, 2, 2, 2, 2, 2]
    assert costs["F2"].value == f"=C2*{PRICE_A_NAME}"
    assert _column(costs, "Volume discount 1: mi300x @ us_east rent_on_demand (USD)", 6) == [
        0,
        0,
        -500,
        -500,
        0,
        0,
    ]
    bought = "Supply!$I$4"  # units bought of line 3
    assert costs["I2"].value == f"={bought}*{CAPEX_C_NAME}" and costs["I3"].value == 0
    assert costs["K7"].value == f"=-{bought}*{RESALE_C_NAME}" and costs["K6"].value == 0
    assert costs["B3"].value == "=(1+Cost_of_capital_frac_per_year)^(-A3/12)"
    # The resale, credited in the last month, is discounted from the horizon's end.
    assert costs["M7"].value == "=L7*B7+(K7)*((1+Cost_of_capital_frac_per_year)^(-Horizon_months/12)-B7)"
    assert find_row(costs, "Total (USD)")[12].value == "=SUM(M2:M7)"
    assert SUPPLY_HEADERS.index("Units bought") == 8


def test_prices_are_named_cells_on_assumptions(written: Path) -> None:
    wb = load_workbook(written)
    expected = {
        PRICE_A_NAME: syn.PRICE_A,
        "Price_2_h100_sxm_us_west_rent_on_demand": syn.PRICE_B,
        "Price_3_h200_sxm_dc1_buy": syn.RUNNING_C,
        CAPEX_C_NAME: syn.NODE_USD,
        RESALE_C_NAME: syn.RESALE_C,
        "Cost_of_capital_frac_per_year": syn.RATE,
        "Horizon_months": syn.HORIZON,
        "Output_tokens_served": syn.OUTPUT_TOKENS,
    }
    for name, value in expected.items():
        sheet, ref = next(iter(wb.defined_names[name].destinations))
        assert sheet == "Assumptions"
        assert wb[sheet][ref.replace("$", "")].value == pytest.approx(value, rel=1e-12)
    # No plug: nothing but the ledger's lines makes up the total.
    assert not [n for n in wb.defined_names if n.startswith(("Other", "Adjust"))]


def test_summary_and_supply_are_formulas(written: Path) -> None:
    wb = load_workbook(written)
    summary = wb["Summary"]
    assert find_row(summary, TOTAL_LABEL)[1].value == f"={TOTAL_NAME}"
    assert find_row(summary, OPEX_LABEL)[1].value == "=(Rent_usd+Running_usd+Discount_usd)/Horizon_months"
    text = find_row(summary, "Recommendation")[1].value
    assert (
        "16x mi300x at us_east" in text
        and "h200_sxm at dc1 with vllm (datacenter" in text
        and "up to 2 replicas" in text
    )
    # the most GPUs paid in one month: Costs units x GPUs per unit (8-GPU instances), month by month
    assert find_row(summary, "mi300x (rent)")[1].value == "=SUMPRODUCT(MAX(Costs!$C$2:$C$7*Supply!$F$2))"
    assert wb["Supply"]["J2"].value == f"={PRICE_A_NAME}" and wb["Supply"]["K4"].value == f"={CAPEX_C_NAME}"
    alt = wb["Alternatives"]
    assert alt["B3"].value == "h200_sxm" and alt["D3"].value == pytest.approx(syn.TOTAL + 5000.0)
    assert alt["D4"].value is None and alt["C4"].value == "infeasible"
    assert [alt.cell(row=r, column=7).value for r in (2, 3, 4)] == [49.0, 31.5, None]
    slo = wb["SLOs"]
    assert slo["J2"].value == "=1-H2/I2" and slo["O4"].value == "memory" and slo["E4"].value == "datacenter"


def test_formatting_tables_and_print_setup(written: Path) -> None:
    wb = load_workbook(written)
    names = [t for ws in wb for t in ws.tables]
    assert len(names) == len({n.lower() for n in names}) and "tbl_Deployments" in names
    dep = wb["Deployments"]
    assert dep.freeze_panes == "C2" and dep["A1"].font.bold
    assert dep.page_setup.orientation == "landscape" and dep.sheet_properties.pageSetUpPr.fitToPage
    assert wb["Costs"]["F2"].number_format == '"$"#,##0.00'
    assert wb["SLOs"]["J2"].number_format == "0.0%"
    assert len(wb["SLOs"].conditional_formatting) == 2
    assert wb["Costs"].row_dimensions[1].height > 15  # wrapped headers get their lines


def test_wide_sheets_print_over_several_pages_at_a_legible_scale(written: Path) -> None:
    """A sheet squeezed onto one page width printed unreadably small (issue 16): each sheet prints over as
    many landscape pages as keep PRINT_CHARS_PER_PAGE characters of columns per page, and a sheet printed
    over several pages repeats its frozen header rows and key columns on each."""
    wb = load_workbook(written)
    for ws in wb:
        width_chars = sum(d.width for d in ws.column_dimensions.values() if d.width)
        pages = ws.page_setup.fitToWidth
        assert pages >= 1 and width_chars / pages <= PRINT_CHARS_PER_PAGE, (ws.title, width_chars, pages)
        assert pages == 1 or width_chars / (pages - 1) > PRINT_CHARS_PER_PAGE, (ws.title, width_chars, pages)
    dep = wb["Deployments"]
    assert dep.page_setup.fitToWidth >= 2
    assert dep.print_title_rows == "$1:$1" and dep.print_title_cols == "$A:$B"
    assert wb["Summary"].page_setup.fitToWidth == 1 and wb["Summary"].print_title_cols is None


def test_native_charts_present(written: Path) -> None:
    with zipfile.ZipFile(written) as z:
        xml = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert len(xml) == 3
    scatter = [text for text in xml if "<scatterChart>" in text]
    assert len(scatter) == 1
    # one series per alternative, each reading its own row (a series per kind named no point)
    assert all(f"'Alternatives'!${c}${r}<" in scatter[0] for c in "GD" for r in (2, 3))
    assert any("'Costs'!$N$2:$N$7" in text for text in xml)  # cumulative cash


def test_plots_written(written: Path) -> None:
    for name in (COST_BY_CATEGORY_PNG, CUMULATIVE_COST_PNG, ALTERNATIVES_PNG):
        path = written.parent / "plots" / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


# --------------------------------------------------------------------------------------------------
# The ledger's lines into streams
# --------------------------------------------------------------------------------------------------

KINDS = st.sampled_from(["capex", "rent", "running", "discount", "resale"])


@settings(deadline=None, max_examples=50)
@given(
    st.lists(
        st.tuples(st.integers(0, 11), KINDS, st.sampled_from(["a", "b", "c"]), st.floats(-1e6, 1e6)),
        max_size=40,
    ),
    st.floats(0.0, 0.3),
)
def test_streams_carry_every_ledger_line(raw: list[tuple[int, str, str, float]], rate: float) -> None:
    """Whatever the ledger holds (even ids no supply line carries), the streams add up to its cash flow and
    present value, month by month."""
    lines = tuple(
        CashLine(m, kind, sid, "rent", usd, usd * (1 + rate) ** (-m / 12))  # type: ignore[arg-type]
        for m, kind, sid, usd in raw
    )
    ledger = CostLedger(12, lines, 1e9)
    model = cost_streams(syn.plan_result(ledger=ledger, supply=[]))
    flow = [sum(s.usd_by_month[m] for s in model.streams) for m in range(12)]
    assert flow == pytest.approx(ledger.cash_flow_usd_per_month, abs=1e-6)
    assert sum(s.pv_usd for s in model.streams) == pytest.approx(ledger.total_usd, abs=1e-6)
    assert len({(s.supply_id, s.kind) for s in model.streams}) == len(model.streams)
    assert not any(s.live for s in model.streams)  # no supply line: the ledger's values


def test_a_formula_that_misses_the_ledger_falls_back_to_its_values() -> None:
    wrong = [
        s if s.id != syn.ID_B else s.__class__(**{**s.__dict__, "units_per_month": [0] * 6})
        for s in syn.SUPPLY
    ]
    model = cost_streams(syn.plan_result(supply=wrong))
    rent_b = next(s for s in model.streams if s.supply_id == syn.ID_B)
    assert not rent_b.live and not model.all_live
    assert rent_b.usd_by_month == [0, 0, 3 * syn.PRICE_B, 3 * syn.PRICE_B, 2 * syn.PRICE_B, 2 * syn.PRICE_B]


# --------------------------------------------------------------------------------------------------
# Safety
# --------------------------------------------------------------------------------------------------


def test_formula_injection_stored_as_text(written: Path) -> None:
    wb = load_workbook(written)
    injected = (syn.INJECT_SOURCE, syn.INJECT_REASON, syn.INJECT_NAME, syn.INJECT_CONSTRAINT)
    cells = [c for ws in wb for row in ws.iter_rows() for c in row if c.value in injected]
    assert {c.value for c in cells} == set(injected)
    assert all(c.data_type == "s" for c in cells)
    src = find_row(wb["Supply"], "mi300x")[SUPPLY_HEADERS.index("Source")]
    assert src.value == syn.INJECT_SOURCE and src.data_type == "s"


def test_atomic_write_failing_writer_keeps_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"old workbook")

    def failing(tmp: Path) -> None:
        tmp.write_bytes(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, failing)
    assert target.read_bytes() == b"old workbook"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"]


def test_workbook_save_failure_keeps_existing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"old workbook")

    def broken_save(self: Any, filename: Any) -> None:
        Path(filename).write_bytes(b"partial")
        raise OSError("no space left")

    monkeypatch.setattr(openpyxl.Workbook, "save", broken_save)
    with pytest.raises(OSError):
        wbmod.write_plan_outputs(syn.plan_result(), None, workbook=target, plots_dir=None)
    assert target.read_bytes() == b"old workbook"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"]


def test_infeasible_plan_writes_summary(tmp_path: Path) -> None:
    from planner.optimize.explain import Explanation

    result = syn.plan_result(
        status="infeasible",
        ledger=None,
        deployments=[],
        supply=[],
        alternatives=[],
        infeasibility=[
            Explanation("chat", "tpot_ms", "=lowest TPOT is 70 ms", "raise chat.slo.tpot_ms to 70")
        ],
    )
    path = tmp_path / "plan.xlsx"
    wbmod.write_plan_outputs(result, None, workbook=path, plots_dir=tmp_path / "plots")
    wb = load_workbook(path)
    assert wb.sheetnames == list(wbmod.SHEETS)
    row = find_row(wb["Summary"], "Infeasible: chat")
    assert row[1].value == "=lowest TPOT is 70 ms" and row[1].data_type == "s"
    assert not (tmp_path / "plots").exists()


@settings(deadline=None, max_examples=50)
@given(st.text(max_size=60))
def test_sanitized_names_are_legal(text: str) -> None:
    title = sanitize_sheet_title(text)
    assert 1 <= len(title) <= 31 and not any(ch in title for ch in "[]:*?/\\")
    assert not title.startswith("'") and not title.endswith("'")
    assert title.isprintable()
    name = sanitize_defined_name(text)
    assert name[0].isalpha() or name[0] == "_"
    assert all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in name)


# --------------------------------------------------------------------------------------------------
# LibreOffice recompute
# --------------------------------------------------------------------------------------------------


def _pv_per_month(ledger: CostLedger) -> list[float]:
    out = [0.0] * ledger.horizon_months
    for line in ledger.lines:
        out[line.month] += line.discounted_usd
    return out


@needs_soffice
def test_recomputed_workbook_shows_the_ledger(recomputed: dict[str, Any]) -> None:
    ledger = syn.LEDGER
    wb = recomputed["plan"]
    summary = wb["Summary"]
    assert find_row(summary, TOTAL_LABEL)[1].value == pytest.approx(ledger.total_usd, rel=REL)
    assert find_row(summary, CAPEX_LABEL)[1].value == pytest.approx(ledger.capex_usd, rel=REL)
    assert find_row(summary, RESALE_LABEL)[1].value == pytest.approx(ledger.residual_value_usd, rel=REL)
    assert find_row(summary, OPEX_LABEL)[1].value == pytest.approx(ledger.opex_usd_per_month, rel=REL)
    assert find_row(summary, TOKENS_LABEL)[1].value == pytest.approx(syn.OUTPUT_TOKENS / 1e6, rel=REL)
    assert find_row(summary, PER_MTOK_LABEL)[1].value == pytest.approx(
        ledger.cost_usd_per_million_output_tokens, rel=REL
    )
    assert find_row(summary, "Min TPOT margin (%)")[1].value == pytest.approx(1 - 59.0 / 60.0, rel=REL)
    assert find_row(summary, "mi300x (rent)")[1].value == 16
    costs = wb["Costs"]
    assert _column(costs, CASH, 6) == pytest.approx(ledger.cash_flow_usd_per_month, rel=REL)
    assert _column(costs, PRESENT_VALUE, 6) == pytest.approx(_pv_per_month(ledger), rel=REL)
    assert _column(costs, CUMULATIVE, 6) == pytest.approx(ledger.cumulative_cash_usd, rel=REL)
    assert _column(costs, "Discount factor", 6) == pytest.approx([syn.d(m) for m in range(6)], rel=REL)
    first = find_row(costs, "Kind")[0].row + 1
    kinds = {r[0].value: (r[1].value, r[2].value) for r in costs.iter_rows(min_row=first, max_row=first + 4)}
    assert set(kinds) == set(KIND_ORDER)
    for kind, (nominal, pv) in kinds.items():
        lines = [line for line in ledger.lines if line.kind == kind]
        assert nominal == pytest.approx(sum(x.usd for x in lines), rel=REL, abs=1e-9)
        assert pv == pytest.approx(sum(x.discounted_usd for x in lines), rel=REL, abs=1e-9)
    supply = wb["Supply"]
    pv_col = SUPPLY_HEADERS.index("Cost over horizon (USD, present value)")
    for r, line in enumerate(syn.SUPPLY, start=2):
        row = [c.value for c in supply[r]]
        assert row[pv_col] == pytest.approx(ledger.supply_cost_usd(line.id), rel=REL)
        assert row[pv_col + 1] == pytest.approx(line.cost_usd_per_month, rel=REL)
        assert row[SUPPLY_HEADERS.index("Capex (USD)")] == pytest.approx(line.capex_usd, rel=REL)
        assert row[SUPPLY_HEADERS.index("Resale credit (USD)")] == pytest.approx(line.residual_usd, rel=REL)
    assert wb["Alternatives"]["E3"].value == pytest.approx(5000.0, rel=1e-6)
    assert wb["Deployments"]["O2"].value == 8 and wb["Deployments"]["Q3"].value == pytest.approx(20.9)


@needs_soffice
def test_compare_workbook_discounts_like_the_ledger(recomputed: dict[str, Any]) -> None:
    """Σ cash × d(m), the resale credit discounted from the horizon's end: the ledger's present value."""
    wb = recomputed["compare"]
    row = find_row(wb["Options"], "hybrid")
    cells = {h: row[k].value for k, h in enumerate(OPTION_HEADERS)}
    ledger = syn.LEDGER
    assert cells["Total cost (USD, present value)"] == pytest.approx(ledger.total_usd, rel=REL)
    assert cells["Opex (USD/month)"] == pytest.approx(ledger.opex_usd_per_month, rel=REL)
    assert cells["Cost per million output tokens (USD/Mtok)"] == pytest.approx(
        ledger.cost_usd_per_million_output_tokens, rel=REL
    )
    assert find_row(wb["Plan"], TOTAL_LABEL)[1].value == pytest.approx(ledger.total_usd, rel=REL)
    assert _column(wb["CashFlow"], "hybrid cash out (USD)", 6) == pytest.approx(
        ledger.cash_flow_usd_per_month
    )


@needs_soffice
def test_editing_a_price_moves_every_total(recomputed: dict[str, Any]) -> None:
    base, edited = recomputed["plan"], recomputed["edited"]
    units = syn.per_month(syn.UNITS_A)
    pv_delta = EDIT_USD * sum(u * syn.d(m) for m, u in enumerate(units))
    before = find_row(base["Summary"], TOTAL_LABEL)[1].value
    after = find_row(edited["Summary"], TOTAL_LABEL)[1].value
    assert after - before == pytest.approx(pv_delta, rel=1e-9)
    opex = find_row(edited["Summary"], OPEX_LABEL)[1].value - find_row(base["Summary"], OPEX_LABEL)[1].value
    assert opex == pytest.approx(EDIT_USD * sum(units) / syn.HORIZON, rel=1e-9)
    cash = [
        a - b for a, b in zip(_column(edited["Costs"], CASH, 6), _column(base["Costs"], CASH, 6), strict=True)
    ]
    assert cash == pytest.approx([EDIT_USD * u for u in units], rel=1e-9)
    assert edited["Supply"]["J2"].value == pytest.approx(syn.PRICE_A + EDIT_USD, rel=1e-12)


@needs_soffice
@pytest.mark.skipif(PDFTOPPM is None, reason="poppler-utils (pdftoppm) not installed")
def test_rendered_page_is_not_blank(written: Path, tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    src = tmp_path / "plan.xlsx"
    shutil.copy(written, src)
    soffice(["--convert-to", "pdf", "--outdir", str(tmp_path), str(src)], tmp_path, timeout_s=120)
    assert PDFTOPPM is not None
    subprocess.run(
        [
            PDFTOPPM,
            "-f",
            "1",
            "-l",
            "1",
            "-r",
            "40",
            "-png",
            str(tmp_path / "plan.pdf"),
            str(tmp_path / "page"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    page = next(tmp_path.glob("page*.png"))
    pixels = mpimg.imread(page)
    dark = (pixels[..., :3].mean(axis=-1) < 0.9).mean()
    assert dark > 0.002, f"page 1 looks blank ({dark:.4%} non-white pixels)"


def test_slo_sheet_names_pool_roles_and_leaves_missing_latencies_blank(tmp_path: Path) -> None:
    """SLOs sheet of a prefill and a decode pool: the workload reads 'w (prefill)' as on the terminal, and
    the latency a pool does not have (a prefill pool's TPOT, a decode pool's TTFT) is blank with no margin
    (it read 0 ms with a 100 % margin)."""
    import dataclasses

    first = syn.DEPLOYMENTS[0]
    pools = [
        dataclasses.replace(first, role="prefill", tpot_ms=0.0, decode_step_ms=0.0),
        dataclasses.replace(first, role="decode", ttft_ms=0.0),
    ]
    path = tmp_path / "plan.xlsx"
    wbmod.write_plan_outputs(syn.plan_result(deployments=pools), None, workbook=path, plots_dir=None)
    slo = load_workbook(path)["SLOs"]
    assert _column(slo, "Workload", 2) == [f"{first.workload} (prefill)", f"{first.workload} (decode)"]
    assert _column(slo, "TPOT (ms)", 2)[0] is None and _column(slo, "TPOT margin (%)", 2)[0] is None
    assert _column(slo, "TTFT (ms)", 2)[1] is None and _column(slo, "TTFT margin (%)", 2)[1] is None
    assert _column(slo, "TTFT margin (%)", 2)[0] == "=1-H2/I2" and _column(slo, "TPOT margin (%)", 2)[1] == "=1-K3/L3"
