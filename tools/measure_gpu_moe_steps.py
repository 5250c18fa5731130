"""Whole engine steps of mixture-of-experts models on one GPU: Mixtral-8x7B and Qwen3-30B-A3B shapes at TP1,
bf16, prefill chunks, decode batches and both in one step, replayed as one CUDA graph (PyTorch, no model
download).

Run on a machine with a CUDA GPU and PyTorch (not a dependency of the planner):

    PYTHONUNBUFFERED=1 python3 tools/measure_gpu_moe_steps.py OUT_DIR

It writes OUT_DIR/gpu_steps_moe.csv (the columns of tools/measure_gpu_kernels.py, ``kind`` =
``mixed_step_compiled``) and OUT_DIR/gpu_steps_moe_env.json.

A step is the one of tools/measure_gpu_steps.py (B decode rows at history H plus one C-token prompt chunk
through every layer at once) with each layer's dense MLP replaced by a routed-expert block as a fused-MoE
engine runs it: router GEMM, top-k of the softmax (renormalised), the n·k (token, expert) pairs sorted by
expert, the tokens gathered in that order, two grouped expert GEMMs (torch._grouped_mm, CUTLASS; one group per
expert with the rows routed to it) around SwiGLU, and each token's k outputs gathered back, scaled by their
routing weights and summed (one fused kernel, as an engine's moe_sum; no atomics). Routing follows random router weights, so experts get near-uniform loads, as the
planner assumes. Attention and the norms are the dense steps'; Qwen3's q/k norms are left out (two small
elementwise kernels per layer). Times are medians of graph replays: GPU time only, no scheduler or launch gaps.
"""

from __future__ import annotations

import csv
import os
import sys
import time

import torch
import torch.nn.functional as F
from measure_gpu_kernels import DEV, FIELDS, environment, graph_time_ms, kv_bytes, rms, row, write_environment
from measure_gpu_steps import first_call, layered_step, linear

MIXTRAL_8X7B = {"hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "layers": 32, "vocab": 32000,
                "experts": 8, "top_k": 2, "expert_ffn": 14336}
QWEN3_30B_A3B = {"hidden": 2048, "heads": 32, "kv_heads": 4, "head_dim": 128, "layers": 48, "vocab": 151936,
                 "experts": 128, "top_k": 8, "expert_ffn": 768}

MOE_STEPS = [  # (decode batch B, decode history H, prompt chunk C)
    (0, 0, 512), (0, 0, 2048), (0, 0, 8192),
    (1, 1024, 0), (16, 2048, 0), (64, 2048, 0), (128, 1024, 0),
    (16, 2048, 512), (64, 2048, 512), (64, 2048, 2048),
]


def attention_params(c: dict[str, int]) -> int:
    """QKV and O parameters of one layer."""
    hd = c["head_dim"]
    return ((c["heads"] + 2 * c["kv_heads"]) * hd + c["heads"] * hd) * c["hidden"]


def expert_params(c: dict[str, int]) -> int:
    """Parameters of one routed expert (gate, up and down)."""
    return 3 * c["hidden"] * c["expert_ffn"]


def step_flop(c: dict[str, int], batch: int, ctx: int, chunk: int) -> float:
    """GEMM FLOPs of the step's n = B + C rows (attention projections, router, top-k experts per row), the LM
    head on the sampling rows and attention."""
    n = batch + chunk
    per_row = c["layers"] * (attention_params(c) + c["experts"] * c["hidden"] + c["top_k"] * expert_params(c))
    head = 2.0 * (batch + (1 if chunk else 0)) * c["vocab"] * c["hidden"]
    attn = 4.0 * c["layers"] * c["heads"] * c["head_dim"] * (batch * ctx + chunk * (chunk + 1) / 2.0)
    return 2.0 * n * per_row + head + attn


def weights_bytes(c: dict[str, int]) -> float:
    """bf16 bytes of every weight (all experts: the upper bound of what a step reads)."""
    layer = attention_params(c) + c["experts"] * (c["hidden"] + expert_params(c))
    return 2.0 * (2 * c["vocab"] * c["hidden"] + c["layers"] * layer)


class MoEWeights:
    """Random bf16 weights of configuration ``c``: per layer QKV, O, router (E × h), the experts' stacked
    gate/up (E × 2f × h) and down (E × h × f) matrices."""

    def __init__(self, c: dict[str, int]) -> None:
        self.cfg = c
        h, hd, hq, hkv, e, f = c["hidden"], c["head_dim"], c["heads"], c["kv_heads"], c["experts"], c["expert_ffn"]

        def rnd(*shape):
            return torch.randn(*shape, device=DEV, dtype=torch.bfloat16) * 0.02

        self.embed, self.lm_head = rnd(c["vocab"], h), rnd(c["vocab"], h)
        one = torch.ones(h, device=DEV, dtype=torch.bfloat16)
        self.layers = [{"ln1": one, "qkv": rnd((hq + 2 * hkv) * hd, h), "o": rnd(h, hq * hd), "ln2": one,
                        "router": rnd(e, h), "gate_up": rnd(e, 2 * f, h), "down": rnd(e, h, f)}
                       for _ in range(c["layers"])]
        self.final_ln = one


