"""Card 12 (edge–cloud, buy vs rent) subcommands of `planner ledger`: ``planner.ledgers.edge_cloud``.

Defaults are the book's worked examples (ch11 §11.4.4, ch12, experiment ch13 13-06) so every command
runs bare.
"""

from __future__ import annotations

import math

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import edge_cloud as ec
from planner.units import BYTES_PER_MB

S_PER_YEAR = 365 * 86_400.0


def remote_exec(
    upload_mb: float,
    uplink_mbit_per_s: float,
    rtt_s: float,
    compute_s: float,
    download_mb: float,
    downlink_mbit_per_s: float,
    local_s: float,
) -> dict[str, Value]:
    remote = ec.remote_exec_s(
        upload_mb * BYTES_PER_MB,
        uplink_mbit_per_s=uplink_mbit_per_s,
        rtt_s=rtt_s,
        compute_s=compute_s,
        download_bytes=download_mb * BYTES_PER_MB,
        downlink_mbit_per_s=downlink_mbit_per_s,
    )
    return {"remote_s": remote, "local_s": local_s, "remote_wins": remote < local_s}


def rtt_crossover(
    deadline_s: float,
    rounds: int,
    other_s: float,
    model_s: float,
    prep_s: float,
    rtt_s: float,
    upload_mb_per_round: float,
    uplink_mbit_per_s: float,
) -> dict[str, Value]:
    common = {"other_s_per_round": other_s, "model_s_per_round": model_s, "prep_s": prep_s, "rtt_s": rtt_s}
    fixed = ec.deployment_completion_s(rounds, **common)
    at_b = ec.deployment_completion_s(
        rounds,
        upload_bytes_per_round=upload_mb_per_round * BYTES_PER_MB,
        uplink_mbit_per_s=uplink_mbit_per_s,
        **common,
    )
    required = ec.required_uplink_mbit_per_s(
        deadline_s, fixed_s=fixed, upload_bytes=rounds * upload_mb_per_round * BYTES_PER_MB
    )
    return {
        "fixed_s": fixed,
        "completion_s": at_b,
        "on_time": at_b <= deadline_s,
        "required_uplink_mbit_per_s": required,
    }


def buy_vs_rent(
    reserved_usd_per_gpu_hour: float,
    gpus: float,
    payg_usd_per_task: float,
    marginal_usd_per_task: float,
    tasks_per_month: float,
) -> dict[str, Value]:
    fixed = ec.monthly_rent_usd(reserved_usd_per_gpu_hour, cards=gpus)
    selfhost = ec.selfhost_monthly_usd(
        tasks_per_month, fixed_usd=fixed, marginal_usd_per_task=marginal_usd_per_task
    )
    payg = ec.payg_monthly_usd(tasks_per_month, usd_per_task=payg_usd_per_task)
    return {
        "fixed_usd_per_month": fixed,
        "breakeven_tasks_per_month": ec.selfhost_breakeven_tasks(
            fixed, payg_usd_per_task=payg_usd_per_task, marginal_usd_per_task=marginal_usd_per_task
        ),
        "selfhost_usd_per_month": selfhost,
        "payg_usd_per_month": payg,
        "cheaper": "self-host" if selfhost < payg else "pay-as-you-go",
    }


def breakeven_utilization(reserved_usd_per_hour: float, on_demand_usd_per_hour: float) -> dict[str, Value]:
    return {
        "breakeven_utilization_frac": ec.breakeven_utilization_frac(
            reserved_usd_per_hour, on_demand_usd_per_hour=on_demand_usd_per_hour
        )
    }


def fixed_investment(
    fixed_cost: float,
    saving_per_m_units: float,
    units_per_s_per_machine: float,
    utilization_frac: float,
    lifetime_years: float,
    delivery_delay_years: float,
) -> dict[str, Value]:
    v_star = ec.breakeven_volume_units(fixed_cost, saving_per_unit=saving_per_m_units / 1e6)
    machines = ec.breakeven_machines(
        v_star,
        units_per_s_per_machine=units_per_s_per_machine,
        utilization_frac=utilization_frac,
        lifetime_s=lifetime_years * S_PER_YEAR,
        delivery_delay_s=delivery_delay_years * S_PER_YEAR,
    )
    return {"breakeven_units": v_star, "breakeven_machines": machines}


