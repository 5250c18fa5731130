"""SLO headroom of a deployment: 1 − observed / target, the share of the latency target left unused.

One formula for every output that shows it: the terminal's plan table ("812/2000 59%"), the HTML deployments
table and the smallest headroom in the HTML Summary. The workbook writes the same formula live on its SLOs
sheet (=1-H2/I2) and its Summary's minimum over that column, so a finance reader can change a target there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from planner.readout.types import Deployment


def headroom_frac(observed_ms: float, target_ms: float | None) -> float | None:
    """1 − observed / target; None without a target (0 or unset)."""
    return 1.0 - observed_ms / target_ms if target_ms else None


def min_headroom_frac(deployments: Iterable[Deployment], latency: Literal["ttft", "tpot"]) -> float | None:
    """The smallest headroom of ``latency`` over the deployments that have it (a decode pool has no TTFT, a
    prefill pool no TPOT) and a target for it; None where none has."""
    skip = "decode" if latency == "ttft" else "prefill"
    values = [
        headroom_frac(getattr(d, f"{latency}_ms"), getattr(d, f"{latency}_slo_ms"))
        for d in deployments
        if d.role != skip
    ]
    return min((v for v in values if v is not None), default=None)
