"""Card 2 — from model architecture to resources: parameters, weight bytes, KV/latent state, FLOPs, bytes per step.

Every count is derived from the catalog's architecture fields (never from the published total, which is
only a cross-check). Conventions: SwiGLU FFN = 3 matrices (3·d·f parameters, 6·d·f FLOP per token);
RMSNorm = d weights; one multiply-add = 2 FLOP; the input embedding table is gathered, not streamed,
so it is not part of the bytes read per decode step (the LM head is).

References: card 2 (book ch02 §2.1–2.6, ch06 §6.1–6.3, ch09 MLA ledger); card 1 (ch01 §1.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.catalog.schema import Model, NumericFormat, TensorKind


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameter counts of a model by tensor kind (the classes a quantization format can exempt)."""

    embedding: int
    lm_head: int
    norm: int
    attention: int
    ffn: int
    """Dense FFN layers and shared experts."""
    router: int
    expert: int
    """All routed experts of all MoE layers."""

    def by_kind(self) -> dict[TensorKind, int]:
        """Counts keyed by the schema's TensorKind names."""
        return {
            "embedding": self.embedding,
            "lm_head": self.lm_head,
            "norm": self.norm,
            "attention": self.attention,
            "ffn": self.ffn,
            "router": self.router,
            "expert": self.expert,
        }

    @property
    def total(self) -> int:
        """Total parameters."""
        return sum(self.by_kind().values())


# --------------------------------------------------------------------------------------------------
# Parameter counts
# --------------------------------------------------------------------------------------------------


def attention_params_per_layer(model: Model) -> int:
    """Attention projection parameters of one layer (plus q/k norms and biases).

    Notes
    -----
    Standard (MHA/GQA/MQA): d·n_Q·d_h (Q) + 2·d·n_KV·d_h (K, V) + n_Q·d_h·d (O); QKV bias adds
    n_Q·d_h + 2·n_KV·d_h; O bias adds d; QK-norm adds 2·d_h.
    MLA (DeepSeek-V3): Q = d·r_q + r_q (norm) + r_q·n_Q·(d_nope + d_rope) (or d·n_Q·(d_nope + d_rope) without
    a q LoRA); KV = d·(r_kv + d_rope) + r_kv (norm) + r_kv·n_Q·(d_nope + d_v); O = n_Q·d_v·d.

    References
    ----------
    Card 2 (book ch02 §2.1 projection table, §2.3.2 MLA).
    """
    d, nq = model.hidden_size, model.q_heads
    if model.mla is not None:
        m = model.mla
        qk_dim = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            q = d * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * nq * qk_dim
        else:
            q = d * nq * qk_dim
        kv = d * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
        kv += m.kv_lora_rank * nq * (m.qk_nope_head_dim + m.v_head_dim)
        o = nq * m.v_head_dim * d
        return q + kv + o
    dh, nkv = model.head_dim, model.kv_heads
    params = d * nq * dh + 2 * d * nkv * dh + nq * dh * d
    if model.qkv_bias:
        params += nq * dh + 2 * nkv * dh
    if model.attention_output_bias:
        params += d
    if model.qk_norm:
        params += 2 * dh
    return params


def swiglu_ffn_params(hidden_size: int, *, ffn_size: int, bias: bool = False) -> int:
    """Parameters of one SwiGLU FFN (gate, up, down): 3·d·f (+ 2·f + d biases).

    References
    ----------
    Card 2 (book ch02 §2.1: "SwiGLU FFN (3 matrices): 3·d·f parameters, 6·d·f FLOPs per token").
    """
    params = 3 * hidden_size * ffn_size
    if bias:
        params += 2 * ffn_size + hidden_size
    return params


def expert_params(model: Model) -> int:
    """Parameters of one routed expert (0 for dense models).

    References
    ----------
    Card 2 (book ch02 §2.5: expert = 3·d·f_e, e.g. Qwen3-235B 3 × 4,096 × 1,536 = 36 MiB in BF16).
    """
    if model.moe is None:
        return 0
    return swiglu_ffn_params(
        model.hidden_size, ffn_size=model.moe.expert_ffn_size, bias=model.moe.expert_bias
    )


