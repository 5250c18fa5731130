"""Card 9 — GPU utilisation ledger.

Arrival rates → concurrent model calls, CPU cores, environment memory and GPU allocation;
fragmentation and idle allocation; the price of each qualifying task (API token prices included).

References: ledgers.md card 9; book ch11 §11.1–11.5 (Examples 11-2 … 11-9), ch08 (continuous
batching, goodput), ch04 (utilisation decomposition), ch09.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from planner.ledgers._checks import require_fraction as _require_frac
from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.inference import cost_per_success
from planner.ledgers.operators import host_copy_s
from planner.ledgers.optimizations import littles_law_concurrency
from planner.units import S_PER_HOUR

TOKENS_PER_MILLION = 1e6
"""Token prices are quoted per million tokens."""

E2B_USD_PER_CPU_S = 0.000014
"""E2B sandbox CPU price, USD per CPU-second (book ch11)."""

E2B_USD_PER_GIB_S = 0.0000045
"""E2B sandbox memory price, USD per GiB-second (book ch11)."""

EnvMode = Literal["full_copy", "on_demand", "shared_template"]


# --------------------------------------------------------------------------------------------------
# Rates, concurrency, utilisation
# --------------------------------------------------------------------------------------------------


def resource_rate_per_s(arrival_per_s: float, *, demand_per_task: float) -> float:
    """Steady-state demand rate of one resource.

    Parameters
    ----------
    arrival_per_s : float
        Task arrival rate λ, tasks/s.
    demand_per_task : float
        Demand per task (model calls, CPU-s, GiB·s, …).

    Returns
    -------
    float
        Demand per second (calls/s, CPU cores, GiB).

    Notes
    -----
    rate = λ × demand per task. Plain arithmetic.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.1.
    """
    return arrival_per_s * demand_per_task


def task_time_s(
    rounds: int,
    *,
    model_s_per_round: float,
    tool_s_per_round: float,
    queue_s: float = 0.0,
    prepare_s: float = 0.0,
    commit_s: float = 0.0,
) -> float:
    """Wall time of one agent task with identical rounds.

    Parameters
    ----------
    rounds : int
        Model-call rounds R.
    model_s_per_round : float
        Model call time per round, s.
    tool_s_per_round : float
        Tool time per round, s.
    queue_s, prepare_s, commit_s : float
        Queueing, environment preparation and commit time, s.

    Returns
    -------
    float
        T_task, s.

    Notes
    -----
    T_task = T_queue + T_prepare + Σ_r (T_model,r + T_tool,r) + T_commit.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.1.
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    return queue_s + prepare_s + rounds * (model_s_per_round + tool_s_per_round) + commit_s


def environment_memory_gib(arrival_per_s: float, *, task_s: float, gib_per_env: float) -> float:
    """Memory of the environments resident at once.

    Parameters
    ----------
    arrival_per_s : float
        Task arrival rate λ, tasks/s.
    task_s : float
        Time an environment stays resident T_task, s.
    gib_per_env : float
        Memory per environment M, GiB.

    Returns
    -------
    float
        Memory, GiB.

    Notes
    -----
    N_env = λ·T_task (Little); memory = N_env × M.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.1.
    """
    return littles_law_concurrency(arrival_per_s, residence_s=task_s) * gib_per_env


def utilization_frac(demand: float, *, capacity: float) -> float:
    """Utilisation of a pool (may exceed 1 when demand exceeds capacity).

    Parameters
    ----------
    demand : float
        Demanded amount (cores, GiB, slots).
    capacity : float
        Available amount in the same unit (> 0).

    Returns
    -------
    float
        demand / capacity (1.0 = 100 %).

    Notes
    -----
    U = demand/capacity; above 1 the pool caps throughput.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.1.
    """
    _require_positive("capacity", capacity)
    return demand / capacity


def capped_throughput_per_s(arrival_per_s: float, *, demand_per_task: float, capacity: float) -> float:
    """Task throughput a pool can sustain.

    Parameters
    ----------
    arrival_per_s : float
        Offered task rate λ, tasks/s.
    demand_per_task : float
        Pool demand per task (e.g. GiB·s, core-s) (> 0).
    capacity : float
        Pool capacity in demand units per second (GiB, cores).

    Returns
    -------
    float
        Served tasks/s.

    Notes
    -----
    min(λ, capacity / demand per task).

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.1.
    """
    _require_positive("demand_per_task", demand_per_task)
    return min(arrival_per_s, capacity / demand_per_task)


