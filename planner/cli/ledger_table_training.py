"""Card 4 (training) subcommands of `planner ledger`: ``planner.ledgers.training``.

Defaults are the book's ch10 inputs so every command runs bare.
"""

from __future__ import annotations

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import supernode as sn
from planner.ledgers import training as tr
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, MS_PER_S, S_PER_HOUR

S_PER_DAY = 24 * S_PER_HOUR


def training_time(
    params: float,
    tokens: float | None,
    peak_tflops: float,
    mfu_frac: float,
    cards: int,
    deadline_days: float | None,
) -> dict[str, Value]:
    d = tr.CHINCHILLA_TOKENS_PER_PARAM * params if tokens is None else tokens
    flop = tr.dense_train_flop(params, tokens=d)
    calendar = tr.training_calendar_s(flop, cards=cards, peak_tflops=peak_tflops, mfu_frac=mfu_frac)
    card_s = tr.training_calendar_s(flop, cards=1, peak_tflops=peak_tflops, mfu_frac=mfu_frac)
    out: dict[str, Value] = {
        "tokens": d,
        "train_flop": flop,
        "gpu_hours": card_s / S_PER_HOUR,
        "calendar_days": calendar / S_PER_DAY,
        "cards_for_deadline": None,
    }
    if deadline_days is not None:
        out["cards_for_deadline"] = tr.cards_for_compute(
            flop, peak_tflops=peak_tflops, mfu_frac=mfu_frac, available_s=deadline_days * S_PER_DAY
        )
    return out


def completion_time(
    start_days: float,
    tokens: float,
    tokens_per_step: float,
    step_s: float,
    loss_frac: float,
    deadline_days: float,
) -> dict[str, Value]:
    steps = tr.training_step_count(tokens, tokens_per_step=tokens_per_step)
    finish = tr.completion_time_s(start_days * S_PER_DAY, steps=steps, step_s=step_s, loss_frac=loss_frac)
    budget = tr.step_budget_s(
        deadline_days * S_PER_DAY, start_s=start_days * S_PER_DAY, steps=steps, loss_frac=loss_frac
    )
    return {
        "steps": steps,
        "finish_days": finish / S_PER_DAY,
        "meets_deadline": finish <= deadline_days * S_PER_DAY,
        "spare_days": deadline_days - finish / S_PER_DAY,
        "step_budget_s": budget,
    }


def zero_memory(
    params: float, dp_ranks: int, grad_bytes_per_param: float, activation_gb: float, microbatches: int
) -> dict[str, Value]:
    out: dict[str, Value] = {}
    stages: tuple[tr.ZeroStage, ...] = (0, 1, 2, 3)
    for stage in stages:
        per_card = tr.zero_state_bytes_per_card(
            params,
            stage=stage,
            dp_ranks=dp_ranks,
            grad_bytes_per_param=grad_bytes_per_param,
            activation_bytes=activation_gb * BYTES_PER_GB,
        )
        out[f"zero{stage}_gb_per_card"] = per_card / BYTES_PER_GB
        out[f"zero{stage}_gib_per_card"] = per_card / BYTES_PER_GIB
    traffic = tr.zero3_traffic_bytes_per_step(params, microbatches=microbatches, dp_ranks=dp_ranks)
    out["zero3_traffic_gb_per_step"] = traffic / BYTES_PER_GB
    out["checkpoint_gb"] = tr.checkpoint_bytes(params) / BYTES_PER_GB
    return out


def pipeline_bubble(
    microbatches: int, stages: int, virtual_stages: int, forward_ms: float, backward_ms: float
) -> dict[str, Value]:
    step = tr.pipeline_step_s(
        microbatches, stages=stages, forward_s=forward_ms / MS_PER_S, backward_s=backward_ms / MS_PER_S,
        virtual_stages=virtual_stages,
    )
    return {
        "step_ms": step * MS_PER_S,
        "utilization_frac": tr.pipeline_utilization_frac(microbatches, stages=stages, virtual_stages=virtual_stages),
        "bubble_frac": tr.pipeline_bubble_frac(microbatches, stages=stages, virtual_stages=virtual_stages),
    }


