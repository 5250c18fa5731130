"""Mixture-of-experts terms: expert parallelism (EP), expert GEMM efficiency, load imbalance, all-to-all.

Layout (a replica stage of w = t·e GPUs, t = attention TP, e = EP, called ``ep``):

- e = 1 — today's layout: attention and experts are tensor-parallel over the t GPUs (each GPU holds 1/t of
  every expert), two TP all-reduces per layer.
- e > 1 — attention data parallel with DP = EP (SGLang ``--enable-dp-attention``, vLLM ``-dp e
  --enable-expert-parallel``, AIConfigurator "TP1·DP8·EP8"): e attention ranks of t GPUs each hold the
  non-expert weights (1/t each) and their own B/e sequences' KV; the routed experts are split e ways (E/e
  experts per rank, each tensor-parallel over the rank's t GPUs). Per MoE layer every GPU dispatches its
  tokens' hidden states to the ranks holding their experts and gets the results back (two all-to-alls); the
  TP all-reduces run inside each rank's t GPUs only.

- EP inside the TP group (``ep_in_tp``; vLLM ``-tp w --enable-expert-parallel`` without ``-dp``): attention is
  tensor-parallel over all w GPUs (every GPU sees every token), the routed experts are split e ways as whole
  experts (e = w: one group per GPU); each GPU runs its experts' tokens and the MoE output is summed by the TP
  all-reduce the layer has anyway: no all-to-all, no attention DP, but the load imbalance of the e groups.

With DeploymentTerms ``tp`` = w (GPUs per stage, the divisor of every per-GPU figure), ``attention_dp`` = D
(e in the attention-DP layout, 1 inside TP) and ``expert_parallel`` = e:

    non-expert bytes per GPU  = (M_W − M_experts)·D/(w·p)       (replicated per attention rank)
    expert bytes per GPU      = M_experts/(w·p) = (E/e experts)·M_e/((w/e)·p)     (never grows with e)
    expert reads per step     = L_moe·e·U_max(n)·M_e/(w·p),  U(n) = E·(1 − (1 − k/E)^n)   (card 2)
    U_max (busiest group)     = min(u + c_e·sqrt(u·(1 − U/E)), E/e),  u = U/e
    expert GEMM time          = λ·n·F_e/(w·p) / (Π·η_e(m)),  m = n·k/U(n) rows per touched expert
    η_e(m)                    = η_max·m/(m + m_half)      (the prefill saturation curve, card 1/3)
    m_half                    = min(n_half of the family, ridge rows Π·η_max·b/(2·β·η_m))
    λ (load imbalance)        = min(1 + c_e·sqrt((1 − 1/e)/μ), e),  μ = n·k/e routed tokens per group
    all-to-all per MoE layer  = 2·[τ_e + (D − 1)·α + (n/w)·k·d·2 B·(D − 1)/D / (B_link·η_link)]

n = tokens in the step (per stage), k of E experts per token, F_e = 2·3·d·f_e FLOP per token per expert,
Π the dense peak, n_half the family's ``prefill_saturation_tokens``, b bytes per expert parameter, β·η_m the
achieved bandwidth, c_e = E[max of e standard normals] (:func:`max_normal_constant`: 0.564 at e = 2, 1.029 at
4, 1.424 at 8, 1.766 at 16).

Load imbalance [U — assumption: uniform routing]: the busiest of e groups. Tokens: each group's routed load
is binomial with mean μ and variance μ(1 − 1/e); its maximum over e groups ≈ μ + c_e·σ (the expected maximum
of e Gaussians). Weight reads: each of a group's E/e experts is touched with probability U/E, so the busiest
group touches u + c_e·sqrt(u(1 − U/E)) of them, never more than E/e. Checked against a Monte Carlo of top-k
routing (DeepSeek-V3, E = 256, k = 8, e = 8; tests/test_moe_ep.py): tokens at n = 8/64/512 simulate
1.52/1.18/1.06 against λ = 1.47/1.17/1.06; touched experts 10.6/30.4/32 against U_max = 10.5/30.5/32 (the
former bound sqrt(2·ln e) in place of c_e gave 1.67/1.24/1.08 and 12.0/32/32). Real routers are skewed
(DeepSeek-V3 adds redundant experts, EPLB, for that), so λ is a lower bound; it costs nothing without EP
(every GPU holds a slice of every expert). Monotone: larger with e, smaller with more tokens, 1 at e = 1,
never above e (all tokens on one group).

Expert GEMM efficiency: a grouped GEMM runs one small matrix product per touched expert with m rows; it
meets the same tile-filling limit as a short prefill (issue 12 item 3: "MoE expert GEMM efficiency from
tokens per expert (B·k/E) on the same saturation curve"). Rows per *touched* expert (n·k/U ≥ 1), so a
batch-1 step pays for one row per expert it reads, not for E·m_half rows.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff
from planner.ledgers.communication import collective_launch_s, ep_remote_bytes, transfer_at_s, transfer_s
from planner.ledgers.training import expected_max_standard_normal
from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP

Num = Any

ACTIVATION_BYTES = 2.0
"""Dispatch/combine payload per hidden value (BF16), B."""

Routing = tuple[Num, Num, Num]
"""(U experts touched, λ token imbalance, e·U_max busiest group's touched experts × e) of one pass: :func:`routing`."""


def ep_choices(experts_routed: int | None, *, tp: int, widths: list[int] | tuple[int, ...]) -> list[int]:
    """EP degrees a candidate with attention TP ``tp`` may use: 1, and every e > 1 dividing the expert count
    with t·e among the allowed stage widths ``widths`` (the scenario's TP list). Dense models: [1]."""
    if not experts_routed or experts_routed < 2:
        return [1]
    out = [1]
    for e in range(2, experts_routed + 1):
        if experts_routed % e == 0 and tp * e in widths:
            out.append(e)
    return out


def moe_layouts(
    model: Any, tps: list[int] | tuple[int, ...], eps: list[int] | tuple[int, ...] | None = None
) -> list[tuple[int, int]]:
    """(attention TP, EP) pairs of a model: every (t, 1) for t in ``tps``, plus (t, e) from
    :func:`ep_choices` for MoE models (t·e GPUs per stage, a width the scenario allows), e restricted to
    ``eps`` when given (the scenario's ``hardware.ep``; [1] = tensor parallelism only)."""
    experts = model.moe.experts_routed if model.moe is not None else None
    return [
        (t, e) for t in tps for e in ep_choices(experts, tp=t, widths=tps) if eps is None or e == 1 or e in eps
    ]


def layout_name(tp: int, pp: int, ep: int = 1) -> str:
    """'TP4xPP1', or 'TP1xPP1xEP8' with expert parallelism."""
    return f"TP{tp}xPP{pp}" + (f"xEP{ep}" if ep > 1 else "")


def imbalance_factor(ep: Num, routed_tokens: Num) -> Num:
    """Busiest expert group's token load over the mean, λ = min(1 + c_e·sqrt((1 − 1/e)/μ), e), μ =
    ``routed_tokens``/e, c_e = :func:`max_normal_constant` of e.

    ``routed_tokens`` = n·k (token-expert pairs in the step). 1 where e ≤ 1. See the module docstring [U].
    """
    return imbalance_at(imbalance_spread(ep), routed_tokens)


def max_normal_constant(ranks: Num) -> Num:
    """c_e = E[max of e independent standard normals] (ledgers.training.expected_max_standard_normal, card 4;
    0 at e ≤ 1): 0.5642 at 2 (= 1/sqrt(π)), 1.0294 at 4, 1.4236 at 8, 1.7660 at 16; below the bound
    sqrt(2·ln e). Works on arrays of integer e."""
    e = np.asarray(ranks, dtype=float)
    values, where = np.unique(e, return_inverse=True)
    return np.array([_max_normal(int(round(v))) for v in values])[where].reshape(e.shape)


@functools.lru_cache(maxsize=64)
def _max_normal(ranks: int) -> float:
    """:func:`max_normal_constant` of one e, evaluated once per e."""
    return 0.0 if ranks <= 1 else expected_max_standard_normal(ranks)


def imbalance_spread(ep: Num) -> tuple[Num, Num]:
    """(e = max(EP, 1), c_e): the parts of :func:`imbalance_factor` that do not read the tokens."""
    e = np.maximum(np.asarray(ep, dtype=float), 1.0)
    return e, max_normal_constant(e)


def imbalance_at(spread: tuple[Num, Num], routed_tokens: Num) -> Num:
    """:func:`imbalance_factor` from its :func:`imbalance_spread` and the routed tokens n·k."""
    e, c = spread
    mu = np.maximum(np.asarray(routed_tokens, dtype=float) / e, 1e-9)
    lam = 1.0 + c * np.sqrt((1.0 - 1.0 / e) / mu)
    return np.where(e > 1.0, np.minimum(lam, e), 1.0)


def busiest_touched(spread: tuple[Num, Num], union: Num, experts: Num) -> Num:
    """Experts the busiest of e groups touches, U_max = min(u + c_e·sqrt(u·(1 − U/E)), E/e), u = U/e (= U at
    e = 1): each of a group's E/e experts is touched with probability U/E (module docstring)."""
    e, c = spread
    u = union / e
    return np.minimum(u + c * np.sqrt(np.maximum(u * (1.0 - union / experts), 0.0)), experts / e)


def experts_bytes(terms: Any) -> Num:
    """All routed-expert bytes of the replica, L_moe·E·M_e, B."""
    return terms.moe_layers * terms.experts_routed * terms.expert_bytes


def weights_bytes_per_gpu(terms: Any) -> Num:
    """Weight bytes on one GPU: ((M_W − M_experts)·e + M_experts)·f/w, B (= M_W·f/t without EP); f = the busiest
    pipeline stage's share of the weights (``stage_weights_frac``: 1/p at an even split, 1 without stages)."""
    experts = experts_bytes(terms)
    return ((terms.weights_bytes - experts) * terms.attention_dp + experts) * terms.stage_weights_frac / terms.tp


def touched_experts(terms: Any, tokens: Num) -> Num:
    """Expected distinct routed experts ``tokens`` tokens read per MoE layer, U(n) (card 2)."""
    return arch.expected_experts_touched(
        tokens, experts=terms.experts_routed, experts_per_token=terms.experts_per_token
    )


def routing(terms: Any, tokens: Num, spread: tuple[Num, Num] | None = None) -> Routing:
    """(U(n) experts touched per MoE layer, λ load imbalance, e·U_max the busiest group's touched experts times
    e) of a pass over ``tokens`` tokens: the routing figures both :func:`weights_read_bytes` and
    :func:`expert_gemm_s` read, so a step computes them once. ``spread``: :func:`imbalance_spread` of the
    terms' expert groups when the caller has it."""
    spread = imbalance_spread(terms.expert_parallel) if spread is None else spread
    union = touched_experts(terms, tokens)
    lam = imbalance_at(spread, tokens * terms.experts_per_token)
    return union, lam, spread[0] * busiest_touched(spread, union, terms.experts_routed)


def weights_read_bytes(terms: Any, tokens: Num, routed: Routing | None = None) -> Num:
    """Weight bytes one pass over ``tokens`` tokens streams, as a replica total (÷ w·p = per GPU), B.

    Non-expert part replicated per attention rank (× D); experts: L_moe·e·U_max(n)·M_e (the busiest
    group's touched experts times e, so per GPU it is what the slowest GPU reads; L_moe·U(n)·M_e at e = 1).
    ``routed``: :func:`routing` of ``tokens`` when the caller has it.
    """
    routed = routing(terms, tokens) if routed is None else routed
    return terms.weights_read_fixed_bytes * terms.attention_dp + expert_read_bytes(terms, routed)


def expert_read_bytes(terms: Any, routed: Routing) -> Num:
    """The routed-expert part of :func:`weights_read_bytes` (replica total), B."""
    return terms.moe_layers * routed[2] * terms.expert_bytes


def rows_per_expert(terms: Any, tokens: Num, touched: Num | None = None) -> Num:
    """Rows of each touched expert's GEMM, m = n·k/U(n) ≥ 1 (tokens per expert B·k/E at large n);
    ``touched`` = U(n) when the caller has it."""
    union = np.maximum(touched_experts(terms, tokens) if touched is None else touched, 1e-12)
    return np.maximum(tokens * terms.experts_per_token / union, 1.0)


def ridge_rows(terms: Any, eta_max: Num) -> Num:
    """Rows at which one expert GEMM's compute equals its weight stream, Π·η_max·b/(2·β·η_m·η_w), rows.

    b = bytes per expert parameter (M_e / N_e, N_e = F/(2·k·L_moe)); large where the weights are wide or the
    GPU computes fast for its bandwidth (H100 FP8 ≈ 250 rows, an Apple M3 Ultra at 4 bits ≈ 8).
    """
    e = terms.efficiency
    params = terms.expert_flop_per_token / np.maximum(2.0 * terms.experts_per_token * terms.moe_layers, 1e-12)
    bytes_per_param = terms.expert_bytes / np.maximum(params, 1e-12)
    compute = terms.peak_tflops * FLOP_PER_TFLOP * eta_max * bytes_per_param
    stream = 2.0 * terms.bandwidth_gb_per_s * BYTES_PER_GB * eff.expert_stream_efficiency_frac(e)
    return compute / stream


def expert_half_rows(terms: Any, eta_max: Num) -> Num:
    """m_half of the expert GEMMs: min(the family's prefill_saturation_tokens, :func:`ridge_rows`).

    Below the ridge a GEMM is bound by its weight stream, which the step already charges as T_weights; a
    half-saturation beyond it would charge that bound a second time (a 4-bit DeepSeek on an M3 Ultra at
    batch 1 came out 7x slower than measured with the plain prefill m_half).
    """
    return np.minimum(terms.efficiency.prefill_half_tokens, ridge_rows(terms, eta_max))


def expert_gemm_efficiency_frac(
    terms: Any, tokens: Num, eta_max: Num, touched: Num | None = None, half_rows: Num | None = None
) -> Num:
    """η_e(m) = η_max·m/(m + m_half) at m = :func:`rows_per_expert`, m_half = :func:`expert_half_rows`
    (``half_rows`` when the caller has it)."""
    m = rows_per_expert(terms, tokens, touched)
    return eta_max * m / (m + (expert_half_rows(terms, eta_max) if half_rows is None else half_rows))


def expert_flop_per_gpu(terms: Any, tokens: Num) -> Num:
    """Routed-expert FLOPs of ``tokens`` tokens on one GPU on average, n·F_e·k·L_moe/(w·p), FLOP."""
    return tokens * terms.expert_flop_per_token / (terms.tp * terms.pp)


def expert_gemm_s(
    terms: Any, tokens: Num, *, peak_flop_per_s: Num, eta_max: Num, routed: Routing | None = None,
    half_rows: Num | None = None,
) -> Num:
    """Time of the routed-expert GEMMs of a pass over ``tokens`` tokens on the busiest GPU, s.

    λ·n·F/(w·p) / (Π·η_e(m)); ``peak_flop_per_s`` = Π, ``eta_max`` = the step's compute efficiency η_max;
    ``routed``: :func:`routing` of ``tokens``, ``half_rows``: :func:`expert_half_rows` at ``eta_max``, when
    the caller has them.
    """
    union, lam, _busiest = routing(terms, tokens) if routed is None else routed
    eta = expert_gemm_efficiency_frac(terms, tokens, eta_max, union, half_rows)
    return lam * expert_flop_per_gpu(terms, tokens) / (peak_flop_per_s * eta)


def all_to_all_s(terms: Any, tokens: Num) -> Num:
    """Dispatch + combine of every MoE layer of one stage for ``tokens`` tokens, s (0 without attention DP: with
    EP inside the TP group every GPU already has every token, and the TP all-reduce sums the experts' outputs).

    Per layer 2·[τ_e + (e − 1)·α + bytes/(B·η_link)], e = the attention-DP ranks D, bytes = :func:`ledgers.communication.ep_remote_bytes`
    of the n/w tokens one GPU holds (k copies of d values, the (e − 1)/e that leave its rank); one message per
    peer rank, each paying the link's start-up α (card 6 α–β model), over the link that joins the w GPUs.
    """
    return all_to_all_at(all_to_all_parts(terms), tokens)


def all_to_all_parts(terms: Any) -> dict[str, Num]:
    """The parts of :func:`all_to_all_s` that do not read the tokens: e, the remote share (e − 1)/e, one token's
    k·d·2 B, the link's achieved B/s and the e − 1 start-ups in s (ledgers.communication.transfer_s of 0 B: its
    inputs checked here once), the launch τ_e, 2·L_moe/p and the TP degree w."""
    e = np.maximum(np.asarray(terms.attention_dp, dtype=float), 1.0)
    remote = (e - 1.0) / e
    token_bytes = terms.experts_per_token * terms.hidden_size * ACTIVATION_BYTES
    link = terms.ep_link_gb_per_s * terms.efficiency.link_efficiency_frac
    latency_us = terms.ep_link_latency_us * (e - 1.0)
    ep_remote_bytes(0.0, top_k=1, token_bytes=token_bytes, remote_frac=remote)  # the checks of every step's call
    return {
        "e": e,
        "remote": remote,
        "token_bytes": token_bytes,
        "link_bytes_per_s": link * BYTES_PER_GB,
        "start_s": transfer_s(0.0, bandwidth_gb_per_s=link, latency_us=latency_us),
        "launch_s": collective_launch_s(e, launch_us=terms.collective_launch_us),
        "two_layers": 2.0 * (terms.moe_layers / terms.pp),
        "tp": terms.tp,
    }


def all_to_all_at(parts: dict[str, Num], tokens: Num) -> Num:
    """:func:`all_to_all_s` from its :func:`all_to_all_parts` and the step's ``tokens``: per layer
    transfer_s(ep_remote_bytes(n/w tokens)) + τ_e: ledgers.communication.transfer_at_s of ep_remote_bytes's
    product at top_k = 1, their inputs checked once in the parts (the tokens are ≥ 0 here)."""
    per_gpu_tokens = np.maximum(tokens, 0.0) / parts["tp"]
    payload = per_gpu_tokens * parts["token_bytes"] * parts["remote"]  # ep_remote_bytes at top_k = 1
    one = transfer_at_s(payload, startup_s=parts["start_s"], bytes_per_s=parts["link_bytes_per_s"]) + parts["launch_s"]
    return np.where(parts["e"] > 1.0, parts["two_layers"] * one, 0.0)


MOE_LAYER_KERNELS = 4.0
"""Kernels a routed-expert layer launches that a dense FFN does not, none of which streams weights: the router
GEMM (d × E: 184 KB for gpt-oss-20b), top-k of the router's softmax, the sort of the n·k (token, expert) pairs
into per-expert row blocks, and the weighted sum of each token's k expert outputs. vLLM / SGLang ``fused_moe``:
``fused_topk`` (one topk_softmax kernel), ``moe_align_block_size`` and ``moe_sum`` around the two grouped expert
GEMMs, which take the place of the dense gate/up and down GEMMs (so they are not counted here)."""


def routing_kernels_s(terms: Any) -> Num:
    """Fixed time per step of the MoE layers' routing kernels, s:

        T_route = L_moe · n_k · τ_e     (0 for dense models and with ``ideal`` terms)

    n_k = :data:`MOE_LAYER_KERNELS` (4), τ_e = the engine's ``collective_launch_us``: the floor of one small
    kernel launched and completed by that engine, ≈ 4.4 µs inside a CUDA graph (nccl_allreduce_small_msg.csv
    NCCL-1259, 2x H100, ≈ 6 µs less 2 link hops of 0.8 µs) and ≈ 8.5 µs launched one by one (NCCL-583, 10.14 µs,
    no graph). These kernels move a few KB and depend on each other and on the layer's GEMMs, so each costs its
    floor in series with the layer, whatever the bandwidth or FLOP/s (monotone: constant in both); the weight
    stream's η_m does not contain them (they stream no weights). Every GPU of a TP group routes all the step's
    tokens and the L_moe layers run one after another along a token's path over the pipeline stages, so the
    whole L_moe counts once per step. Small-batch figure: at hundreds of tokens the sort and the gathers grow
    with n·k (measurements/h200_kernels_steps_moe.csv, moe_block − moe_block_gemms: 34 µs per layer at 1 token,
    89 µs at 256 for Qwen3-30B-A3B with unfused torch kernels). Example: gpt-oss-20b (24 MoE layers) under vLLM
    with CUDA graphs: 24 · 4 · 4.4 µs = 0.42 ms per step.
    """
    return terms.moe_layers * MOE_LAYER_KERNELS * terms.collective_launch_us * 1e-6


def attention_tp(terms: Any) -> Num:
    """Ranks of the attention TP all-reduce, t = w/e."""
    return terms.tp / terms.attention_dp


def efficiency_at_rows(terms: Any, tokens: Num) -> Num:
    """η_p of the family at ``tokens`` rows (re-exported for callers that report the curve)."""
    return eff.prefill_compute_efficiency_frac(terms.efficiency, tokens)


def explain_terms(terms: Any, *, tokens: float) -> dict[str, float]:
    """The MoE terms of a pass over ``tokens`` tokens for ``planner predict --explain`` (empty for dense models)."""
    if float(terms.expert_flop_per_token) <= 0.0:
        return {}
    eta = float(terms.efficiency.prefill_mfu_frac)
    return {
        "ep": float(terms.expert_parallel),
        "attention_dp": float(terms.attention_dp),
        "attention_tp": float(attention_tp(terms)),
        "experts_touched_per_layer": float(touched_experts(terms, tokens)),
        "experts_touched_busiest_group": float(
            busiest_touched(imbalance_spread(terms.expert_parallel), touched_experts(terms, tokens), terms.experts_routed)
        ),
        "rows_per_touched_expert": float(rows_per_expert(terms, tokens)),
        "expert_half_rows": float(expert_half_rows(terms, eta)),
        "expert_gemm_efficiency_frac": float(expert_gemm_efficiency_frac(terms, tokens, eta)),
        "load_imbalance": float(imbalance_factor(terms.expert_parallel, tokens * terms.experts_per_token)),
        "all_to_all_ms": float(all_to_all_s(terms, tokens / terms.pp)) * float(terms.pp) * 1e3,
        "routing_kernels_ms": float(routing_kernels_s(terms)) * 1e3,
    }
