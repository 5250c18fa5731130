"""The write time openpyxl stamps into a workbook (docProps/core.xml created/modified, each zip entry's time)
is the only part of a plan workbook that differs between two writes of the same plan; SOURCE_DATE_EPOCH fixes
it, so the same input gives a byte-identical file (planner.report.files.write_workbook)."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from planner.cli.main import app
from planner.report.files import restamped_xlsx, write_workbook

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples/chat_70b_cloud/scenario.yaml"
runner = CliRunner()
NEW_YEAR_2026 = "1767225600"


def _xlsx(created: datetime) -> bytes:
    wb = Workbook()
    wb.active["A1"] = 42
    wb.properties.created = created
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def test_restamping_sets_every_write_time_and_keeps_the_contents() -> None:
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    first, second = _xlsx(datetime(2024, 5, 1)), _xlsx(datetime(2025, 7, 9))
    assert first != second
    assert restamped_xlsx(first, stamp) == restamped_xlsx(second, stamp)
    with zipfile.ZipFile(io.BytesIO(restamped_xlsx(first, stamp))) as z, zipfile.ZipFile(io.BytesIO(first)) as raw:
        assert {i.date_time for i in z.infolist()} == {(2026, 1, 1, 0, 0, 0)}
        core = z.read("docProps/core.xml").decode()
        assert '">2026-01-01T00:00:00Z</dcterms:created>' in core and '">2026-01-01T00:00:00Z</dcterms:modified>' in core
        assert [i.filename for i in z.infolist()] == [i.filename for i in raw.infolist()]
        assert z.read("xl/worksheets/sheet1.xml") == raw.read("xl/worksheets/sheet1.xml")


def test_same_plan_same_bytes_under_source_date_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", NEW_YEAR_2026)
    books = [tmp_path / "a.xlsx", tmp_path / "b.xlsx"]
    for book in books:
        res = runner.invoke(app, ["plan", str(CHAT), "--no-alternatives", "-q", "-o", str(book)])
        assert res.exit_code == 0, res.output
    assert books[0].read_bytes() == books[1].read_bytes()


def test_a_bad_source_date_epoch_is_one_line_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "2026-01-01")
    book = tmp_path / "plan.xlsx"
    with pytest.raises(Exception, match="SOURCE_DATE_EPOCH='2026-01-01': expected whole seconds since 1970-01-01 UTC"):
        write_workbook(book, Workbook())
    res = runner.invoke(app, ["plan", str(CHAT), "--no-alternatives", "-o", str(book)])
    assert res.exit_code == 2 and not book.exists()
    assert res.stderr.strip().splitlines()[-1].startswith("error: SOURCE_DATE_EPOCH='2026-01-01': expected whole seconds")


def test_a_bad_source_date_epoch_is_refused_before_the_solve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The output checks that run before any solve refuse it for a workbook path (and only for one)."""
    from planner.cli.common import check_output_path
    from planner.errors import InputError

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH='soon'"):
        check_output_path(tmp_path / "plan.xlsx", "-o")
    check_output_path(tmp_path / "plan.json", "--json-out")  # JSON carries no write time
    calls: list[object] = []
    monkeypatch.setattr("planner.plan.plan", lambda *a, **k: calls.append(a))
    res = runner.invoke(app, ["plan", str(CHAT), "-o", str(tmp_path / "plan.xlsx")])
    assert res.exit_code == 2 and calls == []


def test_unset_keeps_the_write_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without SOURCE_DATE_EPOCH the workbook says when it was written (Excel's File › Info "Created")."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    book = tmp_path / "plan.xlsx"
    before = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    write_workbook(book, Workbook())
    with zipfile.ZipFile(book) as z:
        core = z.read("docProps/core.xml").decode()
    created = datetime.fromisoformat(core.split("<dcterms:created", 1)[1].split(">", 1)[1].split("<", 1)[0].rstrip("Z"))
    assert before <= created <= datetime.now(UTC).replace(tzinfo=None)
