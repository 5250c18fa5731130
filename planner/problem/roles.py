"""Roles of candidates under prefill/decode disaggregation (card 8): which candidates of a workload are
co-located deployments, prefill pools or decode pools.

A request is served once by a co-located deployment, or by one prefill pool AND one decode pool; the
requests a workload serves are therefore Σ co-located flows + Σ prefill flows (= Σ decode flows).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from planner.units import BYTES_PER_GB

Role = Literal["colocated", "prefill", "decode"]
ROLES: tuple[Role, ...] = ("colocated", "prefill", "decode")


def cands_with_role(cands: pd.DataFrame, workload: str, role: Role) -> list[int]:
    """Candidate ids of ``workload`` with ``role`` (tables without a role column are all co-located)."""
    if "role" not in cands.columns and role != "colocated":
        return []
    mine = cands["workload"].to_numpy() == workload  # numpy: a string column's own == is ~10x slower
    if "role" in cands.columns:
        mine &= cands["role"].to_numpy() == role
    return [int(k) for k in cands.index.to_numpy()[mine]]


def serving_cands(cands: pd.DataFrame, workload: str) -> list[int]:
    """Candidates whose flows count the workload's served requests: co-located and prefill (never decode,
    which carries the same requests as the prefill pools)."""
    return sorted(cands_with_role(cands, workload, "colocated") + cands_with_role(cands, workload, "prefill"))


def has_pd(cands: pd.DataFrame, workload: str) -> bool:
    """True when ``workload`` has a prefill or a decode candidate (so pd_flow variables; a group with one role
    missing has its pd_flow held at 0 by the pd_flow rows)."""
    return bool(cands_with_role(cands, workload, "prefill")) or bool(cands_with_role(cands, workload, "decode"))


def pd_group_id(model: str, quantization: str, kv_dtype: str) -> str:
    """Group of prefill and decode pools that can hand KV to each other: same model, weight and KV format."""
    return f"{model}/{quantization}/{kv_dtype}"


def pd_groups(cands: pd.DataFrame, workload: str) -> dict[str, dict[Role, list[int]]]:
    """PD groups of ``workload`` → {prefill: [...], decode: [...]} candidate ids (empty without PD rows)."""
    out: dict[str, dict[Role, list[int]]] = {}
    if "role" not in cands.columns:
        return out
    mine = cands["workload"].to_numpy() == workload
    roles = cands["role"].to_numpy()
    for role in ("prefill", "decode"):
        at = np.flatnonzero(mine & (roles == role))
        if not len(at):
            continue
        ids = cands.index.to_numpy()[at]
        cols = [cands[c].to_numpy()[at] for c in ("model", "quantization", "kv_dtype")]  # numpy, not .loc
        for k, model, quant, kv in zip(ids, *cols, strict=True):
            group = pd_group_id(str(model), str(quant), str(kv))
            out.setdefault(group, {"prefill": [], "decode": []})[role].append(int(k))
    return out


def kv_handoff_gb(kv_bytes_per_request: dict[int, float], ids: list[int]) -> float:
    """V_KV of a PD group: KV handed from prefill to decode per request, GB (the same for every member: one
    model and KV format and the workload's prompt; the largest if not). ``kv_bytes_per_request``: candidate id →
    its ``kv_bytes_per_request`` (BuildContext.column)."""
    return float(max(kv_bytes_per_request[k] for k in ids)) / BYTES_PER_GB


class RoleFields(NamedTuple):
    """The readout fields of a candidate's role (planner.readout.types.Deployment)."""

    role: str
    pd_group: str
    kv_handoff_gb_per_request: float
    kv_link_gb_per_s: float


def role_fields(cand: pd.Series) -> dict[str, Any]:
    """The readout's ``role``, ``pd_group`` (workload/model/quantization/KV dtype), ``kv_handoff_gb_per_request``
    and ``kv_link_gb_per_s`` of a candidate row ('' and 0 when co-located)."""
    role = str(cand.get("role", "colocated"))
    if role == "colocated":
        return RoleFields(role, "", 0.0, 0.0)._asdict()
    group = pd_group_id(str(cand["model"]), str(cand["quantization"]), str(cand["kv_dtype"]))
    kv_gb = float(cand["kv_bytes_per_request"]) / BYTES_PER_GB
    return RoleFields(role, f"{cand['workload']}/{group}", kv_gb, float(cand["kv_link_gb_per_s"]))._asdict()


def kv_link_requests_per_s(cands: pd.DataFrame, cand: int) -> float:
    """Requests/s one prefill or decode replica can hand KV for over its link: B_k / V_KV (card 8
    kv_link_rate_per_s); infinite for co-located candidates."""
    if "role" not in cands.columns or cands.at[cand, "role"] == "colocated":
        return float("inf")
    return float(cands.at[cand, "kv_link_gb_per_s"]) * BYTES_PER_GB / float(cands.at[cand, "kv_bytes_per_request"])


def kv_link_rates(cands: pd.DataFrame) -> dict[int, float]:
    """:func:`kv_link_requests_per_s` of every candidate (one pass over the columns), by candidate id."""
    ids = [int(k) for k in cands.index.to_numpy()]
    if "role" not in cands.columns:
        return dict.fromkeys(ids, float("inf"))
    roles = cands["role"].to_numpy()
    if not {"kv_link_gb_per_s", "kv_bytes_per_request"} <= set(cands.columns):  # read per candidate
        return {k: kv_link_requests_per_s(cands, k) for k in ids}
    link = cands["kv_link_gb_per_s"].to_numpy()
    handoff = cands["kv_bytes_per_request"].to_numpy()
    return {
        k: float("inf") if role == "colocated" else float(g) * BYTES_PER_GB / float(b)
        for k, role, g, b in zip(ids, roles, link, handoff, strict=True)
    }
