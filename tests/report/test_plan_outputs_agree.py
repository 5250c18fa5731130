"""Outputs of a plan read as a user: a deployment's $/month is its share of the GPU-months of its supply, idle
GPUs count half-GPU shares as halves, the HTML report writes what the terminal writes (replicas per period,
capacity and served load) and never prints "-0.00"."""

from __future__ import annotations

import dataclasses
import html

import pytest

from planner.catalog import Catalog
from planner.readout import Deployment
from planner.readout.deployments import allocate_costs
from planner.report.formatting import period_runs_text
from planner.report.html import build_html
from planner.report.workbook_idle import idle_gpus
from tests.report import synthetic_plan as syn

H100_USD_PER_GPU_MONTH = 2.69 * 720  # one rented H100 for a month at $2.69/GPU-h


def _h100(replicas: list[int], share: float = 1.0, workload: str = "w") -> Deployment:
    base = syn.DEPLOYMENTS[1]  # a TP1 deployment on h100_sxm at us_west
    peak = max(replicas)
    return dataclasses.replace(
        base,
        workload=workload,
        replicas=peak,
        gpus=peak * share,
        gpu_share_frac=share,
        replicas_per_period=replicas,
        served_requests_per_s_per_period=[1.0] * len(replicas),
    )


def test_cost_per_deployment_follows_gpu_months_not_the_peak() -> None:
    # four equal periods; "steady" holds 1 GPU in each, "burst" 4 GPUs in the first and 1 in the others:
    # 4 + 7 = 11 GPU-periods are rented, at one price per GPU-month
    steady, burst = _h100([1, 1, 1, 1], workload="steady"), _h100([4, 1, 1, 1], workload="burst")
    supply = dataclasses.replace(
        syn.SUPPLY[1], units_per_period=[5, 2, 2, 2], cost_usd_per_month=H100_USD_PER_GPU_MONTH * 11 / 4
    )
    out = allocate_costs([steady, burst], [supply])
    # steady runs one GPU all the time: it costs one GPU-month per month
    assert out[0].cost_usd_per_month == pytest.approx(H100_USD_PER_GPU_MONTH, rel=1e-12)
    assert out[1].cost_usd_per_month == pytest.approx(H100_USD_PER_GPU_MONTH * 7 / 4, rel=1e-12)
    assert sum(d.cost_usd_per_month for d in out) == pytest.approx(supply.cost_usd_per_month, rel=1e-12)


def test_idle_gpus_count_a_half_gpu_replica_as_half() -> None:
    # three half-GPU replicas on two rented GPUs in every period: 1.5 GPUs used, 0.5 idle
    deps = [_h100([1, 1, 1], share=0.5, workload=name) for name in ("a", "b", "c")]
    supply = dataclasses.replace(syn.SUPPLY[1], units_per_period=[2, 2, 2])
    result = dataclasses.replace(syn.plan_result(), deployments=deps, supply=[supply])
    months = ["0-1", "2-3", "4-5"]  # two-month periods
    assert idle_gpus(result) == [["h100_sxm", "us_west", t, months[t], 2, 1.5, 0.5] for t in range(3)]


def test_period_runs_text_merges_equal_neighbours() -> None:
    assert period_runs_text([4, 1, 1, 1]) == "4 1×3"
    assert period_runs_text([0, 0, 2]) == "0×2 2"
    assert period_runs_text([7] * 12) == "7×12"


def test_html_deployments_show_capacity_served_and_compact_periods() -> None:
    page = build_html(syn.plan_result())
    chat = syn.DEPLOYMENTS[0]  # mi300x TP8: [1, 2, 1] replicas, 10.45 req/s per replica, 16 req/s at the peak
    assert "<th>Capacity (req/s)</th>" in page and "<th>Served (req/s)</th>" in page
    assert f'<td class="n">{2 * 10.45:,.2f}</td>' in page  # 20.90 at the peak's 2 replicas
    assert "<td>1 2 1</td>" in page and "<td>0 2×2</td>" in page
    assert chat.capacity_requests_per_s == pytest.approx(20.9)


