"""Plan workbook: sheets, headers, values vs the JSON plan, live formulas, safety, LibreOffice recompute.

Tolerances: values written as numbers are compared with pytest.approx(rel=1e-12); totals recomputed by
LibreOffice are compared within 0.01 % (rel=1e-4) of the planner's numbers, as the issue asks.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.report import workbook as wbmod
from planner.report.charts import ALTERNATIVES_PNG, COST_BY_CATEGORY_PNG, CUMULATIVE_COST_PNG
from planner.report.files import atomic_write
from planner.report.formatting import sanitize_defined_name, sanitize_sheet_title
from planner.units import S_PER_MONTH
from tests.report.workbook_io import SOFFICE, find_row, load_workbook, needs_soffice, recompute, soffice

PDFTOPPM = shutil.which("pdftoppm")
REL = 1e-4  # 0.01 %

INJECT_SOURCE = '=HYPERLINK("http://evil","x")'
INJECT_REASON = "+1+1 costs more"
INJECT_NAME = "@SUM(1,2)"
INJECT_CONSTRAINT = "-2+3"

PRICE_A, PRICE_B = 9849.6, 1368.0
UNITS_A = [1, 2, 1]  # three periods over a 6-month horizon: two months each
UNITS_B = [0, 3, 2]
HORIZON = 6
POWER_USD = 1234.5  # a solver category the supply lines do not explain


def _plan_json() -> dict[str, Any]:
    supply_cost = 2 * (sum(UNITS_A) * PRICE_A + sum(UNITS_B) * PRICE_B)
    total = supply_cost + POWER_USD
    return {
        "scenario": INJECT_NAME,
        "status": "optimal",
        "gap": None,
        "objective": "min_cost",
        "horizon_months": HORIZON,
        "total_cost_usd": total,
        "cost_usd_per_month": total / HORIZON,
        "costs_usd": {"rent": supply_cost, "power": POWER_USD},
        "deployments": [
            {
                "workload": "chat",
                "model": "llama_3_1_70b",
                "gpu": "mi300x",
                "site": "us_east",
                "placement": "cloud",
                "quantization": "fp8",
                "kv_dtype": "bf16",
                "tp": 8,
                "pp": 1,
                "replicas": 2,
                "gpus": 16,
                "batch": 174,
                "ttft_ms": 125.0,
                "tpot_ms": 49.0,
                "ttft_slo_ms": 2000.0,
                "tpot_slo_ms": 50.0,
                "memory_per_gpu_gb": 24.1,
                "capacity_requests_per_s": 20.9,
                "served_requests_per_s": 16.0,
                "cost_usd_per_month": 2 * sum(UNITS_A) * PRICE_A / HORIZON,
                "procurement": "rent",
                "rental_kind": "on_demand",
                "limited_by": "tpot_slo",
            },
            {
                "workload": "summarize",
                "model": "llama_3_1_8b",
                "gpu": "h100_sxm",
                "site": "us_west",
                "placement": "cloud",
                "quantization": "bf16",
                "kv_dtype": "bf16",
                "tp": 1,
                "pp": 1,
                "replicas": 2,
                "gpus": 2,
                "batch": 64,
                "ttft_ms": 300.0,
                "tpot_ms": 20.0,
                "ttft_slo_ms": 3000.0,
                "tpot_slo_ms": 60.0,
                "memory_per_gpu_gb": 40.0,
                "capacity_requests_per_s": 14.0,
                "served_requests_per_s": 10.0,
                "cost_usd_per_month": 2 / 3 * 2 * sum(UNITS_B) * PRICE_B / HORIZON,
                "procurement": "rent",
                "rental_kind": "on_demand",
                "limited_by": "throughput_peak",
            },
            {
                "workload": "summarize",
                "model": "llama_3_1_8b",
                "gpu": "h100_sxm",
                "site": "us_west",
                "placement": "cloud",
                "quantization": "fp8",
                "kv_dtype": "bf16",
                "tp": 1,
                "pp": 1,
                "replicas": 1,
                "gpus": 1,
                "batch": 118,
                "ttft_ms": 105.0,
                "tpot_ms": 59.0,
                "ttft_slo_ms": 3000.0,
                "tpot_slo_ms": 60.0,
                "memory_per_gpu_gb": 77.0,
                "capacity_requests_per_s": 7.0,
                "served_requests_per_s": 4.0,
                "cost_usd_per_month": 1 / 3 * 2 * sum(UNITS_B) * PRICE_B / HORIZON,
                "procurement": "rent",
                "rental_kind": "on_demand",
                "limited_by": "memory",
            },
        ],
        "supply": [
            {
                "gpu": "mi300x",
                "site": "us_east",
                "kind": "rent_on_demand",
                "procurement": "rent",
                "rental_kind": "on_demand",
                "unit_gpus": 8,
                "units": max(UNITS_A),
                "gpus": 8 * max(UNITS_A),
                "usd_per_unit_month": PRICE_A,
                "cost_usd_per_month": 2 * sum(UNITS_A) * PRICE_A / HORIZON,
                "units_per_period": UNITS_A,
                "source": INJECT_SOURCE,
            },
            {
                "gpu": "h100_sxm",
                "site": "us_west",
                "kind": "rent_on_demand",
                "procurement": "rent",
                "rental_kind": "on_demand",
                "unit_gpus": 1,
                "units": max(UNITS_B),
                "gpus": max(UNITS_B),
                "usd_per_unit_month": PRICE_B,
                "cost_usd_per_month": 2 * sum(UNITS_B) * PRICE_B / HORIZON,
                "units_per_period": UNITS_B,
                "source": "runpod $1.90/GPU-h",
            },
        ],
        "schedule": [],
        "binding_constraints": [
            {"family": "gpu_supply", "key": ["mi300x", "us_east", "0"], "slack": 0.0},
            {"family": INJECT_CONSTRAINT, "key": ["x"], "slack": 0.0},
        ],
        "alternatives": [
            {
                "kind": "gpu",
                "gpu": "mi300x",
                "status": "optimal",
                "total_cost_usd": total,
                "cost_delta_usd": 0.0,
                "cost_usd_per_month": total / HORIZON,
                "max_tpot_ms": 49.0,
                "max_ttft_ms": 125.0,
                "lost_because": "chosen",
            },
            {
                "kind": "gpu",
                "gpu": "h200_sxm",
                "status": "optimal",
                "total_cost_usd": total + 5000.0,
                "cost_delta_usd": 5000.0,
                "cost_usd_per_month": (total + 5000.0) / HORIZON,
                "max_tpot_ms": 31.5,
                "max_ttft_ms": 80.0,
                "lost_because": INJECT_REASON,
            },
            {
                "kind": "site",
                "site": "eu_west",
                "status": "infeasible",
                "total_cost_usd": None,
                "cost_delta_usd": None,
                "max_tpot_ms": None,
                "max_ttft_ms": None,
                "lost_because": "no SLO-feasible candidate",
            },
        ],
        "infeasibility": [],
        "candidates_evaluated": 10,
        "candidates_feasible": 5,
        "solve_seconds": 0.1,
        "total_seconds": 0.2,
    }


class FakeScenario:
    """Just what the workbook reads from a Scenario: workloads' output tokens and model_dump()."""

    name = INJECT_NAME
    workloads = [
        SimpleNamespace(name="chat", output_tokens=300),
        SimpleNamespace(name="summarize", output_tokens=250),
    ]

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {
            "name": INJECT_NAME,
            "horizon_months": HORIZON,
            "workloads": [
                {"name": "chat", "output_tokens": 300, "slo": {"ttft_ms": 2000.0}},
                {"name": "summarize", "output_tokens": 250, "models": ["a", "b"]},
            ],
        }


