"""Typed sweep results: one :class:`SweepRow` per variant and the :class:`SweepResult` every output reads.

Every money figure of a row (total cost, capex, opex per month, cost per million output tokens) is copied
from that variant's plan JSON, which reads the plan's cost ledger (:class:`planner.readout.PlanResult`):
nothing here recomputes one. This module imports no solver so workbooks can read it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from planner.units import count_text

TIMING_FIELDS = ("solve_seconds", "total_seconds")
"""Row fields that depend on machine speed (left out when two sweeps are compared)."""


def format_gpus(gpus_by_type: dict[str, float], sep: str = "×") -> str:
    """``2×b200 0.5×l40s``: GPUs per type as counts (:func:`planner.units.count_text`), the one text the table
    and workbook show."""
    return " ".join(f"{count_text(n)}{sep}{g}" for g, n in gpus_by_type.items())


def format_value(value: Any) -> str:
    """A varied value as the user writes it on the command line (a list joined by ``+``, an empty one ``[]``)."""
    if isinstance(value, list | tuple):
        return "+".join(format_value(v) for v in value) if value else "[]"
    return str(value)


@dataclass(frozen=True)
class Choice:
    """One deployment of a workload in a variant's plan: model, GPU type, TP×PP(×EP), weight format, site and
    role (co-located, or the prefill / decode pool of a disaggregated pair)."""

    workload: str
    model: str
    gpu: str
    tp: int
    pp: int
    quantization: str
    replicas: int
    ep: int = 1
    site: str = ""
    role: str = "colocated"
    gpu_share_frac: float = 1.0
    """Share of one GPU each replica holds (0.5, 0.25: small models time-sliced on one GPU).
    Fields a resume file written before they were recorded lacks take these defaults."""

    @property
    def label(self) -> str:
        """``2× h100_sxm TP4xPP1 fp8 at us_east``, with ``xEP8`` for expert parallelism and `` (prefill pool)`` /
        `` (decode pool)`` for a disaggregated pair's pools: a PD plan's pools and its co-located replicas
        read alike without it."""
        ep = f"xEP{self.ep}" if self.ep > 1 else ""
        at = f" at {self.site}" if self.site else ""
        pool = "" if self.role == "colocated" else f" ({self.role} pool)"
        share = "" if self.gpu_share_frac >= 1 else f" ({self.gpu_share_frac:g} GPU each)"
        return f"{count_text(self.replicas)}× {self.gpu} TP{self.tp}xPP{self.pp}{ep} {self.quantization}{at}{pool}{share}"


@dataclass(frozen=True)
class SweepRow:
    """The answer for one variant (or its error: ``status == "error"`` and ``error`` says why)."""

    index: int
    key: str
    values: dict[str, Any]
    """Varied path → value, in axis order."""
    status: str
    """optimal | feasible (time limit; see gap) | infeasible | error."""
    gap: float | None = None
    total_cost_usd: float | None = None
    capex_usd: float | None = None
    opex_usd_per_month: float | None = None
    cost_usd_per_million_output_tokens: float | None = None
    gpus_by_type: dict[str, float] = field(default_factory=dict)
    """GPUs per accelerator type serving at once in its busiest period (sweep.task.serving_gpus_by_type; fractional
    when replicas share GPUs)."""
    choices: list[Choice] = field(default_factory=list)
    binding_constraints: list[str] = field(default_factory=list)
    """``family:key/key`` of each binding constraint family instance."""
    error: str | None = None
    """Infeasible: the cause in the user's words; error: the exception's one-line message."""
    solve_seconds: float = 0.0
    total_seconds: float = 0.0
    served_scale: float | None = None
    """max_throughput: the common served fraction of the stated demand (the plan's answer); None for min cost."""
    served_requests_per_s: float | None = None
    """max_throughput: the requests/s the plan serves, all workloads (served_scale × the stated demand)."""
    warnings: list[str] = field(default_factory=list)
    """The plan's warnings (planner.readout.warnings.plan_warnings: unused inventory, a fleet larger than any
    known site), as ``planner plan`` prints them; a resume file written before this field reads as none."""

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object (choices as records)."""
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> SweepRow:
        """Read a row written by :meth:`to_json` (a resume file)."""
        fields = dict(data)
        fields["choices"] = [Choice(**c) for c in fields.get("choices", [])]
        return SweepRow(**fields)

    def comparable(self) -> dict[str, Any]:
        """The row without its timing fields (what must be identical run to run, local or distributed)."""
        data = self.to_json()
        for name in TIMING_FIELDS:
            data.pop(name)
        return data


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep: the base scenario's name, the axes, how it ran and one row per variant (in order)."""

    scenario: str
    paths: list[str]
    mode: str
    engine: str
    """``local processes (N)`` or ``dask tcp://…``."""
    rows: list[SweepRow]
    wall_seconds: float
    resumed: int = 0
    """Rows taken from a resume file instead of being solved again."""

    @property
    def failed(self) -> list[SweepRow]:
        """Rows whose variant raised an error (infeasible variants are answers, not failures)."""
        return [r for r in self.rows if r.status == "error"]

    def to_json(self) -> dict[str, Any]:
        """``planner sweep --json``: the sweep's description and its rows."""
        return {
            "scenario": self.scenario,
            "vary": self.paths,
            "mode": self.mode,
            "engine": self.engine,
            "variants": len(self.rows),
            "resumed": self.resumed,
            "failed": len(self.failed),
            "wall_seconds": self.wall_seconds,
            "rows": [r.to_json() for r in self.rows],
        }