def shared_expert_params(model: Model) -> int:
    """Parameters of all shared experts of one MoE layer."""
    if model.moe is None or model.moe.experts_shared == 0:
        return 0
    width = model.moe.shared_expert_ffn_size or model.moe.expert_ffn_size
    return model.moe.experts_shared * swiglu_ffn_params(model.hidden_size, ffn_size=width)


def dense_layers(model: Model) -> int:
    """Layers with a dense FFN (all layers for dense models)."""
    return model.layers - (model.moe.moe_layers if model.moe is not None else 0)


def param_breakdown(model: Model) -> ParamBreakdown:
    """Parameter counts by tensor kind.

    Notes
    -----
    embedding = V·d; lm_head = V·d unless tied; norms = L·2·d + d (final); attention = L·attention_params;
    ffn = L_dense·3·d·f + L_moe·shared experts; router = L_moe·(d·E [+ E bias]); expert = L_moe·E·3·d·f_e.
    Qwen3-8B: 8,190,735,360 parameters (the plain count plus 36 × 256 QK-norm weights).

    References
    ----------
    Card 2 (book ch02 §2.1, models.md §2 Qwen3-8B figures).
    """
    d, vocab = model.hidden_size, model.vocab_size
    embedding = vocab * d
    lm_head = 0 if model.tied_embeddings else vocab * d
    norm = model.layers * 2 * d + d
    attention = model.layers * attention_params_per_layer(model)
    ffn = dense_layers(model) * swiglu_ffn_params(d, ffn_size=model.ffn_size) if dense_layers(model) else 0
    router = expert = 0
    if model.moe is not None:
        moe = model.moe
        ffn += moe.moe_layers * shared_expert_params(model)
        router = moe.moe_layers * (d * moe.experts_routed + (moe.experts_routed if moe.expert_bias else 0))
        expert = moe.moe_layers * moe.experts_routed * expert_params(model)
    return ParamBreakdown(embedding, lm_head, norm, attention, ffn, router, expert)


def params_total(model: Model) -> int:
    """Total stored parameters (card 2)."""
    return param_breakdown(model).total


def params_active_per_token(model: Model) -> int:
    """Parameters a single token's forward pass touches (routed experts: only the top-k), embedding included.

    References
    ----------
    Card 2 (book ch02 §2.5: per-token compute 2·k·N_e for the experts).
    """
    pb = param_breakdown(model)
    active_experts = 0
    if model.moe is not None:
        active_experts = model.moe.moe_layers * model.moe.experts_per_token * expert_params(model)
    return pb.total - pb.expert + active_experts


# --------------------------------------------------------------------------------------------------
# Bytes
# --------------------------------------------------------------------------------------------------


def bytes_per_param_by_kind(
    fmt: NumericFormat, *, high_precision_bytes_per_value: float
) -> dict[TensorKind, float]:
    """Bytes per parameter of each tensor kind under ``fmt`` (exempt kinds stay in high precision)."""
    kinds: tuple[TensorKind, ...] = ("embedding", "lm_head", "norm", "router", "attention", "ffn", "expert")
    return {
        k: high_precision_bytes_per_value if k in fmt.high_precision_tensors else fmt.bytes_per_value
        for k in kinds
    }


def weights_bytes(model: Model, fmt: NumericFormat, *, high_precision_bytes_per_value: float = 2.0) -> float:
    """Stored weight bytes of the whole model in ``fmt``, B.

    Notes
    -----
    M_W = Σ_kind N_kind · b_kind, with b = bits/8 + scale_bytes/group for quantized kinds and
    ``high_precision_bytes_per_value`` for the kinds the format keeps in high precision. Book: a 70B model in
    8-bit grouped weights (1 scale per 128, embeddings/head/norms in BF16) takes 73.73 GB.

    References
    ----------
    Card 2 checklist item 1; card 5 quantised storage V_W = n·b/8 + (n/g)·s; book ch02 §2.6.
    """
    per_kind = bytes_per_param_by_kind(fmt, high_precision_bytes_per_value=high_precision_bytes_per_value)
    return float(sum(n * per_kind[k] for k, n in param_breakdown(model).by_kind().items()))


