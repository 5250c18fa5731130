"""The HTML report (`planner plan -o plan.html`): self-contained, escaped, the workbook's tables and charts,
and a browser draws it (headless Chromium screenshot that is not blank)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.report.html import build_html, write_plan_html
from planner.scenario import Budget
from tests.report import synthetic_plan as syn

ROOT = Path(__file__).resolve().parents[2]


def test_html_has_the_tables_and_embedded_charts() -> None:
    page = build_html(syn.plan_result())
    for section in ("Summary", "Deployments", "SLOs", "Supply", "Paid but idle GPUs", "Charts"):
        assert f"<h2>{section}</h2>" in page
    assert page.count("data:image/png;base64,") == 3
    assert 'src="http' not in page and "<link" not in page and "<script" not in page  # self-contained
    assert "KV dtype" in page and "TPOT headroom" in page


def test_html_escapes_user_text() -> None:
    scenario = syn.scenario().model_copy(update={"name": "plan <b>[draft]</b> & co"})
    page = build_html(syn.plan_result(scenario=scenario))
    assert "plan &lt;b&gt;[draft]&lt;/b&gt; &amp; co" in page and "<b>[draft]" not in page


def test_cli_writes_html(tmp_path: Path) -> None:
    out = tmp_path / "plan.html"
    res = CliRunner().invoke(
        app,
        ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "-o", str(out), "--no-alternatives"],
    )
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("<!DOCTYPE html>") and f"wrote {out}" in res.stderr
    bad = CliRunner().invoke(
        app, ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "-o", "x.pdf"]
    )
    assert bad.exit_code == 2 and ".html" in bad.stderr


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not installed (make system-deps)")
def test_chromium_renders_a_page_that_is_not_blank(tmp_path: Path) -> None:
    from PIL import Image

    page, shot = tmp_path / "plan.html", tmp_path / "shot.png"
    write_plan_html(syn.plan_result(), page)
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1600",
         f"--screenshot={shot}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    image = Image.open(shot).convert("L")
    dark = image.point(lambda v: 255 if v < 128 else 0).histogram()[255] / (image.width * image.height)
    assert dark > 0.01, f"only {dark:.2%} of the screenshot is drawn"


def test_html_summary_shows_the_budget_lines_and_the_binding_limit() -> None:
    plain = syn.plan_result()
    scenario = syn.scenario().model_copy(update={"budget": Budget(capex_usd=plain.capex_usd)})
    result = syn.plan_result(scenario=scenario)
    page = build_html(result)
    spent = f"${result.capex_usd:,.0f} of ${result.capex_usd:,.0f} (100.0%)"
    # the workbook Summary's label, in dollars (was "Budget capex_usd: spent of limit", "300,000 of 300,000")
    assert f"<td>Capex budget (USD): spent of limit</td><td>{spent}</td>" in page
    assert "<td>Binding limit</td><td>capex_usd</td>" in page
    assert "Binding limit" not in build_html(plain)


def test_html_names_the_role_of_prefill_and_decode_pools() -> None:
    """A prefill and a decode pool of one workload, GPU and site are two rows that read alike unless the role
    is shown (examples/buy_vs_rent: two 'chat h200_sxm dc1 2x1, 1 replica' rows); the terminal writes
    'chat (prefill)', and a figure a pool does not have (a prefill pool's TPOT, a decode pool's TTFT) is '—',
    not 0.00 ms with 100% headroom."""
    import dataclasses

    first = syn.DEPLOYMENTS[0]
    pools = [
        dataclasses.replace(first, role="prefill", tpot_ms=0.0, decode_step_ms=0.0),
        dataclasses.replace(first, role="decode", ttft_ms=0.0),
    ]
    page = build_html(syn.plan_result(deployments=pools))
    assert page.count(f"<td>{first.workload} (prefill)</td>") == 2  # Deployments and SLOs
    assert page.count(f"<td>{first.workload} (decode)</td>") == 2
    assert "<td>100%</td>" not in page