def max_environments(memory_gib: float, *, gib_per_env: float) -> int:
    """Whole environments that fit a host's memory.

    Parameters
    ----------
    memory_gib : float
        Usable memory, GiB.
    gib_per_env : float
        Memory per environment, GiB (> 0).

    Returns
    -------
    int
        Environments, count.

    Notes
    -----
    floor(memory / M).

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.1 (358 GiB / 2 GiB → 178).
    """
    _require_positive("gib_per_env", gib_per_env)
    _require_non_negative("memory_gib", memory_gib)
    return math.floor(memory_gib / gib_per_env)


def replicas_needed(call_rate_per_s: float, *, call_s: float, slots_per_replica: int) -> int:
    """Model replicas needed to hold the concurrent calls.

    Parameters
    ----------
    call_rate_per_s : float
        Model calls per second.
    call_s : float
        Duration of one call, s.
    slots_per_replica : int
        Concurrent calls one replica serves within its SLO (> 0).

    Returns
    -------
    int
        Replicas, count.

    Notes
    -----
    ceil(λ_calls·T_call / slots).

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-9.
    """
    if slots_per_replica <= 0:
        raise ValueError(f"slots_per_replica must be > 0, got {slots_per_replica}")
    concurrent = littles_law_concurrency(call_rate_per_s, residence_s=call_s)
    # tolerate float noise so that an exact fit (e.g. 320 calls on 32 slots) needs no extra replica
    return math.ceil(concurrent / slots_per_replica - 1e-9)


def gpu_s_per_call(gpus_per_replica: float, *, call_s: float, slots_per_replica: float) -> float:
    """GPU-seconds one call occupies on a shared replica.

    Parameters
    ----------
    gpus_per_replica : float
        GPUs in one replica.
    call_s : float
        Duration of one call, s.
    slots_per_replica : float
        Concurrent calls per replica (> 0).

    Returns
    -------
    float
        GPU·s per call.

    Notes
    -----
    g·T_call / slots (4 B200 × 9 s / 32 = 1.125 B200·s).

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-9.
    """
    _require_positive("slots_per_replica", slots_per_replica)
    return gpus_per_replica * call_s / slots_per_replica


# --------------------------------------------------------------------------------------------------
# Environment memory: sharing, resident vs rebuild, pre-warming, pause
# --------------------------------------------------------------------------------------------------


def env_footprint_mib(
    template_mib: float,
    *,
    touched_mib: float,
    dirty_mib: float,
    management_mib: float,
    mode: EnvMode,
    hot_mib: float = 0.0,
) -> float:
    """Private memory of one environment under a sharing scheme.

    Parameters
    ----------
    template_mib : float
        Size of the environment template (image), MiB.
    touched_mib : float
        Pages the task touches, MiB.
    dirty_mib : float
        Pages the task writes, MiB.
    management_mib : float
        Per-environment management overhead, MiB.
    mode : {"full_copy", "on_demand", "shared_template"}
        full copy of the template; on-demand paging of touched pages; read-only shared template with
        private copy-on-write pages.
    hot_mib : float
        Extra private hot pages kept per environment in shared mode, MiB.

    Returns
    -------
    float
        Private memory per environment, MiB.

    Notes
    -----
    full: template + mgmt; on-demand: touched + mgmt; shared: dirty + hot + mgmt (the template is
    counted once for the host).

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-2.
    """
    for name, value in (
        ("template_mib", template_mib),
        ("touched_mib", touched_mib),
        ("dirty_mib", dirty_mib),
        ("management_mib", management_mib),
        ("hot_mib", hot_mib),
    ):
        _require_non_negative(name, value)
    if mode == "full_copy":
        return template_mib + management_mib
    if mode == "on_demand":
        return touched_mib + management_mib
    if mode == "shared_template":
        return dirty_mib + hot_mib + management_mib
    raise ValueError(f"unknown mode {mode!r}; use full_copy, on_demand or shared_template")


