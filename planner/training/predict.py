"""``planner predict-train``: the card-4 ledgers of one given layout (no search)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.catalog.loader import Catalog
from planner.catalog.schema import Model
from planner.errors import InputError, did_you_mean
from planner.training.layout import Layout, RunSettings, evaluate_layout, layout_problem, virtual_stages
from planner.training.scenario import (
    DEFAULT_CHECKPOINT_WRITE_GB_PER_S,
    DEFAULT_GPU_MTBF_HOURS,
    Architecture,
    Precision,
    Recompute,
    Schedule,
    architecture_model,
)
from planner.training.search import divisors
from planner.training.terms import GpuTerms, ModelTerms, gpu_terms, model_terms


@dataclass(frozen=True)
class PredictTrainRequest:
    """One layout to evaluate; ``model`` is a catalog id or an inline architecture."""

    model: str | Architecture
    gpu: str
    gpus: int
    tp: int
    pp: int
    dp: int | None
    zero_stage: int
    micro_batch: int
    global_batch_seqs: int
    seq_len: int
    recompute: Recompute
    sequence_parallel: bool
    schedule: Schedule
    precision: Precision
    training_tokens: float


def _model(catalog: Catalog, model: str | Architecture) -> Model:
    if isinstance(model, Architecture):
        return architecture_model(model)
    if model not in catalog.models:
        raise InputError(f"--model: unknown model '{model}'{did_you_mean(model, catalog.models)}")
    return catalog.model(model)


def _listed(values: list[int], most: int = 8) -> str:
    """'1, 2, 4, 8' (the first ``most`` and '…' after them)."""
    return ", ".join(map(str, values[:most])) + (", …" if len(values) > most else "")


def degree_problem(req: PredictTrainRequest, model: ModelTerms, gpu: GpuTerms) -> str | None:
    """Why ``--tp`` / ``--pp`` can run no layout of the model at all, with the degrees that can (None when both
    can). Checked before ``--gpus``, whose fix would otherwise keep a degree no layout runs.

    Notes
    -----
    TP must divide the attention heads and stay in one scale-up domain (a node, or an NVL72-class domain);
    PP·v must divide the layers, v = 2 model chunks per stage for the interleaved schedule (PP > 1), else 1
    (:func:`planner.training.layout.layout_problem` checks the same of a whole layout).
    """
    local = gpu.scale_up_gpus
    tps = [d for d in divisors(model.heads) if d <= local]
    name = "the inline architecture" if isinstance(req.model, Architecture) else model.model_id
    if req.tp not in tps:
        why = (
            f"does not divide the {model.heads} attention heads of {name}"
            if model.heads % req.tp
            else f"spans more than the {local} GPUs of one {gpu.gpu_id} scale-up domain"
        )
        return f"--tp {req.tp}: {why} — use one of {_listed(tps)}"

    chunks = virtual_stages(req.schedule, req.pp)
    if model.layers % (req.pp * chunks):
        pps = [d for d in divisors(model.layers) if model.layers % (d * virtual_stages(req.schedule, d)) == 0]
        split = (
            f"{req.pp} stages × {chunks} chunks each (--schedule interleaved) do not divide"
            if chunks > 1
            else "does not divide"
        )
        return f"--pp {req.pp}: {split} the {model.layers} layers of {name} — use one of {_listed(pps)}"
    return None


def predict_train(catalog: Catalog, req: PredictTrainRequest) -> dict[str, Any]:
    """Memory, iteration time, MFU, tokens/s and the time breakdown of ``req`` (InputError when impossible)."""
    if req.gpu not in catalog.accelerators:
        raise InputError(f"--gpu: unknown gpu '{req.gpu}'{did_you_mean(req.gpu, catalog.accelerators)}")
    model = model_terms(_model(catalog, req.model), seq_len=req.seq_len)
    gpu = gpu_terms(catalog, req.gpu, precision=req.precision)
    degrees = degree_problem(req, model, gpu)
    if degrees is not None:
        raise InputError(degrees)
    group = req.tp * req.pp
    if req.dp is None and req.gpus % group:  # the default DP = N/(TP·PP) is no whole number
        raise InputError(
            f"--gpus {req.gpus}: not a multiple of tp × pp = {req.tp} × {req.pp} = {group} (DP defaults to "
            f"--gpus / (tp × pp)) — give --gpus a multiple of {group}, e.g. {group * max(1, req.gpus // group)}, "
            "or other --tp/--pp"
        )
    dp = req.dp if req.dp is not None else req.gpus // group
    if dp < 1 or req.tp * req.pp * dp != req.gpus:
        fix = f"--gpus {req.tp * req.pp * dp}" if dp >= 1 else "--dp 1 or more"
        whole = f" or --dp {req.gpus // group}" if dp >= 1 and req.gpus % group == 0 else ""
        raise InputError(
            f"--gpus {req.gpus}: must equal tp × pp × dp = {req.tp} × {req.pp} × {dp} — give {fix}{whole}"
        )
    if req.zero_stage not in (0, 1, 2, 3):
        raise InputError(f"--zero-stage {req.zero_stage}: valid values are 0, 1, 2, 3")
    layout = Layout(
        req.gpu,
        req.tp,
        req.pp,
        dp,
        req.zero_stage,
        req.recompute,
        req.sequence_parallel,
        req.micro_batch,
        req.schedule,
    )
    problem = layout_problem(layout, model, gpu, req.global_batch_seqs)
    if problem is not None:
        split = dp * req.micro_batch  # the batch must split into DP × micro-batch: the nearest that does
        batch = (
            f" (e.g. --global-batch {max(split, round(req.global_batch_seqs / split) * split)})"
            if "sequences do not split" in problem
            else ""
        )
        raise InputError(
            f"layout: {problem} — choose other --tp/--pp/--dp/--micro-batch/--global-batch values{batch}"
        )
    run = RunSettings(
        training_tokens=req.training_tokens,
        global_batch_seqs=req.global_batch_seqs,
        checkpoint_write_gb_per_s=DEFAULT_CHECKPOINT_WRITE_GB_PER_S,
        gpu_mtbf_hours=DEFAULT_GPU_MTBF_HOURS,
        restart_s=600.0,
        setup_days=0.0,
        workspace_gib=2.0,
    )
    ev = evaluate_layout(layout, model, gpu, run)
    return {
        "model": model.model_id,
        "n_params": model.n_params,
        "gpu": req.gpu,
        "gpus": layout.gpus,
        "tp": layout.tp,
        "pp": layout.pp,
        "dp": layout.dp,
        "zero_stage": layout.zero_stage,
        "recompute": layout.recompute,
        "sequence_parallel": layout.sequence_parallel,
        "schedule": layout.schedule,
        "micro_batch": layout.micro_batch,
        "microbatches_per_step": ev.microbatches,
        "train_flop_per_token": model.train_flop_per_token,
        "iteration_time_s": ev.iteration_time_s,
        "memory_per_gpu_gib": ev.memory_per_gpu_gib,
        "memory_states_gib_per_gpu": ev.memory_states_gib_per_gpu,
        "memory_activations_gib_per_gpu": ev.memory_activations_gib_per_gpu,
        "memory_capacity_gib": ev.memory_capacity_gib,
        "fits": ev.fits,
        "mfu": ev.mfu,
        "tokens_per_s": ev.tokens_per_s,
        "days": ev.days,
        "breakdown": ev.breakdown_json(),
    }
