"""``planner predict``: the inference ledger of one configuration (cards 1, 2, 5, 8).

A configuration that cannot run — the weights + KV cache do not fit the GPU memory, or the tensor-parallel
degree does not split the attention heads — exits 3 with the reason; ``--force`` still shows its numbers. A
memory refusal names the smallest layout that holds the batch (fewest GPUs, TP before PP) and a lower-bit weight
format that holds it on fewer. A mistyped id gets the id meant (another case or separators, a prefix, the closest).
``--explain`` prints each term with how it enters its total: memory per GPU, each step's time, TTFT under load."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import (
    JsonFlag,
    JsonOut,
    check_output_path,
    emit,
    fail,
    finite_float,
    run_guarded,
    show,
    text,
    warn,
)
from planner.context_window import context_window_problem
from planner.errors import InfeasiblePlan, InputError, PlannerError, suggest_id
from planner.head_split import TP_DEGREES, head_split_problems, valid_tps
from planner.limits import (
    DEFAULT_DRAFT_TOKENS,
    DEFAULT_MAX_BATCH,
    DEFAULT_WORKSPACE_GIB,
    MAX_BATCH,
    MAX_DRAFT_TOKENS,
    MAX_REQUESTS_PER_S,
)
from planner.units import three_digits_text

if TYPE_CHECKING:
    from planner.performance import PredictRequest
    from planner.scenario_optimizations import PrefixCache, Speculative

KEYS = (
    "params",
    "weights_gb",
    "kv_bytes_per_token",
    "kv_cache_gb",
    "engine_reserve_gb",
    "memory_per_gpu_gb",
    "fits",
    "max_batch",
    "prefill_tflop",
    "decode_gflop_per_step",
    "ttft_ms",
    "decode_step_ms",
    "output_tokens_per_s",
    "bound",
)



def _positive_rate(raw: str) -> float:
    """--requests-per-s: a finite number in (0, MAX_REQUESTS_PER_S], a scenario's requests_per_s range (0 and
    negatives get the same usage error; 1e308 would overflow the scheduler's fixed point)."""
    value = finite_float(-math.inf, MAX_REQUESTS_PER_S)(raw)
    if value <= 0:
        raise typer.BadParameter(f"must be above 0 requests/s (the load offered to one replica), not {raw}")
    return value


MAX_WORKSPACE_GIB = 1024.0
"""--workspace-gib at most, as a scenario's workspace_gib."""

def run_problems(
    result: dict[str, Any], catalog: Any, model: str, tp: int, batch: int, *, input_tokens: int, output_tokens: int,
    request: PredictRequest | None = None,
) -> list[str]:
    """The reasons a predicted configuration cannot run (empty when it can); with ``request``, a memory refusal
    names the smallest layout that holds the batch (:func:`smallest_layout_hint`)."""
    record = catalog.models[model]
    mla = getattr(record, "mla", None) is not None
    problems = head_split_problems(record.q_heads, record.kv_heads, tp, mla, label="--tp ")
    if problems:
        problems[-1] += f" (valid TP degrees: {valid_tps(record.q_heads, record.kv_heads, mla)})"
    window = context_window_problem(record, input_tokens=input_tokens, output_tokens=output_tokens)
    if window:
        problems.append(f"{window} (shorten --input-tokens / --output-tokens)")
    if not result["fits"]:
        hint = "try more --tp/--pp, a smaller --quant or --kv-dtype" if request is None or window else (
            smallest_layout_hint(catalog, request)
        )
        problems.append(
            f"batch {batch} needs {result['memory_per_gpu_gb']:.1f} GB per GPU (with the "
            f"{result['engine_reserve_gb']:.1f} GB the {result['engine']} engine holds back), more than the "
            f"GPU's {result['gpu_memory_gb']:.0f} GB (max batch {result['max_batch']}; {hint})"
        )
    return problems


MAX_SUGGESTED_PP = 64
"""Pipeline stages at most in the layouts a refusal suggests (:func:`smallest_layout_hint`)."""
MAX_SUGGESTED_GPUS = 512
"""GPUs at most in the layouts a refusal suggests."""


def _fits(catalog: Any, request: PredictRequest) -> dict[str, Any] | None:
    """predict's JSON of ``request`` when it runs (heads split, memory holds its batch), else None."""
    from planner.performance import predict as run_predict

    record = catalog.models[request.model]
    if head_split_problems(record.q_heads, record.kv_heads, request.tp, getattr(record, "mla", None) is not None):
        return None
    try:
        result = run_predict(catalog, request).to_json()
    except PlannerError:  # the TP group leaves its domain, PP needs a scale-out fabric, more stages than layers
        return None
    return result if result["fits"] else None