def env_start_s(fetch_bytes: float, *, link_gb_per_s: float, latency_s: float = 0.0) -> float:
    """Start time of an environment whose pages come over the network.

    Parameters
    ----------
    fetch_bytes : float
        Bytes fetched before the task can run, bytes.
    link_gb_per_s : float
        Network bandwidth, GB/s (25 GbE: 3.125).
    latency_s : float
        Start-up latency, s.

    Returns
    -------
    float
        Start time, s.

    Notes
    -----
    T = α + bytes / B (same transfer formula as card 7's host copy).

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-2.
    """
    return host_copy_s(fetch_bytes, bandwidth_gb_per_s=link_gb_per_s, latency_s=latency_s)


def resident_gib_s(mem_gib: float, *, task_s: float) -> float:
    """Memory-time of an environment kept for the whole task.

    Parameters
    ----------
    mem_gib : float
        Environment memory M, GiB.
    task_s : float
        Task time T_task, s.

    Returns
    -------
    float
        GiB·s per task.

    Notes
    -----
    M·T_task.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2.
    """
    return mem_gib * task_s


def rebuild_gib_s(mem_gib: float, *, rounds: int, prep_s: float, tool_s: float) -> float:
    """Memory-time of an environment rebuilt for every tool round.

    Parameters
    ----------
    mem_gib : float
        Environment memory M, GiB.
    rounds : int
        Tool rounds per task.
    prep_s : float
        (Warm) preparation time per rebuild, s.
    tool_s : float
        Tool time per round, s.

    Returns
    -------
    float
        GiB·s per task.

    Notes
    -----
    Σ_r M·(T_prep + T_tool).

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2.
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    return rounds * mem_gib * (prep_s + tool_s)


def rebuild_cost_usd(
    cpu_s: float, *, mem_gib: float, prep_s: float, usd_per_cpu_s: float, usd_per_gib_s: float
) -> float:
    """Cost of one environment rebuild.

    Parameters
    ----------
    cpu_s : float
        CPU time of the rebuild, CPU·s.
    mem_gib : float
        Memory held during the rebuild, GiB.
    prep_s : float
        Rebuild (preparation) time, s.
    usd_per_cpu_s : float
        CPU price, USD per CPU·s.
    usd_per_gib_s : float
        Memory price, USD per GiB·s.

    Returns
    -------
    float
        USD per rebuild.

    Notes
    -----
    C = cpu_s·p_cpu + M·T_prep·p_mem.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2, Example 11-9.
    """
    return cpu_s * usd_per_cpu_s + mem_gib * prep_s * usd_per_gib_s


def retain_breakeven_gap_s(rebuild_usd: float, *, mem_gib: float, usd_per_gib_s: float) -> float:
    """Idle gap at which keeping an environment costs as much as rebuilding it.

    Parameters
    ----------
    rebuild_usd : float
        Cost of one rebuild, USD (see :func:`rebuild_cost_usd`).
    mem_gib : float
        Environment memory M, GiB.
    usd_per_gib_s : float
        Memory price, USD per GiB·s.

    Returns
    -------
    float
        Break-even gap G, s (retain for shorter gaps).

    Notes
    -----
    M·G·p_mem = rebuild cost ⇒ G = C_rebuild / (M·p_mem).

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2 (≈ 2.16 s with E2B prices).
    """
    _require_positive("mem_gib", mem_gib)
    _require_positive("usd_per_gib_s", usd_per_gib_s)
    return rebuild_usd / (mem_gib * usd_per_gib_s)


def pause_pays(gap_s: float, *, mem_gib: float, usd_per_gib_s: float, transition_usd: float) -> bool:
    """Whether pausing an environment over an idle gap saves money.

    Parameters
    ----------
    gap_s : float
        Idle gap G, s.
    mem_gib : float
        Memory freed while paused M, GiB.
    usd_per_gib_s : float
        Memory price p_M, USD per GiB·s.
    transition_usd : float
        Save + restore cost C_transition, USD.

    Returns
    -------
    bool
        True iff p_M·M·G > C_transition.

    Notes
    -----
    Pause iff the memory cost saved over the gap exceeds the transition cost.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2.
    """
    return usd_per_gib_s * mem_gib * gap_s > transition_usd


def prewarm_expected_wait_s(hit_frac: float, *, prep_s: float, lead_s: float) -> float:
    """Expected start wait with predictive pre-warming.

    Parameters
    ----------
    hit_frac : float
        Prediction accuracy h, 0..1.
    prep_s : float
        Preparation time P, s.
    lead_s : float
        How far ahead the environment is started L, s.

    Returns
    -------
    float
        E[W], s.

    Notes
    -----
    E[W] = h·max(P − L, 0) + (1 − h)·P.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2.
    """
    _require_frac("hit_frac", hit_frac)
    return hit_frac * max(prep_s - lead_s, 0.0) + (1 - hit_frac) * prep_s


def prewarm_wasted_gib_s(hit_frac: float, *, mem_gib: float, lead_s: float) -> float:
    """Expected memory-time wasted on wrongly pre-warmed environments.

    Parameters
    ----------
    hit_frac : float
        Prediction accuracy h, 0..1.
    mem_gib : float
        Environment memory M, GiB.
    lead_s : float
        Lead time L, s.

    Returns
    -------
    float
        GiB·s per prediction.

    Notes
    -----
    (1 − h)·M·L.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.2.
    """
    _require_frac("hit_frac", hit_frac)
    return (1 - hit_frac) * mem_gib * lead_s


# --------------------------------------------------------------------------------------------------
# Fragmentation and utilisation decomposition
# --------------------------------------------------------------------------------------------------


def node_fits(free_gpus: int, *, free_cores: int, need_gpus: int, need_cores: int) -> bool:
    """Whether a single-node job fits the free resources of one node.

    Parameters
    ----------
    free_gpus, free_cores : int
        Free GPUs and CPU cores on the node.
    need_gpus, need_cores : int
        GPUs and cores the job needs on one node.

    Returns
    -------
    bool
        True iff both fit.

    Notes
    -----
    Infeasible where the node lacks either resource, even if the cluster total suffices.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-3.
    """
    return free_gpus >= need_gpus and free_cores >= need_cores


def fragmentation_completion_s(
    run_s: float, *, wait_queue_s: float, migrate_s: float, spread_start_s: float, spread_run_s: float
) -> dict[str, float]:
    """Completion time of the three answers to a fragmented placement.

    Parameters
    ----------
    run_s : float
        Run time on a proper node, s.
    wait_queue_s : float
        Wait until enough resources free up on one node, s.
    migrate_s : float
        Time to migrate other work away, s.
    spread_start_s : float
        Start time of the spread (multi-node / mismatched) placement, s.
    spread_run_s : float
        Slower run time when spread, s.

    Returns
    -------
    dict[str, float]
        {"wait": queue + run, "migrate": migration + run, "spread": start + slower run}, s.

    Notes
    -----
    Compare wait, migrate and spread by completion time.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-3.
    """
    return {
        "wait": wait_queue_s + run_s,
        "migrate": migrate_s + run_s,
        "spread": spread_start_s + spread_run_s,
    }


def fastest_option(completion_s: Mapping[str, float]) -> str:
    """Name of the option with the smallest completion time.

    Parameters
    ----------
    completion_s : Mapping[str, float]
        Option name → completion time, s.

    Returns
    -------
    str
        The argmin (first listed on ties).

    Notes
    -----
    argmin over the options.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-3.
    """
    if not completion_s:
        raise ValueError("no options given")
    return min(completion_s, key=lambda k: completion_s[k])


@dataclass(frozen=True)
class UtilizationSplit:
    """Utilisation split into its two factors.

    Attributes
    ----------
    busy_of_allocated_frac : float
        S_r/A_r, busy time over allocated time.
    allocated_of_total_frac : float
        A_r/T, allocated time over total time.
    busy_of_total_frac : float
        S_r/T, the product.
    """

    busy_of_allocated_frac: float
    allocated_of_total_frac: float
    busy_of_total_frac: float


def utilization_split(busy_s: float, *, allocated_s: float, total_s: float) -> UtilizationSplit:
    """Split useful utilisation into busy/allocated × allocated/total.

    Parameters
    ----------
    busy_s : float
        Busy (useful) resource-time S_r, s.
    allocated_s : float
        Allocated resource-time A_r, s (>= busy).
    total_s : float
        Total available resource-time T, s (>= allocated).

    Returns
    -------
    UtilizationSplit
        The three fractions.

    Notes
    -----
    S_r/T = (S_r/A_r)·(A_r/T); allocation rate is not useful output.

    References
    ----------
    Card 9 (ledgers.md), book ch04, ch11.
    """
    _require_positive("allocated_s", allocated_s)
    _require_positive("total_s", total_s)
    if not 0 <= busy_s <= allocated_s <= total_s:
        raise ValueError("need 0 <= busy_s <= allocated_s <= total_s")
    return UtilizationSplit(
        busy_of_allocated_frac=busy_s / allocated_s,
        allocated_of_total_frac=allocated_s / total_s,
        busy_of_total_frac=busy_s / total_s,
    )


# --------------------------------------------------------------------------------------------------
# Cost per qualifying task
# --------------------------------------------------------------------------------------------------


def gpu_cost_usd(gpu_s: float, *, usd_per_gpu_hour: float) -> float:
    """Cost of GPU-seconds at an hourly price.

    Parameters
    ----------
    gpu_s : float
        GPU time, GPU·s.
    usd_per_gpu_hour : float
        Price, USD per GPU-hour.

    Returns
    -------
    float
        USD.

    Notes
    -----
    C = gpu_s × price / 3,600.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-9; card 12 §11.4.4.
    """
    return gpu_s * usd_per_gpu_hour / S_PER_HOUR


def task_cost_usd(
    gpu_s: float,
    *,
    usd_per_gpu_hour: float,
    cpu_s: float = 0.0,
    usd_per_cpu_s: float = 0.0,
    gib_s: float = 0.0,
    usd_per_gib_s: float = 0.0,
) -> float:
    """Full cost of one task attempt: GPU, CPU and environment memory.

    Parameters
    ----------
    gpu_s : float
        GPU time, GPU·s.
    usd_per_gpu_hour : float
        GPU price, USD per GPU-hour.
    cpu_s : float
        CPU time, CPU·s.
    usd_per_cpu_s : float
        CPU price, USD per CPU·s.
    gib_s : float
        Environment memory-time, GiB·s.
    usd_per_gib_s : float
        Memory price, USD per GiB·s.

    Returns
    -------
    float
        USD per attempt.

    Notes
    -----
    C = gpu_s·p_gpu/3600 + cpu_s·p_cpu + gib_s·p_mem.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-9.
    """
    return (
        gpu_cost_usd(gpu_s, usd_per_gpu_hour=usd_per_gpu_hour) + cpu_s * usd_per_cpu_s + gib_s * usd_per_gib_s
    )


def cost_per_success_usd(total_usd: float, *, successes: float) -> float:
    """Spend per qualifying result.

    Parameters
    ----------
    total_usd : float
        All spend in the period (idle reservation, failures, retries included), USD.
    successes : float
        Results meeting quality (and deadline, for C_q,d), count.

    Returns
    -------
    float
        USD per qualifying result; ``math.inf`` when none qualify (report the spend and zero
        successes, not a finite average).

    Notes
    -----
    C_q = C_all / N_qualified; C_q,d = C_all / N_qualified_on_time.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.4.
    """
    _require_non_negative("total_usd", total_usd)
    _require_non_negative("successes", successes)
    if successes == 0:
        return math.inf
    return total_usd / successes


def expected_cost_per_success_usd(cost_per_attempt_usd: float, *, success_frac: float) -> float:
    """Expected cost per success when failed attempts are retried independently.

    Parameters
    ----------
    cost_per_attempt_usd : float
        Cost of one attempt C, USD.
    success_frac : float
        Success probability per attempt p, 0..1.

    Returns
    -------
    float
        E[cost] per success, USD (``math.inf`` when p = 0).

    Notes
    -----
    E[cost] = C/p; delegates to card 1's :func:`planner.ledgers.inference.cost_per_success`.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-7; card 12 retry expectation (ch12 §12.4).
    """
    _require_frac("success_frac", success_frac)
    if success_frac == 0:
        return math.inf
    return cost_per_success(cost_per_attempt_usd, success_frac=success_frac)


def retry_tree_expected_cost_usd(paths: Sequence[tuple[float, float]]) -> float:
    """Expected cost over the paths of a retry tree.

    Parameters
    ----------
    paths : Sequence[tuple[float, float]]
        (probability p_π, cost c_π in USD) of each complete path; probabilities sum to 1.

    Returns
    -------
    float
        E[C], USD.

    Notes
    -----
    E[C] = Σ_π p_π·c_π.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.4.
    """
    total_p = sum(p for p, _ in paths)
    if any(p < 0 for p, _ in paths) or not math.isclose(total_p, 1.0, abs_tol=1e-9):
        raise ValueError(f"path probabilities must be >= 0 and sum to 1, got {total_p}")
    return sum(p * c for p, c in paths)


def api_call_cost_usd(
    uncached_input_tokens: float,
    *,
    output_tokens: float,
    usd_per_m_input: float,
    usd_per_m_output: float,
    cache_write_tokens: float = 0.0,
    usd_per_m_cache_write: float = 0.0,
    cache_hit_tokens: float = 0.0,
    usd_per_m_cache_hit: float = 0.0,
    storage_usd: float = 0.0,
    tool_usd: float = 0.0,
) -> float:
    """Cost of one API call from token counts.

    Parameters
    ----------
    uncached_input_tokens : float
        Input tokens billed at the plain input price I_uncached.
    output_tokens : float
        Output tokens O, thinking tokens included.
    usd_per_m_input, usd_per_m_output : float
        Input and output prices, USD per million tokens.
    cache_write_tokens : float
        Tokens written to the prompt cache I_write.
    usd_per_m_cache_write : float
        Cache write price, USD per million tokens.
    cache_hit_tokens : float
        Tokens read from the prompt cache I_hit.
    usd_per_m_cache_hit : float
        Cache hit price, USD per million tokens.
    storage_usd, tool_usd : float
        Cache storage and tool charges, USD.

    Returns
    -------
    float
        USD per call.

    Notes
    -----
    C = (I_uncached·p_u + I_write·p_w + I_hit·p_h + O·p_o)/10^6 + C_storage + C_tool.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Examples 11-5, 11-7.
    """
    counts = (uncached_input_tokens, output_tokens, cache_write_tokens, cache_hit_tokens)
    if any(c < 0 for c in counts):
        raise ValueError("token counts must be >= 0")
    tokens_usd = (
        uncached_input_tokens * usd_per_m_input
        + cache_write_tokens * usd_per_m_cache_write
        + cache_hit_tokens * usd_per_m_cache_hit
        + output_tokens * usd_per_m_output
    ) / TOKENS_PER_MILLION
    return tokens_usd + storage_usd + tool_usd


def prompt_cache_pays(
    reuses: float, *, usd_per_m_uncached: float, usd_per_m_write: float, usd_per_m_hit: float
) -> bool:
    """Whether caching a prompt prefix is cheaper over n uses.

    Parameters
    ----------
    reuses : float
        Uses n of the prefix (the first writes the cache).
    usd_per_m_uncached : float
        Plain input price p_u, USD/M tokens.
    usd_per_m_write : float
        Cache write price p_w, USD/M tokens.
    usd_per_m_hit : float
        Cache hit price p_h, USD/M tokens.

    Returns
    -------
    bool
        True iff n·p_u > p_w + (n − 1)·p_h.

    Notes
    -----
    Per token of the prefix; storage charges must be added separately.

    References
    ----------
    Card 9 (ledgers.md), book ch11 §11.4.
    """
    if reuses < 1:
        raise ValueError(f"reuses must be >= 1, got {reuses}")
    return reuses * usd_per_m_uncached > usd_per_m_write + (reuses - 1) * usd_per_m_hit


def hit_mix_cost_usd(hit_frac: float, *, hit_cost_usd: float, miss_cost_usd: float) -> float:
    """Expected call cost for a cache-hit probability.

    Parameters
    ----------
    hit_frac : float
        Probability h of a cache hit, 0..1.
    hit_cost_usd : float
        Call cost on a hit, USD.
    miss_cost_usd : float
        Call cost on a miss, USD.

    Returns
    -------
    float
        USD per call.

    Notes
    -----
    C(h) = h·C_hit + (1 − h)·C_miss.

    References
    ----------
    Card 9 (ledgers.md), book ch11 Example 11-7.
    """
    _require_frac("hit_frac", hit_frac)
    return hit_frac * hit_cost_usd + (1 - hit_frac) * miss_cost_usd
