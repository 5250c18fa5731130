"""Per-GPU training memory: model states under ZeRO (card 4) and activations (Korthikanti et al. 2022).

Activation bytes per transformer layer for one micro-batch (16-bit activations, 1-byte dropout masks,
s = sequence length, b = micro-batch, h = hidden size, a = heads, t = tensor-parallel degree), from
Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022), §4:

- no parallelism:                       s·b·h·(34 + 5·a·s/h)
- tensor parallel:                      s·b·h·(10 + 24/t + 5·a·s/(h·t))
- tensor + sequence parallel:           s·b·h/t·(34 + 5·a·s/h)
- selective recomputation, TP:          s·b·h·(10 + 24/t)
- selective recomputation, TP + SP:     s·b·h·34/t
- full recomputation:                   2·s·b·h (layer input only; /t with sequence parallelism)

The formulas assume the paper's block (MHA, 4h MLP); they are used as published.
"""

from __future__ import annotations

from planner.ledgers.training import zero_state_bytes_per_card
from planner.training.scenario import Recompute, Schedule

LOGIT_BYTES_PER_VALUE = 4.0
"""FP32 logits for the softmax cross-entropy on the last pipeline stage."""


def activation_bytes_per_layer(
    seq_len: int,
    *,
    micro_batch: int,
    hidden_size: int,
    heads: int,
    tp: int,
    sequence_parallel: bool,
    recompute: Recompute,
) -> float:
    """Activation bytes one layer keeps for one micro-batch on one GPU (Korthikanti et al. 2022), B.

    Notes
    -----
    See the module docstring for the six cases; sequence parallelism only changes anything when t > 1.
    """
    s, b, h, a, t = float(seq_len), float(micro_batch), float(hidden_size), float(heads), float(tp)
    sbh = s * b * h
    sp = sequence_parallel and tp > 1
    if recompute == "full":
        return 2.0 * sbh / t if sp else 2.0 * sbh
    if recompute == "selective":
        return sbh * 34.0 / t if sp else sbh * (10.0 + 24.0 / t)
    if sp:
        return sbh / t * (34.0 + 5.0 * a * s / h)
    return sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t))


def in_flight_microbatches(schedule: Schedule, *, pp: int, microbatches: int, virtual_stages: int) -> float:
    """Micro-batches whose activations the first stage holds at once (layers counted per stage).

    Notes
    -----
    fill-drain (GPipe) keeps all m; 1F1B keeps min(p, m); interleaved 1F1B keeps p·(1 + (p − 1)/(p·v))
    stage-equivalents (Narayanan et al. 2021; Korthikanti et al. 2022 §4.2.3).
    """
    if pp == 1:
        return 1.0
    if schedule == "fill_drain":
        return float(microbatches)
    if schedule == "interleaved":
        return min(float(pp), float(microbatches)) * (1.0 + (pp - 1.0) / (pp * virtual_stages))
    return float(min(pp, microbatches))


def activation_bytes_per_gpu(
    seq_len: int,
    *,
    micro_batch: int,
    hidden_size: int,
    heads: int,
    layers: int,
    vocab_size: int,
    tp: int,
    pp: int,
    sequence_parallel: bool,
    recompute: Recompute,
    schedule: Schedule,
    microbatches: int,
    virtual_stages: int,
) -> float:
    """Activations of the busiest GPU (first stage, plus the last stage's logits when p = 1), B.

    Notes
    -----
    A = (L/p)·a_layer·k_inflight + [p = 1]·4·s·b·V/t, with a_layer from
    :func:`activation_bytes_per_layer` and k_inflight from :func:`in_flight_microbatches`. With p > 1 the
    first stage (most micro-batches in flight) binds; the last stage's logits are counted there when p = 1.
    """
    per_layer = activation_bytes_per_layer(
        seq_len,
        micro_batch=micro_batch,
        hidden_size=hidden_size,
        heads=heads,
        tp=tp,
        sequence_parallel=sequence_parallel,
        recompute=recompute,
    )
    inflight = in_flight_microbatches(
        schedule, pp=pp, microbatches=microbatches, virtual_stages=virtual_stages
    )
    layers_per_stage = layers / pp
    logits = LOGIT_BYTES_PER_VALUE * seq_len * micro_batch * vocab_size / tp if pp == 1 else 0.0
    return layers_per_stage * per_layer * inflight + logits


def state_bytes_per_gpu(n_params: float, *, tp: int, pp: int, dp: int, zero_stage: int) -> float:
    """Model states per GPU: ZeRO over d ranks of the N/(t·p) parameters of one model shard, B.

    Notes
    -----
    16 B/param split by stage (0: 16N'; 1: 4N' + 12N'/d; 2: 2N' + 14N'/d; 3: 16N'/d), N' = N/(t·p);
    card 4 via :func:`planner.ledgers.training.zero_state_bytes_per_card`.
    """
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage must be 0..3, got {zero_stage}")
    return zero_state_bytes_per_card(n_params / (tp * pp), stage=zero_stage, dp_ranks=dp)  # type: ignore[arg-type]