class FakeResult:
    def __init__(self, data: dict[str, Any] | None = None) -> None:
        self.data = data if data is not None else _plan_json()
        self.scenario = FakeScenario()

    def to_json(self) -> dict[str, Any]:
        return self.data


def _expected_monthly_units(units: list[int]) -> list[int]:
    return [u for u in units for _ in range(HORIZON // len(units))]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wb")
    path = folder / "plan.xlsx"
    wbmod.write_plan_outputs(FakeResult(), None, workbook=path, plots_dir=folder / "plots")
    return path


@pytest.fixture(scope="module")
def real_plan(catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The planner's own result for examples/buy_vs_rent (rent and buy lines with capex, several periods)."""
    from planner.plan import plan
    from planner.scenario import load_scenario

    scenario = load_scenario(Path("examples/buy_vs_rent/scenario.yaml"), catalog)
    result = plan(catalog, scenario, with_alternatives=False)
    path = tmp_path_factory.mktemp("real") / "real.xlsx"
    wbmod.write_plan_outputs(result, catalog, workbook=path, plots_dir=None)
    return path, result.to_json()


@pytest.fixture(scope="module")
def recomputed(
    written: Path, real_plan: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """LibreOffice recomputes the workbook, a copy whose first unit price was raised by $100, and the real plan."""
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) not installed")
    folder = tmp_path_factory.mktemp("lo")
    edited = folder / "edited.xlsx"
    wb = load_workbook(written)
    row = find_row(wb["Assumptions"], _line_name(0))
    row[2].value = PRICE_A + 100.0
    wb.save(edited)
    base, real = folder / "plan.xlsx", folder / "real.xlsx"
    shutil.copy(written, base)
    shutil.copy(real_plan[0], real)
    out = recompute([base, edited, real], folder, timeout_s=120)
    yield {name: load_workbook(out / f"{name}.xlsx", data_only=True) for name in ("plan", "edited", "real")}


def _line_name(i: int) -> str:
    data = _plan_json()
    return wbmod._lines(data)[i].price_name


# --------------------------------------------------------------------------------------------------
# Structure and values (openpyxl read-back)
# --------------------------------------------------------------------------------------------------


def test_sheet_names_and_headers_with_units(written: Path) -> None:
    wb = load_workbook(written)
    assert wb.sheetnames == list(wbmod.SHEETS)
    assert [c.value for c in wb["Deployments"][1]] == wbmod.DEPLOY_HEADERS
    assert [c.value for c in wb["Ledger"][1]] == wbmod.LEDGER_HEADERS
    assert [c.value for c in wb["BuyVsRent"][1]][:15] == wbmod.BUY_HEADERS
    assert "Cost (USD/month)" in wbmod.DEPLOY_HEADERS and "Memory per GPU (GB)" in wbmod.LEDGER_HEADERS
    costs_header = [c.value for c in wb["Costs"][1]]
    assert costs_header[0] == "Month" and costs_header[-3:] == [
        "Other (USD)",
        "Total (USD)",
        "Cumulative (USD)",
    ]


def test_values_match_plan_json(written: Path) -> None:
    data = _plan_json()
    wb = load_workbook(written)
    dep = wb["Deployments"]
    for i, d in enumerate(data["deployments"], start=2):
        row = {h: dep.cell(row=i, column=k + 1).value for k, h in enumerate(wbmod.DEPLOY_HEADERS)}
        assert (row["Workload"], row["GPU"], row["Site"], row["TP"], row["Replicas"], row["GPUs"]) == (
            d["workload"],
            d["gpu"],
            d["site"],
            d["tp"],
            d["replicas"],
            d["gpus"],
        )
        assert row["Served (req/s)"] == pytest.approx(d["served_requests_per_s"], rel=1e-12)
    led = wb["Ledger"]
    assert led["E2"].value == pytest.approx(24.1, rel=1e-12)
    assert (led["G2"].value, led["H2"].value, led["J2"].value, led["K2"].value) == (125.0, 2000.0, 49.0, 50.0)
    assert led["I2"].value == "=1-G2/H2" and led["M4"].value == "memory"
    months = [wb["Costs"].cell(row=r, column=2).value for r in range(2, HORIZON + 2)]
    assert months == _expected_monthly_units(UNITS_A)
    alt = wb["Alternatives"]
    assert alt["B3"].value == "h200_sxm" and alt["D3"].value == pytest.approx(data["total_cost_usd"] + 5000.0)
    assert alt["D4"].value is None and alt["C4"].value == "infeasible"
    assert [c.value for c in alt[1]] == wbmod.ALT_HEADERS
    tpot, ttft = (
        _col_index(wbmod.ALT_HEADERS, "Max TPOT (ms)"),
        _col_index(wbmod.ALT_HEADERS, "Max TTFT (ms)"),
    )
    assert [alt.cell(row=r, column=tpot).value for r in (2, 3, 4)] == [49.0, 31.5, None]
    assert [alt.cell(row=r, column=ttft).value for r in (2, 3, 4)] == [125.0, 80.0, None]


def _col_index(headers: list[str], name: str) -> int:
    return headers.index(name) + 1


def test_prices_are_named_ranges_on_assumptions(written: Path) -> None:
    wb = load_workbook(written)
    for i, price in enumerate((PRICE_A, PRICE_B)):
        name = _line_name(i)
        dn = wb.defined_names[name]
        sheet, ref = next(iter(dn.destinations))
        assert sheet == "Assumptions"
        assert wb[sheet][ref.replace("$", "")].value == pytest.approx(price, rel=1e-12)
    other = wb.defined_names[wbmod.OTHER_NAME]
    sheet, ref = next(iter(other.destinations))
    assert wb[sheet][ref.replace("$", "")].value == pytest.approx(POWER_USD, rel=1e-9)


def test_cost_cells_are_formulas_over_prices(written: Path) -> None:
    wb = load_workbook(written)
    costs = wb["Costs"]
    assert costs["D2"].value == f"=B2*{_line_name(0)}"
    assert str(costs["G2"].value).startswith("=SUM(")
    summary = wb["Summary"]
    assert find_row(summary, "Total cost (USD)")[1].value == f"={wbmod.TOTAL_NAME}"
    assert str(wb["Deployments"]["R2"].value).startswith("=IF(SUMIFS(")
    assert wb["BuyVsRent"]["I2"].value == f"={_line_name(0)}"


def test_python_mirror_adds_up_to_the_plan_total() -> None:
    data = _plan_json()
    monthly = wbmod.monthly_cost_usd(data)
    assert len(monthly) == HORIZON
    assert sum(monthly) == pytest.approx(data["total_cost_usd"], rel=1e-12)
    assert monthly[0] == pytest.approx(UNITS_A[0] * PRICE_A + UNITS_B[0] * PRICE_B + POWER_USD / HORIZON)
    cats = wbmod.category_cost_usd(data)
    assert cats["other"] == pytest.approx(POWER_USD, rel=1e-9)
    assert sum(cats.values()) == pytest.approx(data["total_cost_usd"], rel=1e-12)


def test_periods_placed_on_the_calendar() -> None:
    row = {"units": 3, "units_per_period": [1, 3]}
    assert wbmod._monthly_units(row, 6, 3) == [1, 1, 1, 3, 3, 3]
    # Merged (representative) periods: no calendar order in the plan, spread evenly.
    assert wbmod._monthly_units(row, 6, 1) == [1, 1, 1, 3, 3, 3]
    assert wbmod._monthly_units({"units": 2}, 4, 1) == [2, 2, 2, 2]
    assert wbmod._monthly_units(dict(row, units_per_month=[0, 1, 2, 3]), 4, 1) == [0, 1, 2, 3]
    data = dict(_plan_json(), period_months=2)
    assert wbmod.monthly_cost_usd(data)[2] == pytest.approx(
        UNITS_A[1] * PRICE_A + UNITS_B[1] * PRICE_B + POWER_USD / HORIZON, rel=1e-12
    )


def _schedule(reps: list[int], period_months: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "period": t,
            "start_month": t * period_months,
            "months": list(range(t * period_months, (t + 1) * period_months)),
            "representative_period": rep,
        }
        for t, rep in enumerate(reps)
    ]


def test_merged_periods_follow_the_schedule() -> None:
    # Six monthly periods, demand low-high-low-high-mid-low: three representative periods 0, 1, 4.
    reps = [0, 1, 0, 1, 4, 0]
    month_periods = wbmod._month_periods(_schedule(reps), 6)
    assert month_periods == [0, 1, 0, 1, 2, 0]
    row = {"units": 3, "units_per_period": [1, 3, 2]}
    assert wbmod._monthly_units(row, 6, 1, month_periods) == [1, 3, 1, 3, 2, 1]
    # Two-month periods: each entry covers its months.
    assert wbmod._month_periods(_schedule([0, 1, 0], period_months=2), 6) == [0, 0, 1, 1, 0, 0]
    # A schedule without the months (older plans) falls back to the even spread.
    old = [{"period": t, "start_month": t} for t in range(6)]
    assert wbmod._month_periods(old, 6) is None
    assert wbmod._monthly_units(row, 6, 1, None) == [1, 1, 3, 3, 2, 2]
    # A line whose entries do not match the representative periods is not mapped with them.
    assert (
        wbmod._monthly_units({"units": 2, "units_per_period": [2, 1]}, 6, 3, month_periods)
        == [2] * 3 + [1] * 3
    )


def test_merged_period_costs_carry_no_adjustment() -> None:
    """With the calendar from the schedule, each rental line's monthly units reproduce its planner cost."""
    data = _plan_json()
    reps = [0, 1, 1, 0, 2, 2]  # the three entries of UNITS_A / UNITS_B are not in calendar order
    data["schedule"] = _schedule(reps)
    order = [0, 1, 1, 0, 2, 2]
    for line in data["supply"]:
        units = line["units_per_period"]
        line["cost_usd_per_month"] = sum(units[p] for p in order) * line["usd_per_unit_month"] / HORIZON
    lines = wbmod._lines(data)
    assert lines[0].monthly_units == [UNITS_A[p] for p in order]
    assert lines[1].monthly_units == [UNITS_B[p] for p in order]
    assert all(line.adjust_usd == 0.0 for line in lines)


def test_formatting_tables_and_print_setup(written: Path) -> None:
    wb = load_workbook(written)
    names = [t for ws in wb for t in ws.tables]
    assert len(names) == len({n.lower() for n in names}) and "tbl_Deployments" in names
    dep = wb["Deployments"]
    assert dep.freeze_panes == "B2" and dep["A1"].font.bold
    assert dep.page_setup.orientation == "landscape" and dep.sheet_properties.pageSetUpPr.fitToPage
    assert wb["Costs"]["D2"].number_format == '"$"#,##0.00'
    assert wb["Ledger"]["I2"].number_format == "0.0%"
    assert len(wb["Ledger"].conditional_formatting) == 2


def test_native_charts_present(written: Path) -> None:
    wb = openpyxl.load_workbook(written)
    # openpyxl does not read charts back; count the chart parts in the package instead.
    import zipfile

    with zipfile.ZipFile(written) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
        xml = {n: z.read(n).decode() for n in charts}
    assert len(charts) == 3
    # Cost vs TPOT frontier of the alternatives: a scatter with TPOT on x, one series per kind.
    scatter = [text for text in xml.values() if "<scatterChart>" in text]
    assert len(scatter) == 1
    assert "'Alternatives'!$G$2:$G$3" in scatter[0] and "'Alternatives'!$D$2:$D$3" in scatter[0]
    assert "<f>'Alternatives'!$G$4</f>" in scatter[0]
    assert wb["Costs"].max_row > HORIZON


def test_summary_recommendation_and_cost_per_token(written: Path) -> None:
    wb = load_workbook(written)
    summary = wb["Summary"]
    text = find_row(summary, "Recommendation")[1].value
    assert "mi300x" in text and "h100_sxm" in text and "16x mi300x at us_east" in text
    gpus = {r[0].value: r[1].value for r in summary.iter_rows() if r[0].value in ("mi300x", "h100_sxm")}
    assert set(gpus) == {"mi300x", "h100_sxm"} and str(gpus["mi300x"]).startswith("=SUMIFS(")


def test_plots_written(written: Path) -> None:
    for name in (COST_BY_CATEGORY_PNG, CUMULATIVE_COST_PNG, ALTERNATIVES_PNG):
        path = written.parent / "plots" / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


# --------------------------------------------------------------------------------------------------
# Safety
# --------------------------------------------------------------------------------------------------


def test_formula_injection_stored_as_text(written: Path) -> None:
    wb = load_workbook(written)
    cells = [
        c
        for ws in wb
        for row in ws.iter_rows()
        for c in row
        if c.value in (INJECT_SOURCE, INJECT_REASON, INJECT_NAME, INJECT_CONSTRAINT)
    ]
    found = {c.value for c in cells}
    assert found == {INJECT_SOURCE, INJECT_REASON, INJECT_NAME, INJECT_CONSTRAINT}
    assert all(c.data_type == "s" for c in cells)
    src = find_row(wb["BuyVsRent"], "mi300x")[11]
    assert src.value == INJECT_SOURCE and src.data_type == "s"


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
        wbmod.write_plan_outputs(FakeResult(), None, workbook=target, plots_dir=None)
    assert target.read_bytes() == b"old workbook"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"]


def test_infeasible_plan_writes_summary(tmp_path: Path) -> None:
    data = _plan_json()
    data.update(
        status="infeasible",
        total_cost_usd=None,
        cost_usd_per_month=None,
        deployments=[],
        supply=[],
        alternatives=[],
        infeasibility=[
            {
                "workload": "chat",
                "message": "=lowest TPOT is 70 ms",
                "relaxation": "raise chat.slo.tpot_ms to 70",
            }
        ],
    )
    path = tmp_path / "plan.xlsx"
    wbmod.write_plan_outputs(FakeResult(data), None, workbook=path, plots_dir=tmp_path / "plots")
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


@settings(deadline=None, max_examples=50)
@given(
    st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=12),
    st.floats(min_value=1.0, max_value=1e5),
    st.sampled_from([12, 24, 36]),
)
def test_monthly_costs_sum_to_total(units: list[int], price: float, horizon: int) -> None:
    data = _plan_json()
    line = dict(data["supply"][0], units_per_period=units, usd_per_unit_month=price)
    # The planner total here is whatever the solver reports; the residual goes to Other_cost_usd.
    data.update(supply=[line], horizon_months=horizon, total_cost_usd=1e6)
    assert sum(wbmod.monthly_cost_usd(data)) == pytest.approx(1e6, rel=1e-9)


# --------------------------------------------------------------------------------------------------
# LibreOffice recompute
# --------------------------------------------------------------------------------------------------


@needs_soffice
def test_recomputed_totals_match_plan(recomputed: dict[str, Any]) -> None:
    data = _plan_json()
    wb = recomputed["plan"]
    summary = wb["Summary"]
    total = data["total_cost_usd"]
    assert find_row(summary, "Total cost (USD)")[1].value == pytest.approx(total, rel=REL)
    assert find_row(summary, "Opex (USD/month)")[1].value == pytest.approx(
        data["cost_usd_per_month"], rel=REL
    )
    tokens_m = (16.0 * 300 + (10.0 + 4.0) * 250) * S_PER_MONTH / 1e6
    assert find_row(summary, "Served output tokens (Mtok/month)")[1].value == pytest.approx(tokens_m, rel=REL)
    assert find_row(summary, "Cost per million output tokens (USD/Mtok)")[1].value == pytest.approx(
        data["cost_usd_per_month"] / tokens_m, rel=REL
    )
    assert find_row(summary, "Min TPOT margin (%)")[1].value == pytest.approx(1 - 59.0 / 60.0, rel=REL)
    assert find_row(summary, "mi300x")[1].value == 16
    costs = wb["Costs"]
    monthly = wbmod.monthly_cost_usd(data)
    for m, expected in enumerate(monthly):
        assert costs.cell(row=m + 2, column=7).value == pytest.approx(expected, rel=REL)
    assert costs.cell(row=HORIZON + 1, column=8).value == pytest.approx(total, rel=REL)
    assert find_row(costs, "Total")[6].value == pytest.approx(total, rel=REL)
    cats = {
        r[0].value: r[1].value
        for r in costs.iter_rows(min_row=HORIZON + 4)
        if r[0].value in ("rent", "other")
    }
    assert cats["rent"] == pytest.approx(data["costs_usd"]["rent"], rel=REL)
    assert cats["other"] == pytest.approx(POWER_USD, rel=REL)
    dep = wb["Deployments"]
    for i, d in enumerate(data["deployments"], start=2):
        assert dep.cell(row=i, column=18).value == pytest.approx(d["cost_usd_per_month"], rel=REL)
    alt = wb["Alternatives"]
    assert alt["E3"].value == pytest.approx(5000.0, rel=REL)
    buy = wb["BuyVsRent"]
    assert buy["K2"].value == pytest.approx(2 * sum(UNITS_A) * PRICE_A, rel=REL)
    assert buy["J3"].value == pytest.approx(max(UNITS_B) * PRICE_B, rel=REL)


@needs_soffice
def test_editing_a_price_moves_every_total(recomputed: dict[str, Any]) -> None:
    data = _plan_json()
    base, edited = recomputed["plan"], recomputed["edited"]
    unit_months = sum(_expected_monthly_units(UNITS_A))
    delta = 100.0 * unit_months
    before = find_row(base["Summary"], "Total cost (USD)")[1].value
    after = find_row(edited["Summary"], "Total cost (USD)")[1].value
    assert before == pytest.approx(data["total_cost_usd"], rel=REL)
    assert after - before == pytest.approx(delta, rel=REL)
    assert find_row(edited["Summary"], "Opex (USD/month)")[1].value == pytest.approx(
        (data["total_cost_usd"] + delta) / HORIZON, rel=REL
    )
    assert edited["Deployments"]["R2"].value == pytest.approx(
        2 * sum(UNITS_A) * (PRICE_A + 100.0) / HORIZON, rel=REL
    )
    assert edited["BuyVsRent"]["I2"].value == pytest.approx(PRICE_A + 100.0, rel=REL)


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


# --------------------------------------------------------------------------------------------------
# The real planner path
# --------------------------------------------------------------------------------------------------


def test_real_plan_workbook(real_plan: tuple[Path, dict[str, Any]]) -> None:
    path, data = real_plan
    assert data["status"] != "infeasible" and data["supply"]
    assert sum(wbmod.monthly_cost_usd(data)) == pytest.approx(data["total_cost_usd"], rel=1e-9)
    wb = load_workbook(path)
    dep = wb["Deployments"]
    assert [dep.cell(row=i + 2, column=3).value for i in range(len(data["deployments"]))] == [
        d["gpu"] for d in data["deployments"]
    ]
    # months counted from 0, as purchase_month and start_month in the JSON
    assert [c.value for c in wb["Costs"]["A"][1 : data["horizon_months"] + 1]] == list(
        range(data["horizon_months"])
    )


@needs_soffice
def test_real_plan_recomputed(real_plan: tuple[Path, dict[str, Any]], recomputed: dict[str, Any]) -> None:
    data = real_plan[1]
    done = recomputed["real"]
    assert find_row(done["Summary"], "Total cost (USD)")[1].value == pytest.approx(
        data["total_cost_usd"], rel=REL
    )
    assert find_row(done["Summary"], "Opex (USD/month)")[1].value == pytest.approx(
        data["cost_usd_per_month"], rel=REL
    )
    for i, d in enumerate(data["deployments"], start=2):
        assert done["Deployments"].cell(row=i, column=18).value == pytest.approx(
            d["cost_usd_per_month"], rel=REL
        )
    for i, s in enumerate(data["supply"], start=2):
        assert done["BuyVsRent"].cell(row=i, column=15).value == pytest.approx(
            s["cost_usd_per_month"], rel=REL
        )
    costs = done["Costs"]
    start = data["horizon_months"] + 3
    cats = {r[0].value: r[1].value for r in costs.iter_rows(min_row=start) if r[0].value in data["costs_usd"]}
    for category, usd in data["costs_usd"].items():
        if usd:
            assert cats[category] == pytest.approx(usd, rel=REL)
    capex = [s for s in data["supply"] if s.get("capex_usd")]
    header = [c.value for c in costs[1]]
    assert len([h for h in header if str(h).startswith("Capex ")]) == len(capex)