def _layouts(catalog: Any, request: PredictRequest) -> list[tuple[int, int, float]]:
    """(tp, pp, GPU share) layouts of ``request``'s model other than its own, fewest GPUs first (TP before PP at
    equal GPUs: one stage less to cross)."""
    layers = catalog.models[request.model].layers
    shares = [1.0] if request.gpu_share_frac < 1 else []
    whole = [
        (tp, pp, 1.0)
        for tp in TP_DEGREES
        for pp in range(1, min(layers, MAX_SUGGESTED_PP) + 1)
        if tp * pp * request.ep <= MAX_SUGGESTED_GPUS
    ]
    layouts = [(1, 1, s) for s in shares] + sorted(whole, key=lambda x: (x[0] * x[1], x[1]))
    own = (request.tp, request.pp, request.gpu_share_frac)
    return [x for x in layouts if x != own and x[0] * x[1] * x[2] >= request.tp * request.pp * request.gpu_share_frac]


def _layout_text(
    tp: int, pp: int, ep: int, share: float, found: dict[str, Any], *, shared: bool = False
) -> str:
    """The options of a layout and what it holds, e.g. "--tp 2 (2 GPUs, 76.3 of 80 GB per GPU)"; ``shared``: the
    request runs on a share of a GPU (a whole one is then --gpu-share-frac 1)."""
    memory = f"{found['memory_per_gpu_gb']:.1f} of {found['gpu_memory_gb']:.0f} GB per GPU"
    if share < 1 or (shared and tp * pp * ep == 1):
        return f"--gpu-share-frac {share:g} ({memory})"
    gpus = tp * pp * ep
    args = (["--gpu-share-frac 1"] if shared else []) + [f"--tp {tp}"] + ([f"--pp {pp}"] if pp > 1 else []) + (
        [f"--ep {ep}"] if ep > 1 else []
    )
    return " ".join(args) + (f" (a whole GPU, {memory})" if gpus == 1 else f" ({gpus} GPUs, {memory})")


def smallest_layout_hint(catalog: Any, request: PredictRequest) -> str:
    """The layout with the fewest GPUs (TP, then PP; EP and the formats as given) that holds ``request``'s batch
    with its weights, KV cache, workspace and engine reserve, as a refusal names it ("the smallest layout that
    holds batch 1: --tp 2 (2 GPUs, 76.3 of 80 GB per GPU)"), and a lower-bit weight format that holds it on
    fewer GPUs; or that none up to MAX_SUGGESTED_GPUS does."""
    bare = dataclasses.replace(  # memory alone: the load and its options do not change what fits
        request, requests_per_s=None, site=None, rtt_ms=None, uplink_mbit_per_s=None, ttft_percentile=None,
        tpot_percentile=None, prefix_cache=None, speculative=None, role="colocated",
    )
    best: tuple[int, int, float, dict[str, Any]] | None = None
    for tp, pp, share in _layouts(catalog, bare):
        found = _fits(catalog, dataclasses.replace(bare, tp=tp, pp=pp, gpu_share_frac=share))
        if found is not None:
            best = (tp, pp, share, found)
            break
    if best is None:
        return (
            f"no TP×PP layout up to {MAX_SUGGESTED_GPUS} {request.gpu} GPUs holds it in --quant {request.quant} "
            f"--kv-dtype {request.kv_dtype}: try a smaller --quant or --kv-dtype, a larger GPU or a smaller --batch"
            + (" or --workspace-gib" if request.workspace_gib > DEFAULT_WORKSPACE_GIB else "")
        )
    tp, pp, share, found = best
    layout = _layout_text(tp, pp, request.ep, share, found, shared=request.gpu_share_frac < 1)
    hint = f"the smallest layout that holds batch {request.batch}: {layout}"
    gpus = tp * pp * request.ep * share
    smaller = _smaller_format(catalog, bare, gpus)
    return hint if smaller is None else f"{hint}; or {smaller}"


