"""planner/candidate_columns.py: the candidate rows held column by column give the DataFrame that one dict per
row gives (columns, order, dtypes, values)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from planner.candidate_columns import CandidateRows


def _config(name: str, *, tp: int = 1, share: float = 1.0, why: dict[str, str] | None = None, terms: bool = True) -> Any:
    return SimpleNamespace(
        workload=SimpleNamespace(name=name, engine="vllm", engine_key="vllm"), model="llama_3_1_8b", quantization="fp8", kv_dtype="fp8",
        gpu=SimpleNamespace(id="h100_sxm"), tp=tp, pp=1, ep=1, share_frac=share, quality_tier=1,
        prefix_cache=why is not None, speculative=False, why=why,
        terms=SimpleNamespace(chunk_tokens=8192.0, prefill_first=0.0) if terms else None,
    )


def _dict_rows(configs: list[Any], rows: list[tuple[int, str, float, str, str]]) -> list[dict[str, Any]]:
    """The rows as planner.candidates built them before: one dict per row."""
    out = []
    for cand, (c, site, usd, reason, role) in enumerate(rows):
        cfg = configs[c]
        out.append({
            "cand": cand, "workload": cfg.workload.name, "role": role, "engine": cfg.workload.engine_key,
            "model": cfg.model, "quantization": cfg.quantization, "kv_dtype": cfg.kv_dtype, "gpu": cfg.gpu.id,
            "tp": cfg.tp, "pp": cfg.pp, "ep": cfg.ep, "site": site, "placement": "cloud",
            "gpus": cfg.tp * cfg.ep * cfg.pp * cfg.share_frac, "share_frac": cfg.share_frac,
            "quality_tier": cfg.quality_tier, "weights_per_gpu_gb": np.nan, "max_batch": 0, "prefill_ms": np.nan,
            "network_ms": np.nan, "tpot_floor_ms": np.nan, "best_batch": 0, "best_capacity_requests_per_s": 0.0,
            "sync_ratio": np.nan, "usd_per_hour": usd, "feasible": False, "reason": reason,
            "prefix_cache": cfg.prefix_cache, "speculative": cfg.speculative,
            "prefix_cache_why": (cfg.why or {}).get("prefix_cache", ""),
            "speculative_why": (cfg.why or {}).get("speculative", ""),
            "chunk_tokens": float(cfg.terms.chunk_tokens * (1 - cfg.terms.prefill_first)) if cfg.terms else np.nan,
        })
    return out


def test_columns_give_the_row_dicts_frame() -> None:
    configs = [_config("chat"), _config("rag", tp=2, why={"prefix_cache": "hit rate 0.6"}), _config("tiny", share=0.5),
               _config("off", terms=False)]
    rows = [(0, "us_east", 2.5, "", "colocated"), (0, "eu_west", np.nan, "", "colocated"),
            (1, "us_east", 5.0, "", "colocated"), (2, "us_east", 1.25, "", "colocated"),
            (3, "us_east", 2.5, "unsupported", "colocated")]
    table = CandidateRows(configs)
    table.extend([r[0] for r in rows], [r[1] for r in rows], ["cloud"] * len(rows), [r[2] for r in rows],
                 [r[3] for r in rows])
    assert table.copy_row(2, "prefill") == 5 and table.copy_row(2, "decode") == 6
    rows += [(1, "us_east", 5.0, "", "prefill"), (1, "us_east", 5.0, "", "decode")]
    dicts = _dict_rows(configs, rows)
    table.start_evaluation(pool_rows=True)
    for cand, fields in ((0, {"weights_per_gpu_gb": 8.1, "max_batch": 12, "feasible": True, "best_batch": 8,
                             "best_capacity_requests_per_s": 3.5, "sync_ratio": 0.02}),
                         (5, {"max_batch": 40, "kv_bytes_per_request": 1.5e8, "kv_link_gb_per_s": 50.0}),
                         (6, {"kv_bytes_per_request": 1.5e8, "kv_link_gb_per_s": 50.0, "tpot_floor_ms": 0.0})):
        for name, value in fields.items():
            table.columns[name][cand] = value
            dicts[cand][name] = value
    table.reason[3] = dicts[3]["reason"] = "does not fit"
    got, want = table.frame(), pd.DataFrame(dicts)
    assert list(got.columns) == list(want.columns)
    assert (got.dtypes == want.dtypes).all()
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got["feasible"].sum() == 1 and got.loc[5, "role"] == "prefill" and np.isnan(got.loc[0, "kv_link_gb_per_s"])
    # a config's field reaches its rows (and only through the config)
    configs[0].quality_tier = 2
    assert table.frame()["quality_tier"].tolist() == [2, 2, 1, 1, 1, 1, 1]


def test_no_pool_rows_no_pool_columns_and_an_empty_table() -> None:
    table = CandidateRows([_config("chat")])
    table.extend([0], ["us_east"], ["cloud"], [2.5], [""])
    table.start_evaluation(pool_rows=False)
    frame = table.frame()
    assert "kv_bytes_per_request" not in frame.columns
    pd.testing.assert_frame_equal(frame, pd.DataFrame(_dict_rows(table.configs, [(0, "us_east", 2.5, "", "colocated")])))
    assert CandidateRows([]).frame().shape == pd.DataFrame([]).shape == (0, 0)
