"""The shipped catalogs load, cite their sources, cover the required ids and reject bad input helpfully.

Numeric checks against the book use the tolerance stated at each assertion (half a unit in the last
printed digit unless the book number is exact).
"""

from __future__ import annotations

import copy
import re
import shutil
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from planner.catalog import Catalog, Model, load_catalog
from planner.catalog.loader import CATALOG_FILES, DEFAULT_CATALOG_DIR
from planner.errors import CatalogError
from planner.units import BYTES_PER_GB, BYTES_PER_MIB

REQUIRED_IDS: dict[str, tuple[str, ...]] = {
    "formats": ("bf16", "fp16", "fp8", "int8", "int4", "mxfp4", "nvfp4"),
    "interconnects": (
        "nvlink3", "nvlink4", "nvlink5", "pcie_gen4", "pcie_gen5", "ib_hdr", "ib_ndr", "roce_200",
        "roce_400", "ethernet_100g", "ethernet_25g", "ethernet_10g", "infinity_fabric", "thunderbolt5",
        "wifi",
    ),
    "accelerators": (
        "a100_sxm_80gb", "a100_pcie_80gb", "h100_sxm", "h100_pcie", "h100_nvl", "h200_sxm", "h20", "b200",
        "gb200", "l40s", "l4", "a10g", "rtx_4090", "rtx_5090", "rtx_pro_6000", "mi300x", "mi325x",
        "jetson_agx_orin_64gb", "apple_m4_max", "apple_m3_ultra", "dgx_spark",
    ),
    "models": (
        "llama_2_7b", "llama_2_13b", "llama_2_70b", "llama_3_1_8b", "llama_3_1_70b", "llama_3_1_405b",
        "llama_3_3_70b", "qwen2_5_7b", "qwen2_5_72b", "qwen3_8b", "qwen3_32b", "qwen3_30b_a3b",
        "qwen3_235b_a22b", "mistral_7b", "mixtral_8x7b", "mixtral_8x22b", "deepseek_v3", "gpt_oss_20b",
        "gpt_oss_120b", "llama_4_scout", "llama_4_maverick",
    ),
    "sites": ("us_east", "us_west", "eu_west", "ap_northeast", "dc1", "store_edge", "factory_edge"),
}

DATACENTER_GPUS = (
    "a100_sxm_80gb", "a100_pcie_80gb", "h100_sxm", "h100_pcie", "h100_nvl", "h200_sxm", "h20", "b200",
    "gb200", "l40s", "l4", "a10g", "mi300x", "mi325x",
)
WORKSTATION_GPUS = ("rtx_4090", "rtx_5090", "rtx_pro_6000")
EDGE_DEVICES = ("jetson_agx_orin_64gb", "apple_m4_max", "apple_m3_ultra", "dgx_spark")
MAIN_GPUS = ("h100_sxm", "h200_sxm", "b200", "a100_sxm_80gb", "l40s", "l4")

AS_OF = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
ESTIMATE_LABEL = "estimate (reference gap)"
ESTIMATE_DATE = "2026-12"

# libyaml when available: the tests parse the shipped files several times.
_YamlLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YamlDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


# --------------------------------------------------------------------------------------------------
# The shipped catalog loads and has the required records
# --------------------------------------------------------------------------------------------------


def test_shipped_catalog_loads(catalog: Catalog) -> None:
    assert len(catalog.accelerators) >= 21
    assert len(catalog.models) >= 21
    assert len(catalog.prices) > 0
    assert set(catalog.calibration) == {acc.family for acc in catalog.accelerators.values()}


@pytest.mark.parametrize(
    ("table", "record_id"),
    [pytest.param(t, i, id=f"{t}:{i}") for t, ids in REQUIRED_IDS.items() for i in ids],
)
def test_required_id_present(catalog: Catalog, table: str, record_id: str) -> None:
    records: dict[str, Any] = getattr(catalog, table)
    assert record_id in records
    assert records[record_id].id == record_id