def test_html_resale_credit_of_a_plan_without_purchases_is_not_negative_zero() -> None:
    result = syn.plan_result()
    lines = tuple(line for line in result.ledger.lines if line.kind != "resale")  # type: ignore[union-attr]
    ledger = dataclasses.replace(result.ledger, lines=lines)  # type: ignore[type-var]
    page = build_html(dataclasses.replace(result, ledger=ledger))
    assert "-0.00" not in page


def test_slo_statistic_names_the_stated_percentiles(tmp_path: object) -> None:
    from pathlib import Path

    from openpyxl import load_workbook

    from planner.report.workbook import write_plan_outputs
    from planner.report.workbook_tables import SLO_HEADERS, slo_statistic

    base = syn.scenario()
    chat = base.workloads[0]
    slo = chat.slo.model_copy(update={"ttft_percentile": 99})
    scenario = base.model_copy(
        update={"workloads": [chat.model_copy(update={"slo": slo}), *base.workloads[1:]]}
    )
    result = syn.plan_result(scenario=scenario)
    chat_dep, summarize_dep = result.deployments[0], result.deployments[1]
    assert (chat_dep.workload, summarize_dep.workload) == ("chat", "summarize")
    assert slo_statistic(result, chat_dep) == "TTFT p99, TPOT mean"
    assert slo_statistic(result, summarize_dep) == "mean"
    assert "<td>TTFT p99, TPOT mean</td>" in build_html(result)
    path = Path(str(tmp_path)) / "plan.xlsx"
    write_plan_outputs(result, None, workbook=path, plots_dir=None)
    rows = list(load_workbook(path)["SLOs"].iter_rows(values_only=True))
    col = SLO_HEADERS.index("Latency statistic")
    assert (
        rows[0][col] == "Latency statistic"
        and rows[1][col] == "TTFT p99, TPOT mean"
        and rows[2][col] == "mean"
    )


def test_html_lists_stated_optimizations_and_pd_groups() -> None:
    result = syn.plan_result()
    why = "prefix cache on: 80 % hit rate > 3.3 % break-even"
    chat = dataclasses.replace(
        result.deployments[0],
        optimizations=[{"name": "prefix_cache", "on": True, "why": why}],
    )
    page = build_html(dataclasses.replace(result, deployments=[chat, *result.deployments[1:]]))
    assert (
        "<h2>Optimizations</h2>" in page and f"<td>{html.escape(why)}</td>" in page and "<td>on</td>" in page
    )
    # the synthetic plan has no prefill/decode pools and no other stated optimization
    assert "<h2>Prefill/decode groups</h2>" not in page
    assert "<h2>Optimizations</h2>" not in build_html(result)


def test_dollar_ticks_keep_as_many_digits_as_they_need_to_differ() -> None:
    """Alternatives $2.4k apart near $176k had every tick read "$176k"."""
    from planner.report.charts import distinct_usd_labels

    assert distinct_usd_labels([175_500, 176_000, 176_500]) == ["$175.5k", "$176k", "$176.5k"]
    assert distinct_usd_labels([0, 50_000, 100_000]) == ["$0", "$50k", "$100k"]


def test_the_recommendation_says_a_replica_holds_half_a_gpu(catalog: Catalog) -> None:
    """small_models_shared: two workloads share one L40S; the sentence read like two whole-GPU replicas."""
    from planner.plan import plan
    from planner.report.workbook_summary import recommendation_text
    from planner.scenario import load_scenario

    result = plan(catalog, load_scenario("examples/small_models_shared/scenario.yaml", catalog), with_alternatives=False)
    assert recommendation_text(result).count("(cloud, 1 replica, 0.5 of a GPU each)") == 2