def _parts(c: dict[str, int], compiled: bool = True):
    """The step's fused pieces (torch.compile per shape, dynamic=False; ``compiled=False``: eager): ``pre``
    (RMSNorm, QKV, RoPE-like scaling), ``route`` (O projection + residual, RMSNorm, router, top-k of the
    softmax renormalised), ``act`` (SwiGLU of the gate/up output), ``combine`` (each token's k expert outputs
    gathered, weighted and summed), ``head`` (final norm, LM head, argmax)."""
    hq, hkv, hd, k = c["heads"], c["kv_heads"], c["head_dim"], c["top_k"]

    def pre(x, ln1, qkv_w, cos):
        n = x.shape[0]
        q, kk, v = linear(rms(x, ln1), qkv_w).split([hq * hd, hkv * hd, hkv * hd], dim=-1)
        return q.reshape(n, hq, hd) * cos, kk.reshape(n, hkv, hd) * cos, v.reshape(n, hkv, hd)

    def route(x, att, o_w, ln2, router_w):
        x = x + linear(att, o_w)
        xn = rms(x, ln2)
        probs = F.linear(xn, router_w).float().softmax(dim=-1)
        weights, experts = torch.topk(probs, k, dim=-1)
        return x, xn, (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype), experts

    def act(gate_up):
        gate, up = gate_up.chunk(2, dim=-1)
        return F.silu(gate) * up

    def combine(down, inverse, weights):
        n = weights.shape[0]
        return (down[inverse].view(n, k, -1) * weights.unsqueeze(-1)).sum(dim=1)

    def head(x, ln, lm):
        return torch.argmax(F.linear(rms(x, ln), lm), dim=-1)

    if not compiled:
        return pre, route, act, combine, head
    return tuple(torch.compile(f, dynamic=False, fullgraph=True) for f in (pre, route, act, combine, head))


def dispatch(experts, n_experts: int):
    """The (token, expert) pairs of ``experts`` (n × k) sorted by expert: the sorted pairs' token rows, each
    pair's position in that order, and the experts' cumulative row counts (the grouped GEMM's offsets)."""
    k = experts.shape[1]
    flat = experts.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.zeros(n_experts, device=DEV, dtype=torch.int32).scatter_add_(
        0, flat, torch.ones_like(flat, dtype=torch.int32))
    inverse = torch.empty_like(order).scatter_(0, order, torch.arange(flat.numel(), device=DEV))
    return order // k, inverse, torch.cumsum(counts, 0, dtype=torch.int32)


def expert_gemms(x_sorted, offs, lay, act):
    """The two grouped expert GEMMs around SwiGLU over rows already sorted by expert."""
    gate_up = torch._grouped_mm(x_sorted, lay["gate_up"].transpose(-2, -1), offs=offs)
    return torch._grouped_mm(act(gate_up), lay["down"].transpose(-2, -1), offs=offs)


def routed_experts(xn, weights, experts, lay, act, combine, n_experts: int):
    """The routed-expert block of ``xn`` (n × h) with each row's top-k ``experts`` and ``weights`` (n × k):
    sort the n·k pairs by expert, gather, grouped gate/up GEMM, SwiGLU, grouped down GEMM, each row's k
    outputs weighted and summed."""
    rows, inverse, offs = dispatch(experts, n_experts)
    return combine(expert_gemms(xn[rows], offs, lay, act), inverse, weights)


def make_step(wts: MoEWeights, parts, batch: int, ctx: int, chunk: int):
    """The MoE step of (B, H, C) (measure_gpu_steps.layered_step with O, router and the routed experts after
    attention), and what it keeps alive."""
    cpre, croute, cact, ccombine, chead = parts

    def after_attention(x, att, lay):
        x, xn, weights, experts = croute(x, att, lay["o"], lay["ln2"], lay["router"])
        return x + routed_experts(xn, weights, experts, lay, cact, ccombine, wts.cfg["experts"])

    return layered_step(wts, batch, ctx, chunk, cpre, after_attention, chead)