@pytest.mark.parametrize(
    ("gpu_id", "placement"),
    [pytest.param(g, "datacenter", id=g) for g in DATACENTER_GPUS]
    + [pytest.param(g, "workstation", id=g) for g in WORKSTATION_GPUS]
    + [pytest.param(g, "edge", id=g) for g in EDGE_DEVICES],
)
def test_placement(catalog: Catalog, gpu_id: str, placement: str) -> None:
    assert catalog.gpu(gpu_id).placement == placement


# --------------------------------------------------------------------------------------------------
# Every record (and every nested purchase / efficiency block) cites a source and a date
# --------------------------------------------------------------------------------------------------


def _raw_records() -> Iterator[tuple[str, Any]]:
    """(label, raw YAML mapping) for every record of every shipped file, nested sourced blocks included."""
    for name, (key, _record_type) in CATALOG_FILES.items():
        data = yaml.load((DEFAULT_CATALOG_DIR / name).read_text(encoding="utf-8"), Loader=_YamlLoader)
        for i, raw in enumerate(data[key]):
            price_key = f"{raw.get('gpu')}/{raw.get('provider')}/{raw.get('kind')}"
            rid = raw.get("id") or raw.get("family") or price_key
            label = f"{name}:{key}[{i}]:{rid}"
            yield label, raw
            for nested in ("purchase", "efficiency"):
                if isinstance(raw.get(nested), dict):
                    yield f"{label}.{nested}", raw[nested]


@pytest.mark.parametrize("raw", [pytest.param(raw, id=label) for label, raw in _raw_records()])
def test_record_cites_source_and_as_of(raw: dict[str, Any]) -> None:
    source = raw.get("source")
    assert isinstance(source, str) and len(source.strip()) >= 3, "every record needs a non-empty source"
    as_of = raw.get("as_of")
    assert isinstance(as_of, str), f"as_of must be a quoted YYYY[-MM[-DD]] string, got {as_of!r}"
    match = AS_OF.fullmatch(as_of)
    assert match is not None, f"bad as_of {as_of!r}"
    year, month, day = (int(g) if g else None for g in match.groups())
    assert year is not None and 2015 <= year <= 2026
    assert month is None or 1 <= month <= 12
    assert day is None or 1 <= day <= 31
    if source.startswith(ESTIMATE_LABEL):
        assert as_of == ESTIMATE_DATE, "records that are estimates are dated 2026-12"


# --------------------------------------------------------------------------------------------------
# Cross-file completeness
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu_id", DATACENTER_GPUS)
def test_datacenter_gpu_has_on_demand_price(catalog: Catalog, gpu_id: str) -> None:
    kinds = {p.kind for p in catalog.rental_prices(gpu_id)}
    assert "on_demand" in kinds


def test_no_datacenter_gpu_without_on_demand_price(catalog: Catalog) -> None:
    missing = [
        acc.id
        for acc in catalog.accelerators.values()
        if acc.placement == "datacenter"
        and not any(p.kind == "on_demand" for p in catalog.rental_prices(acc.id))
    ]
    assert missing == []


@pytest.mark.parametrize("gpu_id", MAIN_GPUS)
@pytest.mark.parametrize("kind", ["reserved_1y", "reserved_3y", "spot"])
def test_main_gpus_have_reserved_and_spot_prices(catalog: Catalog, gpu_id: str, kind: str) -> None:
    prices = [p for p in catalog.rental_prices(gpu_id) if p.kind == kind]
    quotes = catalog.rental_prices(gpu_id)
    on_demand = statistics.median(p.usd_per_gpu_hour for p in quotes if p.kind == "on_demand")
    assert prices
    assert min(p.usd_per_gpu_hour for p in prices) < on_demand, "below the median on-demand quote"


