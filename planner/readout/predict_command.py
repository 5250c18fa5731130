"""The ``planner predict`` command that reproduces a deployment's TTFT, TPOT and decode step (traceability: add
``--explain`` to see every term of them).

Its options are what the deployment holds: model, GPU, TP/PP/EP, formats, engine with its settings, role, site
(with the scenario's round trip and uplink where its ``sites:`` entry sets them),
the workload's lengths and SLO percentiles, the optimizations the plan turned on, the scenario's stated
efficiencies for the GPU, batch limit and workspace, and the load each replica serves at the peak (a replica
serving nothing there shows its operating point: its capacity per replica)."""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping

from planner.catalog.schema import Site
from planner.limits import DEFAULT_MAX_BATCH, DEFAULT_WORKSPACE_GIB
from planner.readout.optimizations import is_on
from planner.readout.types import Deployment
from planner.scenario import Scenario


def _number(value: float) -> str:
    """The value as a person would write it when that is the same to 12 digits (0.2, not 0.19999999999999998,
    the float noise of 0.6 req/s over 3 replicas), else the shortest text that reads back as the same float."""
    short = f"{float(value):.12g}"
    return short if math.isclose(float(short), float(value), rel_tol=1e-12, abs_tol=0.0) else repr(float(value))


def site_args(site: Site, catalog_site: Site | None) -> list[str]:
    """``--site`` where the catalog has the site, and ``--rtt-ms`` / ``--uplink-mbit-per-s`` for the network
    figures the scenario's ``sites:`` entry sets otherwise (both for a site of the scenario's own)."""
    args = [] if catalog_site is None else ["--site", site.id]
    if catalog_site is None or site.rtt_ms != catalog_site.rtt_ms:
        args += ["--rtt-ms", _number(site.rtt_ms)]
    if catalog_site is None or site.uplink_mbit_per_s != catalog_site.uplink_mbit_per_s:
        args += ["--uplink-mbit-per-s", _number(site.uplink_mbit_per_s)]
    return args


def predict_args(scenario: Scenario, d: Deployment, site: Site, catalog_site: Site | None) -> list[str]:
    """The command-line arguments of ``planner predict`` for deployment ``d`` of a plan of ``scenario`` at
    ``site`` (the scenario's, overrides applied) whose catalog entry is ``catalog_site`` (None: the scenario's own)."""
    w = next(x for x in scenario.workloads if x.name == d.workload)
    served = d.served_per_replica_requests_per_s
    args = [
        "--model", d.model, "--gpu", d.gpu, "--tp", str(d.tp), "--pp", str(d.pp), "--ep", str(d.ep),
        "--quant", d.quantization, "--kv-dtype", d.kv_dtype, "--engine", d.engine,
        "--input-tokens", str(w.input_tokens), "--output-tokens", str(w.output_tokens),
        "--requests-per-s", _number(served if served > 0 else d.capacity_per_replica_requests_per_s),
        *site_args(site, catalog_site),
    ]
    if d.role != "colocated":
        args += ["--role", d.role]
    else:  # a plan's pools report means, without optimizations
        if w.slo.ttft_percentile is not None:
            args += ["--ttft-percentile", str(w.slo.ttft_percentile)]
        if w.slo.tpot_percentile is not None:
            args += ["--tpot-percentile", str(w.slo.tpot_percentile)]
        if w.prefix_cache is not None and is_on(d.optimizations, "prefix_cache"):
            args += ["--prefix-hit-frac", _number(w.prefix_cache.hit_frac),
                     "--prefix-tokens", str(w.prefix_cache.prefix_tokens)]
        if w.speculative is not None and is_on(d.optimizations, "speculative"):
            args += ["--draft-model", w.speculative.draft_model,
                     "--acceptance-frac", _number(w.speculative.acceptance_frac),
                     "--draft-tokens", str(w.speculative.draft_tokens)]
    stated = scenario.hardware.efficiency.get(d.gpu)
    if stated is not None and stated.prefill_mfu_frac is not None:
        args += ["--prefill-mfu-frac", _number(stated.prefill_mfu_frac)]
    if stated is not None and stated.decode_mbu_frac is not None:
        args += ["--decode-mbu-frac", _number(stated.decode_mbu_frac)]
    if d.gpu_share_frac < 1:
        args += ["--gpu-share-frac", _number(d.gpu_share_frac)]
    if scenario.max_batch != DEFAULT_MAX_BATCH:  # predict's defaults are a scenario's
        args += ["--max-batch", str(scenario.max_batch)]
    if scenario.workspace_gib != DEFAULT_WORKSPACE_GIB:
        args += ["--workspace-gib", _number(scenario.workspace_gib)]
    return args


def predict_command(
    scenario: Scenario, d: Deployment, sites: Mapping[str, Site], catalog_sites: Mapping[str, Site]
) -> str:
    """``planner predict …`` for deployment ``d``, quoted for a POSIX shell; ``sites``: the scenario's (overrides
    applied), ``catalog_sites``: the catalog's (:func:`predict_args`)."""
    args = predict_args(scenario, d, sites[d.site], catalog_sites.get(d.site))
    return shlex.join(["planner", "predict", *args])