def checkpoint_interval(
    checkpoint_s: float,
    job_mtbf_hours: float,
    spike_mtbf_hours: float | None,
    restart_s: float,
    interval_s: float | None,
) -> dict[str, Value]:
    if job_mtbf_hours <= 0:
        raise ValueError("job_mtbf_hours must be positive")
    rate = 1.0 / (job_mtbf_hours * S_PER_HOUR)
    if spike_mtbf_hours is not None:
        if spike_mtbf_hours <= 0:
            raise ValueError("spike_mtbf_hours must be positive")
        rate += 1.0 / (spike_mtbf_hours * S_PER_HOUR)
    tau_star = tr.optimal_checkpoint_interval_s(checkpoint_s, failure_rate_per_s=rate)
    tau = tau_star if interval_s is None else interval_s
    kw = {"checkpoint_s": checkpoint_s, "failure_rate_per_s": rate, "restart_s": restart_s}
    return {
        "failure_rate_per_hour": rate * S_PER_HOUR,
        "optimal_interval_s": tau_star,
        "overhead_at_optimum_frac": tr.checkpoint_overhead_frac(tau_star, **kw),
        "interval_s": tau,
        "overhead_frac": tr.checkpoint_overhead_frac(tau, **kw),
        "throughput_kept_frac": tr.effective_throughput(
            1.0, overhead_frac=tr.checkpoint_overhead_frac(tau, **kw)
        ),
    }


def straggler(mean_s: float, sigma_s: float, workers: int) -> dict[str, Value]:
    factor = tr.expected_max_standard_normal(workers)
    step = tr.straggler_step_s(mean_s, sigma_s=sigma_s, workers=workers)
    return {
        "expected_max_sigmas": factor,
        "expected_step_s": step,
        "slowdown_frac": step / mean_s - 1 if mean_s > 0 else 0.0,
    }


def grad_allreduce(
    grad_gb_per_card: float,
    supernode_cards: int,
    total_cards: int,
    tensor_parallel: int,
    local_bandwidth_gb_per_s: float,
    local_latency_us: float,
    nic_bandwidth_gb_per_s: float,
    remote_latency_us: float,
    oversubscription_ratio: float,
    step_s: float | None,
) -> dict[str, Value]:
    if supernode_cards % tensor_parallel or total_cards % supernode_cards:
        raise ValueError("supernode_cards must be a multiple of tensor_parallel and divide total_cards")
    t = tr.grad_allreduce_supernodes_s(
        grad_gb_per_card * BYTES_PER_GB,
        local_ranks=supernode_cards // tensor_parallel,
        supernodes=total_cards // supernode_cards,
        local_bandwidth_gb_per_s=local_bandwidth_gb_per_s,
        local_latency_us=local_latency_us,
        nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
        remote_latency_us=remote_latency_us,
        exit_bandwidth_gb_per_s=sn.supernode_exit_gb_per_s(
            supernode_cards,
            nic_gb_per_s=nic_bandwidth_gb_per_s,
            oversubscription_ratio=oversubscription_ratio,
        ),
        tensor_parallel=tensor_parallel,
    )
    return {
        "grad_sync_s": t,
        "sync_ratio_frac": None if step_s is None else sn.sync_ratio_frac(t, step_s=step_s),
    }


