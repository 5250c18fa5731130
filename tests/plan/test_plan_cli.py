"""End-to-end: plan the examples, the audit, infeasible answers, and the CLI's exit codes and outputs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.audit import audit_deployment, audit_plan
from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.cli.main import app
from planner.demand import demand_per_period
from planner.errors import AuditError
from planner.plan import plan
from planner.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*/scenario.yaml"))
runner = CliRunner()


def test_there_are_at_least_four_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_examples_plan_within_slos(catalog: Catalog, path: Path) -> None:
    scenario = load_scenario(path, catalog)
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "optimal"
    data = result.to_json()
    workloads = {w.name: w for w in scenario.workloads}
    for d in data["deployments"]:
        w = workloads[d["workload"]]
        role = d.get("role", "colocated")
        assert (d["tpot_ms"] is None) == (role == "prefill") and (d["ttft_ms"] is None) == (role == "decode")
        assert (d["tpot_ms"] or 0.0) <= w.slo.tpot_ms and (d["ttft_ms"] or 0.0) <= w.slo.ttft_ms
        assert d["memory_per_gpu_gb"] <= catalog.gpu(d["gpu"]).memory_gb
    scale = data["served_scale"] if scenario.objective == "max_throughput" else 1.0
    for w in scenario.workloads:
        # a disaggregated request passes a prefill AND a decode pool: count it once (at its prefill pool)
        served = sum(
            d["served_requests_per_s"]
            for d in data["deployments"]
            if d["workload"] == w.name and d.get("role", "colocated") != "decode"
        )
        peak = max(demand_per_period(w, periods=scenario.periods, period_months=scenario.period_months))
        assert served == pytest.approx(scale * peak, rel=1e-6)
    # the total is exactly what the supply lines cost over the horizon
    supply_total = sum(s["cost_usd_per_month"] for s in data["supply"]) * scenario.horizon_months
    assert data["total_cost_usd"] == pytest.approx(supply_total, rel=1e-6)
    assert sum(d["cost_usd_per_month"] for d in data["deployments"]) == pytest.approx(
        data["cost_usd_per_month"], rel=1e-9
    )


def test_audit_rejects_a_deliberately_broken_candidate(catalog: Catalog) -> None:
    scenario = load_scenario(ROOT / "examples/chat_70b_cloud/scenario.yaml", catalog)
    result = plan(catalog, scenario, with_alternatives=False)
    table = build_candidates(catalog, scenario)
    broken = [
        replace(d, capacity_per_replica_requests_per_s=d.capacity_per_replica_requests_per_s * 2)
        for d in result.deployments
    ]
    with pytest.raises(AuditError, match="claims"):
        audit_plan(catalog, scenario, broken, table.sites)
    too_big = [replace(d, batch=4096) for d in result.deployments]
    with pytest.raises(AuditError):
        audit_plan(catalog, scenario, too_big, table.sites)
    assert audit_plan(catalog, scenario, result.deployments, table.sites)


def _scenario_file(tmp_path: Path, **overrides: object) -> Path:
    text = (ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text()
    path = tmp_path / "s.yaml"
    for old, new in overrides.items():
        text = text.replace(old.replace("__", " "), str(new))
    path.write_text(text)
    return path


def test_infeasible_tpot_is_explained(catalog: Catalog) -> None:
    scenario = parse_scenario(
        {
            "name": "too-fast",
            "workloads": [
                {
                    "name": "chat",
                    "models": ["llama_3_1_405b"],
                    "requests_per_s": 1,
                    "input_tokens": 1000,
                    "output_tokens": 100,
                    "slo": {"ttft_ms": 5000, "tpot_ms": 2},
                    "sites": ["us_east"],
                }
            ],
        }
    )
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "infeasible"
    item = result.infeasibility[0]
    assert item.requirement == "tpot_ms" and item.best_value_ms > 2
    assert "lowest TPOT for llama_3_1_405b" in item.message and "the SLO is 2 ms" in item.message
    assert item.relaxation.startswith("raise chat.slo.tpot_ms to")


def test_infeasible_capacity_names_the_binding_limit(catalog: Catalog) -> None:
    scenario = parse_scenario(
        {
            "name": "small-store",
            "workloads": [
                {
                    "name": "a",
                    "models": ["llama_3_1_8b"],
                    "requests_per_s": 500,
                    "input_tokens": 500,
                    "output_tokens": 100,
                    "slo": {"ttft_ms": 2000, "tpot_ms": 50},
                    "sites": ["shop"],
                }
            ],
            "sites": [{"name": "shop", "kind": "edge", "rtt_ms": 5, "devices": {"rtx_4090": 2}}],
        }
    )
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "infeasible"
    item = result.infeasibility[0]
    assert item.requirement == "requests_per_s"
    assert 0 < item.best_value_requests_per_s < 500
    assert item.message.endswith("binding: the 2 rtx_4090 edge devices at shop (all in use)")
    assert "gpu_supply" not in item.message + item.relaxation  # the MILP's row names are not the user's words


def test_cli_plan_json_stdout_is_clean_and_exit_zero(tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "--json", "--no-alternatives"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    for key in (
        "status",
        "total_cost_usd",
        "cost_usd_per_month",
        "deployments",
        "binding_constraints",
        "alternatives",
        "candidates_evaluated",
        "solve_seconds",
    ):
        assert key in data
    d = data["deployments"][0]
    for key in (
        "workload",
        "model",
        "gpu",
        "site",
        "placement",
        "quantization",
        "tp",
        "pp",
        "replicas",
        "gpus",
        "batch",
        "ttft_ms",
        "tpot_ms",
        "capacity_requests_per_s",
        "served_requests_per_s",
        "cost_usd_per_month",
    ):
        assert key in d


def test_cli_bad_gpu_exits_2_with_suggestion_and_no_output(tmp_path: Path) -> None:
    path = _scenario_file(tmp_path, h100_sxm="h100sxm")
    out = tmp_path / "plan.xlsx"
    res = runner.invoke(app, ["plan", str(path), "-o", str(out)])
    assert res.exit_code == 2
    assert "did you mean h100_sxm" in res.stderr
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_missing_file_and_bad_field_exit_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["plan", str(tmp_path / "nope.yaml")])
    assert res.exit_code == 2 and "not found" in res.stderr
    path = _scenario_file(tmp_path, **{"tpot_ms:__50": "tpot_ms: -5"})
    res = runner.invoke(app, ["plan", str(path)])
    assert res.exit_code == 2 and "workloads[0].slo.tpot_ms" in res.stderr


def test_cli_infeasible_exits_3(tmp_path: Path) -> None:
    path = _scenario_file(tmp_path, **{"tpot_ms:__50": "tpot_ms: 1"})
    res = runner.invoke(app, ["plan", str(path), "--no-alternatives"])
    assert res.exit_code == 3
    assert "lowest TPOT" in res.stderr


def test_cli_writes_workbook(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    res = runner.invoke(
        app,
        ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "-o", str(out), "--no-alternatives"],
    )
    assert res.exit_code == 0, res.output
    assert out.exists() and out.stat().st_size > 1000


def test_cli_predict_reference_numbers() -> None:
    res = runner.invoke(app, ["predict", "--model", "qwen3_8b", "--gpu", "rtx_pro_6000", "--ideal", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["params"] == 8_190_735_360
    assert data["weights_bytes"] == 16_381_470_720
    assert data["kv_bytes_per_token"] == 147_456
    assert data["decode_read_bytes_per_step"] / 1e9 == pytest.approx(15.44, abs=0.005)
    assert data["prefill_tflop"] == pytest.approx(29.69, abs=0.005)
    assert data["decode_gflop_per_step"] == pytest.approx(16.34, abs=0.005)
    assert data["ttft_ms"] == pytest.approx(58.9, abs=0.05)
    assert data["decode_step_ms"] == pytest.approx(8.62, rel=2e-3)  # mean decode history P + G/2 (8.616 ms at 2K)
    assert data["bound"] == "memory" and data["fits"] is True


def test_cli_predict_unknown_model_exits_2() -> None:
    res = runner.invoke(app, ["predict", "--model", "qwen3_8", "--gpu", "h100_sxm"])
    assert res.exit_code == 2 and "did you mean qwen3_8b" in res.stderr


def test_cli_catalog_and_schema() -> None:
    res = runner.invoke(app, ["catalog", "models", "qwen3_8b", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["derived"]["params"] == 8_190_735_360
    res = runner.invoke(app, ["schema"])
    assert res.exit_code == 0 and "horizon_months" in json.loads(res.stdout)["properties"]
    assert runner.invoke(app, ["catalog", "gpus", "h100sxm"]).exit_code == 2


GOLDEN = json.loads((ROOT / "tests/golden/examples.json").read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_examples_match_golden_plans(catalog: Catalog, name: str) -> None:
    """Regenerate tests/golden/examples.json deliberately when the catalog or the model changes. Planned as
    `planner plan` does, with alternatives: one of them replaces the plan only when it beats it (a less-served
    max_throughput alternative once replaced pd_card8's plan)."""
    result = plan(catalog, load_scenario(ROOT / "examples" / name / "scenario.yaml", catalog))
    data = result.to_json()
    golden = GOLDEN[name]
    assert data["status"] == golden["status"]
    assert data["total_cost_usd"] == pytest.approx(golden["total_cost_usd"], rel=1e-6)
    # equal-cost alternatives may differ in TP split between solver builds; the GPU types may not
    assert {d["gpu"] for d in data["deployments"]} == {s.split(":")[3] for s in golden["deployments"]}


@pytest.mark.parametrize("example", ["mixed_fleet", "moe_ep", "small_models_shared", "chat_p99_redundant", "pd_card8"])
def test_the_plans_audit_records_are_each_deployments_own(catalog: Catalog, example: str) -> None:
    """audit_plan bisects the plain co-located deployments' capacities together (planner.audit._capacities); each
    record is the one auditing that deployment alone gives, to the last bit (the others: pools, percentiles,
    optimizations, are audited one by one either way)."""
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    result = plan(catalog, scenario, with_alternatives=False)
    table = build_candidates(catalog, scenario)
    together = audit_plan(catalog, scenario, result.deployments, table.sites)
    alone = [audit_deployment(catalog, scenario, d, table.sites) for d in result.deployments]
    assert together == alone and len(alone) >= 1
