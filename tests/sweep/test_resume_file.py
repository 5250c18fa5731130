"""A damaged `planner sweep --resume` file: exit 2 with one line naming the file and the line (it was exit 4,
"internal error: AttributeError / TypeError / UnicodeDecodeError"), the file untouched; a row cut short by a
stopped run is dropped before the next row is appended (the row used to be glued to it, and the next resume
refused the file: "line 3 is not JSON"). No MILP is solved here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.errors import InputError
from planner.readout.sweep import SweepRow
from planner.sweep.resume import ResumeLog, read_rows
from tests.sweep.helpers import CHAT, sweep_app

DIGEST = "d" * 64
HEADER = json.dumps({"scenario": "chat", "scenario_sha256": DIGEST})
ROW = SweepRow(index=0, key="economics.rent_price_scale=1", values={"economics.rent_price_scale": 1},
               status="optimal", total_cost_usd=100.0, capex_usd=0.0, opex_usd_per_month=10.0)  # fmt: skip
ROW_LINE = json.dumps(ROW.to_json(), sort_keys=True)
BAD_COST = ROW_LINE.replace("100.0", '"lots"')
"""A row whose total cost is text: printing the table would fail after the sweep."""
ASK = "give a file written by --resume, or a new file name to start afresh"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1, 2]\n", "line 1 is not the header a --resume file starts with"),
        (b'"text"\n{}\n', "line 1 is not the header a --resume file starts with"),
        (b"not json\n", "line 1 is not JSON"),  # a whole line: not a row cut short, so never appended to
        (f'{HEADER}\n{{"a": 1}}\n'.encode(), "line 2 is not a sweep row"),
        (f"{HEADER}\n[1]\n{{}}\n".encode(), "line 2 is not a sweep row"),
        (f"{HEADER}\n{BAD_COST}\n".encode(), "line 2 is not a sweep row"),
    ],
)
def test_a_damaged_resume_file_is_an_input_error_naming_the_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_rows(path, DIGEST)
    assert str(info.value) == f"--resume {path}: {message} — {ASK}"


def test_a_resume_file_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError) as info:
        read_rows(path, DIGEST)
    assert str(info.value) == (
        f"--resume {path}: not UTF-8 text (byte 0) — give a file written by --resume, or a new file name"
    )


def test_a_row_cut_short_is_skipped_and_dropped_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(f"{HEADER}\n{ROW_LINE}\n{ROW_LINE[:40]}", encoding="utf-8")  # stopped mid-write
    assert list(read_rows(path, DIGEST)) == [ROW.key]
    log = ResumeLog(path, DIGEST, "chat")
    second = SweepRow(index=1, key="economics.rent_price_scale=2", values={"economics.rent_price_scale": 2},
                      status="optimal", total_cost_usd=200.0)  # fmt: skip
    log.append(second)
    log.close()
    assert path.read_text(encoding="utf-8").splitlines() == [
        HEADER,
        ROW_LINE,
        json.dumps(second.to_json(), sort_keys=True),
    ]
    assert sorted(read_rows(path, DIGEST)) == [ROW.key, second.key]


def test_a_header_cut_short_is_written_again(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(HEADER[:30], encoding="utf-8")
    assert read_rows(path, DIGEST) == {}
    ResumeLog(path, DIGEST, "chat").close()
    assert (
        path.read_text(encoding="utf-8")
        == json.dumps({"scenario": "chat", "scenario_sha256": DIGEST}, sort_keys=True) + "\n"
    )


def test_the_cli_refuses_a_damaged_resume_file_in_one_line_and_keeps_it(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    shutil.copy(CHAT, scenario)
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(b"[1, 2]\n")
    res = CliRunner().invoke(
        sweep_app(),
        [
            "sweep",
            str(scenario),
            "--vary",
            "economics.rent_price_scale=1,2",
            "--workers",
            "1",
            "--resume",
            str(rows),
        ],
    )
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [
        f"error: --resume {rows}: line 1 is not the header a --resume file starts with — {ASK}"
    ]
    assert rows.read_bytes() == b"[1, 2]\n"