def test_every_family_has_calibration(catalog: Catalog) -> None:
    families = {acc.family for acc in catalog.accelerators.values()}
    assert families <= set(catalog.calibration)
    for family in families:
        params = catalog.calibration[family].parameters
        assert 0.1 <= params["step_overhead_ms"] <= 10.0
        assert 16 <= params["prefill_saturation_tokens"] <= 4096


def test_every_price_provider_serves_some_cloud_site(catalog: Catalog) -> None:
    served = {p for site in catalog.sites.values() if site.kind == "cloud" for p in site.providers}
    assert {price.provider for price in catalog.prices} <= served


def test_edge_sites_hold_owned_devices_without_fabric(catalog: Catalog) -> None:
    assert catalog.site("store_edge").devices == {"rtx_4090": 4}
    assert catalog.site("factory_edge").devices == {"jetson_agx_orin_64gb": 8}
    for site_id in ("store_edge", "factory_edge"):
        assert catalog.site(site_id).kind == "edge"
        assert not catalog.site(site_id).has_scale_out_fabric
    assert catalog.site("dc1").colocation_usd_per_kw_month == pytest.approx(184.06, abs=0.005)


# --------------------------------------------------------------------------------------------------
# Accelerator consistency
# --------------------------------------------------------------------------------------------------


def test_native_formats_have_a_compute_peak(catalog: Catalog) -> None:
    """Every native format's compute format has a dense peak on that accelerator, except MXFP4 on Hopper,
    served weight-only (de-quantised to BF16: planner.performance.terms.format_as_run)."""
    from planner.performance import format_as_run

    missing = [
        (acc.id, fmt)
        for acc in catalog.accelerators.values()
        for fmt in acc.native_formats
        if catalog.format(fmt).compute_format not in acc.dense_tflops
    ]
    assert missing == [(g, "mxfp4") for g in ("h100_sxm", "h100_pcie", "h100_nvl", "h200_sxm", "h20")]
    assert all(
        format_as_run(acc, catalog.format(fmt)).compute_format in acc.dense_tflops
        for acc in catalog.accelerators.values()
        for fmt in acc.native_formats
    )


def test_dense_peaks_are_ordered(catalog: Catalog) -> None:
    for acc in catalog.accelerators.values():
        peaks = acc.dense_tflops
        if "fp16" in peaks:
            assert peaks["fp16"] == peaks["bf16"], acc.id
        if "fp8" in peaks:
            assert peaks["fp8"] >= peaks["bf16"], acc.id
        if "fp4" in peaks:
            assert peaks["fp4"] >= peaks.get("fp8", peaks["bf16"]), acc.id


@pytest.mark.parametrize(
    ("gpu_id", "present", "absent"),
    [
        pytest.param(
            "a100_sxm_80gb", {"bf16", "fp16", "int8", "int4"}, {"fp8", "mxfp4", "nvfp4"}, id="ampere"
        ),
        pytest.param("h100_sxm", {"fp8", "int4", "mxfp4"}, {"nvfp4"}, id="hopper"),
        pytest.param("l40s", {"fp8", "int4"}, {"nvfp4"}, id="ada"),
        pytest.param("b200", {"fp8", "int4", "mxfp4", "nvfp4"}, set(), id="blackwell"),
        pytest.param("rtx_5090", {"fp8", "mxfp4", "nvfp4"}, set(), id="blackwell-consumer"),
        pytest.param("apple_m3_ultra", {"bf16", "fp16", "int8", "int4"}, {"fp8"}, id="apple"),
        pytest.param("jetson_agx_orin_64gb", {"bf16", "fp16", "int8", "int4"}, {"fp8"}, id="jetson"),
    ],
)
def test_native_formats_by_generation(
    catalog: Catalog, gpu_id: str, present: set[str], absent: set[str]
) -> None:
    native = set(catalog.gpu(gpu_id).native_formats)
    assert present <= native
    assert not absent & native