def _smaller_format(catalog: Any, request: PredictRequest, gpus: float) -> str | None:
    """A weight format of fewer bits than ``request.quant``, native on its GPU, that holds its batch on fewer than
    ``gpus`` GPUs (the fewest first), as --quant F --tp T ..."""
    bits = catalog.formats[request.quant].bits_per_value
    native = catalog.accelerators[request.gpu].native_formats
    formats = sorted(
        (f for f in catalog.formats.values() if f.id in native and f.bits_per_value < bits), key=lambda f: -f.bits_per_value
    )
    for fmt in formats:
        for tp, pp, share in [(1, 1, request.gpu_share_frac), *_layouts(catalog, request)]:
            if tp * pp * request.ep * share >= gpus:
                break
            found = _fits(catalog, dataclasses.replace(request, quant=fmt.id, tp=tp, pp=pp, gpu_share_frac=share))
            if found is not None:
                layout = _layout_text(tp, pp, request.ep, share, found, shared=request.gpu_share_frac < 1)
                return f"--quant {fmt.id} {layout}"
    return None


def check_names(catalog: Any, request: PredictRequest) -> None:
    """InputError (exit 2) naming the option and the id meant for an unknown model, GPU, format, engine, site or
    draft model (the checks of planner.performance.prediction.resolve, with planner.errors.suggest_id's guesses)."""
    names: list[tuple[str, str | None, Any, str]] = [
        ("--model", request.model, catalog.models, "model"),
        ("--gpu", request.gpu, catalog.accelerators, "gpu"),
        ("--quant", request.quant, catalog.formats, "format"),
        ("--kv-dtype", request.kv_dtype, catalog.formats, "format"),
        ("--engine", request.engine.split("[", 1)[0], catalog.engines, "engine"),
        ("--site", request.site, catalog.sites, "site"),
        ("--draft-model", None if request.speculative is None else request.speculative.draft_model, catalog.models,
         "model"),
    ]
    for option, name, table, what in names:
        if name is not None and name not in table:
            raise InputError(f"{option}: unknown {what} '{name}'{suggest_id(name, table)}")


def _fraction(flag: str, description: str) -> Any:
    """An optional fraction option of predict: a finite number in [0, 1] (a usage error names it otherwise)."""
    return typer.Option(flag, parser=finite_float(0, 1), metavar="FRAC", help=description)


