"""Whole engine steps of a Llama-3.1-8B-shaped model on one GPU: prefill chunks, decode batches and both in ONE
step (chunked prefill), compiled and replayed as one CUDA graph (PyTorch, no model download).

Run on a machine with a CUDA GPU and PyTorch (not a dependency of the planner):

    PYTHONUNBUFFERED=1 python3 tools/measure_gpu_steps.py OUT_DIR [8b|70b_shards|fp8|host]

It writes OUT_DIR/gpu_steps[_SET].csv (the columns of tools/measure_gpu_kernels.py) and
OUT_DIR/gpu_steps[_SET]_env.json. ``8b`` (default): the Llama-3.1-8B steps of :data:`STEPS`;
``70b_shards``: ONE rank of Llama-3.1-70B at TP 2, 4 and 8 (:func:`llama70b_shard`, :data:`SHARD_STEPS`) —
its all-reduces are not run, so these time a rank's GEMMs, attention and small kernels alone; ``fp8``: the
8B steps and the TP8 rank's with FP8 W8A8 layer weights (:func:`linear`); ``host``: the 8B's and each 70B
rank's prefill and decode steps launched by the host without a graph, compiled and eager
(:func:`measure_host_launch`). Results of 2026-12-04:
measurements/h200_kernels_steps*.csv.

What a step is here (``kind`` = ``mixed_step_compiled``): N = B + C token rows through every layer's GEMMs
at once — B decoding sequences (one new token each, history ``context_tokens`` in a contiguous bf16 KV
cache) and one prompt chunk of C tokens (``seq_tokens``; a new prompt, no earlier chunk) — as a
chunked-prefill engine (vLLM V1, SGLang) batches them. Per layer: RMSNorm + QKV + RoPE-like scaling
(compiled, fused), the chunk's K/V written to its cache, attention as two SDPA calls (the decode rows over
their caches, the chunk causally over itself), O + RMSNorm + SwiGLU MLP + residuals (compiled, fused); the
LM head runs on the B decode rows and the chunk's last row (the tokens that sample). B = 0 is a prefill
step of one prompt; C = 0 a decode step (the ``decode_step_compiled`` rows of h200_kernels_extra.csv, again
here so that every pair (B, 0) / (B, C) comes from one run). Times are medians of graph replays: GPU time
only, no scheduler and no launch gaps. Weights: random bf16, 16 GB, far beyond the 60 MB L2.
"""

from __future__ import annotations

import csv
import os
import sys
import time

import torch
import torch.nn.functional as F
from measure_gpu_kernels import (
    DEV,
    FIELDS,
    LLAMA8B,
    environment,
    graph_time_ms,
    kv_bytes,
    layer_params,
    rms,
    row,
    weight_bytes,
    write_environment,
)

LLAMA70B_LAYERS, LLAMA70B_VOCAB = 80, 128256