@pytest.mark.parametrize(
    ("gpu_id", "scale_up", "domain", "scale_out"),
    [
        pytest.param("a100_sxm_80gb", "nvlink3", 8, "ib_hdr", id="a100_sxm"),
        pytest.param("h100_sxm", "nvlink4", 8, "ib_ndr", id="h100_sxm"),
        pytest.param("h200_sxm", "nvlink4", 8, "ib_ndr", id="h200_sxm"),
        pytest.param("b200", "nvlink5", 8, "ib_ndr", id="b200"),
        pytest.param("gb200", "nvlink5", 4, "ib_ndr", id="gb200"),  # a tray alone: NVLink inside the tray
        pytest.param("gb200_nvl72", "nvlink5", 72, "ib_ndr", id="gb200_nvl72"),  # the rack: one NVLink domain
        pytest.param("mi300x", "infinity_fabric", 8, "roce_400", id="mi300x"),
        pytest.param("h100_nvl", None, 1, "roce_400", id="h100_nvl"),
        pytest.param("rtx_4090", None, 1, "ethernet_10g", id="rtx_4090"),
    ],
)
def test_fabrics(catalog: Catalog, gpu_id: str, scale_up: str | None, domain: int, scale_out: str) -> None:
    acc = catalog.gpu(gpu_id)
    assert acc.scale_up == scale_up
    assert acc.scale_up_domain_gpus == domain
    assert acc.scale_out == scale_out


def test_book_reference_values(catalog: Catalog) -> None:
    """Hardware figures the worked examples rely on (exact book values)."""
    h100 = catalog.gpu("h100_sxm")
    assert (h100.memory_gb, h100.memory_bandwidth_gb_per_s, h100.dense_tflops["bf16"]) == (80, 3350, 989.4)
    assert h100.dense_tflops["fp8"] == 1978.9
    assert catalog.gpu("rtx_4090").memory_bandwidth_gb_per_s == 1008
    assert catalog.gpu("rtx_4090").dense_tflops["bf16"] == 165.2
    pro = catalog.gpu("rtx_pro_6000")
    assert (pro.memory_bandwidth_gb_per_s, pro.dense_tflops["bf16"]) == (1792, 503.8)
    assert catalog.gpu("h200_sxm").memory_bandwidth_gb_per_s == 4800
    assert catalog.gpu("b200").memory_bandwidth_gb_per_s == 8000
    assert catalog.gpu("apple_m3_ultra").memory_bandwidth_gb_per_s == 819
    assert catalog.interconnect("nvlink4").gb_per_s_per_direction == 450
    assert catalog.interconnect("nvlink4").latency_us == 0.822
    assert catalog.interconnect("ib_ndr").latency_us == 3.76
    assert catalog.interconnect("wifi").latency_us == 134
    assert catalog.interconnect("ethernet_25g").gb_per_s_per_direction == 3.125
    book = {p.gpu: p.usd_per_gpu_hour for p in catalog.prices if p.provider == "book_runpod"}
    assert book == {"rtx_pro_6000": 2.09, "h100_sxm": 3.49, "h200_sxm": 4.59, "b200": 6.79}


# --------------------------------------------------------------------------------------------------
# Formats: the book's quantised sizes (cards 2 and 5)
# --------------------------------------------------------------------------------------------------


def _weights_gb(catalog: Catalog, model_id: str, format_id: str, *, total_params: int) -> float:
    """Weight bytes of a dense model: embedding, lm_head and norms in BF16, the rest in ``format_id``."""
    model = catalog.model(model_id)
    fmt = catalog.format(format_id)
    assert set(fmt.high_precision_tensors) == {"embedding", "lm_head", "norm"}
    high = 2 * model.vocab_size * model.hidden_size + (2 * model.layers + 1) * model.hidden_size
    high_bytes = catalog.format(fmt.high_precision).bytes_per_value
    return (high * high_bytes + (total_params - high) * fmt.bytes_per_value) / BYTES_PER_GB