def predict(
    model: Annotated[str, typer.Option(help="Model id, e.g. qwen3_8b.")],
    gpu: Annotated[str, typer.Option(help="Accelerator id, e.g. h100_sxm.")],
    tp: Annotated[int, typer.Option(help="Tensor-parallel degree.", min=1)] = 1,
    pp: Annotated[int, typer.Option(help="Pipeline-parallel degree.", min=1)] = 1,
    ep: Annotated[
        int,
        typer.Option(help="Expert-parallel degree (MoE models): attention data parallel DP = EP, tp·ep·pp GPUs.", min=1),
    ] = 1,
    quant: Annotated[str, typer.Option(help="Weight format id.")] = "bf16",
    kv_dtype: Annotated[str, typer.Option("--kv-dtype", help="KV-cache format id.")] = "bf16",
    batch: Annotated[int, typer.Option(help="Concurrent sequences.", min=1)] = 1,
    input_tokens: Annotated[int, typer.Option(help="Prompt tokens per request.", min=1)] = 2048,
    output_tokens: Annotated[int, typer.Option(help="Generated tokens per request.", min=1)] = 256,
    workspace_gib: Annotated[
        float, typer.Option(help="Per-GPU workspace reservation, GiB.", parser=finite_float(0, MAX_WORKSPACE_GIB), metavar="GIB")
    ] = DEFAULT_WORKSPACE_GIB,
    engine: Annotated[
        str,
        typer.Option(
            help="Serving engine id (catalogs/engines.yaml): vllm, vllm_v0, vllm_v0_multistep, vllm_eager, sglang, "
            "sglang_v03, trtllm, llamacpp, llamacpp_2023_dp4a; with settings as a plan's deployments show it: "
            "'vllm\\[max_running_sequences=512,memory_claim_frac=0.95]'."
        ),
    ] = "vllm",
    requests_per_s: Annotated[
        float | None,
        typer.Option(
            "--requests-per-s",
            parser=_positive_rate,
            metavar="REQ/S",
            help="Offered load of one replica, requests/s: TTFT/TPOT/throughput under the engine scheduler "
            "(the numbers planner plan reports for this deployment at that load; with --site, TTFT too).",
        ),
    ] = None,
    site: Annotated[
        str | None,
        typer.Option(
            help="Site id (catalogs/sites.yaml) the users reach: TTFT under --requests-per-s adds its RTT and the "
            "prompt upload, as a plan's deployment at that site reports it. Default: no network time.",
        ),
    ] = None,
    rtt_ms: Annotated[
        float | None,
        typer.Option(
            "--rtt-ms", parser=finite_float(0), metavar="MS",
            help="Users' round trip to the replica, ms, in place of --site's: a scenario's sites: entry (an override "
            "or a site of its own). Without --site, give --uplink-mbit-per-s too.",
        ),
    ] = None,
    uplink_mbit_per_s: Annotated[
        float | None,
        typer.Option(
            "--uplink-mbit-per-s", parser=finite_float(0), metavar="MBIT/S",
            help="Users' uplink, Mbit/s (the prompt's upload), in place of --site's; see --rtt-ms.",
        ),
    ] = None,
    ttft_percentile: Annotated[
        int | None,
        typer.Option(
            "--ttft-percentile", metavar="P",
            help="TTFT under --requests-per-s at this percentile (50, 90, 95, 99), as a plan whose SLO is stated "
            "there reports it. Default: the mean.",
        ),
    ] = None,
    tpot_percentile: Annotated[
        int | None,
        typer.Option(
            "--tpot-percentile", metavar="P",
            help="Per-request TPOT under --requests-per-s at this percentile (50, 90, 95, 99). Default: the mean.",
        ),
    ] = None,
    max_batch: Annotated[
        int,
        typer.Option(
            "--max-batch", min=1, max=MAX_BATCH,
            help="Running sequences per replica under --requests-per-s at most (besides memory, max_batch, and the "
            "engine's limit: at_load's batch_limit is the least of the three), as a scenario's max_batch.",
        ),
    ] = DEFAULT_MAX_BATCH,
    prefix_hit_frac: Annotated[
        float | None,
        _fraction(
            "--prefix-hit-frac",
            "Prefix cache on under --requests-per-s: share of requests that find the shared prefix cached, 0..1 "
            "(with --prefix-tokens; a scenario's prefix_cache.hit_frac). max_batch, the memory figures and the lone "
            "prefill's ttft_ms are then those of the cached deployment, as the plan's.",
        ),
    ] = None,
    prefix_tokens: Annotated[
        int | None,
        typer.Option("--prefix-tokens", min=1, help="Tokens of the shared prefix, part of --input-tokens."),
    ] = None,
    draft_model: Annotated[
        str | None,
        typer.Option(
            "--draft-model",
            help="Speculative decoding on under --requests-per-s with this draft model (with --acceptance-frac; "
            "a scenario's speculative).",
        ),
    ] = None,
    acceptance_frac: Annotated[
        float | None, _fraction("--acceptance-frac", "Per-position acceptance of a drafted token, 0..1.")
    ] = None,
    draft_tokens: Annotated[
        int | None,
        typer.Option(
            "--draft-tokens", min=1, max=MAX_DRAFT_TOKENS,
            help=f"Tokens drafted per round (with --draft-model; default {DEFAULT_DRAFT_TOKENS}).",
        ),
    ] = None,
    prefill_mfu_frac: Annotated[
        float | None,
        _fraction(
            "--prefill-mfu-frac",
            "Stated matmul efficiency (MFU) in place of the catalog's, as a scenario's hardware.efficiency.",
        ),
    ] = None,
    decode_mbu_frac: Annotated[
        float | None,
        _fraction("--decode-mbu-frac", "Stated weight and KV stream efficiency (MBU) in place of the catalog's."),
    ] = None,
    role: Annotated[
        str,
        typer.Option(
            "--role",
            help="Under --requests-per-s: colocated, or a disaggregated pair's prefill pool (TTFT with the KV "
            "handoff) or decode pool (TPOT with no prompts in its steps) replica.",
        ),
    ] = "colocated",
    gpu_share_frac: Annotated[
        float,
        typer.Option(
            "--gpu-share-frac",
            help="Share of one GPU the replica holds (1, 0.5, 0.25; TP1), as a plan's shared deployments.",
            metavar="FRAC",
        ),
    ] = 1.0,
    ideal: Annotated[
        bool, typer.Option("--ideal", help="Roofline lower bound: efficiency 1, no overheads.")
    ] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Print the per-term time breakdown.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Show the numbers even when the configuration cannot run.")
    ] = False,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
) -> None:
    """The inference ledger of one configuration: memory, FLOPs, bytes, TTFT, decode step, throughput (cards 1, 2, 5, 8). Exit 3 if it cannot run."""
    from planner.cli.catalog_cmd import _catalog
    from planner.performance import PredictRequest
    from planner.performance import predict as run_predict

    run_guarded(lambda: check_output_path(json_out, "--json-out"))
    catalog = _catalog()
    request = PredictRequest(
        model=model, gpu=gpu, tp=tp, pp=pp, quant=quant, kv_dtype=kv_dtype, batch=batch, input_tokens=input_tokens,
        output_tokens=output_tokens, workspace_gib=workspace_gib, ideal=ideal, engine=engine,
        requests_per_s=requests_per_s, ep=ep, site=site, rtt_ms=rtt_ms, uplink_mbit_per_s=uplink_mbit_per_s,
        ttft_percentile=ttft_percentile,
        tpot_percentile=tpot_percentile, batch_limit=max_batch,
        prefix_cache=run_guarded(lambda: _prefix_cache(prefix_hit_frac, prefix_tokens)),
        speculative=run_guarded(lambda: _speculative(draft_model, acceptance_frac, draft_tokens)), role=role,
        prefill_mfu_frac=prefill_mfu_frac, decode_mbu_frac=decode_mbu_frac, gpu_share_frac=gpu_share_frac,
    )
    run_guarded(lambda: check_names(catalog, request))
    result = run_guarded(lambda: run_predict(catalog, request)).to_json()
    problems = run_problems(
        result, catalog, model, tp, batch, input_tokens=input_tokens, output_tokens=output_tokens, request=request
    )
    if problems and not force:
        fail(InfeasiblePlan("; ".join(problems) + " — --force shows the numbers"))
    for problem in problems:
        warn(problem)
    if result["at_load"] is not None and not result["at_load"]["stable"]:  # on stderr with --json too
        warn(
            f"{requests_per_s:g} requests/s overloads this replica: it sustains about "
            f"{three_digits_text(result['at_load']['saturation_requests_per_s'])} requests/s with no latency SLO; its queue grows "
            "without bound, so the figures of a steady state (latencies, step, batch, waits) are left out and "
            "output_tokens_per_s is what it emits at saturation"
        )
    if emit(result, as_json, json_out):
        return
    title = (
        f"{model} on {gpu} TP{tp}xPP{pp}{f'xEP{ep}' if ep > 1 else ''} {quant} (kv {kv_dtype}), {engine}, batch {batch}"
        f"{' — ideal' if ideal else ''}"
    )
    t = Table(title=text(title))
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for key in KEYS:
        value = result[key]
        t.add_row(key, value_text(value))
    show(t)
    if result["at_load"] is not None:
        tails = [f"{name} p{p}" for name, p in (("TTFT", ttft_percentile), ("TPOT", tpot_percentile)) if p is not None]
        network = ", ".join(x for x in (
            None if rtt_ms is None else f"RTT {rtt_ms:g} ms",
            None if uplink_mbit_per_s is None else f"uplink {uplink_mbit_per_s:g} Mbit/s",
        ) if x)
        where = ", ".join(x for x in (site, network, None if role == "colocated" else f"{role} pool") if x)
        at = f"engine scheduler at {requests_per_s:g} requests/s per replica{f' ({where})' if where else ''}"
        _print_at_load(at + (f", {' and '.join(tails)}" if tails else ""), result["at_load"], ttft_percentile)
    if explain:
        _print_breakdown(result)


