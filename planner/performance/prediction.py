"""``planner predict``: the inference ledger of one configuration (memory, FLOPs, bytes, TTFT, decode step)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from planner.catalog.loader import Catalog
from planner.errors import CatalogError, InputError, did_you_mean
from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff
from planner.limits import DEFAULT_MAX_BATCH, DEFAULT_WORKSPACE_GIB
from planner.performance.memory import weights_bytes_per_gpu
from planner.performance.moe import explain_terms
from planner.performance.optimizations import (
    kv_cache_bytes_per_replica,
    optimized_engine_reserve_bytes,
    optimized_max_batch,
    optimized_memory_per_gpu_bytes,
)
from planner.performance.predict_load import at_load, check_options, load_optimizations
from planner.performance.sharing import terms_on_share
from planner.performance.steps import (
    StepBreakdown,
    decode_step,
    mean_decode_context_tokens,
    prefill_step,
)
from planner.performance.terms import DEFAULT_ENGINE, engine_fields
from planner.scenario_optimizations import PrefixCache, Speculative
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, FLOP_PER_TFLOP


@dataclass(frozen=True)
class PredictRequest:
    """Inputs of ``planner predict``."""

    model: str
    gpu: str
    tp: int = 1
    pp: int = 1
    quant: str = "bf16"
    kv_dtype: str = "bf16"
    batch: int = 1
    input_tokens: int = 2048
    output_tokens: int = 256
    workspace_gib: float = DEFAULT_WORKSPACE_GIB
    ideal: bool = False
    engine: str = DEFAULT_ENGINE
    requests_per_s: float | None = None
    """Offered load of one replica; with it the engine scheduler gives TTFT/TPOT/throughput at that load."""
    ep: int = 1
    """Expert parallelism (MoE models): attention DP = EP, tp·ep·pp GPUs (planner/performance/moe.py)."""
    site: str | None = None
    """Catalog site the users reach: TTFT at load adds its RTT and the prompt upload, as a plan's does there
    (planner.ledgers.edge_cloud.request_network_s); None: no network time."""
    rtt_ms: float | None = None
    """Users' round trip to the replica, ms, in place of the site's (a scenario's ``sites:`` entry); without a
    site it needs ``uplink_mbit_per_s`` too."""
    uplink_mbit_per_s: float | None = None
    """Users' uplink, Mbit/s, in place of the site's (see ``rtt_ms``)."""
    ttft_percentile: int | None = None
    """TTFT at load at this percentile (planner.scenario_base.SLO_PERCENTILES), as a plan whose SLO is stated
    there reports it; None: the mean."""
    tpot_percentile: int | None = None
    """Per-request TPOT at load at this percentile; None: the mean."""
    batch_limit: int = DEFAULT_MAX_BATCH
    """Running sequences at load at most (besides memory and the engine's), as a scenario's ``max_batch``."""
    prefix_cache: PrefixCache | None = None
    """The prefix cache on at load (planner/candidate_optimizations.py: the plan's 'on' variant)."""
    speculative: Speculative | None = None
    """Speculative decoding on at load (the plan's 'on' variant)."""
    prefill_mfu_frac: float | None = None
    """Stated prefill matmul efficiency in place of the catalog's (a scenario's ``hardware.efficiency``)."""
    decode_mbu_frac: float | None = None
    """Stated decode bandwidth efficiency in place of the catalog's."""
    role: str = "colocated"
    """colocated, or a prefill / decode pool replica (planner.performance.pools: TTFT with the KV handoff, TPOT
    without prompts in the steps), as a plan's disaggregated deployments."""
    gpu_share_frac: float = 1.0
    """The share of one GPU the replica holds (a scenario's ``hardware.gpu_share_fracs``; TP1·PP1): its memory,
    bandwidth and peaks × the share, per-step fixed costs ÷ it (planner.performance.sharing)."""


@dataclass(frozen=True)
class Prediction:
    """The inference ledger of one configuration (all units in the names)."""

    request: PredictRequest
    params: int
    weights_bytes: float
    decode_read_bytes_per_step: float
    kv_bytes_per_token: float
    kv_cache_bytes: float
    """KV of ``batch`` sequences at the full context over the replica's GPUs, with the optimizations' shared
    prefix and draft KV at load (planner.performance.optimizations.kv_cache_bytes_per_replica), B."""
    memory_per_gpu_bytes: float
    """Weights + KV + workspace + resident prefix / draft bytes + the engine's reserve at ``batch``
    (planner.performance.optimizations.optimized_memory_per_gpu_bytes), B."""
    engine_reserve_bytes: float
    """Device memory the engine keeps out of its weights, workspace and KV cache (memory_claim_frac etc.), B."""
    gpu_memory_bytes: float
    weights_per_gpu_bytes: float
    fits: bool
    max_batch: int
    """Largest batch whose KV fits the engine's KV room, with the optimizations at load (the prefix cache's
    pages, the draft): planner.performance.optimizations.optimized_max_batch, the memory fit a plan's candidate
    table and audit compute; ``at_load.batch_limit`` is min(this, --max-batch, the engine's
    max_running_sequences), sequences."""
    prefill_flop: float
    decode_flop_per_step: float
    prefill: StepBreakdown
    decode: StepBreakdown
    ttft_ms: float
    decode_step_ms: float
    """Bare decode step at the mean history P + G/2 (no prefill interference, so not the plan's ``tpot_ms``)."""
    output_tokens_per_s: float
    bound: Literal["memory", "compute", "communication"]
    efficiency: eff.EfficiencyTerms
    engine_terms: dict[str, float]
    """The engine's host costs, collective start-up and chunk budget as used (0 costs when ideal)."""
    moe: dict[str, float] | None = None
    """MoE terms of the decode step at the request's batch (planner/performance/moe.py); None for dense models."""
    load: dict[str, float | bool | None] | None = None
    """The scheduler at ``requests_per_s`` (performance.load.serve_at_load), None without a load."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``planner predict --json``."""
        r = self.request
        return {
            "model": r.model,
            "gpu": r.gpu,
            "tp": r.tp,
            "pp": r.pp,
            "ep": r.ep,
            "gpus": r.tp * r.ep * r.pp,
            "quant": r.quant,
            "kv_dtype": r.kv_dtype,
            "batch": r.batch,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
            "context_tokens": r.input_tokens + r.output_tokens,
            "ideal": r.ideal,
            "engine": r.engine,
            "site": r.site,
            "rtt_ms": r.rtt_ms,
            "uplink_mbit_per_s": r.uplink_mbit_per_s,
            "ttft_percentile": r.ttft_percentile,
            "tpot_percentile": r.tpot_percentile,
            "prefix_cache": None if r.prefix_cache is None else r.prefix_cache.model_dump(),
            "speculative": None if r.speculative is None else r.speculative.model_dump(),
            "role": r.role,
            "prefill_mfu_frac": r.prefill_mfu_frac,
            "decode_mbu_frac": r.decode_mbu_frac,
            "params": self.params,
            "weights_bytes": self.weights_bytes,
            "weights_gb": self.weights_bytes / BYTES_PER_GB,
            "weights_per_gpu_gb": self.weights_per_gpu_bytes / BYTES_PER_GB,
            "decode_read_bytes_per_step": self.decode_read_bytes_per_step,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_cache_gb": self.kv_cache_bytes / BYTES_PER_GB,
            "workspace_gb": r.workspace_gib * BYTES_PER_GIB / BYTES_PER_GB,
            "engine_reserve_gb": self.engine_reserve_bytes / BYTES_PER_GB,
            "memory_per_gpu_gb": self.memory_per_gpu_bytes / BYTES_PER_GB,
            "gpu_memory_gb": self.gpu_memory_bytes / BYTES_PER_GB,
            "fits": self.fits,
            "max_batch": self.max_batch,
            "prefill_tflop": self.prefill_flop / FLOP_PER_TFLOP,
            "decode_gflop_per_step": self.decode_flop_per_step / 1e9,
            "ttft_ms": self.ttft_ms,
            "decode_step_ms": self.decode_step_ms,
            "output_tokens_per_s": self.output_tokens_per_s,
            "bound": self.bound,
            "breakdown": {
                "decode": _breakdown_json(self.decode),
                "prefill": _breakdown_json(self.prefill),
                "efficiency": self.efficiency.as_dict(),
                "engine": self.engine_terms,
                "moe": self.moe or {},
            },
            "at_load": self.load,
        }


def _breakdown_json(step: StepBreakdown) -> dict[str, float]:
    return {
        "weights_read_ms": float(step.weights_read_s) * 1e3,
        "kv_read_ms": float(step.kv_read_s) * 1e3,
        "compute_ms": float(step.compute_s) * 1e3,
        "attention_compute_ms": float(step.attention_compute_s) * 1e3,
        "linear_ops_ms": float(step.linear_ops_s) * 1e3,
        "attention_ops_ms": float(step.attention_ops_s) * 1e3,
        "tp_comm_ms": float(step.tp_comm_s) * 1e3,
        "tp_latency_ms": float(step.tp_latency_s) * 1e3,
        "pp_comm_ms": float(step.pp_comm_s) * 1e3,
        "overhead_ms": float(step.overhead_s) * 1e3,
        "total_ms": float(step.total_s) * 1e3,
    }


def resolve(catalog: Catalog, table: dict[str, Any], key: str, what: str, option: str) -> Any:
    """Look ``key`` up in a catalog table; InputError naming the option and a suggestion if unknown."""
    if key not in table:
        raise InputError(f"{option}: unknown {what} '{key}'{did_you_mean(key, table)}")
    return table[key]


def predict(catalog: Catalog, request: PredictRequest) -> Prediction:
    """Evaluate the inference ledger of one configuration (``planner predict``).

    Per-step quantities (``decode_read_bytes_per_step``, ``decode_gflop_per_step``) are for the first decode
    step (history = input tokens, the book's "2K context" convention); ``decode_step_ms`` is the step time at
    the mean decode history P + G/2; memory holds the full context P + G; TTFT is prefill alone (no queue/network).
    With ``--requests-per-s`` the stated optimizations hold memory as the plan's 'on' variant does (prefix pages
    once per replica, each sequence without the h·S cached tokens, the draft's weights and KV: ``max_batch``,
    ``memory_per_gpu_gb``, ``kv_cache_gb``, ``fits``) and the lone prefill is of the P − h·S new tokens; the
    bare decode step stays one plain step (speculation's rounds are in ``at_load``).
    """
    if request.batch < 1:
        raise InputError("--batch must be >= 1")
    if request.input_tokens < 1 or request.output_tokens < 1:
        raise InputError("--input-tokens and --output-tokens must be >= 1")
    if request.requests_per_s is not None and not request.requests_per_s > 0:
        raise InputError("--requests-per-s must be > 0 (requests per second offered to one replica)")
    check_options(request)
    model = resolve(catalog, catalog.models, request.model, "model", "--model")
    gpu = resolve(catalog, catalog.accelerators, request.gpu, "gpu", "--gpu")
    wfmt = resolve(catalog, catalog.formats, request.quant, "format", "--quant")
    kfmt = resolve(catalog, catalog.formats, request.kv_dtype, "format", "--kv-dtype")
    if not kfmt.kv_cache:
        raise InputError(f"--kv-dtype: {catalog.kv_format_refusal(kfmt.id)}")
    site = None if request.site is None else resolve(catalog, catalog.sites, request.site, "site", "--site")
    if request.speculative is not None:
        resolve(catalog, catalog.models, request.speculative.draft_model, "model", "--draft-model")
    try:  # an id or ID[field=value,...], as a plan's deployments show it (planner.catalog.engine_settings)
        engine = catalog.engine(request.engine)
    except CatalogError as exc:
        raise InputError(f"--engine: {exc}") from None
    # as a plan's replica: on its share of the GPU, with stated efficiencies as a scenario's hardware.efficiency
    terms = terms_on_share(
        catalog,
        model=model,
        gpu=gpu,
        share_frac=request.gpu_share_frac,
        weight_format=wfmt,
        kv_format=kfmt,
        tp=request.tp,
        pp=request.pp,
        ep=request.ep,
        engine=engine,
        ideal=request.ideal,
        prefill_mfu_frac=request.prefill_mfu_frac,
        decode_mbu_frac=request.decode_mbu_frac,
    )
    workspace = request.workspace_gib * BYTES_PER_GIB
    context = request.input_tokens + request.output_tokens
    batch = float(request.batch)
    # the optimizations at load (prefix pages held once, draft weights and KV) hold memory as the plan's 'on'
    # variant: max_batch is the memory fit the plan's candidate table and audit compute (optimized_max_batch)
    opt = None if request.requests_per_s is None else load_optimizations(
        catalog, request, terms, model_id=model.id, gpu=gpu, fmt=wfmt, kfmt=kfmt
    )
    memory = float(
        optimized_memory_per_gpu_bytes(terms, opt, batch=batch, context_tokens=context, workspace_bytes=workspace)
    )
    fit = int(optimized_max_batch(terms, opt, context_tokens=float(context), workspace_bytes=workspace))
    # a lone prefill of the new prompt tokens after the cached prefix, as the plan's candidate table takes it
    cached = 0.0 if opt is None else float(opt.cached_tokens)
    prefill = prefill_step(terms, prompt_tokens=float(request.input_tokens) - cached, cached_tokens=cached)
    decode = decode_step(
        terms,
        batch=batch,
        context_tokens=mean_decode_context_tokens(request.input_tokens, request.output_tokens),
    )
    # FLOPs do not depend on the efficiency terms: the first step's count comes from the same terms
    first = decode_step(
        terms,
        batch=batch,
        context_tokens=float(request.input_tokens),
    )
    hp = catalog.format(wfmt.high_precision).bytes_per_value
    step_s = float(decode.total_s)
    return Prediction(
        request=request,
        params=arch.params_total(model),
        weights_bytes=float(terms.weights_bytes),
        decode_read_bytes_per_step=float(
            arch.decode_read_bytes_per_step(
                model,
                wfmt,
                batch=batch,
                context_tokens=request.input_tokens,
                kv_bytes_per_value=kfmt.bytes_per_value,
                high_precision_bytes_per_value=hp,
            )
        ),
        kv_bytes_per_token=arch.kv_bytes_per_token(model, kv_bytes_per_value=kfmt.bytes_per_value),
        kv_cache_bytes=float(kv_cache_bytes_per_replica(terms, opt, batch=batch, context_tokens=float(context))),
        memory_per_gpu_bytes=memory,
        engine_reserve_bytes=float(optimized_engine_reserve_bytes(terms, opt, workspace_bytes=workspace)),
        gpu_memory_bytes=float(terms.memory_capacity_bytes),
        weights_per_gpu_bytes=float(weights_bytes_per_gpu(terms)),
        fits=bool(memory <= terms.memory_capacity_bytes),
        max_batch=fit,
        prefill_flop=float(prefill.flop_per_gpu) * float(terms.tp) * request.pp,
        decode_flop_per_step=float(first.flop_per_gpu) * float(terms.tp) * request.pp,
        prefill=prefill,
        decode=decode,
        ttft_ms=float(prefill.total_s) * 1e3,
        decode_step_ms=step_s * 1e3,
        output_tokens_per_s=batch / step_s,
        bound=str(decode.bound()),  # type: ignore[arg-type]
        efficiency=terms.efficiency,
        engine_terms={k: float(v) for k, v in engine_fields(engine, ideal=request.ideal).items()},
        moe=explain_terms(terms, tokens=batch) or None,
        load=None if request.requests_per_s is None else at_load(
            catalog, request, terms, site=site, gpu=gpu, opt=opt, fit=float(fit)
        ),
    )
