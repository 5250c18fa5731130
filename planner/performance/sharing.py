"""GPU sharing: a replica that holds a share s of one GPU (several small models on one GPU).

Model (time-slicing, conservative): a replica with share s ∈ {1/2, 1/4} of a GPU owns s of its memory
(a static partition, e.g. vLLM ``gpu_memory_utilization = s``) and runs on s of its time; over a step it
therefore sees a GPU with

    memory       M_s = s · M            (weights + KV + workspace of this replica must fit; the workspace is
                                         paid in full by every co-resident engine)
    bandwidth    β_s = s · β            (HBM bytes per second it can move)
    compute      Π_s = s · Π            (tensor FLOP/s of every format)

and its fixed per-step costs (engine host time, GPU step floor) stretched by 1/s: it gets the GPU for s of
the wall time, and no overlap of one engine's host work with another's kernels is credited. Every term of
a step then takes 1/s as long, so a step of T on the whole GPU takes exactly T/s on the slice — for two
equal co-residents T + T, the round-robin worst case of time-slicing — and the engine scheduler
(planner/performance/load.py) computes TTFT, TPOT and the capacity at the SLO on the slice exactly as for
a whole GPU, so each model's SLO holds with its co-residents' interference. A slice never serves more per
GPU than the whole GPU (same tokens per GPU-second at a batch, a smaller batch under the TPOT SLO, less
memory for KV); sharing pays only by granularity. Shares of a GPU sum to at most 1 (the MILP's supply rows
count s per replica); shares are powers of two, so any mix whose total fits the GPUs packs into them (first
fit decreasing on divisible sizes).
"""

from __future__ import annotations

import dataclasses

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Engine, Model, NumericFormat
from planner.performance.terms import DeploymentTerms, deployment_terms, with_efficiency

SHARE_FRACS: tuple[float, ...] = (0.5, 0.25)
"""Shares of one GPU a replica may hold besides the whole GPU (1/2 and 1/4)."""


def is_share_frac(value: float) -> bool:
    """Whether ``value`` is 1/2^k for k = 0 … 4 (the shares that pack exactly into whole GPUs)."""
    return any(abs(value - 2.0**-k) < 1e-12 for k in range(5))


def shared_accelerator(gpu: Accelerator, share_frac: float) -> Accelerator:
    """The slice of ``gpu`` a replica with ``share_frac`` of it sees: memory, bandwidth and every tensor
    peak × ``share_frac`` (GB, GB/s, TFLOP/s); the id, links and efficiencies stay the GPU's."""
    if not 0 < share_frac <= 1:
        raise ValueError(f"share_frac {share_frac} must be in (0, 1]")
    if share_frac == 1:
        return gpu
    return gpu.model_copy(
        update={
            "memory_gb": gpu.memory_gb * share_frac,
            "memory_bandwidth_gb_per_s": gpu.memory_bandwidth_gb_per_s * share_frac,
            "dense_tflops": {fmt: tflops * share_frac for fmt, tflops in gpu.dense_tflops.items()},
        }
    )


def shared_terms(terms: DeploymentTerms, share_frac: float) -> DeploymentTerms:
    """Terms of a replica holding ``share_frac`` of a GPU whose ``terms`` were built on
    :func:`shared_accelerator`: the per-step fixed costs (engine host ms/µs, GPU step floor s) ÷ share_frac."""
    e = terms.efficiency
    return dataclasses.replace(
        terms,
        host_step_ms=terms.host_step_ms / share_frac,
        host_per_layer_us=terms.host_per_layer_us / share_frac,
        host_per_sequence_us=terms.host_per_sequence_us / share_frac,
        efficiency=dataclasses.replace(e, step_overhead_s=e.step_overhead_s / share_frac),
    )


def terms_on_share(
    catalog: Catalog,
    *,
    model: Model,
    gpu: Accelerator,
    share_frac: float,
    weight_format: NumericFormat,
    kv_format: NumericFormat,
    tp: int = 1,
    pp: int = 1,
    ep: int = 1,
    engine: Engine | str,
    ideal: bool = False,
    prefill_mfu_frac: float | None = None,
    decode_mbu_frac: float | None = None,
    gpu_slice: Accelerator | None = None,
) -> DeploymentTerms:
    """The terms of one replica on ``share_frac`` of ``gpu`` (1: the whole GPU), as the candidate table, the
    audit and ``planner predict`` all build them: planner.performance.terms.deployment_terms on the slice
    (:func:`shared_accelerator`; ``gpu_slice``: that record, when the caller keeps one per GPU and share),
    the stated MFU / MBU (a scenario's ``hardware.efficiency`` for the GPU, predict's
    ``--prefill-mfu-frac`` / ``--decode-mbu-frac``; None: the catalog's) in place of the catalog's, then the
    fixed per-step costs stretched by 1/share (:func:`shared_terms`)."""
    terms = deployment_terms(
        catalog,
        model=model,
        gpu=gpu_slice if gpu_slice is not None else shared_accelerator(gpu, share_frac),
        weight_format=weight_format,
        kv_format=kv_format,
        tp=tp,
        pp=pp,
        ideal=ideal,
        engine=engine,
        ep=ep,
    )
    terms = with_efficiency(terms, prefill_mfu_frac=prefill_mfu_frac, decode_mbu_frac=decode_mbu_frac)
    return shared_terms(terms, share_frac) if share_frac < 1 else terms
