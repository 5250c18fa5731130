"""Typed results of a solved plan: deployments per period, supply lines and the schedule.

Money is not computed here: every USD figure of these records is read from the plan's cost ledger
(planner.readout.ledger.CostLedger) by planner.readout.read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from planner.ledgers.economics import delivery_month


def as_json(record: Any) -> dict[str, Any]:
    """A readout record as a JSON-ready dict."""
    out: dict[str, Any] = dataclasses.asdict(record)
    return out


@dataclass(frozen=True)
class Deployment:
    """One operating point of one candidate deployed in some period: what runs, where, how fast."""

    workload: str
    model: str
    gpu: str
    site: str
    placement: str
    """The site's kind: cloud, datacenter or edge."""
    quantization: str
    kv_dtype: str
    tp: int
    pp: int
    replicas: int
    """Replicas at the workload's peak time slice (the largest of :attr:`replicas_per_period` otherwise)."""
    gpus: float
    """GPUs of :attr:`replicas` (tp·pp·gpu_share_frac each; fractional when small models share a GPU)."""
    batch: int
    ttft_ms: float | None
    """Time to first token at the load each replica serves (queueing for the chunk budget, chunk steps, network);
    None for a decode pool (its requests' first token is the prefill pool's)."""
    tpot_ms: float | None
    """Time per output token at the load each replica serves: the step a request runs in (its own sequence and
    the others it finds, planner.performance.load.own_batch) with the prefill chunks it carries; None for a
    prefill pool (it generates no tokens after the first)."""
    decode_step_ms: float | None
    """TPOT without prompt chunks: the bare decode step at the batch TPOT is taken at, per output token under
    speculation (a round over its E[N] tokens; planner.performance.load.bare_tpot_s). Never above TPOT. None
    for a prefill pool."""
    ttft_slo_ms: float
    tpot_slo_ms: float
    memory_per_gpu_gb: float
    capacity_per_replica_requests_per_s: float
    capacity_requests_per_s: float
    """Capacity of :attr:`replicas`."""
    served_requests_per_s: float
    """Requests/s routed to it at the workload's peak time slice."""
    replicas_per_period: list[int]
    """Per period of the horizon (0 … periods − 1): replicas at the day's busiest hour block."""
    served_requests_per_s_per_period: list[float]
    """Per period of the horizon: requests/s served, the daily mean over hour blocks."""
    limited_by: str
    cand: int
    cost_usd_per_month: float = 0.0
    """Its share (by GPUs) of the horizon cost of the supply at its (GPU, site), per month."""
    procurement: str = ""
    rental_kind: str | None = None
    engine: str = "vllm"
    """Serving engine (catalogs/engines.yaml) whose host costs and scheduler the numbers assume, with the
    workload's settings where it has any: ``vllm[memory_claim_frac=0.95]`` (planner.catalog.engine_settings)."""
    served_per_replica_requests_per_s: float = 0.0
    """Load one replica serves at the peak slice (served / replicas): TTFT, TPOT, batch and memory are at it."""
    busiest_served_requests_per_s_per_period: list[float] = field(default_factory=list)
    """Per period of the horizon: requests/s served in the period's busiest hour block for it (without an
    hourly profile the period's served load; a PD group's KV link carries it)."""
    busiest_served_per_replica_requests_per_s_per_period: list[float] = field(default_factory=list)
    """Per period of the horizon: the largest load one replica serves in any hour block of the period (served
    ÷ replicas of the block; without an hourly profile the period's served load ÷ its replicas)."""
    capacity_at_slo_requests_per_s: float = 0.0
    """Largest load one replica sustains within both SLOs (before the max_utilization_frac headroom)."""
    batch_limit: int = 0
    """The most sequences one replica runs: min(the memory fit with its optimizations, the scenario's max_batch,
    the engine's max_running_sequences) (planner.performance.load.replica_batch_limit), as its predict command
    prints it (``at_load.batch_limit``); 0: not read at load (planner.audit.at_served_load sets it)."""
    optimizations: list[dict[str, Any]] = field(default_factory=list)
    """[{name, on, why}]: prefix cache / speculative decoding (when stated), KV quantization, chunked prefill."""
    ep: int = 1
    """Expert parallelism (MoE): attention data parallel DP = EP, experts split EP ways; tp·ep·pp GPUs a replica."""
    moe: dict[str, float] | None = None
    """MoE models: the decode step's MoE terms at :attr:`batch` (EP, attention DP/TP, experts touched, rows per
    expert, expert GEMM efficiency, load imbalance, all-to-all ms; planner/readout/moe_terms.py); None if dense."""
    role: str = "colocated"
    """colocated, or prefill / decode: a pool of prefill/decode disaggregation (card 8). A prefill pool's
    TPOT figures and a decode pool's TTFT figures are 0 (not its stage)."""
    pd_group: str = ""
    """For prefill/decode pools: workload/model/weight format/KV format — the pools that hand KV to each other."""
    kv_handoff_gb_per_request: float = 0.0
    """Prefill/decode pools: KV handed over per request, GB (the prompt's KV cache)."""
    kv_link_gb_per_s: float = 0.0
    """Prefill/decode pools: scale-out bandwidth per direction of one replica for the KV handoff, GB/s."""
    sync_ratio: float = 0.0
    """Exposed TP/PP communication / decode step at its operating point (≤ the workload's max_sync_ratio)."""
    gpu_share_frac: float = 1.0
    """Share of one GPU each replica holds (1 = whole GPUs; 1/2, 1/4 when small models share a GPU)."""
    instance_gpus: list[int] = field(default_factory=list)
    """GPUs per instance that holds one of its replicas (a node for bought/owned GPUs), per supply line used."""
    shares_gpu_with: list[str] = field(default_factory=list)
    """Other deployments (``workload/model``) holding shares of the same GPUs (first-fit packing per period)."""
    predict_command: str = ""
    """``planner predict …`` that reproduces its TTFT, TPOT and decode step (add ``--explain`` for every term;
    planner/readout/predict_command.py)."""

    def read_load_per_replica_requests_per_s(self) -> float:
        """The load one replica serves where the row's figures are read: served / replicas at the workload's
        peak; for a deployment that serves nothing there (a rental bridging a purchase's lead time shows its
        largest period's replicas; a replica that runs only in the day's quieter hour blocks), the last period
        with those replicas: the largest load one replica serves in an hour block of it (without an hourly
        profile the period's served load / replicas; the daily mean would count the hours it does not run).
        TTFT, TPOT, batch, memory and the predict command are at this load."""
        if self.served_requests_per_s > 0 or not self.replicas:
            return self.served_requests_per_s / max(self.replicas, 1)
        shown = [t for t, r in enumerate(self.replicas_per_period) if r == self.replicas]
        if not shown:
            return 0.0
        if self.busiest_served_per_replica_requests_per_s_per_period:
            return self.busiest_served_per_replica_requests_per_s_per_period[shown[-1]]
        return self.served_requests_per_s_per_period[shown[-1]] / self.replicas

    def periods_cost_usd_per_month(self, first_period: int, last_period: int) -> float:
        """The part of :attr:`cost_usd_per_month` that its periods ``first_period`` … ``last_period`` carry,
        USD/month of the horizon. The supply cost is split by GPU-periods (planner.readout.deployments.
        allocate_costs), so each period carries its replicas' share; the parts of all its periods add up to
        :attr:`cost_usd_per_month` (the workbook's Deployments rows, one per run of periods)."""
        held = sum(self.replicas_per_period)
        part = sum(self.replicas_per_period[first_period : last_period + 1])
        return self.cost_usd_per_month * part / held if held else 0.0