def measure_moe_steps(w, fh, name: str, c: dict[str, int], steps: list[tuple[int, int, int]]) -> None:
    wts = MoEWeights(c)
    parts, how = _parts(c), "torch.compile"
    for batch, ctx, chunk in steps:
        step, caches, parts, how, compile_s = first_call(
            lambda p, b=batch, h=ctx, k=chunk, m=wts: make_step(m, p, b, h, k), parts, how,
            lambda: _parts(c, compiled=False), name,
        )
        t, rep = graph_time_ms(step, calls=1, target_ms=200.0)
        row(w, fh, kind="mixed_step_compiled", name=name, dtype="bf16", m_rows=batch + chunk, batch=batch,
            seq_tokens=chunk, context_tokens=ctx, time_ms=t, flop=step_flop(c, batch, ctx, chunk),
            bytes=weights_bytes(c) + kv_bytes(c, batch, ctx) + kv_bytes(c, 1, chunk), replays=rep,
            note=f"{how} + one CUDA graph; B decode rows + one C-token prompt chunk; routed experts: sort, gather, "
            f"2 torch._grouped_mm, weighted sum; first call {compile_s:.1f} s")
        print(f"{name} B={batch} H={ctx} C={chunk}: {t:.3f} ms", flush=True)
        del step, caches
        torch.cuda.empty_cache()
    del wts
    torch.cuda.empty_cache()


BLOCK_TOKENS = [1, 16, 64, 256, 512, 2048, 8192]
BLOCK_LAYERS = 8
"""Layers whose expert weights the block timings rotate through (far beyond the L2 cache)."""


def measure_moe_blocks(w, fh, name: str, c: dict[str, int]) -> None:
    """One layer's routed-expert block at n tokens, whole (``moe_block``: routing, gather, the two grouped
    GEMMs, SwiGLU, combine) and its grouped GEMMs and SwiGLU alone on rows already sorted (``moe_block_gemms``):
    the difference is what routing costs around the expert GEMMs."""
    wts = MoEWeights({**c, "layers": BLOCK_LAYERS})
    _pre, route, act, combine, _head = _parts(c, compiled=False)
    layers, e = wts.layers, c["experts"]
    for n in BLOCK_TOKENS:
        x = torch.randn(n, c["hidden"], device=DEV, dtype=torch.bfloat16)
        att = torch.randn(n, c["heads"] * c["head_dim"], device=DEV, dtype=torch.bfloat16)
        lay0 = wts.layers[0]
        _x, xn, weights, experts = route(x, att, lay0["o"], lay0["ln2"], lay0["router"])
        rows, _inverse, offs = dispatch(experts, c["experts"])
        x_sorted = xn[rows].contiguous()
        def whole(i, xn=xn, weights=weights, experts=experts):
            return routed_experts(xn, weights, experts, layers[i % BLOCK_LAYERS], act, combine, e)

        def gemms(i, x_sorted=x_sorted, offs=offs):
            return expert_gemms(x_sorted, offs, layers[i % BLOCK_LAYERS], act)

        for kind, fn in (("moe_block", whole), ("moe_block_gemms", gemms)):
            t, rep = graph_time_ms(fn, calls=BLOCK_LAYERS)
            row(w, fh, kind=kind, name=name, dtype="bf16", m_rows=n, batch=c["experts"],
                k_inner=c["hidden"], n_cols=c["expert_ffn"], time_ms=t,
                flop=2.0 * n * c["top_k"] * expert_params(c), replays=rep,
                note="one layer's routed experts (eager kernels, one CUDA graph over 8 layers' weights); m_rows = "
                "tokens" + ("" if kind == "moe_block" else "; grouped GEMMs + SwiGLU alone on pre-sorted rows"))
            print(f"{name} {kind} n={n}: {t:.4f} ms", flush=True)
    del wts
    torch.cuda.empty_cache()


MODELS = [("mixtral8x7b_bf16", MIXTRAL_8X7B), ("qwen3moe30b_bf16", QWEN3_30B_A3B)]


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    for limit in ("cache_size_limit", "recompile_limit"):  # one compile per step shape, never a silent eager fallback
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 256)
    env = environment()
    with open(os.path.join(out, "gpu_steps_moe.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        for name, cfg in MODELS:
            t0 = time.perf_counter()
            try:
                measure_moe_blocks(w, fh, name, cfg)
                measure_moe_steps(w, fh, name, cfg, MOE_STEPS)
                env[name] = f"ok in {time.perf_counter() - t0:.1f} s"
            except Exception as exc:  # noqa: BLE001 - the next model still runs
                env[name] = f"failed: {type(exc).__name__}: {str(exc)[:300]}"
            print(name, env[name], flush=True)
            torch.cuda.empty_cache()
    write_environment(env, os.path.join(out, "gpu_steps_moe_env.json"))


if __name__ == "__main__":
    main()
