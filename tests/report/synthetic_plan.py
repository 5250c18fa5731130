"""A hand-built PlanResult for the workbook tests: two rented lines (one with a volume discount), one bought
line whose delivery falls inside a period, a 10 %/year cost of capital, and user text that looks like
formulas. Its cost ledger is written out line by line here, independently of the planner."""

from __future__ import annotations

from typing import Any

from planner.optimize.alternative_record import Alternative
from planner.readout import CashLine, CostLedger, Deployment, PlanResult, ScheduleEntry, SupplyLine
from planner.scenario import parse_scenario

INJECT_SOURCE = '=HYPERLINK("http://evil","x")'
INJECT_REASON = "+1+1 costs more"
INJECT_NAME = "@SUM(1,2)"
INJECT_CONSTRAINT = "-2+3"

HORIZON = 6
PERIOD_MONTHS = 2
RATE = 0.10
PRICE_A, PRICE_B = 9849.6, 1368.0
UNITS_A = [1, 2, 1]  # three periods of two months
UNITS_B = [0, 3, 2]
DISCOUNT_A_USD = 500.0  # volume discount on line A while it has two units
NODES_C, NODE_USD, RUNNING_C, RESALE_C = 2, 300_000.0, 1500.0, 200_000.0
DELIVERY_C = 1  # ordered in month 0, delivered in month 1: inside period 0
OUTPUT_TOKENS = 2.5e9
ID_A, ID_B, ID_C = "mi300x@us_east:rent_on_demand", "h100_sxm@us_west:rent_on_demand", "h200_sxm@dc1:buy:m0"


def d(month: float) -> float:
    """Discount factor (1 + r)^(-month/12)."""
    return float((1 + RATE) ** (-month / 12))


def per_month(per_period: list[int]) -> list[int]:
    return [u for u in per_period for _ in range(PERIOD_MONTHS)]


def ledger_lines() -> list[CashLine]:
    lines = []
    for m in range(HORIZON):
        for sid, units, price in ((ID_A, per_month(UNITS_A), PRICE_A), (ID_B, per_month(UNITS_B), PRICE_B)):
            if units[m]:
                lines.append(CashLine(m, "rent", sid, "rent", units[m] * price, units[m] * price * d(m)))
        if per_month(UNITS_A)[m] == 2:
            lines.append(CashLine(m, "discount", ID_A, "rent", -DISCOUNT_A_USD, -DISCOUNT_A_USD * d(m)))
    lines.append(CashLine(0, "capex", ID_C, "buy", NODES_C * NODE_USD, NODES_C * NODE_USD))
    for m in range(DELIVERY_C, HORIZON):
        lines.append(CashLine(m, "running", ID_C, "buy", NODES_C * RUNNING_C, NODES_C * RUNNING_C * d(m)))
    resale = NODES_C * RESALE_C
    lines.append(CashLine(HORIZON - 1, "resale", ID_C, "buy", -resale, -resale * d(HORIZON)))
    return lines


LEDGER = CostLedger(HORIZON, tuple(ledger_lines()), OUTPUT_TOKENS)
TOTAL = LEDGER.total_usd


def _supply(
    sid: str,
    gpu: str,
    site: str,
    kind: str,
    unit_gpus: int,
    price: float,
    per_period: list[int],
    **extra: Any,
) -> SupplyLine:
    fields: dict[str, Any] = {
        "procurement": "rent",
        "rental_kind": "on_demand",
        "capex_usd": 0.0,
        "residual_usd": 0.0,
        "available_from_month": 0.0,
        "purchase_month": None,
        "units_per_month": per_month(per_period),
        "volume_discount_usd": 0.0,
        "source": "runpod $1.90/GPU-h",
    }
    fields.update(extra)
    return SupplyLine(
        id=sid,
        gpu=gpu,
        site=site,
        kind=kind,
        unit_gpus=unit_gpus,
        units=max(per_period),
        gpus=max(per_period) * unit_gpus,
        usd_per_unit_month=price,
        cost_usd_per_month=LEDGER.supply_cost_usd(sid) / HORIZON,
        units_per_period=[float(u) for u in per_period],
        **fields,
    )


SUPPLY = [
    _supply(ID_A, "mi300x", "us_east", "rent_on_demand", 8, PRICE_A, UNITS_A, source=INJECT_SOURCE),
    _supply(ID_B, "h100_sxm", "us_west", "rent_on_demand", 1, PRICE_B, UNITS_B),
    _supply(
        ID_C,
        "h200_sxm",
        "dc1",
        "buy",
        8,
        RUNNING_C,
        [0, NODES_C, NODES_C],  # in use from the first period that starts after delivery
        units_per_month=[0] * DELIVERY_C + [NODES_C] * (HORIZON - DELIVERY_C),  # paid from delivery, as the ledger
        procurement="buy",
        rental_kind=None,
        capex_usd=NODES_C * NODE_USD,
        residual_usd=NODES_C * RESALE_C,
        available_from_month=float(DELIVERY_C),
        purchase_month=0,
        source="buy node $300,000",
    ),
]


