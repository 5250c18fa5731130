"""``planner predict``: the inference ledger of one configuration (cards 1, 2, 5, 8).

A configuration that cannot run — the weights + KV cache do not fit the GPU memory, or the tensor-parallel
degree does not split the attention heads — exits 3 with the reason; ``--force`` still shows its numbers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import (
    JsonFlag,
    JsonOut,
    check_output_path,
    emit,
    err,
    fail,
    finite_float,
    run_guarded,
    show,
    text,
)
from planner.context_window import context_window_problem
from planner.errors import InfeasiblePlan, InputError
from planner.head_split import head_split_problems, valid_tps
from planner.limits import (
    DEFAULT_DRAFT_TOKENS,
    DEFAULT_MAX_BATCH,
    DEFAULT_WORKSPACE_GIB,
    MAX_BATCH,
    MAX_DRAFT_TOKENS,
    MAX_REQUESTS_PER_S,
)

if TYPE_CHECKING:
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
    result: dict[str, Any], catalog: Any, model: str, tp: int, batch: int, *, input_tokens: int, output_tokens: int
) -> list[str]:
    """The reasons a predicted configuration cannot run (empty when it can)."""
    record = catalog.models[model]
    mla = getattr(record, "mla", None) is not None
    problems = head_split_problems(record.q_heads, record.kv_heads, tp, mla, label="--tp ")
    if problems:
        problems[-1] += f" (valid TP degrees: {valid_tps(record.q_heads, record.kv_heads, mla)})"
    window = context_window_problem(record, input_tokens=input_tokens, output_tokens=output_tokens)
    if window:
        problems.append(f"{window} (shorten --input-tokens / --output-tokens)")
    if not result["fits"]:
        problems.append(
            f"batch {batch} needs {result['memory_per_gpu_gb']:.1f} GB per GPU (with the "
            f"{result['engine_reserve_gb']:.1f} GB the {result['engine']} engine holds back), more than the "
            f"GPU's {result['gpu_memory_gb']:.0f} GB (max batch {result['max_batch']}; try more --tp/--pp, a "
            "smaller --quant or --kv-dtype)"
        )
    return problems


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
            help="Running sequences per replica under --requests-per-s at most (besides memory and the engine's "
            "limit), as a scenario's max_batch.",
        ),
    ] = DEFAULT_MAX_BATCH,
    prefix_hit_frac: Annotated[
        float | None,
        _fraction(
            "--prefix-hit-frac",
            "Prefix cache on under --requests-per-s: share of requests that find the shared prefix cached, 0..1 "
            "(with --prefix-tokens; a scenario's prefix_cache.hit_frac).",
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
        int,
        typer.Option("--draft-tokens", min=1, max=MAX_DRAFT_TOKENS, help="Tokens drafted per round."),
    ] = DEFAULT_DRAFT_TOKENS,
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
    result = run_guarded(lambda: run_predict(catalog, request)).to_json()
    problems = run_problems(
        result, catalog, model, tp, batch, input_tokens=input_tokens, output_tokens=output_tokens
    )
    if problems and not force:
        fail(InfeasiblePlan("; ".join(problems) + " — --force shows the numbers"))
    for problem in problems:
        err.print(f"[bold yellow]warning:[/] {text(problem)}", soft_wrap=True)
    if result["at_load"] is not None and not result["at_load"]["stable"]:  # on stderr with --json too
        err.print(
            f"[bold yellow]warning:[/] {requests_per_s:g} requests/s overloads this replica: it sustains about "
            f"{result['at_load']['saturation_requests_per_s']:.3g} requests/s with no latency SLO; its queue grows "
            "without bound, so the figures of a steady state (latencies, step, batch, waits) are left out and "
            "output_tokens_per_s is what it emits at saturation",
            soft_wrap=True,
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
        t.add_row(key, f"{value:,.4g}" if isinstance(value, float) else str(value))
    show(t)
    if result["at_load"] is not None:
        tails = [f"{name} p{p}" for name, p in (("TTFT", ttft_percentile), ("TPOT", tpot_percentile)) if p is not None]
        network = ", ".join(x for x in (
            None if rtt_ms is None else f"RTT {rtt_ms:g} ms",
            None if uplink_mbit_per_s is None else f"uplink {uplink_mbit_per_s:g} Mbit/s",
        ) if x)
        where = ", ".join(x for x in (site, network, None if role == "colocated" else f"{role} pool") if x)
        at = f"engine scheduler at {requests_per_s:g} requests/s per replica{f' ({where})' if where else ''}"
        _print_terms(at + (f", {' and '.join(tails)}" if tails else ""), result["at_load"])
    if explain:
        _print_breakdown(result)


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


def _speculative(draft_model: str | None, acceptance_frac: float | None, draft_tokens: int) -> Speculative | None:
    """Speculative decoding of --draft-model, --acceptance-frac and --draft-tokens."""
    from planner.scenario_optimizations import Speculative  # pydantic: not on the CLI's import path

    if draft_model is None and acceptance_frac is None:
        return None
    if draft_model is None or acceptance_frac is None:
        given, missing = ("--draft-model", "--acceptance-frac") if acceptance_frac is None else (
            "--acceptance-frac", "--draft-model"
        )
        raise InputError(f"{given}: speculative decoding needs {missing} too")
    return Speculative(draft_model=draft_model, acceptance_frac=acceptance_frac, draft_tokens=draft_tokens)


def _print_breakdown(result: dict[str, Any]) -> None:
    for phase in ("decode", "prefill"):
        b = Table(title=f"{phase} step breakdown (efficiency applied)")
        b.add_column("term")
        b.add_column("ms", justify="right")
        for key, value in result["breakdown"][phase].items():
            b.add_row(key, f"{value:.4f}")
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


def _print_terms(title: str, values: dict[str, Any]) -> None:
    table = Table(title=text(title))
    table.add_column("term")
    table.add_column("value", justify="right")
    for key, value in values.items():
        shown = "—" if value is None else f"{value:,.4g}" if isinstance(value, float) else str(value)
        table.add_row(key, shown)  # None: a pool's other half (a prefill pool has no TPOT)
    show(table)
