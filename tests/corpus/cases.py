"""The broken-input corpus: (id, what is broken, expected exit code, fragments the one-line message must hold).

Scenario cases mutate BASE (a small valid scenario) or give the file's raw bytes; CLI cases add options;
catalog cases mutate a copy of catalogs/. tests/corpus/test_corpus.py runs every case through the real CLI
(or ``load_catalog``) and checks: the exit code, exactly one line on stderr, no traceback, nothing written
and an existing output file unchanged.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BASE: dict[str, Any] = {
    "name": "corpus",
    "horizon_months": 12,
    "period_months": 1,
    "workloads": [
        {
            "name": "chat",
            "models": ["llama_3_1_8b"],
            "quantizations": ["bf16", "fp8"],
            "requests_per_s": 2,
            "input_tokens": 500,
            "output_tokens": 100,
            "slo": {"ttft_ms": 2000, "tpot_ms": 50},
            "sites": ["us_east"],
            "engine_settings": {"memory_claim_frac": 0.9, "max_running_sequences": 256},  # vllm's own values
        }
    ],
    "hardware": {"gpus": ["h100_sxm", "l40s"], "tp": [1, 2], "pp": [1]},
    "procurement": ["rent"],
    "sites": [{"name": "us_east", "rtt_ms": 20}],
    "economics": {"resale_frac": 0.5},
    "budget": {"capex_usd": 1_000_000},
    "max_batch": 256,
}

Mutation = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Case:
    """One broken input. Exactly one of ``mutate`` / ``text`` / ``catalog`` describes it."""

    id: str
    fragments: tuple[str, ...]
    exit_code: int = 2
    mutate: Mutation | None = None
    text: bytes | None = None
    options: tuple[str, ...] = ()
    catalog: tuple[str, Mutation] | None = None
    command: str = "plan"
    extra: dict[str, Any] = field(default_factory=dict)


def _walk(data: Any, path: str) -> tuple[Any, str | int]:
    """The container holding ``path`` (``a.b[0].c``) and the last key."""
    parts: list[str | int] = []
    for name, index in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]", path):
        parts.append(int(index) if index else name)
    for part in parts[:-1]:
        data = data[part]
    return data, parts[-1]


def put(path: str, value: Any) -> Mutation:
    """Set ``path`` to ``value`` (a deep copy, so cases never share objects)."""

    def mutate(data: dict[str, Any]) -> None:
        holder, key = _walk(data, path)
        holder[key] = copy.deepcopy(value)

    return mutate


def drop(path: str) -> Mutation:
    """Delete ``path``."""

    def mutate(data: dict[str, Any]) -> None:
        holder, key = _walk(data, path)
        del holder[key]

    return mutate


def both(*mutations: Mutation) -> Mutation:
    """Apply several mutations in order."""

    def mutate(data: dict[str, Any]) -> None:
        for m in mutations:
            m(data)

    return mutate


# --- A: every number of the scenario × every kind of bad value -------------------------------------

FLOAT_FIELDS = [
    "workloads[0].requests_per_s",
    "workloads[0].growth_frac_per_month",
    "workloads[0].slo.ttft_ms",
    "workloads[0].slo.tpot_ms",
    "workloads[0].engine_settings.memory_claim_frac",
    "workspace_gib",
    "max_utilization_frac",
    "economics.resale_frac",
    "economics.ops_overhead_frac",
    "economics.cost_of_capital_frac_per_year",
    "economics.spot_availability_frac",
    "economics.utilization_frac",
    "economics.rent_price_scale",
    "economics.purchase_price_scale",
    "economics.lifetime_years",
    "budget.capex_usd",
    "sites[0].rtt_ms",
    "sites[0].pue",
]
INT_FIELDS = [
    "horizon_months",
    "max_batch",
    "workloads[0].input_tokens",
    "workloads[0].output_tokens",
    "workloads[0].max_quality_tier",
    "workloads[0].engine_settings.max_running_sequences",
    "hardware.tp[0]",
    "economics.purchase_every_months",
    "sites[0].max_gpus",
]
BAD_VALUES: list[tuple[str, Any, str, str]] = [
    # (id, value, fragment for a float field, fragment for an int field)
    ("nan", float("nan"), "finite number", "whole number"),
    ("inf", float("inf"), "finite number", "whole number"),
    ("negative", -(10**9), "must be", "must be"),
    ("huge", 10**15, "must be", "must be"),
    ("bool", True, "expected a number (got True)", "expected a whole number (got True)"),
    ("string", "7", "expected a number (got '7')", "expected a whole number (got '7')"),
    ("list", [1, 2], "expected a number (got a list)", "expected a whole number (got a list)"),
    ("mapping", {"value": 1}, "expected a number (got a mapping)", "expected a whole number (got a mapping)"),
]

NUMBER_CASES = [
    Case(
        f"{path}={vid}",
        (path, float_fragment if path in FLOAT_FIELDS else int_fragment),
        mutate=put(path, value),
    )
    for path in FLOAT_FIELDS + INT_FIELDS
    for vid, value, float_fragment, int_fragment in BAD_VALUES
    if not (path.endswith("requests_per_s") and vid == "list")  # a list is one value per period
]

# --- B: structure, typos, ids, sizes ----------------------------------------------------------------

W = "workloads[0]"
STRUCTURE_CASES = [
    Case(
        "typo-horizon_month",
        ("horizon_month", "did you mean horizon_months"),
        mutate=put("horizon_month", 12),
    ),
    Case(
        "typo-input_token",
        (f"{W}.input_token", "did you mean input_tokens"),
        mutate=put(f"{W}.input_token", 5),
    ),
    Case(
        "misspelt-required-name",
        (f"{W}.nme", "unknown field — did you mean `name:`? (required"),
        mutate=both(drop(f"{W}.name"), put(f"{W}.nme", "chat")),
    ),
    Case("typo-slo.ttft", (f"{W}.slo.ttft", "did you mean ttft_ms"), mutate=put(f"{W}.slo.ttft", 800)),
    # max_throughput serves one common fraction of every workload's demand: a per-workload weight, read by
    # nothing, is no longer offered
    Case("workload-weight", (f"{W}.weight", "unknown field"), mutate=put(f"{W}.weight", 2.0)),
    Case("typo-tpot", (f"{W}.slo.tpot", "did you mean tpot_ms"), mutate=put(f"{W}.slo.tpot", 30)),
    Case("typo-hardware.gpu", ("hardware.gpu", "did you mean gpus"), mutate=put("hardware.gpu", ["b200"])),
    Case(
        "engine-setting-vllm-name",
        (f"{W}.engine_settings.gpu_memory_utilization", "did you mean memory_claim_frac"),
        mutate=put(f"{W}.engine_settings", {"gpu_memory_utilization": 0.95}),
    ),
    Case(
        "engine-settings-number",
        (f"{W}.engine_settings", "expected a mapping (got 0.95)"),
        mutate=put(f"{W}.engine_settings", 0.95),
    ),
    Case(
        "typo-economics",
        ("economics.resale", "did you mean resale_frac"),
        mutate=put("economics.resale", 0.3),
    ),
    Case(
        "typo-requests",
        (f"{W}.request_per_s", "did you mean requests_per_s"),
        mutate=put(f"{W}.request_per_s", 3),
    ),
    Case("typo-budget", ("budget.capex", "did you mean capex_usd"), mutate=put("budget.capex", 5)),
    Case("typo-top-workload", ("workload", "did you mean workloads"), mutate=put("workload", [])),
    Case("site-dash", (f"{W}.sites[0]", "did you mean us_east"), mutate=put(f"{W}.sites", ["us-east"])),
    Case(
        "gpu-upper", ("hardware.gpus[0]", "did you mean h100_sxm"), mutate=put("hardware.gpus", ["H100_SXM"])
    ),
    Case(
        "gpu-space", ("hardware.gpus[0]", "did you mean h100_sxm"), mutate=put("hardware.gpus", ["H100 SXM"])
    ),
    Case(
        "model-dots",
        (f"{W}.models[0]", "did you mean llama_3_1_8b"),
        mutate=put(f"{W}.models", ["llama-3.1-8b"]),
    ),
    Case(
        "unknown-gpu",
        ("hardware.gpus[0]", "unknown gpu 'h100sxm'", "did you mean h100_sxm"),
        mutate=put("hardware.gpus", ["h100sxm"]),
    ),
    Case(
        "unknown-model",
        (f"{W}.models[0]", "unknown model 'llama_3_8b'"),
        mutate=put(f"{W}.models", ["llama_3_8b"]),
    ),
    Case(
        "unknown-site",
        (f"{W}.sites[0]", "unknown site 'us_easts'", "did you mean us_east"),
        mutate=put(f"{W}.sites", ["us_easts"]),
    ),
    Case(
        "unknown-format",
        (f"{W}.quantizations[0]", "unknown format 'fp7'"),
        mutate=put(f"{W}.quantizations", ["fp7"]),
    ),
    Case("unknown-kv", (f"{W}.kv_dtypes[0]", "unknown format"), mutate=put(f"{W}.kv_dtypes", ["bf17"])),
    Case(
        "kv-weight-only-format",
        (f"{W}.kv_dtypes[0]", "format int4 cannot hold the KV cache — KV formats: bf16, fp16, fp8, int8"),
        mutate=put(f"{W}.kv_dtypes", ["int4"]),
    ),
    Case(
        "unknown-provider", ("rent_providers[0]", "unknown provider"), mutate=put("rent_providers", ["awss"])
    ),
    Case(
        "inventory-gpu",
        ("inventory[0].gpu", "unknown gpu"),
        mutate=put("inventory", [{"gpu": "h100", "count": 8, "site": "us_east"}]),
    ),
    Case(
        "inventory-site",
        ("inventory[0].site", "unknown site"),
        mutate=put("inventory", [{"gpu": "h100_sxm", "count": 8, "site": "nowhere"}]),
    ),
    Case(
        "inventory-count-0",
        ("inventory[0].count", "must be in [1"),
        mutate=put("inventory", [{"gpu": "h100_sxm", "count": 0, "site": "us_east"}]),
    ),
    Case(
        "site-devices-gpu",
        ("sites[0].devices", "unknown gpu"),
        mutate=put("sites[0].devices", {"rtx4090": 2}),
    ),
    Case("site-kind", ("sites[0].kind", "must be"), mutate=put("sites[0].kind", "colo")),
    Case(
        "gpus-empty",
        ("hardware.gpus", "must not be empty", "leave the field out"),
        mutate=put("hardware.gpus", []),
    ),
    Case("tp-empty", ("hardware.tp", "must not be empty"), mutate=put("hardware.tp", [])),
    Case("pp-empty", ("hardware.pp", "must not be empty"), mutate=put("hardware.pp", [])),
    Case("models-empty", (f"{W}.models", "must not be empty"), mutate=put(f"{W}.models", [])),
    Case("quant-empty", (f"{W}.quantizations", "must not be empty"), mutate=put(f"{W}.quantizations", [])),
    Case("sites-empty", (f"{W}.sites", "must not be empty"), mutate=put(f"{W}.sites", [])),
    Case("workloads-empty", ("workloads", "must not be empty"), mutate=put("workloads", [])),
    Case("procurement-empty", ("procurement", "must not be empty"), mutate=put("procurement", [])),
    Case(
        "procurement-owned-without-inventory",
        ("procurement: [owned]", "needs an inventory (or edge sites with devices) — add inventory"),
        mutate=put("procurement", ["owned"]),
    ),
    Case("rental-kinds-empty", ("rental_kinds", "must not be empty"), mutate=put("rental_kinds", [])),
    Case(
        "demand-list-empty",
        (f"{W}.requests_per_s", "must not be empty"),
        mutate=put(f"{W}.requests_per_s", []),
    ),
    Case(
        "demand-list-nan",
        (f"{W}.requests_per_s[1]", "finite"),
        mutate=put(f"{W}.requests_per_s", [1, float("nan")]),
    ),
    Case(
        "demand-list-bool",
        (f"{W}.requests_per_s[0]", "expected a number"),
        mutate=put(f"{W}.requests_per_s", [True, 2]),
    ),
    Case(
        "demand-list-negative",
        (f"{W}.requests_per_s[0]", "must be in [0"),
        mutate=put(f"{W}.requests_per_s", [-1, 2]),
    ),
    Case(
        "demand-list-too-long",
        (f"{W}.requests_per_s", "13 values for 12 periods"),
        mutate=put(f"{W}.requests_per_s", [1] * 13),
    ),
    Case(
        "demand-list-too-short",
        (
            f"{W}.requests_per_s",
            "2 values for 12 periods of 1 month(s) — give 12 values, one per period, or one number",
        ),
        mutate=put(f"{W}.requests_per_s", [1, 2]),
    ),
    Case(
        "demand-6.6e38",
        (f"{W}.requests_per_s", "must be in (0, 1e+06]"),
        mutate=put(f"{W}.requests_per_s", 6.6e38),
    ),
    Case("demand-zero", (f"{W}.requests_per_s", "must be in (0"), mutate=put(f"{W}.requests_per_s", 0)),
    Case("max-batch-1e8", ("max_batch", "must be in [1, 4096]"), mutate=put("max_batch", 10**8)),
    Case("tp-3000", ("hardware.tp[0]", "must be in [1, 1024]"), mutate=put("hardware.tp", [3000])),
    Case("models-string", (f"{W}.models", "expected a list"), mutate=put(f"{W}.models", "llama_3_1_8b")),
    Case("gpus-string", ("hardware.gpus", "expected a list"), mutate=put("hardware.gpus", "h100_sxm")),
    Case("slo-list", (f"{W}.slo", "expected a mapping"), mutate=put(f"{W}.slo", [800, 30])),
    Case("hardware-string", ("hardware", "expected a mapping"), mutate=put("hardware", "all")),
    Case("workloads-mapping", ("workloads", "expected a list"), mutate=put("workloads", {"chat": {}})),
    Case("missing-models", (f"{W}.models", "required — add"), mutate=drop(f"{W}.models")),
    Case("missing-demand", (f"{W}.requests_per_s", "required — add"), mutate=drop(f"{W}.requests_per_s")),
    Case("missing-input-tokens", (f"{W}.input_tokens", "required — add"), mutate=drop(f"{W}.input_tokens")),
    Case("missing-name", ("name", "required — add"), mutate=drop("name")),
    Case("missing-workloads", ("workloads", "required — add"), mutate=drop("workloads")),
    Case("name-number", ("name", "expected text"), mutate=put("name", 2024)),
    Case("workload-name-upper", (f"{W}.name", "did you mean chat_a"), mutate=put(f"{W}.name", "Chat-A")),
    Case(
        "duplicate-workloads",
        ("duplicate workload names", "give each workload its own name"),
        mutate=put("workloads", [BASE["workloads"][0]] * 2),
    ),
    Case(
        "horizon-not-multiple",
        ("multiple of period_months", "use period_months 1, 2, 3, 4, 6, 12"),
        mutate=put("period_months", 5),
    ),
    Case("horizon-121", ("horizon_months", "must be in [1, 120]"), mutate=put("horizon_months", 121)),
    Case(
        "objective-typo",
        ("objective", "must be 'min_cost' or 'max_throughput'"),
        mutate=put("objective", "min-cost"),
    ),
    Case(
        "max-throughput-no-budget",
        ("needs a budget", "add budget: {opex_usd_per_month: ...}", "objective: min_cost"),
        mutate=both(put("objective", "max_throughput"), drop("budget")),
    ),
    Case(
        "procurement-typo",
        ("procurement[0]", "must be 'rent', 'buy' or 'owned'"),
        mutate=put("procurement", ["lease"]),
    ),
    Case("rental-kind-typo", ("rental_kinds[0]", "must be"), mutate=put("rental_kinds", ["ondemand"])),
    Case(
        "tiers-decreasing",
        ("min_gpus must increase",),
        mutate=put(
            "economics.rent_volume_tiers",
            [{"min_gpus": 64, "discount_frac": 0.2}, {"min_gpus": 32, "discount_frac": 0.3}],
        ),
    ),
    Case(
        "tier-discount-1",
        ("discount_frac", "must be in (0, 1)"),
        mutate=put("economics.rent_volume_tiers", [{"min_gpus": 64, "discount_frac": 1.0}]),
    ),
    Case(
        "hourly-profile-23",
        (f"{W}.hourly_profile_frac", "at least 24"),
        mutate=put(f"{W}.hourly_profile_frac", [0.5] * 23),
    ),
    Case(
        "hourly-profile-above-1",
        (f"{W}.hourly_profile_frac[3]", "must be in [0, 1]"),
        mutate=put(f"{W}.hourly_profile_frac", [0.5, 0.5, 0.5, 2.0] + [0.5] * 20),
    ),
    Case(  # fractions of the peak: a profile whose busiest hour is below 1 planned for half the stated peak
        "hourly-profile-peak-below-1",
        (f"{W}.hourly_profile_frac", "the busiest hour must be 1", "the largest is 0.5 — divide it by 0.5"),
        mutate=put(f"{W}.hourly_profile_frac", [0.5] * 24),
    ),
    Case(
        "hourly-profile-all-zero",
        (f"{W}.hourly_profile_frac", "the largest is 0 — give the busiest hour 1"),
        mutate=put(f"{W}.hourly_profile_frac", [0.0] * 24),
    ),
    Case(
        "301-workloads",
        ("workloads", "at most 100 entries (got 301)"),
        mutate=put("workloads", [dict(BASE["workloads"][0], name=f"w{i}") for i in range(301)]),
    ),
    Case(
        "60-workloads-full-catalog",
        ("combinations", "the limit is 150,000"),
        mutate=both(
            put(
                "workloads",
                [
                    dict(
                        BASE["workloads"][0],
                        name=f"w{i}",
                        sites=None,
                        quantizations=["bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4"],
                    )
                    for i in range(60)
                ],
            ),
            drop("hardware.gpus"),
            put("hardware.tp", [1, 2, 4, 8]),
            put("hardware.pp", [1, 2]),
        ),
    ),
    Case(
        "batch-points",
        ("max_batch", "batch points"),
        mutate=both(
            put("max_batch", 4096),
            drop("hardware.gpus"),
            put("hardware.tp", [1, 2, 4, 8]),
            put("workloads", [dict(BASE["workloads"][0], name=f"w{i}") for i in range(60)]),
        ),
    ),
    Case("top-level-list", ("expected a mapping at the top level",), text=b"- name: x\n- name: y\n"),
    Case("top-level-scalar", ("expected a mapping at the top level",), text=b"just a sentence\n"),
    Case("empty-file", ("expected a mapping at the top level",), text=b""),
]

# --- C: the file itself ------------------------------------------------------------------------------

_BOMB = b"".join(
    [b"a: &a [x, x, x, x, x, x, x, x, x]\n"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n".encode() for i in range(8)]
)
FILE_CASES = [
    Case("not-utf8", ("line 1, column 7", "not UTF-8"), text=b"name: \xff\xfe bad\n"),
    Case("latin1-line-3", ("line 3", "not UTF-8"), text=b"name: x\nhorizon_months: 12\n# caf\xe9\n"),
    Case(
        "yaml-syntax-line",
        ("line 4, column 1", "invalid YAML"),
        text=b"name: x\nworkloads:\n  - name: [unclosed\n",
    ),
    Case("yaml-tab-indent", ("invalid YAML",), text=b"name: x\nworkloads:\n\t- name: a\n"),
    Case("yaml-bad-mapping", ("line 2", "invalid YAML"), text=b"name: x\n  horizon_months: 12\n bad: 1\n"),
    Case(
        "duplicate-key",
        ("line 3", "duplicate key 'horizon_months'", "first at line 2"),
        text=b"name: x\nhorizon_months: 12\nhorizon_months: 24\n",
    ),
    Case(
        "duplicate-nested-key",
        ("duplicate key 'ttft_ms'",),
        text=b"name: x\nworkloads:\n  - slo: {ttft_ms: 1, ttft_ms: 2}\n",
    ),
    Case(
        "duplicate-key-with-newline",
        ("line 3", "duplicate key 'a\\nb'", "first at line 2"),
        text=b'name: x\n"a\\nb": 1\n"a\\nb": 2\n',
    ),
    Case("anchor-bomb", ("expands to more than 1,000,000 values",), text=_BOMB),
    Case("deep-nesting", ("nesting deeper than 32",), text=b"name: x\nw: " + b"[" * 200 + b"]" * 200 + b"\n"),
    Case("recursive-alias", ("recursive alias",), text=b"name: x\nw: &a [1, *a]\n"),
    Case("very-deep-nesting", ("invalid YAML",), text=b"name: x\nw: " + b"[" * 5000 + b"]" * 5000 + b"\n"),
    Case("python-tag", ("invalid YAML",), text=b"name: !!python/object/apply:os.system [ls]\n"),
    Case("unknown-tag", ("invalid YAML",), text=b"name: !custom x\n"),
    Case(
        "huge-file",
        ("bytes", "limited to 256,000"),
        text=b"name: x\n" + b"# padding padding padding\n" * 10_000,
    ),
    Case(
        "10000-workloads",
        ("bytes", "limited to 256,000"),
        mutate=put("workloads", [dict(BASE["workloads"][0], name=f"w{i}") for i in range(10_000)]),
    ),
    Case("binary", ("not UTF-8",), text=bytes(range(256))),
    Case("bad-timestamp", ("invalid YAML value",), text=b"name: 2024-13-45\nworkloads: []\n"),
]

# --- D: options and output paths ---------------------------------------------------------------------

OPTION_CASES = [
    Case("out-missing-folder", ("-o", "does not exist"), options=("-o", "{tmp}/missing/plan.xlsx")),
    Case("out-not-xlsx", ("-o", "must end in .xlsx"), options=("-o", "{tmp}/plan.pdf")),
    Case("out-proc", ("-o", "/proc"), options=("-o", "/proc/plan.xlsx")),
    Case("out-directory", ("-o", "is a directory"), options=("-o", "{tmp}/adir.xlsx")),
    Case("out-readonly", ("-o", "read-only"), options=("-o", "{tmp}/readonly.xlsx")),
    Case("json-out-directory", ("--json-out", "is a directory"), options=("--json-out", "{tmp}")),
    Case(
        "json-out-missing-folder",
        ("--json-out", "does not exist"),
        options=("--json-out", "{tmp}/no/such/p.json"),
    ),
    Case("json-out-is-input", ("--json-out",), options=("--json-out", "{scenario}")),
    Case("json-out-readonly", ("--json-out", "read-only"), options=("--json-out", "{tmp}/readonly.json")),
    Case("json-out-dev", ("--json-out", "/dev"), options=("--json-out", "/dev/full")),
    Case("plots-is-file", ("--plots", "expected a folder"), options=("--plots", "{tmp}/readonly.json")),
    Case("plots-proc", ("--plots", "/proc"), options=("--plots", "/proc/plots")),
    Case("plots-missing-parent", ("--plots", "does not exist"), options=("--plots", "{tmp}/a/b/plots")),
    Case("solver-typo", ("--solver", "valid values: highs, cbc"), options=("--solver", "gurobi")),
    Case("scenario-missing", ("scenario file not found",), options=("--scenario-missing",)),
    Case("scenario-directory", ("is a directory",), options=("--scenario-directory",)),
    Case("budget-no-limits", ("give at least one of",), command="budget"),
    Case("budget-total-inf", ("--total-usd", "finite"), command="budget", options=("--total-usd", "inf")),
    Case("budget-capex-nan", ("--capex-usd", "finite"), command="budget", options=("--capex-usd", "nan")),
    Case(
        "budget-negative", ("--opex-usd-per-month",), command="budget", options=("--opex-usd-per-month", "-5")
    ),
]

# --- E: catalog files --------------------------------------------------------------------------------


def _first(key: str, name: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data[key][0][name] = copy.deepcopy(value)

    return mutate


def _calibration(name: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data["calibration"][0]["parameters"][name] = value

    return mutate


CATALOG_CASES = [
    Case(
        "cat-inf-memory",
        ("accelerators[0].memory_gb", "finite"),
        catalog=("accelerators.yaml", _first("accelerators", "memory_gb", float("inf"))),
    ),
    Case(
        "cat-nan-bandwidth",
        ("accelerators[0].memory_bandwidth_gb_per_s", "finite"),
        catalog=("accelerators.yaml", _first("accelerators", "memory_bandwidth_gb_per_s", float("nan"))),
    ),
    Case(
        "cat-bool-memory",
        ("accelerators[0].memory_gb", "expected a number"),
        catalog=("accelerators.yaml", _first("accelerators", "memory_gb", True)),
    ),
    Case(
        "cat-nan-price",
        ("prices[0].usd_per_gpu_hour", "finite"),
        catalog=("prices.yaml", _first("prices", "usd_per_gpu_hour", float("nan"))),
    ),
    Case(
        "cat-negative-price",
        ("prices[0].usd_per_gpu_hour", "must be > 0"),
        catalog=("prices.yaml", _first("prices", "usd_per_gpu_hour", -2.0)),
    ),
    Case(
        "cat-inf-tdp",
        ("accelerators[0].tdp_w", "finite"),
        catalog=("accelerators.yaml", _first("accelerators", "tdp_w", float("inf"))),
    ),
    Case(
        "cat-site-pue-nan",
        ("sites[0].pue", "finite"),
        catalog=("sites.yaml", _first("sites", "pue", float("nan"))),
    ),
    Case(
        "cat-calibration-nan",
        ("calibration[0].parameters.step_overhead_ms", "finite"),
        catalog=("calibration.yaml", _calibration("step_overhead_ms", float("nan"))),
    ),
    Case(
        "cat-calibration-negative",
        ("calibration[0]", "step_overhead_ms must be in [0, 1000]"),
        catalog=("calibration.yaml", _calibration("step_overhead_ms", -5.0)),
    ),
    Case(
        "cat-calibration-typo",
        ("calibration[0]", "did you mean step_overhead_ms"),
        catalog=("calibration.yaml", _calibration("step_overhead", 1.0)),
    ),
    Case(  # a key holding a newline was echoed as written: two lines
        "cat-calibration-typo-newline",
        ("calibration[0]", "unknown parameter 'step\\noverhead_ms'"),
        catalog=("calibration.yaml", _calibration("step\noverhead_ms", 1.0)),
    ),
    Case(  # the field path quotes it escaped too
        "cat-accelerator-key-newline",
        ("accelerators[0].'memory\\ngb': unknown field",),
        catalog=("accelerators.yaml", _first("accelerators", "memory\ngb", 80)),
    ),
    Case(
        "cat-calibration-string",
        ("calibration[0].parameters.decode_mbu_scale",),
        catalog=("calibration.yaml", _calibration("decode_mbu_scale", "fast")),
    ),
    Case(
        "cat-calibration-not-list",
        ("expected a top-level 'calibration:' list",),
        catalog=("calibration.yaml", lambda data: data.update(calibration={"x": 1})),
    ),
    Case(
        "cat-model-layers-float",
        ("models[0].layers", "whole number"),
        catalog=("models.yaml", _first("models", "layers", 32.5)),
    ),
    Case(
        "cat-format-bits-inf",
        ("formats[0].bits_per_value", "finite"),
        catalog=("formats.yaml", _first("formats", "bits_per_value", float("inf"))),
    ),
    Case(
        "cat-too-many-rows",
        ("at most 5,000",),
        catalog=("prices.yaml", lambda data: data.update(prices=data["prices"] * 80)),
    ),
]
CATALOG_TEXT_CASES = [
    (
        "cat-calibration-syntax",
        "calibration.yaml",
        b"calibration:\n  - family: [x\n",
        ("line", "invalid YAML"),
    ),
    ("cat-calibration-latin1", "calibration.yaml", b"calibration: []\n# \xe9\n", ("line 2", "not UTF-8")),
    ("cat-duplicate-key", "sites.yaml", b"sites: []\nsites: []\n", ("duplicate key 'sites'",)),
    ("cat-calibration-empty", "calibration.yaml", b"", ("expected a top-level 'calibration:' list",)),
]

# --- F: valid input with no plan: exit 3, the cause in the user's words ---------------------------------

INFEASIBLE_CASES = [
    Case("ttft-1ms", ("infeasible", "ttft_ms"), exit_code=3, mutate=put(f"{W}.slo.ttft_ms", 1)),
    Case("tpot-0.01ms", ("infeasible", "tpot"), exit_code=3, mutate=put(f"{W}.slo.tpot_ms", 0.01)),
    Case(  # every configuration out of memory (was an internal AssertionError, exit 4)
        "nothing-fits-memory",
        ("infeasible", "does not fit in memory", "of GPU memory"),
        exit_code=3,
        mutate=put(f"{W}.models", ["llama_3_1_405b"]),
    ),
]

# --- G: training scenarios (`planner train`) -----------------------------------------------------------

TRAINING_BASE: dict[str, Any] = {
    "kind": "training",
    "name": "corpus training",
    "model": "qwen3_8b",
    "training_tokens": 1.0e11,
    "seq_len_tokens": 4096,
    "global_batch_tokens": 4_194_304,
    "deadline_days": 30,
    "procurement": ["rent"],
    "hardware": {"gpus": ["h100_sxm"], "max_gpus": 64},
}
TRAINING = {"base": TRAINING_BASE}
TRAINING_TEXT = (b"kind: training\nname: t\nmodel: qwen3_8b\ntraining_tokens: 1.0e11\nseq_len_tokens: 4096\n"
                 b"global_batch_tokens: 4194304\ndeadline_days: 30\n")  # fmt: skip


def _train(case_id: str, fragments: tuple[str, ...], mutation: Mutation, exit_code: int = 2) -> Case:
    return Case(case_id, fragments, exit_code=exit_code, mutate=mutation, command="train", extra=TRAINING)


TRAINING_CASES = [
    # numbers that overflowed inside the search (exit 4, "internal error: OverflowError / ValueError")
    _train("train-tokens-1e308", ("training_tokens", "must be in (0, 1e+16]"), put("training_tokens", 1e308)),
    _train("train-restart-1e308", ("restart_s", "must be in [0, 604800]"), put("restart_s", 1e308)),
    _train("train-mtbf-tiny", ("gpu_mtbf_hours", "must be in [1, 1e+08]"), put("gpu_mtbf_hours", 1e-300)),
    _train("train-mtbf-1e308", ("gpu_mtbf_hours", "must be in [1, 1e+08]"), put("gpu_mtbf_hours", 1e308)),
    _train(
        "train-checkpoint-1e308",
        ("checkpoint_write_gb_per_s", "must be in [0.01, 100000]"),
        put("checkpoint_write_gb_per_s", 1e308),
    ),
    _train("train-mfu-tiny", ("mfu_frac", "must be in [0.01, 1]"), put("mfu_frac", 1e-300)),
    # numbers that gave answers of 300 digits ("needs 1e+308 GiB per GPU")
    _train("train-workspace-1e308", ("workspace_gib", "must be in [0, 1024]"), put("workspace_gib", 1e308)),
    _train("train-setup-1e308", ("setup_days", "must be in [0, 3650]"), put("setup_days", 1e308)),
    _train("train-deadline-1e308", ("deadline_days", "must be in (0, 3650]"), put("deadline_days", 1e308)),
    _train(
        "train-max-gpus-huge",
        ("hardware.max_gpus", "must be in [1, 1e+07]"),
        put("hardware.max_gpus", 10**20),
    ),
    # a whole number written as a float and out of range: the hint named 1000000000000, which the range refused next
    _train(
        "train-max-gpus-huge-float",
        ("hardware.max_gpus: expected a whole number (got 1e+12) — must be in [1, 1e+07]",),
        put("hardware.max_gpus", 1.0e12),
    ),
    # a global batch of 10^9 sequences ran divisors() over 10^9 numbers (the command hung); 10^10 is refused
    _train(
        "train-global-batch-1e10",
        ("global_batch_sequences", "must be in [1, 1e+09]"),
        both(drop("global_batch_tokens"), put("global_batch_sequences", 10**10), put("seq_len_tokens", 1)),
    ),
    _train(
        "train-global-batch-tokens-1e10-sequences",
        ("global_batch_tokens", "10,000,000,000 sequences per step exceed the limit of 1,000,000,000"),
        both(put("seq_len_tokens", 1), put("global_batch_tokens", 10**10)),
    ),
    _train("train-seq-len-huge", ("seq_len_tokens", "must be in [1, 1e+07]"), put("seq_len_tokens", 10**9)),
    # empty lists: exit 3 "needs inf GiB per GPU" (tp, pp, micro_batches) or "sites lists only  —" (sites)
    _train("train-tp-empty", ("hardware.tp", "must not be empty"), put("hardware.tp", [])),
    _train("train-pp-empty", ("hardware.pp", "must not be empty"), put("hardware.pp", [])),
    _train(
        "train-micro-empty",
        ("hardware.micro_batches", "must not be empty"),
        put("hardware.micro_batches", []),
    ),
    _train("train-sites-empty", ("sites", "must not be empty"), put("sites", [])),
    _train("train-tp-huge", ("hardware.tp[0]", "must be in [1, 1024]"), put("hardware.tp", [10**6])),
    # inline MoE with more experts per token than experts: "invalid value: Model: (top level): ..." (no file)
    _train(
        "train-moe-top-k",
        ("model:", "experts_per_token 20 exceeds experts 8"),
        put(
            "model",
            {
                "layers": 32,
                "hidden_size": 4096,
                "ffn_size": 0,
                "heads": 32,
                "experts": 8,
                "experts_per_token": 20,
                "expert_ffn_size": 1024,
            },
        ),  # fmt: skip
    ),
    _train(
        "train-inline-layers-huge",
        ("model.layers", "must be in [1, 100000]"),
        put("model", {"layers": 10**11, "hidden_size": 4096, "ffn_size": 1, "heads": 32}),
    ),
    # -o and --json-out on one file: the workbook was written, then the JSON over it ("wrote X" twice, exit 0)
    Case(
        "train-out-and-json-out-one-file",
        ("--json-out", "-o names the same file — give each output its own name"),
        command="train",
        options=("-o", "{tmp}/same.xlsx", "--json-out", "{tmp}/same.xlsx"),
        extra=TRAINING,
    ),
    Case(
        "plan-out-and-json-out-one-file",
        ("--json-out", "-o names the same file — give each output its own name"),
        options=("-o", "{tmp}/same.xlsx", "--json-out", "{tmp}/same.xlsx"),
    ),
    Case(
        "budget-out-and-json-out-one-file",
        ("--json-out", "-o names the same file — give each output its own name"),
        command="budget",
        options=("--capex-usd", "5", "-o", "{tmp}/same.xlsx", "--json-out", "{tmp}/same.xlsx"),
    ),
    Case(
        "sweep-out-and-json-out-one-file",
        ("--json-out", "-o names the same file — give each output its own name"),
        command="sweep",
        options=(
            "--vary",
            "economics.rent_price_scale=1",
            "-o",
            "{tmp}/same.xlsx",
            "--json-out",
            "{tmp}/same.xlsx",
        ),
    ),
    # a training file given to a serving command: "kind: must be 'inference' … — did you mean training?"
    Case(
        "budget-training-file",
        ("kind: training is a training scenario", "run `planner train"),
        text=TRAINING_TEXT,
        command="budget",
        options=("--capex-usd", "5"),
    ),
    Case(
        "sweep-training-file",
        ("kind: training is a training scenario", "run `planner train"),
        text=TRAINING_TEXT,
        command="sweep",
        options=("--vary", "economics.rent_price_scale=1"),
    ),
    Case(
        "compare-training-file",
        ("kind: training is a training scenario", "run `planner train"),
        text=TRAINING_TEXT,
        command="compare",
    ),
]

SCENARIO_CASES = NUMBER_CASES + STRUCTURE_CASES + FILE_CASES + OPTION_CASES + TRAINING_CASES
"""Cases run through ``planner plan`` / ``planner budget`` (and ``planner train`` for TRAINING_CASES)."""

INFEASIBLE_CASES += [
    # no layout of the stated degrees can run: was "the smallest needs inf GiB per GPU"
    _train(
        "train-tp-3", ("infeasible", "no layout of hardware.tp [3]", "TP3 does not divide 32 heads", "tp: [1, 2, 4, 8]"),
        put("hardware.tp", [3]), exit_code=3,
    ),
    _train(
        "train-pp-64", ("infeasible", "PP64×v1 does not divide 36 layers", "pp: [1, 2, 3, 4]"),
        put("hardware.pp", [64]), exit_code=3,
    ),
    _train(  # a 1e-300-day deadline: the GPU count was printed with 300 digits, then as 'raise it to at least
        # 1.2e+302' (card 4's count; no GPU count finishes in time: the fastest layout takes 0.033 days)
        "train-deadline-tiny", ("infeasible", "no layout finishes 1e+11 tokens in 1e-300 days: the fastest uses 16,384 GPUs (TP8×PP2×DP1024, 0.033 days)"),
        put("deadline_days", 1e-300), exit_code=3,
    ),
]  # fmt: skip
