"""Card 9 (GPU utilisation, cost per success) subcommands of `planner ledger`: ``planner.ledgers.utilization``.

Defaults are the book's ch11 examples (agent platform, B200 Pod and E2B prices) so every command runs bare.
"""

from __future__ import annotations

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import utilization as ut
from planner.ledgers.optimizations import littles_law_concurrency
from planner.units import BYTES_PER_GB, BYTES_PER_GIB


def agent_platform(
    tasks_per_s: float,
    rounds: int,
    model_s: float,
    tool_s: float,
    gib_per_env: float,
    host_gb: float,
    host_cores: int,
    model_slots: int,
) -> dict[str, Value]:
    task_s = ut.task_time_s(rounds, model_s_per_round=model_s, tool_s_per_round=tool_s)
    calls = ut.resource_rate_per_s(tasks_per_s, demand_per_task=rounds)
    concurrent = littles_law_concurrency(calls, residence_s=model_s)
    cores = ut.resource_rate_per_s(tasks_per_s, demand_per_task=rounds * tool_s)
    memory = ut.environment_memory_gib(tasks_per_s, task_s=task_s, gib_per_env=gib_per_env)
    host_gib = host_gb * BYTES_PER_GB / BYTES_PER_GIB
    envs = ut.max_environments(host_gib, gib_per_env=gib_per_env)
    return {
        "task_s": task_s,
        "model_calls_per_s": calls,
        "concurrent_calls": concurrent,
        "model_slot_utilization_frac": ut.utilization_frac(concurrent, capacity=model_slots),
        "cpu_cores": cores,
        "cpu_utilization_frac": ut.utilization_frac(cores, capacity=host_cores),
        "environment_memory_gib": memory,
        "memory_utilization_frac": ut.utilization_frac(memory, capacity=host_gib),
        "max_environments": envs,
        "memory_capped_tasks_per_s": min(tasks_per_s, envs / task_s),
    }


def cost_per_success(
    gpu_s: float,
    usd_per_gpu_hour: float,
    cpu_s: float,
    usd_per_cpu_s: float,
    gib_s: float,
    usd_per_gib_s: float,
    success_frac: float,
) -> dict[str, Value]:
    attempt = ut.task_cost_usd(
        gpu_s,
        usd_per_gpu_hour=usd_per_gpu_hour,
        cpu_s=cpu_s,
        usd_per_cpu_s=usd_per_cpu_s,
        gib_s=gib_s,
        usd_per_gib_s=usd_per_gib_s,
    )
    per_1000 = 1000 * attempt
    return {
        "cost_per_attempt_usd": attempt,
        "usd_per_1000_attempts": per_1000,
        "usd_per_1000_successes": 1000 * ut.cost_per_success_usd(per_1000, successes=1000 * success_frac),
    }