def rl_async(
    generate_s: float, learn_s: float, sync_s: float, quality_retention_frac: float
) -> dict[str, Value]:
    kw = {"learn_s": learn_s, "sync_s": sync_s}
    gain = tr.rl_async_gain_ratio(quality_retention_frac, generate_s=generate_s, **kw)
    return {
        "sync_cycle_s": tr.rl_sync_cycle_s(generate_s, **kw),
        "async_cycle_s": tr.rl_async_cycle_s(generate_s, **kw),
        "threshold_frac": tr.rl_async_threshold_frac(generate_s, **kw),
        "async_gain_ratio": gain,
        "prefer_async": gain > 1.0,
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "training-time",
        4,
        "Training FLOPs, cards and days",
        "Training F ≈ 6ND (120N² at D = 20N); T = F/(pΠη); cards p = ceil(F/(Πη·T_avail))",
        source="book ch10 §10.1, §10.6",
        formulas=(tr.dense_train_flop, tr.training_calendar_s, tr.cards_for_compute),
        params=(
            Param("params", float, 1e12, "N, parameters", min=0.0),
            Param(
                "tokens", float | None, None, "D, training tokens (default: 20·N, Chinchilla-style)", min=0.0
            ),
            Param("peak_tflops", float, 989.4, "Π, dense BF16 peak per card", "TFLOP/s", min=0.0),
            Param("mfu_frac", float, 0.40, "η, MFU (0..1]", min=0.0, max=1.0),
            Param("cards", int, 16_384, "p, cards", min=1),
            Param(
                "deadline_days",
                float | None,
                None,
                "Deadline; if set, the cards needed to finish in time",
                "days",
                min=0.0,
            ),
        ),
        outputs=("tokens", "train_flop", "gpu_hours", "calendar_days", "cards_for_deadline"),
        compute=training_time,
    ),
    LedgerCommand(
        "completion-time",
        4,
        "Completion time",
        "Completion T_finish = T_0 + ceil(D/b)·t_s·(1 + L); per-step budget (T_dl − T_0)/(steps(1 + L))",
        source="book ch10 §10.6",
        formulas=(tr.training_step_count, tr.completion_time_s, tr.step_budget_s),
        params=(
            Param("start_days", float, 5.0, "T_0 before the first step", "days", min=0.0),
            Param("tokens", float, 1e11, "D, training tokens", min=0.0),
            Param("tokens_per_step", float, 3 * 2**20, "b, tokens per optimizer step", min=1.0),
            Param("step_s", float, 52.8, "t_s, normal step time", "s", min=0.0),
            Param("loss_frac", float, 0.0108, "L, failure/recovery overhead fraction", min=0.0),
            Param("deadline_days", float, 30.0, "Deadline from the same origin", "days", min=0.0),
        ),
        outputs=("steps", "finish_days", "meets_deadline", "spare_days", "step_budget_s"),
        compute=completion_time,
    ),
    LedgerCommand(
        "zero-memory",
        4,
        "ZeRO per-card state",
        "ZeRO per card: 16N, 4N + 12N/d, 2N + 14N/d, 16N/d (+ activations); ZeRO-3 traffic 3m(d−1)/d·2N",
        source="book ch10 §10.2",
        formulas=(tr.zero_state_bytes_per_card, tr.zero3_traffic_bytes_per_step, tr.checkpoint_bytes),
        params=(
            Param("params", float, 8_190_735_360, "N, parameters", min=0.0),
            Param("dp_ranks", int, 8, "d, data-parallel ranks", min=1),
            Param(
                "grad_bytes_per_param",
                float,
                2.0,
                "Gradient size per parameter (BF16 2, FP32 4)",
                "B",
                min=0.0,
            ),
            Param("activation_gb", float, 0.0, "Activations per card", "GB", min=0.0),
            Param("microbatches", int, 1, "m, micro-batches per step (ZeRO-3 traffic)", min=1),
        ),
        outputs=(
            *(f"zero{stage}_{unit}_per_card" for stage in range(4) for unit in ("gb", "gib")),
            "zero3_traffic_gb_per_step",
            "checkpoint_gb",
        ),
        compute=zero_memory,
    ),
    LedgerCommand(
        "pipeline-bubble",
        4,
        "Pipeline bubble",
        "Pipeline T = (m + p − 1)(t_f + t_b), u = m/(m + p − 1), bubble (1/v)(p − 1)/m",
        source="book ch10 §10.2",
        formulas=(tr.pipeline_step_s, tr.pipeline_utilization_frac, tr.pipeline_bubble_frac),
        params=(
            Param("microbatches", int, 8, "m, micro-batches per step", min=1),
            Param("stages", int, 4, "p, pipeline stages", min=1),
            Param("virtual_stages", int, 1, "v, model chunks per stage (interleaved)", min=1),
            Param("forward_ms", float, 1.0, "t_f per micro-batch per stage", "ms", min=0.0),
            Param("backward_ms", float, 2.0, "t_b per micro-batch per stage", "ms", min=0.0),
        ),
        outputs=("step_ms", "utilization_frac", "bubble_frac"),
        compute=pipeline_bubble,
    ),
    LedgerCommand(
        "checkpoint-interval",
        4,
        "Checkpoint interval",
        "Checkpoint loss L(τ) = c/τ + λτ/2 + λr, optimum τ* = sqrt(2c/λ), λ = λ_hw + λ_spike",
        source="book ch10 §10.3",
        formulas=(tr.optimal_checkpoint_interval_s, tr.checkpoint_overhead_frac, tr.effective_throughput),
        params=(
            Param("checkpoint_s", float, 60.0, "c, blocking checkpoint write time", "s", min=0.0),
            Param(
                "job_mtbf_hours",
                float,
                7.9,
                "Job mean time between failures (Meta: 7.9 h on 1,024 cards)",
                "h",
                min=0.0,
            ),
            Param(
                "spike_mtbf_hours",
                float | None,
                None,
                "Mean time between loss-spike rollbacks (adds λ_spike)",
                "h",
                min=0.0,
            ),
            Param("restart_s", float, 600.0, "r, restart and reload time", "s", min=0.0),
            Param("interval_s", float | None, None, "τ to evaluate (default: τ*)", "s", min=0.0),
        ),
        outputs=(
            "failure_rate_per_hour",
            "optimal_interval_s",
            "overhead_at_optimum_frac",
            "interval_s",
            "overhead_frac",
            "throughput_kept_frac",
        ),
        compute=checkpoint_interval,
    ),
    LedgerCommand(
        "straggler",
        4,
        "Straggler expected maximum",
        "Stragglers: E[max of N normal step times] = μ + E[max Z_N]·σ (1.42σ at 8, 2.23σ at 48)",
        source="book ch10 §10.4",
        formulas=(tr.expected_max_standard_normal, tr.straggler_step_s),
        params=(
            Param("mean_s", float, 52.78, "μ, mean per-worker step time", "s", min=0.0),
            Param("sigma_s", float, 1.044, "σ of the varying part", "s", min=0.0),
            Param("workers", int, 48, "N, workers that wait for each other", min=1),
        ),
        outputs=("expected_max_sigmas", "expected_step_s", "slowdown_frac"),
        compute=straggler,
    ),
    LedgerCommand(
        "grad-allreduce",
        4,
        "Gradient all-reduce across supernodes",
        "T_grad = 2(q−1)α_L + 2(q−1)G/(qB_L) + 2(H−1)α_R + max(2(H−1)G/(HqB_NIC), V_out/B_out)",
        source="book ch07 §7.6.4",
        formulas=(tr.grad_allreduce_supernodes_s, sn.supernode_exit_gb_per_s, sn.sync_ratio_frac),
        params=(
            Param("grad_gb_per_card", float, 8.0, "G, gradient bytes per card", "GB", min=0.0),
            Param("supernode_cards", int, 64, "Cards per supernode", min=1),
            Param("total_cards", int, 1024, "Cards in the job", min=1),
            Param("tensor_parallel", int, 8, "TP degree inside the supernode", min=1),
            Param("local_bandwidth_gb_per_s", float, 450.0, "B_L per card", "GB/s", min=0.0),
            Param("local_latency_us", float, 0.822, "α_L", "µs", min=0.0),
            Param("nic_bandwidth_gb_per_s", float, 50.0, "B_NIC per card", "GB/s", min=0.0),
            Param("remote_latency_us", float, 3.76, "α_R", "µs", min=0.0),
            Param("oversubscription_ratio", float, 1.0, "r:1 at the supernode exit", min=0.0),
            Param("step_s", float | None, None, "Step time (reports the sync ratio)", "s", min=0.0),
        ),
        outputs=("grad_sync_s", "sync_ratio_frac"),
        compute=grad_allreduce,
    ),
    LedgerCommand(
        "rl-async",
        4,
        "Async vs sync RL",
        "Async RL beats sync iff q > (max(t_g, t_l) + t_s)/(t_g + t_l + t_s)",
        source="book ch10 §10.5",
        formulas=(
            tr.rl_async_gain_ratio,
            tr.rl_sync_cycle_s,
            tr.rl_async_cycle_s,
            tr.rl_async_threshold_frac,
        ),
        params=(
            Param("generate_s", float, 40.0, "t_gen per cycle", "s", min=0.0),
            Param("learn_s", float, 16.0, "t_learn per cycle", "s", min=0.0),
            Param("sync_s", float, 4.0, "t_sync per cycle", "s", min=0.0),
            Param("quality_retention_frac", float, 0.8, "q, useful fraction under async", min=0.0, max=1.0),
        ),
        outputs=("sync_cycle_s", "async_cycle_s", "threshold_frac", "async_gain_ratio", "prefer_async"),
        compute=rl_async,
    ),
)
