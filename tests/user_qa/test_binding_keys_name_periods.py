"""The binding-constraint keys name periods, not solver time slices.

An hourly profile (4 quarterly periods × 9 hour blocks) printed "demand_coverage chat/0–35" under a plan of 4
periods, and a flat 36-month plan (one representative slice) printed "chat/0" as if only the first month
bound. The terminal, the HTML and the workbook's Constraints sheet now name the periods each row's slice
stands for; the JSON keeps the solver's rows."""

from __future__ import annotations

from typing import Any

from planner.report.binding_periods import row_periods, slice_periods
from planner.report.formatting import binding_rows


def _schedule(periods: int, reps: list[int], blocks: int) -> list[dict[str, Any]]:
    return [
        {
            "period": t,
            "representative_period": reps[t],
            "hour_blocks": [{"hours_per_day": 24 / max(blocks, 1)}] * blocks,
        }
        for t in range(periods)
    ]


def test_hour_block_slices_read_as_their_periods() -> None:
    schedule = _schedule(4, [0, 1, 2, 3], 9)
    binding = [{"family": "demand_coverage", "key": ["chat", str(s)], "slack": 0.0} for s in range(36)]
    # h100 binds in blocks 0–3 of period 0 and 2–5 of period 3 only
    binding += [
        {"family": "gpu_supply", "key": ["h100_sxm", "us_east", str(s)], "slack": 0.0}
        for s in [0, 1, 2, 3, 29, 30, 31, 32]
    ]
    binding += [{"family": "budget_max", "key": ["opex", "2"], "slack": 0.0}]  # keyed by period, not slice
    binding += [{"family": "instance_packing", "key": ["l40s", "us_east", "10", "8"], "slack": 0.0}]
    assert binding_rows(binding, schedule) == [
        ("demand_coverage", "chat/0–3"),
        ("gpu_supply", "h100_sxm/us_east/0, 3"),
        ("budget_max", "opex/2"),
        ("instance_packing", "l40s/us_east/1/8"),
    ]
    assert row_periods(binding[5], slice_periods(schedule)) == [0]


def test_a_merged_flat_plan_names_every_period() -> None:
    schedule = _schedule(36, [0] * 36, 0)
    binding = [
        {"family": "demand_coverage", "key": ["chat", "0"], "slack": 0.0},
        {"family": "gpu_supply", "key": ["b200", "us_east", "0"], "slack": 0.0},
        {"family": "demand_coverage", "key": ["scale_floor"], "slack": 0.0},
    ]
    assert binding_rows(binding, schedule) == [
        ("demand_coverage", "chat/0–35"),
        ("gpu_supply", "b200/us_east/0–35"),
        ("demand_coverage", "scale_floor"),
    ]
    # without a schedule (older callers): the slice ids as before
    assert binding_rows(binding)[0] == ("demand_coverage", "chat/0")


def test_plan_outputs_name_the_periods(tmp_path: Any) -> None:
    """The bundled chat_70b_cloud plan (36 equal months, one slice): terminal, HTML and workbook agree."""
    from pathlib import Path

    import openpyxl
    from typer.testing import CliRunner

    from planner.cli.main import app

    scenario = Path(__file__).resolve().parents[2] / "examples/chat_70b_cloud/scenario.yaml"
    out, html = tmp_path / "p.xlsx", tmp_path / "p.html"
    runner = CliRunner()
    res = runner.invoke(app, ["plan", str(scenario), "--no-alternatives", "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    assert "│ demand_coverage │ chat/0–35 " in res.stdout
    assert "│ gpu_supply      │ b200/us_east/0–35 " in res.stdout
    ws = openpyxl.load_workbook(out)["Constraints"]
    rows = [[c.value for c in r] for r in ws.iter_rows()]
    assert rows[0] == ["Family", "Key", "Slack", "Periods"]
    assert rows[1] == ["demand_coverage", "chat/0", 0, "0–35"]
    assert runner.invoke(app, ["plan", str(scenario), "--no-alternatives", "-o", str(html)]).exit_code == 0
    assert "chat/0–35</td>" in html.read_text()
