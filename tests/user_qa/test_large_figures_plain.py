"""Figures of 1,000 and more were written with ``:.3g`` in sentences a person reads: `planner budget S
--capex-usd 100` on a rent-only scenario titled its plan "serves 1e+04× the stated demand (5e+04 req/s)", and
`planner predict ... --requests-per-s 20000` warned "it sustains about 2.91e+03 requests/s". They read
"10,000×", "50,000 req/s" and "2,914 requests/s" now; figures below 1,000 keep three significant digits."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app
from planner.units import three_digits_text

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_three_digits_text() -> None:
    assert [three_digits_text(v) for v in (0.0625, 1.2649, 10.3, 88.64, 999.4)] == [
        "0.0625",
        "1.26",
        "10.3",
        "88.6",
        "999",
    ]
    assert [three_digits_text(v) for v in (1000.0, 2914.2, 10_000.0, 49_999.99)] == [
        "1,000",
        "2,914",
        "10,000",
        "50,000",
    ]


def test_budget_title_has_no_exponent(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    res = runner.invoke(app, ["init", str(scenario)])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(app, ["budget", str(scenario), "--capex-usd", "100"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.stderr
    title = res.stdout.splitlines()[0]
    assert "serves 10,000× the stated demand (50,000 req/s)" in title
    assert "e+0" not in res.stdout


def test_predict_overload_warning_has_no_exponent() -> None:
    args = [
        "predict",
        "--model",
        "qwen3_8b",
        "--gpu",
        "h100_sxm",
        "--input-tokens",
        "10",
        "--output-tokens",
        "2",
    ]
    res = runner.invoke(app, [*args, "--requests-per-s", "20000", "--json"])
    assert res.exit_code == 0, res.stderr
    assert "e+0" not in res.stderr
    assert "it sustains about 2," in " ".join(res.stderr.split())


def test_predict_table_counts_have_thousands_separators() -> None:
    """The predict table read "params 70553706496" and "kv_bytes_per_token 3.277e+05" (',.4g' of 327,680)."""
    from planner.cli.predict_cmd import value_text

    assert [value_text(v) for v in (70553706496, 327680.0, 1209.3, 28.9612, 8.0, True, "memory")] == [
        "70,553,706,496", "327,680", "1,209", "28.96", "8", "True", "memory",
    ]  # fmt: skip