def value_text(value: object) -> str:
    """A figure of the predict table: counts with thousands separators ('70,553,706,496' params, '327,680' KV
    bytes per token: ',.4g' printed '3.277e+05'), from 10,000 up whole, else 4 significant digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) or abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:,.4g}"


def _prefix_cache(hit_frac: float | None, prefix_tokens: int | None) -> PrefixCache | None:
    """The prefix cache of --prefix-hit-frac and --prefix-tokens (both or neither)."""
    from planner.scenario_optimizations import PrefixCache  # pydantic: not on the CLI's import path

    if hit_frac is None and prefix_tokens is None:
        return None
    if hit_frac is None or prefix_tokens is None:
        given, missing = ("--prefix-hit-frac", "--prefix-tokens") if prefix_tokens is None else (
            "--prefix-tokens", "--prefix-hit-frac"
        )
        raise InputError(f"{given}: the prefix cache needs {missing} too")
    return PrefixCache(hit_frac=hit_frac, prefix_tokens=prefix_tokens)


def _speculative(
    draft_model: str | None, acceptance_frac: float | None, draft_tokens: int | None
) -> Speculative | None:
    """Speculative decoding of --draft-model, --acceptance-frac and --draft-tokens (alone it would be ignored)."""
    from planner.scenario_optimizations import Speculative  # pydantic: not on the CLI's import path

    if draft_model is None and acceptance_frac is None:
        if draft_tokens is not None:
            raise InputError("--draft-tokens: speculative decoding needs --draft-model and --acceptance-frac too")
        return None
    if draft_model is None or acceptance_frac is None:
        given, missing = ("--draft-model", "--acceptance-frac") if acceptance_frac is None else (
            "--acceptance-frac", "--draft-model"
        )
        raise InputError(f"{given}: speculative decoding needs {missing} too")
    return Speculative(
        draft_model=draft_model,
        acceptance_frac=acceptance_frac,
        draft_tokens=DEFAULT_DRAFT_TOKENS if draft_tokens is None else draft_tokens,
    )


STEP_SUMMANDS = ("linear_ops_ms", "attention_ops_ms", "tp_comm_ms", "pp_comm_ms", "overhead_ms")
"""The terms of a step breakdown whose sum is its ``total_ms`` (planner.performance.steps: serially dependent groups
add); the other terms are parts of them."""

STEP_TERMS: dict[str, tuple[str, str]] = {
    "linear_ops_ms": ("+", "linear layers: GEMM compute against the weight read (roofline max)"),
    "attention_ops_ms": ("+", "attention: its compute against the KV read (decode) or write (prefill)"),
    "tp_comm_ms": ("+", "TP all-reduces (and MoE all-to-all) on the critical path"),
    "pp_comm_ms": ("+", "activations handed between pipeline stages"),
    "overhead_ms": ("+", "engine host time, fixed step overhead and MoE routing kernels"),
    "total_ms": ("=", "the step: sum of the + rows"),
    "weights_read_ms": ("in linear_ops_ms", "weight bytes per GPU / achieved bandwidth"),
    "compute_ms": ("in linear + attention", "all FLOPs per GPU / achieved peak"),
    "attention_compute_ms": ("in attention_ops_ms", "the attention share of compute_ms"),
    "kv_read_ms": ("in attention_ops_ms", "KV bytes per GPU / achieved bandwidth (a prefill writes them)"),
    "tp_latency_ms": ("in tp_comm_ms", "start-up: engine launch + rounds × link latency"),
}
"""How each term of a step breakdown enters its total, and what it is."""


def _print_breakdown(result: dict[str, Any]) -> None:
    """The --explain tables: memory per GPU and work per step, each step's terms (the + rows add up to the
    total, the others are parts of them), the engine and MoE terms and the efficiency terms."""
    _print_memory(result)
    history = {"decode": f"history {result['input_tokens'] + result['output_tokens'] / 2:,g} tokens (P + G/2)",
               "prefill": f"{result['input_tokens']:,} prompt tokens"}
    for phase in ("decode", "prefill"):
        terms = result["breakdown"][phase]
        batch = f"batch {result['batch']}, " if phase == "decode" else ""
        b = Table(title=f"{phase} step at {batch}{history[phase]}, ms (efficiency applied)")
        b.add_column("term")
        b.add_column("ms", justify="right")
        b.add_column("enters total_ms")
        b.add_column("what")
        ordered = [k for k in (*STEP_SUMMANDS, "total_ms") if k in terms] + [
            k for k in terms if k not in STEP_SUMMANDS and k != "total_ms"
        ]
        for key in ordered:
            how, what = STEP_TERMS.get(key, ("", ""))
            b.add_row(key, f"{terms[key]:.4f}", how, what)
        show(b)
    _print_terms("engine host costs and scheduler (catalogs/engines.yaml)", result["breakdown"]["engine"])
    if result["breakdown"]["moe"]:
        _print_terms("MoE terms of the decode step (planner/performance/moe.py)", result["breakdown"]["moe"])
    e = Table(title="efficiency terms")
    e.add_column("term")
    e.add_column("value", justify="right")
    for key, value in result["breakdown"]["efficiency"].items():
        e.add_row(key, f"{value:.4g}")
    show(e)


def memory_rows(result: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(term, GB, how it enters) of the memory one GPU holds: weights + KV cache + workspace + engine reserve =
    memory_per_gpu_gb (planner.performance.memory.held_bytes_per_gpu), against the GPU's memory. The KV cache per
    GPU is what the sum leaves (kv_cache_gb is the batch's whole cache, split over the KV shards and stages)."""
    kv_per_gpu = (
        result["memory_per_gpu_gb"] - result["weights_per_gpu_gb"] - result["workspace_gb"] - result["engine_reserve_gb"]
    )
    return [
        ("weights_per_gpu_gb", result["weights_per_gpu_gb"], f"+ ({result['weights_gb']:.4g} GB of weights in all)"),
        ("kv_cache_per_gpu_gb", kv_per_gpu, f"+ (kv_cache_gb {result['kv_cache_gb']:.4g} GB for the batch in all)"),
        ("workspace_gb", result["workspace_gb"], "+ (--workspace-gib in GB)"),
        ("engine_reserve_gb", result["engine_reserve_gb"], "+ (memory the engine leaves unused)"),
        ("memory_per_gpu_gb", result["memory_per_gpu_gb"], "= sum of the + rows"),
        ("gpu_memory_gb", result["gpu_memory_gb"], "fits" if result["fits"] else "does not fit"),
    ]