def _deployment(
    workload: str,
    model: str,
    gpu: str,
    site: str,
    placement: str,
    replicas: list[int],
    served: list[float],
    **kw: Any,
) -> Deployment:
    fields: dict[str, Any] = {
        "quantization": "fp8",
        "kv_dtype": "bf16",
        "tp": 1,
        "pp": 1,
        "batch": 64,
        "ttft_ms": 300.0,
        "tpot_ms": 20.0,
        "decode_step_ms": 15.0,
        "ttft_slo_ms": 3000.0,
        "tpot_slo_ms": 60.0,
        "memory_per_gpu_gb": 40.0,
        "capacity_per_replica_requests_per_s": 7.0,
        "limited_by": "throughput_peak",
        "procurement": "rent",
        "rental_kind": "on_demand",
    }
    fields.update(kw)
    peak = max(replicas)
    return Deployment(
        workload=workload,
        model=model,
        gpu=gpu,
        site=site,
        placement=placement,
        replicas=peak,
        gpus=peak * fields["tp"] * fields["pp"],
        capacity_requests_per_s=peak * fields["capacity_per_replica_requests_per_s"],
        served_requests_per_s=max(served),
        replicas_per_period=replicas,
        served_requests_per_s_per_period=served,
        cand=0,
        **fields,
    )


DEPLOYMENTS = [
    _deployment(
        "chat",
        "llama_3_1_70b",
        "mi300x",
        "us_east",
        "cloud",
        [1, 2, 1],
        [8.0, 16.0, 8.0],
        tp=8,
        batch=174,
        ttft_ms=125.0,
        tpot_ms=49.0,
        ttft_slo_ms=2000.0,
        tpot_slo_ms=50.0,
        memory_per_gpu_gb=24.1,
        capacity_per_replica_requests_per_s=10.45,
        limited_by="tpot_slo",
    ),
    _deployment("summarize", "llama_3_1_8b", "h100_sxm", "us_west", "cloud", [0, 2, 2], [0.0, 10.0, 10.0]),
    _deployment(
        "summarize",
        "llama_3_1_8b",
        "h200_sxm",
        "dc1",
        "datacenter",
        [0, 1, 1],
        [0.0, 4.0, 3.0],
        batch=118,
        ttft_ms=105.0,
        tpot_ms=59.0,
        memory_per_gpu_gb=77.0,
        limited_by="memory",
        procurement="buy",
        rental_kind=None,
    ),
]
ALTERNATIVES = [
    Alternative("gpu", "mi300x", "optimal", "chosen", TOTAL, 0.0, TOTAL / HORIZON, 49.0, 125.0),
    Alternative(
        "gpu",
        "h200_sxm",
        "optimal",
        INJECT_REASON,
        TOTAL + 5000.0,
        5000.0,
        (TOTAL + 5000) / HORIZON,
        31.5,
        80.0,
    ),
    Alternative("site", "eu_west", "infeasible", "no SLO-feasible candidate"),
]


def scenario() -> Any:
    workload = {"input_tokens": 1500, "slo": {"ttft_ms": 2000, "tpot_ms": 50}}
    return parse_scenario(
        {
            "name": INJECT_NAME,
            "horizon_months": HORIZON,
            "period_months": PERIOD_MONTHS,
            "workloads": [
                {
                    **workload,
                    "name": "chat",
                    "models": ["llama_3_1_70b"],
                    "requests_per_s": 16,
                    "output_tokens": 300,
                },
                {
                    **workload,
                    "name": "summarize",
                    "models": ["a", "b"],
                    "requests_per_s": 14,
                    "output_tokens": 250,
                },
            ],
            "procurement": ["rent", "buy"],
            "economics": {"cost_of_capital_frac_per_year": RATE},
        }
    )


def plan_result(**changes: Any) -> PlanResult:
    """The synthetic plan (fields replaced by ``changes``)."""
    fields: dict[str, Any] = {
        "scenario": scenario(),
        "status": "optimal",
        "deployments": DEPLOYMENTS,
        "supply": SUPPLY,
        "schedule": [
            ScheduleEntry(
                t, t * PERIOD_MONTHS, [t * PERIOD_MONTHS, t * PERIOD_MONTHS + 1], t, {}, {}, {}, {}, {}
            )
            for t in range(HORIZON // PERIOD_MONTHS)
        ],
        "ledger": LEDGER,
        "candidates_evaluated": 10,
        "candidates_feasible": 5,
        "solve_seconds": 0.1,
        "total_seconds": 0.2,
        "binding_constraints": [
            {"family": "gpu_supply", "key": ["mi300x", "us_east", "0"], "slack": 0.0},
            {"family": INJECT_CONSTRAINT, "key": ["x"], "slack": 0.0},
        ],
        "alternatives": ALTERNATIVES,
    }
    fields.update(changes)
    return PlanResult(**fields)