def expected_experts_touched(tokens: Any, *, experts: Any, experts_per_token: Any) -> Any:
    """Expected distinct experts a batch of ``tokens`` touches under uniform routing.

    Notes
    -----
    U = E·[1 − (1 − k/E)^m] (m tokens, top-k of E experts). Works on numpy arrays of ``tokens``.

    References
    ----------
    Card 2 (book ch02 Example 2-4: B = 64, k = 8 of 256 → U ≈ 256 when uniform).
    """
    return experts * (1.0 - (1.0 - experts_per_token / experts) ** tokens)


def weights_read_bytes_per_step(
    model: Model, fmt: NumericFormat, *, batch: float = 1.0, high_precision_bytes_per_value: float = 2.0
) -> float:
    """Weight bytes streamed from memory by one decode step of ``batch`` sequences, B.

    Notes
    -----
    R_W = M_W − embedding bytes (the table is gathered by row, not streamed), and for MoE models the routed
    experts contribute only the batch's expected union U(batch) per MoE layer instead of all E experts:
    R_W = M_W − M_emb − L_moe·(E − U)·b·N_e. Tied embeddings are read once, as the LM head.
    Qwen3-8B BF16: 15,136,811,008 B. Works on numpy arrays of ``batch``.

    References
    ----------
    Card 1 (weights read once per step whatever B is), card 2 checklist item 4 (MoE: the expert union, not
    the active parameters); book ch02 Example 2-4, ch04 §4.7.
    """
    per_kind = bytes_per_param_by_kind(fmt, high_precision_bytes_per_value=high_precision_bytes_per_value)
    pb = param_breakdown(model)
    total = weights_bytes(model, fmt, high_precision_bytes_per_value=high_precision_bytes_per_value)
    streamed = total - (pb.embedding * per_kind["embedding"] if not model.tied_embeddings else 0.0)
    if model.moe is None:
        return streamed
    moe = model.moe
    touched = expected_experts_touched(
        batch, experts=moe.experts_routed, experts_per_token=moe.experts_per_token
    )
    expert_bytes = expert_params(model) * per_kind["expert"]
    return streamed - moe.moe_layers * (moe.experts_routed - touched) * expert_bytes  # type: ignore[no-any-return]


