"""The candidate table of a large scenario of several workloads, evaluated in two parts on two cores.

A workload's rows read only its own configurations (planner.candidates: its models, formats, GPUs, layouts,
sites, SLOs and tokens), so the table of a scenario is the tables of two sub-scenarios, its workloads split
in two, put together: planner.candidates evaluates one part in a forked child (planner.forked.Background)
while it evaluates the other, and :func:`merged` orders the rows and points as one evaluation orders them and
renumbers the candidates. The curves are element-wise over rows, so each row gets the same numbers, except
for the bisections' multisection schedule, which reads the size of the whole table it belongs to
(planner.performance.bisection.multisection_bits): both parts are evaluated with the schedule of a table of
:data:`SCHEDULE_ROWS` rows or more, and their table is taken only when each of the whole table's bisection
tables (co-located rows, prefill pools, decode pools) has that schedule too (else the scenario is evaluated
at once). tests/plan/test_candidates_split.py checks that the merged table is the one-piece table.

Order of one evaluation (planner.candidates.build_candidates): the whole-GPU configurations of every workload
in workload order, then the GPU-share configurations share by share (planner.candidates_shared), each
configuration's rows site by site; after them the prefill and decode rows of those rows, in their order
(planner.candidates_pd.add_pd_rows). So the rows are ordered by (prefill/decode row, share segment, workload,
position in its part). Points come in three blocks (co-located, prefill, decode), each by candidate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.performance.bisection import MULTISECTION_BITS, multisection_bits
from planner.scenario import Scenario

SCHEDULE_ROWS = int(MULTISECTION_BITS[-2][0]) + 1
"""Bisection-table size the parts are evaluated with: the smallest of the last multisection class."""

SPLIT_MIN_ROWS = 20_000
"""Estimated (configuration, site) rows (:func:`estimated_rows`) from which a scenario is evaluated in two
parts: the 5-workload bench has 26,208 (its table: 1.43 → 1.27 s wall on 2 cores), 20 workloads 104,832; the
examples at most 720, where a fork and a merge cost more than they save. Set so that the whole table's
prefill and decode pools are large enough for the parts' schedule too (the bench's: 9,396 rows each): where
one is not, the parts' work is dropped and the scenario evaluated at once."""

POINT_BLOCKS = {"colocated": 0, "prefill": 1, "decode": 2}
"""Blocks of the points table, in order (planner.candidates.build_candidates)."""


def estimated_rows(configurations: list[int], pairs: list[int]) -> list[int]:
    """Per workload: its configurations per GPU type (models × formats × KV formats × layouts × PP) × its
    (GPU type, site) pairs where the GPU type is usable."""
    return [c * p for c, p in zip(configurations, pairs, strict=True)]


def two_parts(rows: list[int]) -> tuple[list[int], list[int]] | None:
    """Workload indices in two parts of about equal estimated rows (largest first, each to the lighter part),
    each part in workload order; None for fewer than two workloads or fewer than :data:`SPLIT_MIN_ROWS` rows."""
    if len(rows) < 2 or sum(rows) < SPLIT_MIN_ROWS:
        return None
    parts: tuple[list[int], list[int]] = ([], [])
    load = [0, 0]
    for i in sorted(range(len(rows)), key=lambda i: (-rows[i], i)):
        lighter = 0 if load[0] <= load[1] else 1
        parts[lighter].append(i)
        load[lighter] += rows[i]
    return sorted(parts[0]), sorted(parts[1])


def schedules_hold(rows: list[dict[str, int]]) -> bool:
    """True when every bisection table of the whole table (``rows``: each part's rows per table) with rows has
    the multisection schedule the parts were evaluated with (:data:`SCHEDULE_ROWS`)."""
    total = {key: sum(part.get(key, 0) for part in rows) for part in rows for key in part}
    return all(n == 0 or multisection_bits(n) == multisection_bits(SCHEDULE_ROWS) for n in total.values())


def merged(scenario: Scenario, parts: list[tuple[pd.DataFrame, pd.DataFrame]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The candidates and points of one evaluation of ``scenario`` from those of its parts (each a
    (candidates, points) pair of a sub-scenario of some of its workloads; module docstring)."""
    workload_of = {w.name: i for i, w in enumerate(scenario.workloads)}
    segment_of = {frac: 1 + i for i, frac in enumerate(scenario.hardware.gpu_share_fracs)}
    cand_parts = [(p, c) for p, (c, _points) in enumerate(parts) if len(c)]
    if not cand_parts:
        return parts[0]
    frame = pd.concat([c for _p, c in cand_parts], ignore_index=True)
    position = np.concatenate([np.arange(len(c)) for _p, c in cand_parts])
    role = frame["role"].to_numpy()
    block = np.zeros(len(frame), dtype=np.int64)  # POINT_BLOCKS of each candidate
    for name, number in POINT_BLOCKS.items():
        block[role == name] = number
    share = frame["share_frac"].to_numpy(dtype=float)
    segment = np.zeros(len(frame), dtype=np.int64)  # 0: whole GPUs
    for frac, number in segment_of.items():
        segment[share == frac] = number
    names = frame["workload"].to_numpy()
    workload = np.zeros(len(frame), dtype=np.int64)  # each row's workload's position in the scenario
    for name, number in workload_of.items():
        workload[names == name] = number
    order = np.lexsort((position, workload, segment, block > 0))
    new_id = np.empty(len(order), dtype=np.int64)
    new_id[order] = np.arange(len(order))
    columns = max((c.columns for _p, c in cand_parts), key=len)  # a part without pool rows lacks their columns
    candidates = frame.take(order).reset_index(drop=True)[list(columns)]
    candidates["cand"] = np.arange(len(candidates), dtype=candidates["cand"].dtype)
    # points: each part's candidate ids renumbered, then by (block, candidate, position in its part)
    offsets = np.cumsum([0] + [len(c) for _p, c in cand_parts])
    renumbered = []
    for k, (p, _c) in enumerate(cand_parts):
        points = parts[p][1]
        if len(points):
            renumbered.append(points.assign(cand=new_id[offsets[k] + points["cand"].to_numpy()]))
    if not renumbered:
        return candidates, parts[0][1]
    points = pd.concat(renumbered, ignore_index=True)
    cand = points["cand"].to_numpy()
    at = np.arange(len(points))
    points = points.take(np.lexsort((at, cand, block[order][cand]))).reset_index(drop=True)
    return candidates, points
