"""`planner catalog` as a reader sees it. A record's nested fields printed their non-ASCII text escaped
('catalog interconnects nvlink4': "30.8-31.1 \\u00b5s", "8 \\u00d7 H200"), and `catalog prices` of a GPU no
provider rents ('apple_m3_ultra') printed an empty table titled "(0 rows)" with no word of why."""

from __future__ import annotations

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()


def test_a_nested_field_prints_its_text_unescaped() -> None:
    res = runner.invoke(app, ["catalog", "interconnects", "nvlink4"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert "16-256 KiB all-reduces 30.8-31.1 µs, 1 MiB 34.6 µs" in res.stdout
    assert "8 × H200 NVSwitch all-reduce" in res.stdout
    assert "\\u00b5" not in res.stdout and "\\u00d7" not in res.stdout


def test_prices_of_a_gpu_no_provider_rents_say_so() -> None:
    res = runner.invoke(app, ["catalog", "prices", "apple_m3_ultra"])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""  # no empty "(0 rows)" table
    assert " ".join(res.stderr.split()) == (
        "apple_m3_ultra: no provider rents it (no quote in catalogs/prices.yaml; edge placement); "
        "`planner catalog gpus apple_m3_ultra` shows its purchase price"
    )
    as_json = runner.invoke(app, ["catalog", "prices", "apple_m3_ultra", "--json"])
    assert as_json.exit_code == 0 and as_json.stdout.strip() == "[]"  # --json: the answer alone, as before


def test_prices_of_a_rented_gpu_still_print_the_table() -> None:
    res = runner.invoke(app, ["catalog", "prices", "h100_sxm"], env={"COLUMNS": "400"})
    assert res.exit_code == 0 and res.stderr == ""
    assert "rental prices, USD per GPU-hour (9 rows)" in res.stdout
    assert "hyperstack" in res.stdout and "$1.90" in res.stdout
