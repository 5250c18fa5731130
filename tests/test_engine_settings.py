"""A workload's ``engine_settings`` (planner.catalog.engine_settings): the engine as the user runs it.

The settings reach the candidate evaluation (KV room, sequence limit, chunk budget), the plan's deployments
name the engine with them (``vllm[memory_claim_frac=0.95]``), and ``planner predict --engine`` takes that
name back and gives the same numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from planner import performance as perf
from planner.candidates import build_candidates
from planner.catalog.engine_settings import EngineKeyError, EngineSettings, engine_key, parse_engine_key
from planner.catalog.loader import Catalog
from planner.errors import CatalogError
from planner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "examples/chat_70b_cloud/scenario.yaml"


def _table(catalog: Catalog, **settings: Any) -> Any:
    data = yaml.safe_load(CHAT.read_text())
    if settings:
        data["workloads"][0]["engine_settings"] = settings
    return build_candidates(catalog, parse_scenario(data))


def _by_config(table: Any) -> dict[tuple[Any, ...], Any]:
    cols = ["model", "gpu", "quantization", "kv_dtype", "tp", "pp", "site"]
    return {tuple(r[c] for c in cols): r for _, r in table.candidates.iterrows()}


def test_key_names_the_set_fields_sorted_and_parses_back() -> None:
    settings = EngineSettings(memory_claim_frac=0.95, max_running_sequences=512)
    key = engine_key("vllm", settings)
    assert key == "vllm[max_running_sequences=512,memory_claim_frac=0.95]"
    assert parse_engine_key(key) == ("vllm", settings)
    assert engine_key("sglang", None) == "sglang" == engine_key("sglang", EngineSettings())
    assert parse_engine_key("sglang") == ("sglang", None)


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("vllm[memory_claim_frac=1.2]", "less than or equal to 1"),
        ("vllm[gpu_memory_utilization=0.9]", "settings: memory_claim_frac"),
        ("vllm[memory_claim_frac]", "is not field=number"),
        ("vllm[memory_claim_frac=nan]", "is not field=number"),
        ("vllm[max_running_sequences=2.5]", "integer"),
        ("vllm[", "is not an engine id"),
    ],
)
def test_bad_keys_say_what_is_wrong(catalog: Catalog, key: str, fragment: str) -> None:
    with pytest.raises(EngineKeyError) as err:
        parse_engine_key(key)
    assert fragment in str(err.value)
    with pytest.raises(CatalogError):
        catalog.engine(key)


def test_a_resolved_engine_is_the_catalog_engine_with_the_settings(catalog: Catalog) -> None:
    engine = catalog.engine("vllm[chunked_prefill_tokens=2048,memory_claim_frac=0.95]")
    base = catalog.engine("vllm")
    assert (engine.memory_claim_frac, engine.chunked_prefill_tokens) == (0.95, 2048)
    assert engine.model_dump(exclude={"memory_claim_frac", "chunked_prefill_tokens"}) == base.model_dump(
        exclude={"memory_claim_frac", "chunked_prefill_tokens"}
    )
    assert catalog.engine("vllm[chunked_prefill_tokens=2048,memory_claim_frac=0.95]") is engine  # one record


def test_memory_share_and_sequence_limit_reach_the_candidates(catalog: Catalog) -> None:
    base = _by_config(_table(catalog))
    more = _by_config(_table(catalog, memory_claim_frac=0.95))
    capped_table = _table(catalog, max_running_sequences=16, chunked_prefill_tokens=2048)
    capped = _by_config(capped_table)
    assert base.keys() <= more.keys()
    assert all(float(more[k]["max_batch"]) >= float(base[k]["max_batch"]) for k in base)
    kv_bound = [k for k in base if 0 < float(base[k]["max_batch"]) < 256]  # below vLLM's sequence limit
    assert len(kv_bound) > 20
    assert all(float(more[k]["max_batch"]) > float(base[k]["max_batch"]) for k in kv_bound)
    assert float(capped_table.points["batch"].max()) <= 16  # the engine runs at most 16 sequences a step
    assert float(_table(catalog).points["batch"].max()) > 16
    chunks = {float(r["chunk_tokens"]) for r in capped.values() if float(r["max_batch"]) > 0}  # NaN: does not fit
    assert chunks == {2048.0}
    assert {str(r["engine"]) for r in capped.values()} == {"vllm[chunked_prefill_tokens=2048,max_running_sequences=16]"}


def test_predict_with_the_deployments_engine_returns_its_numbers(catalog: Catalog) -> None:
    """The candidate table's operating point and ``predict --engine <the deployment's engine>`` agree."""
    table = _table(catalog, memory_claim_frac=0.95, max_running_sequences=64)
    feasible = table.feasible.iloc[0]
    point = table.points[table.points["cand"] == feasible["cand"]].iloc[-1]
    request = perf.PredictRequest(
        model=str(feasible["model"]), gpu=str(feasible["gpu"]), tp=int(feasible["tp"]), pp=int(feasible["pp"]),
        quant=str(feasible["quantization"]), kv_dtype=str(feasible["kv_dtype"]), input_tokens=1500,
        output_tokens=300, engine=str(feasible["engine"]), requests_per_s=float(point["capacity_requests_per_s"]),
    )
    assert request.engine == "vllm[max_running_sequences=64,memory_claim_frac=0.95]"
    out = perf.predict(catalog, request).to_json()
    assert out["max_batch"] == pytest.approx(float(feasible["max_batch"]), abs=1)
    assert out["engine_reserve_gb"] == pytest.approx(0.05 * float(catalog.gpu(str(feasible["gpu"])).memory_gb))
    assert out["at_load"]["tpot_ms"] == pytest.approx(float(point["tpot_ms"]), rel=1e-9)
    assert out["at_load"]["ttft_ms"] + float(feasible["network_ms"]) == pytest.approx(float(point["ttft_ms"]), rel=1e-9)


def test_plan_names_the_engine_with_its_settings(catalog: Catalog) -> None:
    """The plan (audited against the ledgers from the catalog, planner.audit) shows the engine as it ran:
    at a memory share of 0.58 the 70B chat moves off a TP1 replica and every deployment's memory, the
    engine's reserve of 0.42·M included, fits the GPU. (At 0.6 the TP1 pair still carries the 8 req/s:
    B200 FP8 6.55 + H100 INT4 1.47 req/s with the ridge loss and the H100 at MBU 0.68.)"""
    from planner.plan import plan

    data = yaml.safe_load(CHAT.read_text())
    base = plan(catalog, parse_scenario(data), with_alternatives=False).to_json()
    data["workloads"][0]["engine_settings"] = {"memory_claim_frac": 0.58}
    tight = plan(catalog, parse_scenario(data), with_alternatives=False).to_json()
    assert {d["engine"] for d in base["deployments"]} == {"vllm"}
    assert {d["engine"] for d in tight["deployments"]} == {"vllm[memory_claim_frac=0.58]"}
    assert tight["total_cost_usd"] > base["total_cost_usd"]
    for d in tight["deployments"]:
        assert d["tp"] * d["pp"] >= 2
        assert d["memory_per_gpu_gb"] <= float(catalog.gpu(d["gpu"]).memory_gb)
