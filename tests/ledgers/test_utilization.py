"""Card 9 — GPU utilisation ledger: worked examples C9.x and properties.

Tolerances: absolute, half a unit in the last printed digit, unless stated.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ledgers.distributed import breakeven_hit_frac
from planner.ledgers.optimizations import littles_law_concurrency
from planner.ledgers.utilization import (
    E2B_USD_PER_CPU_S,
    E2B_USD_PER_GIB_S,
    EnvMode,
    api_call_cost_usd,
    capped_throughput_per_s,
    cost_per_success_usd,
    env_footprint_mib,
    env_start_s,
    environment_memory_gib,
    expected_cost_per_success_usd,
    fastest_option,
    fragmentation_completion_s,
    gpu_cost_usd,
    gpu_s_per_call,
    hit_mix_cost_usd,
    max_environments,
    node_fits,
    pause_pays,
    prewarm_expected_wait_s,
    prewarm_wasted_gib_s,
    prompt_cache_pays,
    rebuild_cost_usd,
    rebuild_gib_s,
    replicas_needed,
    resident_gib_s,
    resource_rate_per_s,
    retain_breakeven_gap_s,
    retry_tree_expected_cost_usd,
    task_cost_usd,
    task_time_s,
    utilization_frac,
    utilization_split,
)
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB

B200_USD_PER_HOUR = 6.79
HOST_GIB = 384 * BYTES_PER_GB / BYTES_PER_GIB  # m5d.metal 384 GB ≈ 357.6 GiB (printed "358 GiB")


def _half_unit(digits: int) -> float:
    return 0.5 * 10.0**-digits


# ---------------------------------------------------------------- C9.1 agent platform sizing


def test_c9_1_platform_sizing() -> None:
    task_s = task_time_s(3, model_s_per_round=9.0, tool_s_per_round=1.0)
    assert task_s == pytest.approx(30.0)
    calls_per_s = resource_rate_per_s(10.0, demand_per_task=3)
    assert calls_per_s == pytest.approx(30.0)
    concurrent_calls = littles_law_concurrency(calls_per_s, residence_s=9.0)
    assert concurrent_calls == pytest.approx(270.0)
    assert utilization_frac(concurrent_calls, capacity=10 * 32) * 100 == pytest.approx(84, abs=_half_unit(0))
    cores = resource_rate_per_s(10.0, demand_per_task=3 * 1.0)
    assert cores == pytest.approx(30.0)
    assert utilization_frac(cores, capacity=48) * 100 == pytest.approx(62.5, abs=_half_unit(1))
    assert littles_law_concurrency(10.0, residence_s=task_s) == pytest.approx(300.0)
    memory = environment_memory_gib(10.0, task_s=task_s, gib_per_env=2.0)
    assert memory == pytest.approx(600.0)
    assert utilization_frac(memory, capacity=HOST_GIB) * 100 == pytest.approx(168, abs=_half_unit(0))
    envs = max_environments(HOST_GIB, gib_per_env=2.0)
    assert envs == 178
    assert envs / task_s == pytest.approx(5.9, abs=_half_unit(1))


def test_c9_1_slower_calls() -> None:
    task_s = task_time_s(3, model_s_per_round=12.0, tool_s_per_round=1.0)
    assert task_s == pytest.approx(39.0)
    assert environment_memory_gib(10.0, task_s=task_s, gib_per_env=2.0) == pytest.approx(780.0)
    assert littles_law_concurrency(30.0, residence_s=12.0) == pytest.approx(360.0)


def test_capped_throughput() -> None:
    # a pool of 357.6 GiB and 60 GiB·s per task cannot sustain 10 tasks/s
    capped = capped_throughput_per_s(10.0, demand_per_task=60.0, capacity=HOST_GIB)
    assert capped == pytest.approx(HOST_GIB / 60.0)
    assert capped_throughput_per_s(1.0, demand_per_task=60.0, capacity=HOST_GIB) == 1.0


# ---------------------------------------------------------------- C9.3 environment memory sharing


@pytest.mark.parametrize(
    ("mode", "hot", "per_env_mib", "total_gib"),
    [
        ("full_copy", 0, 2052, 200),
        ("on_demand", 0, 516, 50),
        ("shared_template", 0, 132, 13),
        ("shared_template", 256, 388, 38),
    ],
    ids=["full", "on-demand", "shared", "shared+hot"],
)
def test_c9_3_memory_sharing(mode: EnvMode, hot: float, per_env_mib: float, total_gib: float) -> None:
    per_env = env_footprint_mib(
        2048,
        touched_mib=512,
        dirty_mib=128,
        management_mib=4,
        mode=mode,
        hot_mib=hot,
    )
    assert per_env == pytest.approx(per_env_mib)
    total = 100 * per_env * BYTES_PER_MIB / BYTES_PER_GIB
    assert total == pytest.approx(total_gib, abs=_half_unit(0))


def test_c9_3_start_times() -> None:
    # Interpretation: a cold start fetches the 2 GiB template and the 512 MiB touched pages; a warm start
    # only the touched pages; 25 GbE = 3.125 GB/s.
    cold = env_start_s(2 * BYTES_PER_GIB + 512 * BYTES_PER_MIB, link_gb_per_s=3.125)
    warm = env_start_s(512 * BYTES_PER_MIB, link_gb_per_s=3.125)
    assert cold == pytest.approx(0.86, abs=_half_unit(2))
    assert warm == pytest.approx(0.17, abs=_half_unit(2))


# ---------------------------------------------------------------- C9.5 rebuild per round


def test_c9_5_rebuild_per_round() -> None:
    per_task = rebuild_gib_s(2.0, rounds=3, prep_s=2.0, tool_s=1.0)
    assert per_task == pytest.approx(18.0)
    assert resource_rate_per_s(10.0, demand_per_task=resident_gib_s(2.0, task_s=30.0)) == pytest.approx(600.0)
    assert resource_rate_per_s(10.0, demand_per_task=per_task) == pytest.approx(180.0)
    assert resource_rate_per_s(10.0, demand_per_task=3) == pytest.approx(30.0)  # creations/s
    assert resource_rate_per_s(10.0, demand_per_task=3 * 1.0 + 3 * 0.1) == pytest.approx(33.0)  # cores
    rebuild_usd = rebuild_cost_usd(
        0.1, mem_gib=2.0, prep_s=2.0, usd_per_cpu_s=E2B_USD_PER_CPU_S, usd_per_gib_s=E2B_USD_PER_GIB_S
    )
    gap = retain_breakeven_gap_s(rebuild_usd, mem_gib=2.0, usd_per_gib_s=E2B_USD_PER_GIB_S)
    assert gap == pytest.approx(2.16, abs=_half_unit(2))
    assert pause_pays(3.0, mem_gib=2.0, usd_per_gib_s=E2B_USD_PER_GIB_S, transition_usd=rebuild_usd) is True
    assert pause_pays(2.0, mem_gib=2.0, usd_per_gib_s=E2B_USD_PER_GIB_S, transition_usd=rebuild_usd) is False


# ---------------------------------------------------------------- C9.7 fragmentation


def test_c9_7_fragmentation() -> None:
    # DGX H100 has 4 GPUs but only 8 free cores for a 4-GPU + 16-core job
    assert node_fits(4, free_cores=8, need_gpus=4, need_cores=16) is False
    # DGX A100 has the resources (4 GPUs + 32 cores) — but A100s, hence the slower "spread" run
    assert node_fits(4, free_cores=32, need_gpus=4, need_cores=16) is True
    options = fragmentation_completion_s(
        20.0, wait_queue_s=12.0, migrate_s=4.0, spread_start_s=1.0, spread_run_s=32.0
    )
    assert options == {"wait": 32.0, "migrate": 24.0, "spread": 33.0}
    assert fastest_option(options) == "migrate"


def test_utilization_split() -> None:
    split = utilization_split(30.0, allocated_s=60.0, total_s=100.0)
    assert split.busy_of_allocated_frac == pytest.approx(0.5)
    assert split.allocated_of_total_frac == pytest.approx(0.6)
    assert split.busy_of_total_frac == pytest.approx(0.3)
    with pytest.raises(ValueError):
        utilization_split(70.0, allocated_s=60.0, total_s=100.0)


# ---------------------------------------------------------------- C9.9 thinking budget


def test_c9_9_thinking_budget() -> None:
    sonnet = {"usd_per_m_input": 2.0, "usd_per_m_output": 10.0}
    long_think = api_call_cost_usd(10_000, output_tokens=200 + 1000, **sonnet)
    short_think = api_call_cost_usd(10_000, output_tokens=200 + 100, **sonnet)
    assert long_think == pytest.approx(0.032, abs=_half_unit(3))
    assert short_think == pytest.approx(0.023, abs=_half_unit(3))
    assert (1 - short_think / long_think) * 100 == pytest.approx(28, abs=_half_unit(0))
    saving_per_100 = 100 * (long_think - short_think)
    assert saving_per_100 == pytest.approx(0.9, abs=_half_unit(1))
    retries = 30 * long_think
    assert retries == pytest.approx(0.96, abs=_half_unit(2))
    assert retries - saving_per_100 == pytest.approx(0.06, abs=_half_unit(2))


# ---------------------------------------------------------------- C9.11 routing by cost per success


def test_c9_11_model_routing() -> None:
    haiku = api_call_cost_usd(
        1000,
        output_tokens=1800 + 200,
        usd_per_m_input=1.0,
        usd_per_m_output=5.0,
        cache_hit_tokens=19_000,
        usd_per_m_cache_hit=0.1,
    )
    assert haiku == pytest.approx(0.0129, abs=_half_unit(4))
    haiku_success = expected_cost_per_success_usd(haiku, success_frac=0.80)
    assert haiku_success == pytest.approx(0.0161, abs=_half_unit(4))
    sonnet_hit = api_call_cost_usd(
        1000,
        output_tokens=100 + 200,
        usd_per_m_input=2.0,
        usd_per_m_output=10.0,
        cache_hit_tokens=19_000,
        usd_per_m_cache_hit=0.2,
    )
    sonnet_miss = api_call_cost_usd(
        20_000, output_tokens=100 + 200, usd_per_m_input=2.0, usd_per_m_output=10.0
    )
    assert sonnet_hit == pytest.approx(0.0088, abs=_half_unit(4))
    assert sonnet_miss == pytest.approx(0.0430, abs=_half_unit(4))
    # C_B(h) = (0.0088h + 0.0430(1 − h))/0.98 equals A's cost per success at h ≈ 79.5 % (card 8's formula)
    h_star = breakeven_hit_frac(haiku_success * 0.98, hit_s=sonnet_hit, miss_s=sonnet_miss)
    assert h_star * 100 == pytest.approx(79.5, abs=_half_unit(1))
    at_half = expected_cost_per_success_usd(
        hit_mix_cost_usd(0.5, hit_cost_usd=sonnet_hit, miss_cost_usd=sonnet_miss), success_frac=0.98
    )
    assert at_half == pytest.approx(0.0264, abs=_half_unit(4))
    # 6 s deadline met only on cache hits: 0.98·h ≥ 0.90 → h ≥ 45/49 ≈ 91.8 %
    required_hit = 0.90 / 0.98
    assert required_hit * 100 == pytest.approx(91.8, abs=_half_unit(1))


# ---------------------------------------------------------------- C9.13 final platform design


def test_c9_13_service_costs() -> None:
    ordinary = gpu_s_per_call(4, call_s=9.0, slots_per_replica=32)
    # reconstruction: the fast service's 1.5 B200·s matches 4 B200 × 6 s / 16 slots
    fast = gpu_s_per_call(4, call_s=6.0, slots_per_replica=16)
    assert ordinary == pytest.approx(1.125)
    assert fast == pytest.approx(1.5)
    assert gpu_cost_usd(ordinary, usd_per_gpu_hour=B200_USD_PER_HOUR) == pytest.approx(
        0.00212, abs=_half_unit(5)
    )
    assert gpu_cost_usd(fast, usd_per_gpu_hour=B200_USD_PER_HOUR) == pytest.approx(0.00283, abs=_half_unit(5))
    assert replicas_needed(30.0, call_s=6.0, slots_per_replica=16) == 12


def test_c9_13_fast_rebuild_breakdown() -> None:
    gpu = gpu_cost_usd(3 * 1.5, usd_per_gpu_hour=B200_USD_PER_HOUR)
    assert gpu == pytest.approx(0.0084875, abs=_half_unit(7))
    cpu = task_cost_usd(0.0, usd_per_gpu_hour=B200_USD_PER_HOUR, cpu_s=3.3, usd_per_cpu_s=E2B_USD_PER_CPU_S)
    memory = task_cost_usd(
        0.0, usd_per_gpu_hour=B200_USD_PER_HOUR, gib_s=18.0, usd_per_gib_s=E2B_USD_PER_GIB_S
    )
    assert cpu == pytest.approx(0.0000462, abs=_half_unit(7))
    assert memory == pytest.approx(0.000081, abs=_half_unit(6))
    total = task_cost_usd(
        4.5,
        usd_per_gpu_hour=B200_USD_PER_HOUR,
        cpu_s=3.3,
        usd_per_cpu_s=E2B_USD_PER_CPU_S,
        gib_s=18.0,
        usd_per_gib_s=E2B_USD_PER_GIB_S,
    )
    assert total == pytest.approx(0.0086147, abs=_half_unit(7))
    assert 1000 * total == pytest.approx(8.61, abs=_half_unit(2))
    assert cost_per_success_usd(1000 * total, successes=950) * 1000 == pytest.approx(9.07, abs=_half_unit(2))


@pytest.mark.parametrize(
    ("service", "env", "completion", "cpu_s", "gib_s", "avg_gib", "usd_per_1000", "on_time"),
    [
        ("ordinary", "resident", 30, 3.0, 60, 600, 6.68, 0.0),
        ("ordinary", "rebuild", 30, 3.3, 18, 180, 6.49, 0.0),
        ("fast", "resident", 21, 3.0, 42, 420, 8.72, 0.95),
        ("fast", "rebuild", 21, 3.3, 18, 180, 8.61, 0.95),
    ],
    ids=["ordinary-resident", "ordinary-rebuild", "fast-resident", "fast-rebuild"],
)
def test_c9_13_design_table(
    service: str,
    env: str,
    completion: float,
    cpu_s: float,
    gib_s: float,
    avg_gib: float,
    usd_per_1000: float,
    on_time: float,
) -> None:
    model_s, gpu_s_call = (9.0, 1.125) if service == "ordinary" else (6.0, 1.5)
    task_s = task_time_s(3, model_s_per_round=model_s, tool_s_per_round=1.0)
    assert task_s == pytest.approx(completion)
    if env == "resident":
        mem = resident_gib_s(2.0, task_s=task_s)
        cpu = 3 * 1.0
    else:
        mem = rebuild_gib_s(2.0, rounds=3, prep_s=2.0, tool_s=1.0)
        cpu = 3 * 1.0 + 3 * 0.1
    assert cpu == pytest.approx(cpu_s)
    assert mem == pytest.approx(gib_s)
    assert resource_rate_per_s(10.0, demand_per_task=mem) == pytest.approx(avg_gib)
    cost = task_cost_usd(
        3 * gpu_s_call,
        usd_per_gpu_hour=B200_USD_PER_HOUR,
        cpu_s=cpu,
        usd_per_cpu_s=E2B_USD_PER_CPU_S,
        gib_s=mem,
        usd_per_gib_s=E2B_USD_PER_GIB_S,
    )
    assert 1000 * cost == pytest.approx(usd_per_1000, abs=_half_unit(2))
    per_on_time = cost_per_success_usd(1000 * cost, successes=1000 * on_time)
    if on_time == 0:
        assert per_on_time == math.inf  # no qualifying result: report the spend, not a finite average
    else:
        assert 1000 * per_on_time == pytest.approx(1000 * cost / on_time)  # USD per 1,000 on-time


# ---------------------------------------------------------------- other card-9 formulas


def test_prewarm() -> None:
    assert prewarm_expected_wait_s(0.8, prep_s=2.0, lead_s=1.5) == pytest.approx(0.8 * 0.5 + 0.2 * 2.0)
    assert prewarm_wasted_gib_s(0.8, mem_gib=2.0, lead_s=1.5) == pytest.approx(0.6)


def test_prompt_cache_rule() -> None:
    # Sonnet 5 prices: uncached 2, write 2.5, hit 0.2 → pays from the second use
    assert prompt_cache_pays(1, usd_per_m_uncached=2.0, usd_per_m_write=2.5, usd_per_m_hit=0.2) is False
    assert prompt_cache_pays(2, usd_per_m_uncached=2.0, usd_per_m_write=2.5, usd_per_m_hit=0.2) is True


def test_retry_tree() -> None:
    # first try succeeds (0.8, $1); retry succeeds (0.16, $2); both fail then fallback (0.04, $5)
    assert retry_tree_expected_cost_usd([(0.8, 1.0), (0.16, 2.0), (0.04, 5.0)]) == pytest.approx(1.32)
    with pytest.raises(ValueError):
        retry_tree_expected_cost_usd([(0.5, 1.0)])


def test_invalid_inputs_raise() -> None:
    with pytest.raises(ValueError):
        utilization_frac(1.0, capacity=0.0)
    with pytest.raises(ValueError):
        api_call_cost_usd(-1, output_tokens=0, usd_per_m_input=1.0, usd_per_m_output=1.0)
    with pytest.raises(ValueError):
        env_footprint_mib(1, touched_mib=1, dirty_mib=1, management_mib=1, mode="bogus")  # type: ignore[arg-type]
    assert expected_cost_per_success_usd(1.0, success_frac=0.0) == math.inf


# ---------------------------------------------------------------- properties


@settings(deadline=None, max_examples=50)
@given(
    busy=st.floats(min_value=0.0, max_value=1e6),
    extra_alloc=st.floats(min_value=1e-3, max_value=1e6),
    extra_total=st.floats(min_value=0.0, max_value=1e6),
)
def test_split_product(busy: float, extra_alloc: float, extra_total: float) -> None:
    allocated = busy + extra_alloc
    total = allocated + extra_total
    split = utilization_split(busy, allocated_s=allocated, total_s=total)
    assert split.busy_of_total_frac == pytest.approx(
        split.busy_of_allocated_frac * split.allocated_of_total_frac, rel=1e-9, abs=1e-12
    )


@settings(deadline=None, max_examples=50)
@given(
    n=st.integers(min_value=1, max_value=1000),
    pu=st.floats(min_value=0.01, max_value=20),
    pw=st.floats(min_value=0.01, max_value=30),
    ph=st.floats(min_value=0.0, max_value=5),
)
def test_prompt_cache_rule_matches_costs(n: int, pu: float, pw: float, ph: float) -> None:
    prefix = 10_000
    uncached = sum(
        api_call_cost_usd(prefix, output_tokens=0, usd_per_m_input=pu, usd_per_m_output=0) for _ in range(n)
    )
    cached = api_call_cost_usd(
        0,
        output_tokens=0,
        usd_per_m_input=pu,
        usd_per_m_output=0,
        cache_write_tokens=prefix,
        usd_per_m_cache_write=pw,
    ) + (n - 1) * api_call_cost_usd(
        0,
        output_tokens=0,
        usd_per_m_input=pu,
        usd_per_m_output=0,
        cache_hit_tokens=prefix,
        usd_per_m_cache_hit=ph,
    )
    if not math.isclose(uncached, cached, rel_tol=1e-9):
        assert prompt_cache_pays(n, usd_per_m_uncached=pu, usd_per_m_write=pw, usd_per_m_hit=ph) == (
            cached < uncached
        )


@settings(deadline=None, max_examples=50)
@given(
    h=st.floats(min_value=0.0, max_value=1.0),
    prep=st.floats(min_value=0.0, max_value=100.0),
    lead=st.floats(min_value=0.0, max_value=100.0),
)
def test_prewarm_wait_bounded(h: float, prep: float, lead: float) -> None:
    wait = prewarm_expected_wait_s(h, prep_s=prep, lead_s=lead)
    assert max(prep - lead, 0.0) - 1e-9 <= wait <= prep + 1e-9


@settings(deadline=None, max_examples=50)
@given(gpu_s=st.floats(min_value=0.0, max_value=1e6), price=st.floats(min_value=0.0, max_value=100.0))
def test_gpu_cost_unit_round_trip(gpu_s: float, price: float) -> None:
    # an hour of GPU time costs the hourly price
    assert gpu_cost_usd(3600.0, usd_per_gpu_hour=price) == pytest.approx(price)
    assert gpu_cost_usd(2 * gpu_s, usd_per_gpu_hour=price) == pytest.approx(
        2 * gpu_cost_usd(gpu_s, usd_per_gpu_hour=price)
    )