def rent_vs_api(
    tokens_per_s: float,
    usd_per_card_hour: float,
    cards: float,
    users: float,
    overhead_s_per_hour: float,
    history_tokens: float,
    output_tokens: float,
    new_tokens: float,
    cache_hit_frac: float,
    usd_per_m_hit: float,
    usd_per_m_miss: float,
    usd_per_m_output: float,
) -> dict[str, Value]:
    output = ec.monthly_output_tokens(tokens_per_s, overhead_s_per_hour=overhead_s_per_hour)
    rent = ec.monthly_rent_usd(usd_per_card_hour, cards=cards, users=users)
    gpu = ec.gpu_usd_per_m_output(rent, output_tokens_per_month=output)
    prices = {
        "usd_per_m_hit": usd_per_m_hit,
        "usd_per_m_miss": usd_per_m_miss,
        "usd_per_m_output": usd_per_m_output,
    }
    call = {"output_tokens": output_tokens, "new_tokens": new_tokens}
    api = ec.api_usd_per_m_output(history_tokens, cache_hit_frac=cache_hit_frac, **call, **prices)
    hit = ec.api_cache_hit_tokens(history_tokens, cache_hit_frac=cache_hit_frac, **call)
    return {
        "output_m_tokens_per_user_month": output / 1e6,
        "rent_usd_per_user_month": rent,
        "gpu_usd_per_m_output": gpu,
        "api_usd_per_m_output": api,
        "api_usd_per_user_month": api * output / 1e6,
        "whole_input_hit_frac": hit / history_tokens,
        "breakeven_rent_usd_per_card_hour": ec.breakeven_rent_usd_per_card_hour(
            usd_per_card_hour, gpu_usd_per_m=gpu, api_usd_per_m=api
        ),
        "api_breakeven_cache_hit_frac": ec.api_breakeven_cache_hit_frac(
            gpu, history_tokens=history_tokens, **call, **prices
        ),
        "cheaper": "gpu" if gpu < api else "api",
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "remote-exec",
        12,
        "Remote execution",
        "Remote execution T = S_up/B_up + RTT + T_compute + S_down/B_down; remote wins iff T < local",
        source="book ch12 §12.1",
        formulas=(ec.remote_exec_s,),
        params=(
            Param("upload_mb", float, 30.0, "Upload S_up", "MB"),
            Param("uplink_mbit_per_s", float, 20.0, "Uplink B_up", "Mbit/s"),
            Param("rtt_s", float, 0.1, "Round-trip time", "s", min=0.0),
            Param("compute_s", float, 0.3, "Remote compute", "s", min=0.0),
            Param("download_mb", float, 5.0, "Download S_down", "MB"),
            Param("downlink_mbit_per_s", float, 100.0, "Downlink B_down", "Mbit/s"),
            Param("local_s", float, math.inf, "Local compute time to compare with", "s", min=0.0),
        ),
        outputs=("remote_s", "local_s", "remote_wins"),
        compute=remote_exec,
    ),
    LedgerCommand(
        "rtt-crossover",
        12,
        "Required uplink, §12.5",
        "§12.5 deployment model T_cloud(b) = prep + rounds·(t_other + t_model + RTT) + rounds·S_up/b; required uplink b ≥ rounds·S_up/(D − fixed)",
        source="book ch12 §12.5",
        formulas=(ec.deployment_completion_s, ec.required_uplink_mbit_per_s),
        params=(
            Param("deadline_s", float, 45.0, "Deadline D for the remaining rounds", "s", min=0.0),
            Param("rounds", int, 20, "Remaining rounds"),
            Param("other_s", float, 0.3, "Other work per round", "s", min=0.0),
            Param(
                "model_s", float, 45 * 5.47 / 3350.0, "Remote model time per round (H100: 45 × 5.47 GB)", "s", min=0.0
            ),
            Param("prep_s", float, 133.6 / 989.4, "Remote preparation (prefill)", "s", min=0.0),
            Param("rtt_s", float, 0.20, "Round trip to the remote site", "s", min=0.0),
            Param("upload_mb_per_round", float, 0.8, "Upload per round (6.4 Mb = 0.8 MB)", "MB"),
            Param("uplink_mbit_per_s", float, 6.4, "Uplink to evaluate T_cloud(b) at", "Mbit/s"),
        ),
        outputs=("fixed_s", "completion_s", "on_time", "required_uplink_mbit_per_s"),
        compute=rtt_crossover,
    ),
    LedgerCommand(
        "buy-vs-rent",
        12,
        "Buy vs rent",
        "Self-host / reserve vs pay-as-you-go: cheaper iff N > F/(c − v), F = 720 h × price × GPUs; if c ≤ v pay-as-you-go always wins",
        source="book ch11 §11.4.4",
        formulas=(
            ec.monthly_rent_usd,
            ec.selfhost_monthly_usd,
            ec.payg_monthly_usd,
            ec.selfhost_breakeven_tasks,
        ),
        params=(
            Param("reserved_usd_per_gpu_hour", float, 6.79, "Reserved price (B200 Pod)", "USD/GPU-h"),
            Param("gpus", float, 4, "Reserved GPUs"),
            Param("payg_usd_per_task", float, 0.0081, "Pay-per-use price per task c", "USD", min=0.0),
            Param("marginal_usd_per_task", float, 0.0, "Marginal self-host cost per task v", "USD", min=0.0),
            Param("tasks_per_month", float, 1e6, "Monthly volume N to price", "tasks/month", min=0.0),
        ),
        outputs=(
            "fixed_usd_per_month",
            "breakeven_tasks_per_month",
            "selfhost_usd_per_month",
            "payg_usd_per_month",
            "cheaper",
        ),
        compute=buy_vs_rent,
    ),
    LedgerCommand(
        "breakeven-utilization",
        12,
        "Break-even utilisation",
        "Break-even utilisation u* = reserved price / on-demand price",
        source="book ch11 §11.4.4",
        formulas=(ec.breakeven_utilization_frac,),
        params=(
            Param("reserved_usd_per_hour", float, 6.79, "Reserved price", "USD/GPU-h"),
            Param(
                "on_demand_usd_per_hour", float, 8.64, "Pay-per-use price (per used GPU-hour)", "USD/GPU-h"
            ),
        ),
        outputs=("breakeven_utilization_frac",),
        compute=breakeven_utilization,
    ),
    LedgerCommand(
        "fixed-investment",
        12,
        "Fixed investment",
        "Fixed investment / lifecycle break-even V* = F_0/Δc (= Q* = ΔC_0/Δc) and the machines whose lifetime output reaches it",
        source="book ch04 §4.8.4, ch03 §3.6",
        formulas=(ec.breakeven_volume_units, ec.breakeven_machines),
        params=(
            Param("fixed_cost", float, 20e6, "Extra fixed investment F_0", "currency"),
            Param(
                "saving_per_m_units", float, 0.5, "Saving Δc per million units of output", "currency/M units"
            ),
            Param("units_per_s_per_machine", float, 10_000.0, "Output per machine", "units/s"),
            Param("utilization_frac", float, 0.5, "Average utilisation, 0..1"),
            Param("lifetime_years", float, 1.0, "Useful life (365 days)", "years"),
            Param("delivery_delay_years", float, 0.0, "Delivery delay shortening the life", "years", min=0.0),
        ),
        outputs=("breakeven_units", "breakeven_machines"),
        compute=fixed_investment,
    ),
    LedgerCommand(
        "rent-vs-api",
        12,
        "Rent vs API",
        "24 × 7 rent vs API: output = 2.592·r M tok/month, rent = 720·h·cards/B, GPU $/M = rent/output, API $/M = p_out + (I_hit·p_hit + I_miss·p_miss)/O, break-even rent = rent × API/GPU",
        source="experiment ch13 13-06",
        formulas=(
            ec.monthly_output_tokens,
            ec.monthly_rent_usd,
            ec.gpu_usd_per_m_output,
            ec.api_usd_per_m_output,
            ec.api_cache_hit_tokens,
            ec.breakeven_rent_usd_per_card_hour,
            ec.api_breakeven_cache_hit_frac,
        ),
        params=(
            Param("tokens_per_s", float, 39.5, "Per-user decode speed r", "tok/s"),
            Param("usd_per_card_hour", float, 6.79, "Rent (B200 Pod)", "USD/card-h"),
            Param("cards", float, 4, "Cards in the GPU group"),
            Param("users", float, 32, "Users sharing the group"),
            Param("overhead_s_per_hour", float, 0.0, "Non-overlappable overhead", "s/h"),
            Param("history_tokens", float, 200_000, "History tokens per call L"),
            Param("output_tokens", float, 4096, "Output tokens per call O"),
            Param("new_tokens", float, 1024, "Further new tokens per call T", min=0.0),
            Param("cache_hit_frac", float, 1.0, "API cache-hit ratio h_c of the cacheable part"),
            Param(
                "usd_per_m_hit",
                float,
                0.008497,
                "API cache-hit input price (V4-Flash)",
                "USD/M tokens",
                min=0.0,
            ),
            Param("usd_per_m_miss", float, 0.267056, "API cache-miss input price", "USD/M tokens", min=0.0),
            Param("usd_per_m_output", float, 0.801167, "API output price", "USD/M tokens", min=0.0),
        ),
        outputs=(
            "output_m_tokens_per_user_month",
            "rent_usd_per_user_month",
            "gpu_usd_per_m_output",
            "api_usd_per_m_output",
            "api_usd_per_user_month",
            "whole_input_hit_frac",
            "breakeven_rent_usd_per_card_hour",
            "api_breakeven_cache_hit_frac",
            "cheaper",
        ),
        compute=rent_vs_api,
    ),
)
