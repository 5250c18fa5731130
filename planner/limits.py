"""Input limits: every scenario is refused at load, before any work, with the limit named (README "Exit
codes, `--debug` and input limits"). The per-field bounds are in planner/scenario.py's types; the size of
the candidate table is bounded here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from planner.errors import ScenarioError
from planner.format_policy import allowed_formats

if TYPE_CHECKING:
    from planner.catalog.loader import Catalog
    from planner.catalog.schema import Site
    from planner.scenario import Scenario

MAX_REQUESTS_PER_S = 1e6
"""Peak demand of one workload, requests/s."""
MAX_TOKENS = 10_000_000
"""Prompt or output tokens per request."""
MAX_LATENCY_MS = 3_600_000.0
"""An SLO target, ms (one hour)."""
MAX_WORKLOADS = 100
"""Workloads in one scenario."""
MAX_BATCH = 4096
"""Largest batch breakpoint (candidates are evaluated on every integer batch up to it)."""
MAX_DRAFT_TOKENS = 16
"""Drafted tokens per round the planner accepts (engines use 1–8; E[N] saturates long before 16)."""
MIN_EFFICIENCY_FRAC = 0.01
"""Least stated MFU or MBU (a scenario's hardware.efficiency, predict's --prefill-mfu-frac / --decode-mbu-frac):
1 % of the peak; 1e-300 gave a TTFT of 4.6e300 ms, exit 0."""
DEFAULT_DRAFT_TOKENS = 4
"""Drafted tokens per round when a scenario (or ``planner predict --draft-model``) does not say."""
MAX_RTT_MS = 60_000.0
"""Users' round trip to a site, ms (a scenario's ``sites:`` entry and ``planner predict --rtt-ms``)."""
MAX_UPLINK_MBIT_PER_S = 1e7
"""Users' uplink to a site, Mbit/s (a scenario's ``sites:`` entry and ``planner predict --uplink-mbit-per-s``)."""
DEFAULT_WORKSPACE_GIB = 2.0
"""Per-GPU workspace reservation, GiB (card 1's default): a scenario's ``workspace_gib`` and predict's."""
DEFAULT_MAX_BATCH = 256
"""A scenario's ``max_batch`` default, the running sequences a replica is planned at most (and
``planner predict --max-batch``'s)."""
MAX_CONFIGURATIONS = 150_000
"""Upper bound on (workload, model, format, KV format, GPU, TP, PP, site) combinations. Peak memory grows
about 4.5 MB per 1,000 (`make bench` scaling rows: 10 workloads over the full catalog, 59,136
combinations, 398 MB; 20 workloads, 118,272, 665 MB), so the limit keeps a plan under about 0.85 GB."""
MAX_BATCH_POINTS = 40_000_000
"""Upper bound on configurations × max_batch (the size of the candidate evaluation): the combination
limit at the default max_batch of 256 (38.4 M) fits."""
MAX_USD = 1e13
"""Any money amount, USD."""
MAX_COUNT = 10_000_000
"""Any GPU or device count."""
MAX_LIST = 64
"""Entries in an id list (models, formats, GPUs, sites, TP/PP degrees)."""


def configuration_count(scenario: Scenario, catalog: Catalog, sites: Mapping[str, Site]) -> int:
    """Upper bound on the candidate configurations: Σ_w (Σ over its models of the formats it allows on each:
    planner.format_policy)·KV formats·GPUs·TP·PP·sites·variants (×2 per stated optimization: prefix_cache,
    speculative)."""
    gpus = len(scenario.hardware.gpus or catalog.accelerators)
    degrees = len(scenario.hardware.tp) * len(scenario.hardware.pp)
    cloud = sum(1 for site in sites.values() if site.kind == "cloud")
    return sum(
        sum(len(allowed_formats(catalog, w, model_id)) for model_id in w.models)
        * len(w.kv_dtypes)
        * gpus
        * degrees
        * len(w.sites or range(cloud))
        * (2 if w.prefix_cache is not None else 1)
        * (2 if w.speculative is not None else 1)
        for w in scenario.workloads
    )


def check_size(scenario: Scenario, catalog: Catalog, sites: Mapping[str, Site], path: str) -> None:
    """Refuse a scenario whose candidate table would exceed MAX_CONFIGURATIONS or MAX_BATCH_POINTS."""
    configs = configuration_count(scenario, catalog, sites)
    if configs > MAX_CONFIGURATIONS:
        raise ScenarioError(
            f"{path}: workloads: {configs:,} (workload, model, format, GPU, TP, PP, site) combinations — the "
            f"limit is {MAX_CONFIGURATIONS:,}; narrow hardware.gpus, quantizations, sites or split the scenario"
        )
    if configs * scenario.max_batch > MAX_BATCH_POINTS:
        raise ScenarioError(
            f"{path}: max_batch: {configs:,} combinations × max_batch {scenario.max_batch} exceeds the limit "
            f"of {MAX_BATCH_POINTS:,} batch points — lower max_batch (default 256) or narrow the hardware"
        )
