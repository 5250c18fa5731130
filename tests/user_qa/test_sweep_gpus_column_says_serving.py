"""The sweep workbook's GPU column counts the GPUs serving (gpus_by_type, the most serving at once), not the
GPUs paid: chat_70b_cloud at rent scale 1.3 and 16 req/s serves on 6 mi300x from one 8-GPU instance, and
its opex pays 8 GPUs ($12,804/month = 8 × $1.71 × 1.3 × 720 h); the header said only "GPUs by type"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def test_gpus_column_header_says_serving_not_paid(tmp_path: Path) -> None:
    out, js = tmp_path / "sweep.xlsx", tmp_path / "sweep.json"
    res = CliRunner().invoke(app, [
        "sweep", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "--vary", "economics.rent_price_scale=1.3",
        "--vary", "workloads.chat.requests_per_s=16", "--workers", "1", "-o", str(out), "--json-out", str(js),
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    (row,) = json.loads(js.read_text())["rows"]
    assert row["gpus_by_type"] == {"mi300x": 6}
    assert row["opex_usd_per_month"] == pytest.approx(8 * 9849.6 / 8 * 1.3, rel=1e-9)  # 8 GPUs paid
    ws = load_workbook(out)["Sweep"]
    header = {c.value: c.column_letter for c in ws[3] if c.value}
    column = header[
        "GPUs serving at once, by type (busiest period; whole rented instances may add idle GPUs)"
    ]
    assert ws[f"{column}4"].value == "6×mi300x"


def test_the_terminal_table_heads_the_column_gpus_serving() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli.main",
            "sweep",
            str(root / "examples/chat_70b_cloud/scenario.yaml"),
            "--vary",
            "workloads.chat.requests_per_s=4",
            "--workers",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "COLUMNS": "250"},
    )
    assert "GPUs serving" in out.stdout