@pytest.mark.parametrize(
    ("format_id", "expected_gb"),
    [pytest.param("int8", 73.726, id="8-bit"), pytest.param("int4", 39.500, id="4-bit")],
)
def test_book_70b_quantised_size(catalog: Catalog, format_id: str, expected_gb: float) -> None:
    """Worked example C1.7 (BOOK ch02 §2.6): R1-Distill-Llama-70B = the Llama-3.1-70B shape, 70,553,706,496
    params. Printed to 3 decimals, so abs tolerance 0.0005 GB."""
    got = _weights_gb(catalog, "llama_3_1_70b", format_id, total_params=70_553_706_496)
    assert got == pytest.approx(expected_gb, abs=5e-4)


@pytest.mark.parametrize(
    ("format_id", "expected_mib"),
    [pytest.param("mxfp4", 8.5, id="group32"), pytest.param("nvfp4", 9.0, id="group16"),
     pytest.param("bf16", 32.0, id="bf16")],
)
def test_book_4096_square_matrix_storage(catalog: Catalog, format_id: str, expected_mib: float) -> None:
    """Worked example C5.11 (BOOK ch04 §4.2.4): a 4096² matrix at 4 bits with 1-byte scales (exact)."""
    got = 4096 * 4096 * catalog.format(format_id).bytes_per_value / BYTES_PER_MIB
    assert got == expected_mib


def test_format_table(catalog: Catalog) -> None:
    tiers = {f.id: f.quality_tier for f in catalog.formats.values()}
    assert tiers == {"bf16": 0, "fp16": 0, "fp8": 1, "int8": 1, "int4": 2, "mxfp4": 2, "nvfp4": 2}
    kv = {f.id for f in catalog.formats.values() if f.kv_cache}
    assert kv == {"bf16", "fp16", "fp8", "int8"}
    assert catalog.format("int4").weight_only and catalog.format("int4").compute_format == "bf16"
    assert catalog.format("mxfp4").compute_format == "fp4"
    assert "attention" in catalog.format("mxfp4").high_precision_tensors
    assert catalog.format("fp8").bytes_per_value == 1.0


# --------------------------------------------------------------------------------------------------
# Models: the dimensions reproduce the published parameter counts and KV sizes
# --------------------------------------------------------------------------------------------------


def _derived_params(model: Model) -> int:
    """Total parameters from the catalog fields (untied embeddings, RMSNorm, SwiGLU, router), as in
    models.md. A test-local cross-check of the data, not the planner's weights ledger."""
    d = model.hidden_size
    total = model.vocab_size * d * (1 if model.tied_embeddings else 2) + d
    for layer in range(model.layers):
        if model.mla is not None:
            m = model.mla
            qk = m.qk_nope_head_dim + m.qk_rope_head_dim
            attn = (d * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * model.q_heads * qk
                    + d * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
                    + m.kv_lora_rank * model.q_heads * (m.qk_nope_head_dim + m.v_head_dim)
                    + model.q_heads * m.v_head_dim * d)
        else:
            q, kv = model.q_heads * model.head_dim, model.kv_heads * model.head_dim
            attn = 2 * d * q + 2 * d * kv
            attn += (q + 2 * kv) if model.qkv_bias else 0
            attn += d if model.attention_output_bias else 0
            attn += 2 * model.head_dim if model.qk_norm else 0
        total += attn + 2 * d
        moe = model.moe
        interleaved = moe is not None and moe.moe_layers * 2 == model.layers and model.ffn_size > 0
        if moe is None:
            is_moe = False
        elif interleaved:
            is_moe = layer % 2 == 1
        else:
            is_moe = layer >= model.layers - moe.moe_layers
        if moe is not None and is_moe:
            expert = 3 * d * moe.expert_ffn_size + ((2 * moe.expert_ffn_size + d) if moe.expert_bias else 0)
            shared = 3 * d * (moe.shared_expert_ffn_size or moe.expert_ffn_size) * moe.experts_shared
            router = d * moe.experts_routed + (moe.experts_routed if moe.expert_bias else 0)
            total += moe.experts_routed * expert + shared + router
        else:
            total += 3 * d * model.ffn_size
    return total