def api_call_cost(
    uncached_input_tokens: float,
    output_tokens: float,
    usd_per_m_input: float,
    usd_per_m_output: float,
    cache_write_tokens: float,
    usd_per_m_cache_write: float,
    cache_hit_tokens: float,
    usd_per_m_cache_hit: float,
    success_frac: float,
) -> dict[str, Value]:
    cost = ut.api_call_cost_usd(
        uncached_input_tokens,
        output_tokens=output_tokens,
        usd_per_m_input=usd_per_m_input,
        usd_per_m_output=usd_per_m_output,
        cache_write_tokens=cache_write_tokens,
        usd_per_m_cache_write=usd_per_m_cache_write,
        cache_hit_tokens=cache_hit_tokens,
        usd_per_m_cache_hit=usd_per_m_cache_hit,
    )
    return {
        "cost_per_call_usd": cost,
        "cost_per_success_usd": ut.expected_cost_per_success_usd(cost, success_frac=success_frac),
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "agent-platform",
        9,
        "Agent platform",
        "Agent platform sizing: T_task = Σ(model + tool), resource rate = λ × demand, N = λ·T (Little), utilisation = demand/capacity",
        source="book ch11 §11.1",
        formulas=(
            ut.task_time_s,
            ut.resource_rate_per_s,
            littles_law_concurrency,
            ut.environment_memory_gib,
            ut.max_environments,
            ut.utilization_frac,
        ),
        params=(
            Param("tasks_per_s", float, 10.0, "Task arrival rate λ", "tasks/s", min=0.0),
            Param("rounds", int, 3, "Model-call rounds per task"),
            Param("model_s", float, 9.0, "Model call time per round", "s", min=0.0),
            Param("tool_s", float, 1.0, "Tool time per round (1 core)", "s", min=0.0),
            Param("gib_per_env", float, 2.0, "Environment memory (microVM)", "GiB"),
            Param("host_gb", float, 384.0, "Host memory (m5d.metal 384 GB)", "GB"),
            Param("host_cores", int, 48, "Host cores"),
            Param("model_slots", int, 320, "Concurrent model-call slots (replicas × slots)"),
        ),
        outputs=(
            "task_s",
            "model_calls_per_s",
            "concurrent_calls",
            "model_slot_utilization_frac",
            "cpu_cores",
            "cpu_utilization_frac",
            "environment_memory_gib",
            "memory_utilization_frac",
            "max_environments",
            "memory_capped_tasks_per_s",
        ),
        compute=agent_platform,
    ),
    LedgerCommand(
        "cost-per-success",
        9,
        "Cost per success",
        "Cost per qualifying task C_q = C_all/N_qualified with C = GPU + CPU + memory per attempt",
        source="book ch11 Example 11-9",
        formulas=(ut.task_cost_usd, ut.cost_per_success_usd),
        params=(
            Param("gpu_s", float, 4.5, "GPU time per attempt", "GPU·s"),
            Param("usd_per_gpu_hour", float, 6.79, "GPU price (B200 Pod)", "USD/GPU-h"),
            Param("cpu_s", float, 3.3, "CPU time per attempt", "CPU·s", min=0.0),
            Param("usd_per_cpu_s", float, ut.E2B_USD_PER_CPU_S, "CPU price (E2B)", "USD/CPU·s"),
            Param("gib_s", float, 18.0, "Environment memory-time per attempt", "GiB·s", min=0.0),
            Param("usd_per_gib_s", float, ut.E2B_USD_PER_GIB_S, "Memory price (E2B)", "USD/GiB·s"),
            Param("success_frac", float, 0.95, "Share of attempts that qualify (quality and deadline)", min=0.0, max=1.0),
        ),
        outputs=("cost_per_attempt_usd", "usd_per_1000_attempts", "usd_per_1000_successes"),
        compute=cost_per_success,
    ),
    LedgerCommand(
        "api-call-cost",
        9,
        "API call cost",
        "API call cost C = (I_u·p_u + I_w·p_w + I_h·p_h + O·p_o)/10^6 and C/p per success",
        source="book ch11 Examples 11-5, 11-7",
        formulas=(ut.api_call_cost_usd, ut.expected_cost_per_success_usd),
        params=(
            Param("uncached_input_tokens", float, 10_000, "Input tokens at the plain price"),
            Param("output_tokens", float, 1200, "Output tokens, thinking included"),
            Param("usd_per_m_input", float, 2.0, "Input price (Sonnet 5)", "USD/M tokens", min=0.0),
            Param("usd_per_m_output", float, 10.0, "Output price", "USD/M tokens", min=0.0),
            Param("cache_write_tokens", float, 0.0, "Tokens written to the prompt cache"),
            Param("usd_per_m_cache_write", float, 2.5, "Cache write price", "USD/M tokens", min=0.0),
            Param("cache_hit_tokens", float, 0.0, "Tokens read from the prompt cache"),
            Param("usd_per_m_cache_hit", float, 0.2, "Cache hit price", "USD/M tokens", min=0.0),
            Param("success_frac", float, 1.0, "Success probability per call", min=0.0, max=1.0),
        ),
        outputs=("cost_per_call_usd", "cost_per_success_usd"),
        compute=api_call_cost,
    ),
)