def _print_memory(result: dict[str, Any]) -> None:
    m = Table(title=f"memory per GPU at batch {result['batch']}, context {result['context_tokens']:,} tokens (GB = 1e9 B)")
    m.add_column("term")
    m.add_column("GB", justify="right")
    m.add_column("enters memory_per_gpu_gb")
    for key, value, how in memory_rows(result):
        m.add_row(key, f"{value:,.3f}", text(how))
    show(m)
    w = Table(title="work of the replica (all GPUs)")
    w.add_column("term")
    w.add_column("value", justify="right")
    w.add_column("what")
    w.add_row("prefill_tflop", f"{result['prefill_tflop']:,.4g}", f"one {result['input_tokens']:,}-token prompt, TFLOP")
    w.add_row(
        "decode_gflop_per_step", f"{result['decode_gflop_per_step']:,.4g}",
        f"first decode step of batch {result['batch']} (history = prompt), GFLOP",
    )
    w.add_row(
        "decode_read_gb_per_step", f"{result['decode_read_bytes_per_step'] / 1e9:,.4g}",
        "weights + KV read by that step, GB (decode_read_bytes_per_step / 1e9)",
    )
    show(w)


TTFT_PARTS = ("queue_wait_ms", "prefill_chunks_ms", "scheduler_wait_ms", "network_ms", "handoff_ms")
"""The terms of a mean TTFT under load (planner.performance.load: wait + k chunk steps + the step in flight +
network, + the KV handoff of a prefill pool)."""