@pytest.mark.parametrize("model_id", REQUIRED_IDS["models"])
def test_dimensions_reproduce_published_params(catalog: Catalog, model_id: str) -> None:
    """Within 1.5 %: Llama-4 Scout's published 109B includes parts the text config does not (≈ 107.8B)."""
    model = catalog.model(model_id)
    assert _derived_params(model) / 1e9 == pytest.approx(model.params_published_b, rel=0.015)


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        pytest.param("llama_2_7b", 6_738_415_616, id="llama_2_7b"),
        pytest.param("llama_2_13b", 13_015_864_320, id="llama_2_13b"),
        pytest.param("llama_2_70b", 68_976_648_192, id="llama_2_70b"),
        pytest.param("llama_3_1_70b", 70_553_706_496, id="llama_3_1_70b"),
        pytest.param("qwen3_8b", 8_190_735_360, id="qwen3_8b"),
    ],
)
def test_exact_book_parameter_counts(catalog: Catalog, model_id: str, expected: int) -> None:
    """models.md [D] counts and the book's Qwen3-8B / R1-Distill-Llama-70B counts (exact integers)."""
    assert _derived_params(catalog.model(model_id)) == expected


@pytest.mark.parametrize(
    ("model_id", "kv_bytes"),
    [
        pytest.param("llama_2_7b", 524_288, id="llama_2_7b"),
        pytest.param("llama_3_1_405b", 516_096, id="llama_3_1_405b"),
        pytest.param("qwen2_5_7b", 57_344, id="qwen2_5_7b"),
        pytest.param("qwen3_8b", 147_456, id="qwen3_8b"),
        pytest.param("qwen3_30b_a3b", 98_304, id="qwen3_30b_a3b"),
        pytest.param("qwen3_235b_a22b", 192_512, id="qwen3_235b_a22b"),
        pytest.param("mixtral_8x22b", 229_376, id="mixtral_8x22b"),
        pytest.param("gpt_oss_120b", 73_728, id="gpt_oss_120b"),
        pytest.param("llama_4_scout", 196_608, id="llama_4_scout"),
        pytest.param("deepseek_v3", 70_272, id="deepseek_v3-latent"),
    ],
)
def test_full_attention_kv_bytes_per_token(catalog: Catalog, model_id: str, kv_bytes: int) -> None:
    """models.md KV bytes per token in BF16 with every layer full (exact integers)."""
    model = catalog.model(model_id)
    if model.mla is not None:
        per_layer = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    else:
        per_layer = 2 * model.kv_heads * model.head_dim
    assert per_layer * model.layers * 2 == kv_bytes


def test_architecture_details(catalog: Catalog) -> None:
    q8 = catalog.model("qwen3_8b")
    shape = (q8.layers, q8.hidden_size, q8.q_heads, q8.kv_heads, q8.head_dim, q8.ffn_size, q8.vocab_size)
    assert shape == (36, 4096, 32, 8, 128, 12288, 151936)
    assert q8.qk_norm and not q8.tied_embeddings
    ds = catalog.model("deepseek_v3")
    assert ds.attention_kind == "mla" and ds.native_format == "fp8"
    assert ds.moe is not None and (ds.moe.moe_layers, ds.ffn_size) == (58, 18432)
    oss = catalog.model("gpt_oss_120b")
    assert (oss.sliding_window_tokens, oss.sliding_window_layers, oss.native_format) == (128, 18, "mxfp4")
    assert oss.qkv_bias and oss.attention_output_bias and oss.moe is not None and oss.moe.expert_bias
    mav = catalog.model("llama_4_maverick")
    assert mav.moe is not None
    assert (mav.moe.moe_layers, mav.ffn_size, mav.moe.experts_shared) == (24, 16384, 1)
    assert catalog.model("mistral_7b").sliding_window_tokens is None
    assert catalog.model("qwen2_5_7b").qkv_bias
    assert catalog.model("llama_2_70b").attention_kind == "gqa"
    assert catalog.model("llama_2_7b").attention_kind == "mha"


