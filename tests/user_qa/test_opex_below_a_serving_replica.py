"""An opex budget below the cheapest replica names a deployment that serves on its own, and following its
advice does not bring the same sentence back.

examples/chat_70b_cloud with `budget: {opex_usd_per_month: 1000}` said "below its cheapest replica ($1,008/month:
1 × l40s …)": a 1-GPU L40S *prefill-pool* replica, which serves nothing without a decode pool (a co-located
70B replica needs an 80 GB card). Raised to 1,008 the plan then served 0 req/s. A budget equal to the advice
was also still "below" it (float noise in 720 h × the hourly price)."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_70b_cloud" / "scenario.yaml"
runner = CliRunner()


def _plan(tmp_path: Path, opex_usd_per_month: float, disaggregation: str | None = None) -> tuple[int, str]:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["budget"] = {"opex_usd_per_month": opex_usd_per_month}
    if disaggregation is not None:
        data["workloads"][0]["disaggregation"] = disaggregation
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = runner.invoke(app, ["plan", str(path)])
    return result.exit_code, " ".join(result.stderr.split())


def test_the_cheapest_replica_serves_on_its_own(tmp_path: Path) -> None:
    code, said = _plan(tmp_path, 1000)
    assert code == 3
    assert (
        "below its cheapest replica ($1,764/month: 1 × a100_sxm_80gb at us_east in one 1-GPU instance, "
        "rent_on_demand)" in said
    )
    assert "raise budget.opex_usd_per_month to 1,764 at least" in said


def test_the_advice_followed_is_no_longer_below_a_replica(tmp_path: Path) -> None:
    code, said = _plan(tmp_path, 1764)
    assert code == 3
    assert "cheapest replica" not in said
    assert "chat: at most 0.512 of 8 req/s can be served in period 0" in said


def test_a_disaggregated_workload_pays_for_both_pools(tmp_path: Path) -> None:
    code, said = _plan(tmp_path, 1000, disaggregation="on")
    assert code == 3
    assert (
        "below its cheapest replica ($2,772/month: 1 × l40s at us_east in one 1-GPU instance, rent_on_demand for "
        "prefill + 1 × a100_sxm_80gb at us_east in one 1-GPU instance, rent_on_demand for decode)" in said
    )