def llama70b_shard(tp: int) -> dict[str, int]:
    """One TP rank's shapes of Llama-3.1-70B at TP ``tp`` (Megatron split: heads, FFN columns and the LM
    head's vocabulary over the ranks; activations full width). The rank's all-reduces are not run: this
    times its GEMMs, attention and small kernels alone."""
    return {"hidden": 8192, "heads": 64 // tp, "kv_heads": max(8 // tp, 1), "head_dim": 128, "ffn": 28672 // tp,
            "layers": LLAMA70B_LAYERS, "vocab": LLAMA70B_VOCAB // tp}


STEPS = [  # (decode batch B, decode history H, prompt chunk C)
    (0, 0, 128), (0, 0, 512), (0, 0, 2048), (0, 0, 8192),
    (16, 2048, 0), (16, 2048, 512), (16, 2048, 2048),
    (64, 2048, 0), (64, 2048, 256), (64, 2048, 512), (64, 2048, 2048),
    (256, 1024, 0), (256, 1024, 512), (256, 1024, 2048),
]
SHARD_STEPS = [(0, 0, 512), (0, 0, 2048), (0, 0, 8192), (64, 2048, 0), (64, 2048, 2048)]
"""The Llama-3.1-70B TP2/TP4/TP8 shards' steps (``70b_shards``)."""


FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0


def linear(x, w):
    """x·Wᵀ of a layer weight: a bf16 tensor, or FP8 ``(w8, weight scale, activation scale)`` — an FP8
    checkpoint's W8A8 GEMM with static per-tensor scales (torch._scaled_mm, bf16 out)."""
    if isinstance(w, torch.Tensor):
        return F.linear(x, w)
    w8, sw, sx = w
    xq = (x.float() / sx).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return torch._scaled_mm(xq, w8.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)


def _compiled(c: dict[str, int], compiled: bool = True):
    """The step's fused non-attention parts, torch.compile'd per shape (dynamic=False, as a graph-captured
    engine runs a fixed set of batch sizes); ``compiled=False``: the same functions run eagerly."""
    hq, hkv, hd = c["heads"], c["kv_heads"], c["head_dim"]

    def pre(x, ln1, qkv_w, cos):
        n = x.shape[0]
        q, k, v = linear(rms(x, ln1), qkv_w).split([hq * hd, hkv * hd, hkv * hd], dim=-1)
        return q.reshape(n, hq, hd) * cos, k.reshape(n, hkv, hd) * cos, v.reshape(n, hkv, hd)

    def post(x, att, o_w, ln2, gu_w, down_w):
        x = x + linear(att, o_w)
        gate, up = linear(rms(x, ln2), gu_w).chunk(2, dim=-1)
        return x + linear(F.silu(gate) * up, down_w)

    def head(x, ln, lm):
        return torch.argmax(F.linear(rms(x, ln), lm), dim=-1)

    if not compiled:
        return pre, post, head
    return tuple(torch.compile(f, dynamic=False, fullgraph=True) for f in (pre, post, head))


class Weights:
    """Random weights of configuration ``c``, made once for all its steps: bf16, or with FP8 layer weights
    (``fp8``; the embedding and LM head stay bf16, as FP8 checkpoints keep them)."""

    def __init__(self, c: dict[str, int], fp8: bool = False) -> None:
        self.cfg = c
        h, hd, hq, hkv = c["hidden"], c["head_dim"], c["heads"], c["kv_heads"]

        def rnd(*shape):
            return torch.randn(*shape, device=DEV, dtype=torch.bfloat16) * 0.02

        def layer_weight(*shape):
            if not fp8:
                return rnd(*shape)
            scale = torch.tensor(0.02, device=DEV, dtype=torch.float32)
            return (torch.randn(*shape, device=DEV).to(FP8), scale, torch.tensor(0.05, device=DEV, dtype=torch.float32))

        self.embed, self.lm_head = rnd(c["vocab"], h), rnd(c["vocab"], h)
        one = torch.ones(h, device=DEV, dtype=torch.bfloat16)
        self.layers = [{"ln1": one, "qkv": layer_weight((hq + 2 * hkv) * hd, h), "o": layer_weight(h, hq * hd),
                        "ln2": one, "gate_up": layer_weight(2 * c["ffn"], h), "down": layer_weight(h, c["ffn"])}
                       for _ in range(c["layers"])]
        self.final_ln = one


def layered_step(wts, batch: int, ctx: int, chunk: int, pre, after_attention, head):
    """The step function of (B, H, C) over fresh caches (random contents), and what it keeps alive: per layer
    ``pre`` (norm, QKV, RoPE-like scaling), the B decode rows' attention over their caches and the chunk's
    causal attention over itself (two SDPA calls), then ``after_attention(x, att, layer)`` (O projection and
    the MLP or routed experts, residuals); ``head`` on the sampling rows."""
    c = wts.cfg
    hd, hq, hkv = c["head_dim"], c["heads"], c["kv_heads"]
    n = batch + chunk
    caches = [(torch.randn(batch, hkv, ctx, hd, device=DEV, dtype=torch.bfloat16),
               torch.randn(batch, hkv, ctx, hd, device=DEV, dtype=torch.bfloat16),
               torch.empty(1, hkv, chunk, hd, device=DEV, dtype=torch.bfloat16),
               torch.empty(1, hkv, chunk, hd, device=DEV, dtype=torch.bfloat16)) for _ in range(c["layers"])]
    tokens = torch.randint(0, c["vocab"], (n,), device=DEV)
    cos = torch.randn(n, 1, hd, device=DEV, dtype=torch.bfloat16)
    sample = torch.cat([torch.arange(batch, device=DEV), torch.tensor([n - 1], device=DEV)]) if chunk else None

    def step(_i: int = 0):
        x = F.embedding(tokens, wts.embed)
        for lay, (kc, vc, ck, cv) in zip(wts.layers, caches, strict=True):
            q, k, v = pre(x, lay["ln1"], lay["qkv"], cos)
            outs = []
            if batch:
                kc[:, :, -1, :].copy_(k[:batch])
                vc[:, :, -1, :].copy_(v[:batch])
                outs.append(F.scaled_dot_product_attention(
                    q[:batch].unsqueeze(2), kc, vc, enable_gqa=True).reshape(batch, hq * hd))
            if chunk:
                ck[0].copy_(k[batch:].transpose(0, 1))
                cv[0].copy_(v[batch:].transpose(0, 1))
                qc = q[batch:].transpose(0, 1).unsqueeze(0)
                att = F.scaled_dot_product_attention(qc, ck, cv, is_causal=True, enable_gqa=True)
                outs.append(att[0].transpose(0, 1).reshape(chunk, hq * hd))
            att = outs[0] if len(outs) == 1 else torch.cat(outs)
            x = after_attention(x, att, lay)
        return head(x if sample is None else x[sample], wts.final_ln, wts.lm_head)

    return step, caches


def make_step(wts: Weights, parts, batch: int, ctx: int, chunk: int):
    """The dense step of (B, H, C) (:func:`layered_step` with O + SwiGLU MLP after attention)."""
    cpre, cpost, chead = parts

    def after_attention(x, att, lay):
        return cpost(x, att, lay["o"], lay["ln2"], lay["gate_up"], lay["down"])

    return layered_step(wts, batch, ctx, chunk, cpre, after_attention, chead)


def first_call(make, parts, how: str, eager, name: str):
    """(step, caches, parts, how, first call s) of ``make(parts)`` after its first call (the compile); where
    Inductor cannot compile an op, the same functions eagerly (``eager()``), from then on."""
    step, caches = make(parts)
    t0 = time.perf_counter()
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - an op Inductor cannot compile: the same functions eagerly
        parts, how = eager(), f"eager ({type(exc).__name__} under torch.compile)"
        print(f"{name}: {how}: {str(exc)[:200]}", flush=True)
        step, caches = make(parts)
        step()
    torch.cuda.synchronize()
    return step, caches, parts, how, time.perf_counter() - t0


def measure_steps(w, fh, name: str, c: dict[str, int], steps: list[tuple[int, int, int]], fp8: bool = False) -> None:
    weights_bytes = weight_bytes(c, 1.0 if fp8 else 2.0)
    wts = Weights(c, fp8)
    parts, how = _compiled(c), "torch.compile"
    for batch, ctx, chunk in steps:
        step, caches, parts, how, compile_s = first_call(
            lambda p, b=batch, h=ctx, k=chunk, m=wts: make_step(m, p, b, h, k), parts, how,
            lambda: _compiled(c, compiled=False), name,
        )
        t, rep = graph_time_ms(step, calls=1, target_ms=200.0)
        gemm = 2.0 * (batch + chunk) * layer_params(c)
        head = 2.0 * (batch + (1 if chunk else 0)) * c["vocab"] * c["hidden"]
        attn = 4.0 * c["layers"] * c["heads"] * c["head_dim"] * (batch * ctx + chunk * (chunk + 1) / 2.0)
        row(w, fh, kind="mixed_step_compiled", name=name, dtype="fp8" if fp8 else "bf16", m_rows=batch + chunk,
            batch=batch, seq_tokens=chunk, context_tokens=ctx, time_ms=t, flop=gemm + head + attn,
            bytes=weights_bytes + kv_bytes(c, batch, ctx) + kv_bytes(c, 1, chunk), replays=rep,
            note=f"{how} + one CUDA graph; B decode rows + one C-token prompt chunk; first call {compile_s:.1f} s"
            + ("; FP8 W8A8 layers (static per-tensor scales), bf16 embedding, LM head and KV" if fp8 else ""))
        print(f"{name} B={batch} H={ctx} C={chunk}: {t:.3f} ms", flush=True)
        del step, caches
        torch.cuda.empty_cache()
    del wts
    torch.cuda.empty_cache()


def wall_ms(step, runs: int = 10) -> tuple[float, float]:
    """Medians over ``runs`` calls (after 2 warm-ups) of the host's wall time of step() + synchronize and of
    step() alone — the time the host takes to enqueue the step's kernels — ms."""
    torch.cuda.synchronize()
    walls, enqueues = [], []
    for _ in range(runs + 2):
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
        enqueues.append((t1 - t0) * 1e3)
    walls, enqueues = sorted(walls[2:]), sorted(enqueues[2:])
    return walls[len(walls) // 2], enqueues[len(enqueues) // 2]


def measure_host_launch(w, fh, name: str, c: dict[str, int], steps: list[tuple[int, int, int]], fp8: bool = False) -> None:
    """Each step three ways, compiled and plain eager: GPU time (graph replay), the host's wall time of the step
    launched kernel by kernel (no graph) and its enqueue time. Where enqueueing takes longer than the GPU
    work, a step run without a CUDA graph is host-bound."""
    wts = Weights(c, fp8)
    for label, parts in (("compiled", _compiled(c)), ("eager", _compiled(c, compiled=False))):
        for batch, ctx, chunk in steps:
            step, caches = make_step(wts, parts, batch, ctx, chunk)
            step()
            torch.cuda.synchronize()
            graph, rep = graph_time_ms(step, calls=1, target_ms=100.0)
            wall, enqueue = wall_ms(step)
            for kind, t in (("graph", graph), ("host", wall), ("enqueue", enqueue)):
                row(w, fh, kind=f"step_{kind}_{label}", name=name, dtype="fp8" if fp8 else "bf16", m_rows=batch + chunk,
                    batch=batch, seq_tokens=chunk, context_tokens=ctx, time_ms=t, replays=rep if kind == "graph" else 10,
                    note={"graph": "one CUDA graph replay: GPU time", "host": "host wall of step() + synchronize, no graph",
                          "enqueue": "host wall of step() alone: kernel launches"}[kind])
            print(f"{name} {label} B={batch} H={ctx} C={chunk}: graph {graph:.3f} host {wall:.3f} enqueue {enqueue:.3f} ms",
                  flush=True)
            del step, caches
            torch.cuda.empty_cache()
    del wts
    torch.cuda.empty_cache()


HOST_STEPS = [(0, 0, 512), (0, 0, 2048), (64, 2048, 0)]

SETS = {  # name → [(row name, shapes, steps, FP8 layers)]
    "8b": [("llama8b_bf16", LLAMA8B, STEPS, False)],
    "70b_shards": [(f"llama70b_tp{tp}_rank_bf16", llama70b_shard(tp), SHARD_STEPS, False) for tp in (2, 4, 8)],
    "fp8": [("llama8b_fp8", LLAMA8B, STEPS, True), ("llama70b_tp8_rank_fp8", llama70b_shard(8), SHARD_STEPS, True)],
    "host": [("llama8b_bf16", LLAMA8B, HOST_STEPS, False)]
    + [(f"llama70b_tp{tp}_rank_bf16", llama70b_shard(tp), HOST_STEPS, False) for tp in (2, 4, 8)],
}


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    which = sys.argv[2] if len(sys.argv) > 2 else "8b"
    suffix = "" if which == "8b" else f"_{which}"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    for limit in ("cache_size_limit", "recompile_limit"):  # one compile per step shape, never a silent eager fallback
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 256)
    env = environment()
    with open(os.path.join(out, f"gpu_steps{suffix}.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        measure = measure_host_launch if which == "host" else measure_steps
        for name, cfg, steps, fp8 in SETS[which]:
            t0 = time.perf_counter()
            measure(w, fh, name, cfg, steps, fp8)
            env[name] = f"ok in {time.perf_counter() - t0:.1f} s"
    write_environment(env, os.path.join(out, f"gpu_steps{suffix}_env.json"))


if __name__ == "__main__":
    main()