# --------------------------------------------------------------------------------------------------
# Crafted bad inputs are rejected with the file, the field path and a fix
# --------------------------------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _set(key: str, index: int, field: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data[key][index][field] = value

    return mutate


def _delete(key: str, index: int, field: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        del data[key][index][field]

    return mutate


def _duplicate_first(key: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data[key].insert(1, copy.deepcopy(data[key][0]))

    return mutate


def _rename_top_level(old: str, new: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data[new] = data.pop(old)

    return mutate


def _set_efficiency(index: int, field: str, value: float) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data["accelerators"][index]["efficiency"][field] = value

    return mutate


def _append_native_format(index: int, value: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data["accelerators"][index]["native_formats"].append(value)

    return mutate


def _set_site_devices(site_id: str, devices: dict[str, int]) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        next(s for s in data["sites"] if s["id"] == site_id)["devices"] = devices

    return mutate


BAD_INPUTS = [
    pytest.param("prices.yaml", _set("prices", 0, "gpu", "h100sxm"),
                 ["prices[0].gpu", "unknown gpu 'h100sxm'", "did you mean h100_sxm"],
                 id="unknown-gpu-in-prices"),
    pytest.param("accelerators.yaml", _set("accelerators", 0, "colour", "green"),
                 ["accelerators[0].colour", "unknown field"], id="extra-field"),
    pytest.param("models.yaml", _set("models", 0, "id", "llama-2-7b"),
                 ["models[0].id", "lowercase letters", "'llama-2-7b'", "did you mean llama_2_7b"], id="id-with-dash"),
    pytest.param("accelerators.yaml", _set("accelerators", 1, "memory_gb", -80),
                 ["accelerators[1].memory_gb", "must be > 0", "-80"], id="negative-memory"),
    pytest.param("interconnects.yaml", _duplicate_first("interconnects"),
                 ["interconnects[1].id", "duplicate id 'nvlink3'"], id="duplicate-id"),
    pytest.param("sites.yaml", None, ["catalog file not found"], id="missing-file"),
    pytest.param("accelerators.yaml", _set("accelerators", 0, "scale_up", "nvlink_3"),
                 ["accelerators[0].scale_up", "unknown interconnect 'nvlink_3'", "did you mean nvlink3"],
                 id="unknown-interconnect"),
    pytest.param("accelerators.yaml", _set("accelerators", 0, "family", "nvidia_amper"),
                 ["accelerators[0].family", "no calibration for family 'nvidia_amper'",
                  "did you mean nvidia_ampere"],
                 id="family-without-calibration"),
    pytest.param("accelerators.yaml", _append_native_format(0, "fp6"),
                 ["accelerators[0].native_formats[4]", "unknown format 'fp6'"], id="unknown-native-format"),
    pytest.param("accelerators.yaml", _set_efficiency(0, "decode_mbu_frac", 1.5),
                 ["accelerators[0].efficiency.decode_mbu_frac", "must be in (0, 1]"],
                 id="fraction-above-1"),
    pytest.param("formats.yaml", _delete("formats", 0, "source"),
                 ["formats[0].source", "required — add `source:`"], id="missing-source"),
    pytest.param("sites.yaml", _set("sites", 0, "as_of", "March 2026"),
                 ["sites[0].as_of", "should match pattern", "'March 2026'"], id="bad-as-of"),
    pytest.param("sites.yaml", _set_site_devices("store_edge", {"rtx4090": 4}),
                 ["devices", "unknown gpu 'rtx4090'", "did you mean rtx_4090"], id="unknown-edge-device"),
    pytest.param("prices.yaml", _set("prices", 0, "sites", ["us_east1"]),
                 ["prices[0].sites[0]", "unknown site 'us_east1'", "did you mean us_east"],
                 id="unknown-price-site"),
    pytest.param("models.yaml", _set("models", 2, "kv_heads", 7),
                 ["models[2]", "q_heads must be a multiple of kv_heads"], id="model-validator"),
    pytest.param("models.yaml", _rename_top_level("models", "model"),
                 ["expected a top-level 'models:' list"], id="wrong-top-level-key"),
]


def _broken_catalog(tmp_path: Path, file_name: str, mutation: Mutation | None) -> Path:
    root = tmp_path / "catalogs"
    shutil.copytree(DEFAULT_CATALOG_DIR, root)
    path = root / file_name
    if mutation is None:
        path.unlink()
        return root
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_YamlLoader)
    mutation(data)
    text = yaml.dump(data, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(("file_name", "mutation", "fragments"), BAD_INPUTS)
def test_bad_input_is_rejected_helpfully(
    tmp_path: Path, file_name: str, mutation: Mutation | None, fragments: list[str]
) -> None:
    root = _broken_catalog(tmp_path, file_name, mutation)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(root)
    message = str(excinfo.value)
    assert file_name in message
    for fragment in fragments:
        assert fragment in message
    assert "\n" not in message, "one-line message"


def test_unmodified_copy_loads(tmp_path: Path) -> None:
    root = _broken_catalog(tmp_path, "prices.yaml", lambda data: None)
    assert len(load_catalog(root).prices) == len(load_catalog().prices)


def test_lookup_suggests_the_closest_id(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match="did you mean h100_sxm"):
        catalog.gpu("h100sxm")
    with pytest.raises(CatalogError, match="did you mean qwen3_8b"):
        catalog.model("qwen3-8b")


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------


def _all_records(catalog: Catalog) -> list[BaseModel]:
    tables: list[list[BaseModel]] = [
        list(catalog.formats.values()),
        list(catalog.interconnects.values()),
        list(catalog.accelerators.values()),
        list(catalog.models.values()),
        list(catalog.sites.values()),
        list(catalog.prices),
        list(catalog.calibration.values()),
    ]
    return [record for table in tables for record in table]


@settings(deadline=None, max_examples=50)
@given(data=st.data())
def test_records_round_trip_through_yaml(catalog: Catalog, data: st.DataObject) -> None:
    record = data.draw(st.sampled_from(_all_records(catalog)))
    dumped = yaml.safe_dump(record.model_dump(mode="json"), allow_unicode=True)
    assert type(record).model_validate(yaml.safe_load(dumped)) == record


@settings(deadline=None, max_examples=50)
@given(data=st.data(), groups=st.integers(min_value=1, max_value=10**9))
def test_stored_bytes_follow_card_5(catalog: Catalog, data: st.DataObject, groups: int) -> None:
    """V_W = n·b/8 + (n/g)·s for n = groups × g values (card 5)."""
    fmt = data.draw(st.sampled_from(sorted(catalog.formats.values(), key=lambda f: f.id)))
    group = fmt.group_size_values or 1
    n = groups * group
    scale = fmt.scale_bytes if fmt.group_size_values else 0.0
    assert n * fmt.bytes_per_value == pytest.approx(n * fmt.bits_per_value / 8 + groups * scale, rel=1e-12)
    assert n * fmt.bytes_per_value >= n * fmt.bits_per_value / 8


@settings(deadline=None, max_examples=50)
@given(data=st.data())
def test_dropping_an_underscore_is_suggested_back(catalog: Catalog, data: st.DataObject) -> None:
    gpu_id = data.draw(st.sampled_from(sorted(g for g in catalog.accelerators if "_" in g)))
    cut = data.draw(st.sampled_from([i for i, ch in enumerate(gpu_id) if ch == "_"]))
    typo = gpu_id[:cut] + gpu_id[cut + 1 :]
    with pytest.raises(CatalogError, match=f"did you mean {gpu_id}\\?"):
        catalog.gpu(typo)
