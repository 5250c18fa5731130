"""Card 10 (supernode) subcommands of `planner ledger`: ``planner.ledgers.supernode``.

Defaults are the book's ch06 inputs (DGX H100) so every command runs bare.
"""

from __future__ import annotations

import math

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import supernode as sn
from planner.units import MS_PER_S, US_PER_S


def power_limited_size(
    power_budget_kw: float,
    server_power_kw: float,
    gpus_per_server: int,
    fixed_power_kw: float,
    rack_limit_kw: float,
) -> dict[str, Value]:
    cards = sn.power_limited_cards(
        power_budget_kw,
        server_power_kw=server_power_kw,
        gpus_per_server=gpus_per_server,
        fixed_power_kw=fixed_power_kw,
    )
    servers = cards // gpus_per_server
    per_rack = sn.servers_per_rack(rack_limit_kw, server_power_kw=server_power_kw)
    return {
        "servers": servers,
        "cards": cards,
        "power_used_kw": sn.cluster_power_kw(
            cards,
            server_power_kw=server_power_kw,
            gpus_per_server=gpus_per_server,
            fixed_power_kw=fixed_power_kw,
        ),
        "servers_per_rack": per_rack,
        "racks": -(-servers // per_rack) if per_rack else None,
    }


def sync_ratio(exposed_comm_s: float, step_s: float, threshold_frac: float) -> dict[str, Value]:
    ratio = sn.sync_ratio_frac(exposed_comm_s, step_s=step_s)
    return {
        "sync_ratio_frac": ratio,
        "threshold_frac": threshold_frac,
        "acceptable": sn.sync_ratio_acceptable(ratio, threshold_frac=threshold_frac),
    }


def ocs_payback(reconfig_ms: float, before_us: float, after_us: float) -> dict[str, Value]:
    saving_s = (before_us - after_us) / US_PER_S
    return {
        "saving_per_repetition_us": saving_s * US_PER_S,
        "payback_repetitions": sn.ocs_payback_repetitions(
            reconfig_ms / MS_PER_S, saving_per_repetition_s=saving_s
        ),
    }


def token_time(compute_us: float, comm_us: float, fixed_us: float) -> dict[str, Value]:
    t = sn.token_time_s(compute_us / US_PER_S, comm_s=comm_us / US_PER_S, fixed_s=fixed_us / US_PER_S)
    return {
        "token_us": t * US_PER_S,
        "tokens_per_s": 1 / t if t > 0 else math.inf,
        "comm_share_frac": sn.comm_share_frac(comm_us / US_PER_S, token_s=t),
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "power-limited-size",
        10,
        "Power-limited supernode size",
        "Power-limited size N ≤ g·floor((P_budget − P_0)/P_server); servers per air-cooled rack",
        source="book ch06 eq. 6-11",
        formulas=(sn.power_limited_cards, sn.servers_per_rack, sn.cluster_power_kw),
        params=(
            Param("power_budget_kw", float, 120.0, "P_budget", "kW", min=0.0),
            Param("server_power_kw", float, 10.2, "P_server (DGX H100: 10.2)", "kW", min=0.0),
            Param("gpus_per_server", int, 8, "g, cards per server", min=1),
            Param("fixed_power_kw", float, 0.0, "P_0, shared equipment", "kW", min=0.0),
            Param("rack_limit_kw", float, 40.0, "Per-rack power/cooling limit (air ≈ 40)", "kW", min=0.0),
        ),
        outputs=("servers", "cards", "power_used_kw", "servers_per_rack", "racks"),
        compute=power_limited_size,
    ),
    LedgerCommand(
        "sync-ratio",
        10,
        "Sync ratio",
        "sync_ratio = exposed communication / step time vs a user threshold (default 0.30, planner's choice)",
        formulas=(sn.sync_ratio_frac, sn.sync_ratio_acceptable),
        params=(
            Param(
                "exposed_comm_s",
                float,
                0.318,
                "Exposed (non-overlapped) communication per step",
                "s",
                min=0.0,
            ),
            Param("step_s", float, 0.939, "Step time", "s", min=0.0),
            Param(
                "threshold_frac",
                float,
                sn.DEFAULT_SYNC_RATIO_THRESHOLD_FRAC,
                "Acceptable ratio (planner default 0.30; not a book rule)",
                min=0.0,
                max=1.0,
            ),
        ),
        outputs=("sync_ratio_frac", "threshold_frac", "acceptable"),
        compute=sync_ratio,
    ),
    LedgerCommand(
        "ocs-payback",
        10,
        "OCS reconfiguration payback",
        "OCS reconfiguration pays after n ≥ T_reconfig / saving per repetition",
        source="book ch06 §6.5",
        formulas=(sn.ocs_payback_repetitions,),
        params=(
            Param("reconfig_ms", float, 1.0, "Reconfiguration time", "ms", min=0.0),
            Param("before_us", float, 293.6, "Collective time on the current topology", "µs", min=0.0),
            Param("after_us", float, 97.9, "Collective time after reconfiguring", "µs", min=0.0),
        ),
        outputs=("saving_per_repetition_us", "payback_repetitions"),
        compute=ocs_payback,
    ),
    LedgerCommand(
        "token-time",
        10,
        "Token time",
        "Token time of a coupled decode domain T = compute + fixed + comm; tokens/s and comm share",
        source="book ch06 eq. 6-15",
        formulas=(sn.token_time_s, sn.comm_share_frac),
        params=(
            Param("compute_us", float, 2689.0, "Compute/memory term per token", "µs", min=0.0),
            Param("comm_us", float, 76.0, "Communication per token", "µs", min=0.0),
            Param("fixed_us", float, 0.0, "Fixed overhead per token not in the compute term", "µs", min=0.0),
        ),
        outputs=("token_us", "tokens_per_s", "comm_share_frac"),
        compute=token_time,
    ),
)