@dataclass(frozen=True)
class SupplyLine:
    """One supply option in use: units per period and month, and its money (read from the cost ledger)."""

    id: str
    gpu: str
    site: str
    kind: str
    procurement: str
    rental_kind: str | None
    unit_gpus: int
    units: int
    """Most units in use in any time slice."""
    gpus: int
    usd_per_unit_month: float
    cost_usd_per_month: float
    """Horizon cost at present value ÷ horizon months (ledger; a reservation's months paid after the horizon
    included)."""
    capex_usd: float
    residual_usd: float
    available_from_month: float
    purchase_month: int | None
    units_per_period: list[float]
    """Per period of the horizon: units in use (hour blocks weighted by their share of the day: what rent
    bills); bought nodes from the first period that starts after their delivery."""
    units_per_month: list[float]
    """Per month: units paid for, as the ledger books them — rented units billed (a reservation whose last
    term runs past the horizon also in those months), owned units in use, and bought nodes from their delivery
    month, where their running cost starts (a node delivered in month 2 of a 3-month period is paid, idle, in
    month 2 and serves from month 3: :attr:`units_per_period`)."""
    volume_discount_usd: float
    """Rent volume discount over the horizon at present value (ledger), USD."""
    source: str
    max_instance_gpus: int = 0
    """Largest group one unit hosts: the largest instance sold at this quote (rent; billed per
    ``unit_gpus``), a node (buy, inventory, edge devices)."""

    @property
    def delivery_month(self) -> int:
        """Buy lines: the month the nodes arrive and the ledger starts their running cost (a 1.5-month lead
        time delivers in month 2): planner.ledgers.economics.delivery_month, as the ledger and the budget rows."""
        return delivery_month(self.available_from_month)


@dataclass(frozen=True)
class HourBlock:
    """One hour block of a period (hourly profiles only)."""

    hours_per_day: float
    rented_gpus: dict[str, int]
    served_requests_per_s: dict[str, float]


@dataclass(frozen=True)
class ScheduleEntry:
    """One period of the horizon: GPUs ordered, in use by procurement, and requests/s served."""

    period: int
    start_month: int
    months: list[int]
    representative_period: int
    ordered_gpus: dict[str, int]
    bought_gpus: dict[str, int]
    rented_gpus: dict[str, int]
    owned_gpus: dict[str, int]
    served_requests_per_s: dict[str, float]
    hour_blocks: list[HourBlock] = field(default_factory=list)