def ttft_column(values: dict[str, Any], ttft_percentile: int | None) -> dict[str, str]:
    """How each term of the scheduler's figures enters ``ttft_ms``: "+" for its parts and "= sum of the + rows"
    for the mean; at a percentile the parts are still means, so the tail is named instead."""
    if values.get("ttft_ms") is None:
        return {}
    if ttft_percentile is not None:
        return {"ttft_ms": f"p{ttft_percentile}: the + rows are means (their sum is the mean TTFT)",
                **{k: "+" for k in TTFT_PARTS if k in values}}
    return {"ttft_ms": "= sum of the + rows", **{k: "+" for k in TTFT_PARTS if k in values}}


def _print_at_load(title: str, values: dict[str, Any], ttft_percentile: int | None) -> None:
    how = ttft_column(values, ttft_percentile)
    table = Table(title=text(title), min_width=len(title) + 2)  # the title on one line: where, network, tails
    table.add_column("term")
    table.add_column("value", justify="right")
    table.add_column("enters ttft_ms")
    for key, value in values.items():
        shown = "—" if value is None else f"{value:,.4g}" if isinstance(value, float) else str(value)
        table.add_row(key, shown, how.get(key, ""))
    show(table)


def _print_terms(title: str, values: dict[str, Any]) -> None:
    table = Table(title=text(title))
    table.add_column("term")
    table.add_column("value", justify="right")
    for key, value in values.items():
        shown = "—" if value is None else f"{value:,.4g}" if isinstance(value, float) else str(value)
        table.add_row(key, shown)  # None: a pool's other half (a prefill pool has no TPOT)
    show(table)
