"""The rows of the candidate table (planner.candidates), held column by column.

A candidate row is a (configuration, site) pair, or a prefill / decode pool copy of one (candidates_pd.py).
Most of its fields are the configuration's (model, formats, GPU, layout, optimization variant, …): they are
kept once per configuration and spread over the rows by index when the table is built. A row adds its
site, placement, rent, reason and role; the evaluated fields (memory, floors, capacity, feasibility) are
numpy columns filled for whole blocks of rows at once. :meth:`CandidateRows.frame` gives the same DataFrame
(columns, order, dtypes, values) as one dict per row handed to ``pandas.DataFrame`` would — without the dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

CONFIG_COLUMNS = ("workload", "role", "engine", "model", "quantization", "kv_dtype", "gpu", "tp", "pp", "ep",
                  "site", "placement", "gpus", "share_frac", "quality_tier")
"""Leading columns after ``cand`` (``role``, ``site``, ``placement`` are the row's own)."""
EVALUATED: dict[str, tuple[Any, Any]] = {  # name: (dtype, value before evaluation)
    "weights_per_gpu_gb": (float, np.nan),
    "max_batch": (np.int64, 0),
    "prefill_ms": (float, np.nan),
    "network_ms": (float, np.nan),
    "tpot_floor_ms": (float, np.nan),
    "best_batch": (np.int64, 0),
    "best_capacity_requests_per_s": (float, 0.0),
    "sync_ratio": (float, np.nan),
}
"""Evaluated columns (filled by planner.candidates and candidates_pd), in table order after the leading ones."""
POOL_COLUMNS = ("kv_bytes_per_request", "kv_link_gb_per_s")
"""Columns of prefill / decode pool rows only (nan on co-located rows); present when the table has pool rows."""


class CandidateRows:
    """The candidate table's rows (module docstring); ``configs`` are planner.candidates._Config objects."""

    def __init__(self, configs: Sequence[Any]) -> None:
        self.configs = configs
        self.config: list[int] = []
        """Each row's index in ``configs``."""
        self.site: list[str] = []
        self.placement: list[str] = []
        self.usd_per_hour: list[float] = []
        self.reason: list[str] = []
        self.role: list[str] = []
        self.columns: dict[str, np.ndarray] = {}
        """Evaluated columns (:data:`EVALUATED`, :data:`POOL_COLUMNS`, ``feasible``): set by :meth:`start_evaluation`."""

    def __len__(self) -> int:
        return len(self.config)

    def add(self, config: int, site: str, placement: str, usd_per_hour: float, reason: str, role: str = "colocated") -> int:
        """Append a row; its candidate id (= its position)."""
        self.config.append(config)
        self.site.append(site)
        self.placement.append(placement)
        self.usd_per_hour.append(usd_per_hour)
        self.reason.append(reason)
        self.role.append(role)
        return len(self.config) - 1

    def extend(
        self, config: list[int], site: list[str], placement: list[str], usd_per_hour: list[float], reason: list[str],
        role: str = "colocated",
    ) -> None:
        """Append rows given column by column (lists of one length), all with ``role``."""
        self.config += config
        self.site += site
        self.placement += placement
        self.usd_per_hour += usd_per_hour
        self.reason += reason
        self.role += [role] * len(config)

    def copy_row(self, row: int, role: str) -> int:
        """Append a copy of ``row`` with another role (a pool row, before any evaluation); its candidate id."""
        return self.add(self.config[row], self.site[row], self.placement[row], self.usd_per_hour[row],
                        self.reason[row], role)

    def copy_rows(self, rows: list[int], roles: list[str]) -> None:
        """Append a copy of each of ``rows`` with its role in ``roles`` (:meth:`copy_row`, in order)."""
        self.config += [self.config[r] for r in rows]
        self.site += [self.site[r] for r in rows]
        self.placement += [self.placement[r] for r in rows]
        self.usd_per_hour += [self.usd_per_hour[r] for r in rows]
        self.reason += [self.reason[r] for r in rows]
        self.role += roles

    def start_evaluation(self, pool_rows: bool) -> None:
        """Allocate the evaluated columns at their values before evaluation (every row is added by now)."""
        n = len(self)
        self.columns = {name: np.full(n, value, dtype=dtype) for name, (dtype, value) in EVALUATED.items()}
        self.columns["feasible"] = np.zeros(n, dtype=bool)
        if pool_rows:
            for name in POOL_COLUMNS:
                self.columns[name] = np.full(n, np.nan)

    def frame(self) -> pd.DataFrame:
        """The candidates DataFrame (planner.candidates module docstring; the columns in table order)."""
        n = len(self)
        if not n:
            return pd.DataFrame([])  # as a table of no row dicts: no columns
        cfg_of = np.array(self.config, dtype=np.int64)
        if not self.columns:
            self.start_evaluation(pool_rows=False)

        def per_config(values: list[Any], dtype: Any = object) -> np.ndarray:
            return np.array(values, dtype=dtype)[cfg_of]

        cfgs = self.configs
        why = [c.why or {} for c in cfgs]
        out: dict[str, Any] = {
            "cand": np.arange(n, dtype=np.int64),
            "workload": per_config([c.workload.name for c in cfgs]),
            "role": np.array(self.role, dtype=object),
            "engine": per_config([c.workload.engine_key for c in cfgs]),
            "model": per_config([c.model for c in cfgs]),
            "quantization": per_config([c.quantization for c in cfgs]),
            "kv_dtype": per_config([c.kv_dtype for c in cfgs]),
            "gpu": per_config([c.gpu.id for c in cfgs]),
            "tp": per_config([c.tp for c in cfgs], np.int64),
            "pp": per_config([c.pp for c in cfgs], np.int64),
            "ep": per_config([c.ep for c in cfgs], np.int64),
            "site": np.array(self.site, dtype=object),
            "placement": np.array(self.placement, dtype=object),
            "gpus": per_config([c.tp * c.ep * c.pp * c.share_frac for c in cfgs], float),
            "share_frac": per_config([c.share_frac for c in cfgs], float),
            "quality_tier": per_config([c.quality_tier for c in cfgs], np.int64),
            **{name: self.columns[name] for name in EVALUATED},
            "usd_per_hour": np.array(self.usd_per_hour, dtype=float),
            "feasible": self.columns["feasible"],
            "reason": np.array(self.reason, dtype=object),
            "prefix_cache": per_config([c.prefix_cache for c in cfgs], bool),
            "speculative": per_config([c.speculative for c in cfgs], bool),
            "prefix_cache_why": per_config([w.get("prefix_cache", "") for w in why]),
            "speculative_why": per_config([w.get("speculative", "") for w in why]),
            "chunk_tokens": per_config(
                [float(c.terms.chunk_tokens * (1 - c.terms.prefill_first)) if c.terms else np.nan for c in cfgs], float
            ),
        }
        out.update({name: self.columns[name] for name in POOL_COLUMNS if name in self.columns})
        return pd.DataFrame(out)