def kv_bytes_per_token_per_layer(model: Model, *, kv_bytes_per_value: float = 2.0) -> float:
    """KV (or MLA latent) bytes one token adds to one attention layer, B.

    Notes
    -----
    Standard: 2·n_KV·d_h·b_KV (K and V). MLA: (d_c + d_rope)·b (the latent and the shared rope key).

    References
    ----------
    Card 2 KV ledger (book ch02 §2.2–2.3, ch09 MLA).
    """
    if model.mla is not None:
        return (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * kv_bytes_per_value
    return 2.0 * model.kv_heads * model.head_dim * kv_bytes_per_value


def kv_bytes_per_token(model: Model, *, kv_bytes_per_value: float = 2.0) -> float:
    """KV bytes per token with every layer holding the token (the upper bound for sliding-window models), B.

    Notes
    -----
    c_KV = 2·L·n_KV·d_h·b_KV (MHA: n_KV = n_Q; GQA: n_Q/g; MQA: 1); MLA: L·(d_c + d_r)·b.
    Qwen3-8B BF16: 2·36·8·128·2 = 147,456 B; DeepSeek-V3: 61·(512 + 64)·2 = 70,272 B.

    References
    ----------
    Card 2 KV ledger (book ch02 §2.2–2.3 table; ch09 §9.2).
    """
    return model.layers * kv_bytes_per_token_per_layer(model, kv_bytes_per_value=kv_bytes_per_value)


def kv_cache_bytes(model: Model, *, context_tokens: float, kv_bytes_per_value: float = 2.0) -> float:
    """KV bytes one sequence of ``context_tokens`` holds, B (sliding-window layers keep only the window).

    Notes
    -----
    M_state = c_layer·[(L − L_sw)·H + L_sw·min(H, W)], c_layer = KV bytes per token per layer, W = window.
    Works on numpy arrays of ``context_tokens``.

    References
    ----------
    Card 1 (M_state = c_KV × tokens held), card 2 (hybrid / windowed state).
    """
    per_layer = kv_bytes_per_token_per_layer(model, kv_bytes_per_value=kv_bytes_per_value)
    full_layers = model.layers - model.sliding_window_layers
    held = full_layers * context_tokens
    if model.sliding_window_layers:
        window = float(model.sliding_window_tokens or 0)
        held = held + model.sliding_window_layers * (
            (context_tokens + window - abs(context_tokens - window)) / 2
        )
    return per_layer * held


# --------------------------------------------------------------------------------------------------
# FLOPs
# --------------------------------------------------------------------------------------------------


def linear_flop_per_token(model: Model) -> float:
    """Matrix FLOPs per token through all layers, excluding the LM head, FLOP.

    Notes
    -----
    2 × (attention + dense FFN + shared experts + router + top-k routed experts) parameters per token.
    Qwen3-8B: 36 × 385,875,968 = 13.89 GFLOP.

    References
    ----------
    Card 2 (projection X[m,k]·W[k,n] costs 2·m·k·n FLOP; MoE per-token compute 2·k·N_e).
    """
    pb = param_breakdown(model)
    active = pb.attention + pb.ffn + pb.router
    if model.moe is not None:
        active += model.moe.moe_layers * model.moe.experts_per_token * expert_params(model)
    return 2.0 * active


def lm_head_flop_per_token(model: Model) -> float:
    """LM-head FLOPs per output row: 2·d·V (Qwen3-8B: 1.245 GFLOP)."""
    return 2.0 * model.hidden_size * model.vocab_size


def attention_flop_per_pair_per_layer(model: Model) -> float:
    """Attention FLOPs per (query, key) pair per layer: scores + weighted values.

    Notes
    -----
    Standard: 4·n_Q·d_h (2·n_Q·d_h for QKᵀ, 2·n_Q·d_h for PV). MLA (absorbed): 2·n_Q·(d_c + d_rope)
    + 2·n_Q·d_c, since scores and values run against the latent.

    References
    ----------
    Card 2 (F_attn = 4·n_Q·d_h·N_pair per layer).
    """
    if model.mla is not None:
        m = model.mla
        return (
            2.0 * model.q_heads * (m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * model.q_heads * m.kv_lora_rank
        )
    return 4.0 * model.q_heads * model.head_dim


def attention_pairs(prompt_tokens: float, *, cached_tokens: float = 0.0, batch: float = 1.0) -> float:
    """Causal (query, key) pairs of a call: N_pair = B·(P·S + P(P + 1)/2) (card 2)."""
    return batch * (prompt_tokens * cached_tokens + prompt_tokens * (prompt_tokens + 1.0) / 2.0)


def _windowed_pairs_per_layer_sum(model: Model, full_pairs: float, windowed_pairs: float) -> float:
    full_layers = model.layers - model.sliding_window_layers
    return full_layers * full_pairs + model.sliding_window_layers * windowed_pairs


def prefill_flop(
    model: Model, *, prompt_tokens: float, cached_tokens: float = 0.0, batch: float = 1.0
) -> float:
    """Matrix FLOPs of a prefill call of ``prompt_tokens`` new tokens after ``cached_tokens``, FLOP.

    Notes
    -----
    F = B·P·F_lin + f_pair·Σ_layers N_pair + B·2·d·V (LM head on the last position only).
    Sliding-window layers count at most W keys per query (an upper bound of min(pairs, P·W)).
    Qwen3-8B, P = 8,192: 133.6 TFLOP; P = 2,048: 29.69 TFLOP.

    References
    ----------
    Card 1 (prefill F ≈ 2·N·P plus attention), card 2 (C2.11).
    """
    pairs = attention_pairs(prompt_tokens, cached_tokens=cached_tokens, batch=batch)
    window = float(model.sliding_window_tokens or 0)
    windowed = batch * prompt_tokens * window if model.sliding_window_layers else 0.0
    windowed = (pairs + windowed - abs(pairs - windowed)) / 2 if model.sliding_window_layers else 0.0
    attn = attention_flop_per_pair_per_layer(model) * _windowed_pairs_per_layer_sum(model, pairs, windowed)
    return batch * prompt_tokens * linear_flop_per_token(model) + attn + batch * lm_head_flop_per_token(model)


def decode_flop_per_step(model: Model, *, batch: float = 1.0, context_tokens: float = 0.0) -> float:
    """Matrix FLOPs of one decode step of ``batch`` sequences each attending ``context_tokens`` keys, FLOP.

    Notes
    -----
    F = B·(F_lin + f_pair·Σ_layers min(H, W) + 2·d·V). Qwen3-8B at 8,192 history: 13.89 + 4.832 + 1.245 =
    19.97 GFLOP; at 2,048: 16.34 GFLOP. Works on numpy arrays.

    References
    ----------
    Card 1 (decode F ≈ 2·N·B), card 2 (C2.11).
    """
    window = float(model.sliding_window_tokens or 0)
    windowed = (
        (context_tokens + window - abs(context_tokens - window)) / 2 if model.sliding_window_layers else 0.0
    )
    attn = attention_flop_per_pair_per_layer(model) * _windowed_pairs_per_layer_sum(
        model, context_tokens, windowed
    )
    return batch * (linear_flop_per_token(model) + attn + lm_head_flop_per_token(model))


def decode_read_bytes_per_step(
    model: Model,
    fmt: NumericFormat,
    *,
    batch: float,
    context_tokens: float,
    kv_bytes_per_value: float,
    high_precision_bytes_per_value: float = 2.0,
) -> float:
    """Bytes one decode step reads: weights once plus every sequence's KV history, B.

    Notes
    -----
    R = R_W(B) + B·c_KV·H (card 1); Qwen3-8B BF16 at 2K context, B = 1: 15.14 + 0.302 = 15.44 GB.

    References
    ----------
    Card 1, card 3 (D(b, L) = D_w + b·L·k).
    """
    weights = weights_read_bytes_per_step(
        model, fmt, batch=batch, high_precision_bytes_per_value=high_precision_bytes_per_value
    )
    return weights + batch * kv_cache_bytes(
        model, context_tokens=context_tokens, kv_bytes_per_value=kv_bytes_per_value
    )


def pipeline_stage_layers(layers: int, pp: int) -> list[int]:
    """Decoder layers per pipeline stage, first to last: ⌊L/p⌋ each, the remainder one more each on the stages
    before the last, from the second-to-last backwards (vLLM ``get_pp_indices``; the last stage also holds
    the LM head). Llama-3.1-70B (80 layers) at PP3: [27, 27, 26]."""
    stages = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        stages[-i] += 1
    return stages


def busiest_pipeline_stage(
    model: Model, fmt: NumericFormat, pp: int, *, high_precision_bytes_per_value: float = 2.0
) -> tuple[float, float]:
    """(share of the weights on the stage that holds the most, share of the layers on the stage with the most),
    1 and 1 without pipeline stages.

    Stage s holds its layers' weights, the first also the embedding, the last the LM head — with tied
    embeddings a copy of the embedding, as the first stage's is on another GPU:

        W_s = n_s·(M_W − E − H_untied)/L + E·[s = 0] + H·[s = p − 1]

    E = V·d at the embedding's bytes per value, H the LM head (= E when tied), n_s from
    :func:`pipeline_stage_layers`. An even split M_W/p under-counts the busiest stage: Llama-3.1-70B BF16
    at PP3 holds 27 × 1.711 + 2.10 = 48.3 GB on its first stage, not 141.1/3 = 47.0 GB."""
    if pp <= 1:
        return 1.0, 1.0
    per_kind = bytes_per_param_by_kind(fmt, high_precision_bytes_per_value=high_precision_bytes_per_value)
    pb = param_breakdown(model)
    total = weights_bytes(model, fmt, high_precision_bytes_per_value=high_precision_bytes_per_value)
    embedding = pb.embedding * per_kind["embedding"]
    head_untied = pb.lm_head * per_kind["lm_head"]
    head = embedding if model.tied_embeddings else head_untied
    per_layer = (total - embedding - head_untied) / model.layers
    stages = pipeline_stage_layers(model.layers, pp)
    held = [n * per_layer + (embedding if s == 0 else 0.0) + (head if s == pp - 1 else 0.0) for s, n in enumerate(stages)]
    return max(held) / total, max(stages) / model.layers
