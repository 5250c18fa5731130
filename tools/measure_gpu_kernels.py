"""Kernel-level measurements of the performance model's physics on one GPU (PyTorch, no model download).

Run on a machine with a CUDA GPU and PyTorch (not a dependency of the planner):

    PYTHONUNBUFFERED=1 python3 tools/measure_gpu_kernels.py OUT_DIR [base|extra]

It writes OUT_DIR/gpu_kernels[_extra].csv (one row per measurement) and OUT_DIR/gpu_kernels[_extra]_env.json
(GPU, driver, torch, clocks). ``base`` (default) is the first set below; ``extra`` the MoE grouped GEMMs,
row-wise-scaled FP8 GEMMs and the compiled decode step. Every time is the median of timed CUDA-graph replays (no launch gaps) over
weights rotated through more than the L2 cache, on random data. What it measures:

- ``copy``: device-to-device copy, bytes read + written per second (the achievable HBM ceiling);
- ``gemm_bf16`` / ``gemm_fp8``: Y = X·Wᵀ (cuBLAS through F.linear / torch._scaled_mm) for the weight
  shapes of Llama-3.1-8B and of Llama-3.1-70B sharded over TP 1/2/4/8, at M = 1…16,384 rows (tokens):
  the weight-stream efficiency at small M, the compute efficiency and its saturation in M at large M;
- ``attn_prefill``: causal flash attention (SDPA) of one sequence of S tokens, Llama-3.1-8B heads;
- ``attn_decode``: one query token per sequence over a contiguous KV cache of L tokens (SDPA);
- ``decode_step_graph`` / ``decode_step_eager``: a whole Llama-3.1-8B-shaped bf16 decode step (32 layers,
  RMSNorm, QKV, RoPE-like elementwise, GQA attention over a static cache, O, SwiGLU, LM head, argmax),
  replayed as a CUDA graph (GPU time only) and run eagerly (adds PyTorch's per-kernel host cost);
- ``moe_gemm`` (extra): grouped expert GEMMs (torch._grouped_mm) of Mixtral-8x7B, Qwen3-30B-A3B, gpt-oss-20b
  and DeepSeek-V3 at EP8 (32 local experts) with m = 1…1,024 tokens per expert;
- ``gemm`` ``fp8_rowwise`` (extra): FP8 GEMMs with per-token and per-channel scales;
- ``decode_step_compiled`` (extra): the 8B decode step with its non-attention parts compiled by
  torch.compile (fused elementwise work, as vLLM V1) and replayed as one CUDA graph.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

DEV = "cuda"
L2_BYTES = 60e6
FIELDS = [
    "kind", "name", "dtype", "m_rows", "n_cols", "k_inner", "batch", "seq_tokens", "context_tokens",
    "time_ms", "flop", "bytes", "tflops", "gbps", "replays", "note",
]

LLAMA8B = {"hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "ffn": 14336, "layers": 32,
           "vocab": 128256}
LLAMA70B = {"hidden": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128, "ffn": 28672}


def shapes() -> list[tuple[str, int, int]]:
    """(name, out_features N, in_features K) of the dense layers measured."""
    out = []
    h, hd = LLAMA8B["hidden"], LLAMA8B["head_dim"]
    qkv = (LLAMA8B["heads"] + 2 * LLAMA8B["kv_heads"]) * hd
    out += [("8b_qkv", qkv, h), ("8b_o", h, h), ("8b_gate_up", 2 * LLAMA8B["ffn"], h),
            ("8b_down", h, LLAMA8B["ffn"])]
    h, f = LLAMA70B["hidden"], LLAMA70B["ffn"]
    for tp in (1, 2, 4, 8):
        qkv = (LLAMA70B["heads"] + 2 * LLAMA70B["kv_heads"]) * hd // tp
        out += [(f"70b_tp{tp}_qkv", qkv, h), (f"70b_tp{tp}_o", h, h // tp),
                (f"70b_tp{tp}_gate_up", 2 * f // tp, h), (f"70b_tp{tp}_down", h, f // tp)]
    return out


M_ROWS = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192, 16384]


def graph_time_ms(step, calls: int, target_ms: float = 25.0) -> tuple[float, int]:
    """Median time of one call of ``step(i)`` (i = call index), from CUDA-graph replays, ms."""
    torch.cuda.synchronize()
    for i in range(2):
        step(i)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(calls):
            step(i)
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for i in range(calls):
                step(i)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    g.replay()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t0, 1e-5)
    replays = int(min(50, max(5, target_ms / 1e3 / one)))
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(replays):
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    del g
    return times[len(times) // 2] / calls, replays


def row(writer, fh, **kw) -> None:
    t = kw["time_ms"]
    if kw.get("flop"):
        kw["tflops"] = round(kw["flop"] / (t * 1e-3) / 1e12, 2)
    if kw.get("bytes"):
        kw["gbps"] = round(kw["bytes"] / (t * 1e-3) / 1e9, 1)
    kw["time_ms"] = round(t, 5)
    writer.writerow({k: kw.get(k, "") for k in FIELDS})
    fh.flush()


def measure_copy(w, fh) -> None:
    n = 2 * 1024**3
    a = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    b = torch.empty_like(a)
    t, r = graph_time_ms(lambda i, a=a, b=b: b.copy_(a), calls=4)
    row(w, fh, kind="copy", name="d2d_copy_2GiB", dtype="u8", time_ms=t, bytes=2 * n, replays=r)
    del a, b


def rotation(bytes_each: float) -> int:
    return int(min(16, max(1, math.ceil(4 * L2_BYTES / bytes_each))))


def measure_gemm_bf16(w, fh) -> None:
    for name, n, k in shapes():
        r = rotation(n * k * 2)
        weights = [torch.randn(n, k, device=DEV, dtype=torch.bfloat16) * 0.02 for _ in range(r)]
        for m in M_ROWS:
            x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
            y = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
            flop = 2.0 * m * n * k
            calls = int(min(64, max(r, 4 * r if flop < 1e10 else r)))
            t, rep = graph_time_ms(lambda i, x=x, y=y, ws=weights, r=r: torch.matmul(x, ws[i % r].t(), out=y),
                                   calls=calls)
            row(w, fh, kind="gemm", name=name, dtype="bf16", m_rows=m, n_cols=n, k_inner=k, time_ms=t,
                flop=flop, bytes=2.0 * (n * k + m * k + m * n), replays=rep)
            del x, y
        del weights
        torch.cuda.empty_cache()


def measure_gemm_fp8(w, fh) -> None:
    one = torch.tensor(1.0, device=DEV)
    for name, n, k in shapes():
        if "tp2" in name or "tp4" in name:
            continue
        r = rotation(n * k)
        weights = [(torch.randn(n, k, device=DEV) * 0.02).to(torch.float8_e4m3fn) for _ in range(r)]
        for m in M_ROWS:
            mp = max(16, m)
            x = torch.randn(mp, k, device=DEV).to(torch.float8_e4m3fn)
            flop = 2.0 * m * n * k

            def step(i, x=x, ws=weights, r=r):
                return torch._scaled_mm(x, ws[i % r].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

            try:
                t, rep = graph_time_ms(step, calls=int(min(64, 4 * r if flop < 1e10 else r)))
            except Exception as exc:  # noqa: BLE001 - a shape the kernel refuses is recorded, not fatal
                row(w, fh, kind="gemm", name=name, dtype="fp8", m_rows=m, n_cols=n, k_inner=k, time_ms=float("nan"),
                    note=f"error: {type(exc).__name__}: {str(exc)[:80]}")
                continue
            row(w, fh, kind="gemm", name=name, dtype="fp8", m_rows=m, n_cols=n, k_inner=k, time_ms=t, flop=flop,
                bytes=1.0 * (n * k + mp * k) + 2.0 * mp * n, replays=rep,
                note="" if m >= 16 else f"padded to {mp} rows")
            del x
        del weights
        torch.cuda.empty_cache()


def measure_attention(w, fh) -> None:
    hq, hkv, d = LLAMA8B["heads"], LLAMA8B["kv_heads"], LLAMA8B["head_dim"]
    for s_tok in (512, 1024, 2048, 4096, 8192, 16384, 32768):
        q = torch.randn(1, hq, s_tok, d, device=DEV, dtype=torch.bfloat16)
        kk = torch.randn(1, hkv, s_tok, d, device=DEV, dtype=torch.bfloat16)
        vv = torch.randn(1, hkv, s_tok, d, device=DEV, dtype=torch.bfloat16)
        t, rep = graph_time_ms(lambda i, q=q, kk=kk, vv=vv: F.scaled_dot_product_attention(
            q, kk, vv, is_causal=True, enable_gqa=True), calls=2)
        flop = 4.0 * hq * d * s_tok * s_tok / 2
        row(w, fh, kind="attn_prefill", name="8b_causal", dtype="bf16", seq_tokens=s_tok, time_ms=t, flop=flop,
            bytes=2.0 * (2 * hq + 2 * hkv) * s_tok * d, replays=rep, note="SDPA enable_gqa, causal")
        del q, kk, vv
    for batch, ctx in ((1, 1024), (1, 8192), (1, 32768), (8, 4096), (32, 2048), (32, 8192), (128, 2048),
                       (64, 16384), (256, 1024)):
        q = torch.randn(batch, hq, 1, d, device=DEV, dtype=torch.bfloat16)
        r = rotation(batch * ctx * hkv * d * 4)
        caches = [(torch.randn(batch, hkv, ctx, d, device=DEV, dtype=torch.bfloat16),
                   torch.randn(batch, hkv, ctx, d, device=DEV, dtype=torch.bfloat16)) for _ in range(r)]
        t, rep = graph_time_ms(lambda i, q=q, c=caches, r=r: F.scaled_dot_product_attention(
            q, c[i % r][0], c[i % r][1], enable_gqa=True), calls=max(r, 4))
        row(w, fh, kind="attn_decode", name="8b_decode", dtype="bf16", batch=batch, context_tokens=ctx, time_ms=t,
            flop=4.0 * batch * hq * d * ctx, bytes=2.0 * 2 * batch * hkv * ctx * d, replays=rep,
            note="SDPA enable_gqa, contiguous KV")
        del q, caches
        torch.cuda.empty_cache()


def rms(x, wt):
    """RMSNorm in float32, back to the input's dtype, times the weight."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * wt


def layer_params(c: dict[str, int]) -> float:
    """Parameters of every layer's projections (QKV, O, gate/up, down) of shapes ``c`` (LLAMA8B's keys)."""
    return c["layers"] * (
        ((c["heads"] + 2 * c["kv_heads"]) * c["head_dim"] + c["heads"] * c["head_dim"]) * c["hidden"]
        + 3 * c["ffn"] * c["hidden"])


def weight_bytes(c: dict[str, int], layer_bytes: float = 2.0) -> float:
    """Bytes of a configuration's weights: bf16 embedding and LM head, ``layer_bytes`` per layer parameter."""
    return 2.0 * 2 * c["vocab"] * c["hidden"] + layer_bytes * layer_params(c)


def kv_bytes(c: dict[str, int], batch: int, ctx: int) -> float:
    """Bytes of the bf16 K and V cache over every layer at ``batch`` sequences of ``ctx`` tokens."""
    return 2.0 * 2 * c["layers"] * batch * c["kv_heads"] * ctx * c["head_dim"]


class Llama8BStep:
    """A Llama-3.1-8B-shaped bf16 decode step over a static KV cache (random weights)."""

    def __init__(self, batch: int, ctx: int) -> None:
        c = LLAMA8B
        h, hd, hq, hkv = c["hidden"], c["head_dim"], c["heads"], c["kv_heads"]
        self.cfg = c
        self.batch, self.ctx = batch, ctx

        def rnd(*shape):
            return torch.randn(*shape, device=DEV, dtype=torch.bfloat16) * 0.02

        self.embed = rnd(c["vocab"], h)
        self.lm_head = rnd(c["vocab"], h)
        self.layers = []
        for _ in range(c["layers"]):
            self.layers.append({
                "ln1": torch.ones(h, device=DEV, dtype=torch.bfloat16),
                "qkv": rnd((hq + 2 * hkv) * hd, h), "o": rnd(h, hq * hd),
                "ln2": torch.ones(h, device=DEV, dtype=torch.bfloat16),
                "gate_up": rnd(2 * c["ffn"], h), "down": rnd(h, c["ffn"]),
                "k": rnd(batch, hkv, ctx, hd), "v": rnd(batch, hkv, ctx, hd),
            })
        self.final_ln = torch.ones(h, device=DEV, dtype=torch.bfloat16)
        self.tokens = torch.randint(0, c["vocab"], (batch,), device=DEV)
        self.cos = torch.randn(batch, 1, 1, hd, device=DEV, dtype=torch.bfloat16)

    def step(self, _i: int = 0):
        c = self.cfg
        hd, hq, hkv, b = c["head_dim"], c["heads"], c["kv_heads"], self.batch
        x = F.embedding(self.tokens, self.embed)
        for lay in self.layers:
            hdn = rms(x, lay["ln1"])
            qkv = F.linear(hdn, lay["qkv"])
            q, k, v = qkv.split([hq * hd, hkv * hd, hkv * hd], dim=-1)
            q = q.view(b, hq, 1, hd) * self.cos
            k = k.view(b, hkv, 1, hd) * self.cos
            lay["k"][:, :, -1:, :].copy_(k)
            lay["v"][:, :, -1:, :].copy_(v.view(b, hkv, 1, hd))
            att = F.scaled_dot_product_attention(q, lay["k"], lay["v"], enable_gqa=True)
            x = x + F.linear(att.reshape(b, hq * hd), lay["o"])
            hdn = rms(x, lay["ln2"])
            gate, up = F.linear(hdn, lay["gate_up"]).chunk(2, dim=-1)
            x = x + F.linear(F.silu(gate) * up, lay["down"])
        logits = F.linear(rms(x, self.final_ln), self.lm_head)
        return torch.argmax(logits, dim=-1)


def measure_decode_steps(w, fh) -> None:
    c = LLAMA8B
    weights_bytes = weight_bytes(c)
    for batch, ctx in ((1, 512), (1, 8192), (8, 2048), (32, 2048), (64, 2048), (128, 2048), (256, 1024),
                       (64, 8192)):
        model = Llama8BStep(batch, ctx)
        kv = kv_bytes(c, batch, ctx)
        flop = 2.0 * batch * (weights_bytes / 2.0 - c["vocab"] * c["hidden"]) + 4.0 * c["layers"] * batch * c[
            "heads"] * c["head_dim"] * ctx
        t, rep = graph_time_ms(model.step, calls=1, target_ms=200.0)
        row(w, fh, kind="decode_step_graph", name="llama8b_bf16", dtype="bf16", batch=batch, context_tokens=ctx,
            time_ms=t, flop=flop, bytes=weights_bytes + kv, replays=rep,
            note="CUDA graph replay: GPU time only")
        torch.cuda.synchronize()
        times = []
        for _ in range(12):
            t0 = time.perf_counter()
            model.step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        times = sorted(times[2:])
        row(w, fh, kind="decode_step_eager", name="llama8b_bf16", dtype="bf16", batch=batch, context_tokens=ctx,
            time_ms=times[len(times) // 2], flop=flop, bytes=weights_bytes + kv, replays=len(times),
            note="eager PyTorch, host clock around step + synchronize")
        del model
        torch.cuda.empty_cache()


MOE_SHAPES = [  # (name, local experts E, experts per token k, hidden H, expert FFN F)
    ("mixtral_8x7b", 8, 2, 4096, 14336),
    ("qwen3_30b_a3b", 128, 8, 2048, 768),
    ("gpt_oss_20b", 32, 4, 2880, 2880),
    ("deepseek_v3_ep8", 32, 8, 7168, 2048),
]
TOKENS_PER_EXPERT = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def measure_moe(w, fh) -> None:
    """Grouped expert GEMMs (torch._grouped_mm, CUTLASS) with every local expert given m tokens."""
    for name, e, _k, h, f in MOE_SHAPES:
        for part, n, k in (("gate_up", 2 * f, h), ("down", h, f)):
            wt = torch.randn(e, n, k, device=DEV, dtype=torch.bfloat16) * 0.02
            r = rotation(e * n * k * 2)
            ws = [wt] + [torch.randn_like(wt) for _ in range(r - 1)]
            for m in TOKENS_PER_EXPERT:
                for pad in (1, 16):
                    mp = ((m + pad - 1) // pad) * pad
                    x = torch.randn(e * mp, k, device=DEV, dtype=torch.bfloat16)
                    offs = torch.arange(1, e + 1, device=DEV, dtype=torch.int32) * mp
                    try:
                        t, rep = graph_time_ms(lambda i, x=x, ws=ws, offs=offs, r=r: torch._grouped_mm(
                            x, ws[i % r].transpose(-2, -1), offs=offs), calls=max(r, 4))
                    except Exception as exc:  # noqa: BLE001
                        if pad == 1:
                            continue
                        row(w, fh, kind="moe_gemm", name=f"{name}_{part}", dtype="bf16", m_rows=m, n_cols=n,
                            k_inner=k, batch=e, time_ms=float("nan"), note=f"error: {type(exc).__name__}: {str(exc)[:80]}")
                        break
                    row(w, fh, kind="moe_gemm", name=f"{name}_{part}", dtype="bf16", m_rows=m, n_cols=n, k_inner=k,
                        batch=e, time_ms=t, flop=2.0 * e * m * n * k, bytes=2.0 * e * (n * k + mp * (k + n)),
                        replays=rep, note="torch._grouped_mm; m_rows = tokens per expert, batch = experts"
                        + ("" if mp == m else f"; groups padded to {mp} rows"))
                    break
            del ws, wt
            torch.cuda.empty_cache()


def measure_gemm_fp8_rowwise(w, fh) -> None:
    """FP8 GEMMs with per-token activation and per-channel weight scales (vLLM's dynamic FP8 W8A8)."""
    for name, n, k in shapes():
        if name not in ("8b_gate_up", "8b_o", "70b_tp1_gate_up", "70b_tp8_gate_up", "70b_tp8_o"):
            continue
        r = rotation(n * k)
        weights = [(torch.randn(n, k, device=DEV) * 0.02).to(torch.float8_e4m3fn) for _ in range(r)]
        sb = torch.rand(1, n, device=DEV, dtype=torch.float32) + 0.5
        for m in M_ROWS:
            mp = max(16, m)
            x = torch.randn(mp, k, device=DEV).to(torch.float8_e4m3fn)
            sa = torch.rand(mp, 1, device=DEV, dtype=torch.float32) + 0.5
            flop = 2.0 * m * n * k
            t, rep = graph_time_ms(lambda i, x=x, ws=weights, r=r, sa=sa, sb=sb: torch._scaled_mm(
                x, ws[i % r].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16),
                calls=int(min(64, 4 * r if flop < 1e10 else r)))
            row(w, fh, kind="gemm", name=name, dtype="fp8_rowwise", m_rows=m, n_cols=n, k_inner=k, time_ms=t,
                flop=flop, bytes=1.0 * (n * k + mp * k) + 2.0 * mp * n, replays=rep,
                note="per-token x per-channel scales" + ("" if m >= 16 else f"; padded to {mp} rows"))
            del x
        del weights
        torch.cuda.empty_cache()


def measure_compiled_steps(w, fh) -> None:
    """The Llama-3.1-8B-shaped decode step with its non-attention parts compiled by torch.compile (Inductor
    fuses RMSNorm, RoPE-like and SwiGLU elementwise work into the GEMMs' neighbours, as vLLM V1 does) and
    attention left as one SDPA call per layer (vLLM's piecewise graph split), replayed as one CUDA graph."""
    c = LLAMA8B
    hq, hkv, hd = c["heads"], c["kv_heads"], c["head_dim"]

    def pre(x, ln1, qkv_w, cos):
        b = x.shape[0]
        q, k, v = F.linear(rms(x, ln1), qkv_w).split([hq * hd, hkv * hd, hkv * hd], dim=-1)
        return (q.reshape(b, hq, 1, hd) * cos, k.reshape(b, hkv, 1, hd) * cos, v.reshape(b, hkv, 1, hd))

    def post(x, att, o_w, ln2, gu_w, down_w):
        b = x.shape[0]
        x = x + F.linear(att.reshape(b, hq * hd), o_w)
        gate, up = F.linear(rms(x, ln2), gu_w).chunk(2, dim=-1)
        return x + F.linear(F.silu(gate) * up, down_w)

    def head(x, ln, lm):
        return torch.argmax(F.linear(rms(x, ln), lm), dim=-1)

    cpre, cpost, chead = (torch.compile(f, dynamic=False, fullgraph=True) for f in (pre, post, head))
    weights_bytes = weight_bytes(c)
    for batch, ctx in ((1, 512), (1, 8192), (16, 2048), (64, 2048), (256, 1024)):
        model = Llama8BStep(batch, ctx)

        def step(_i=0, m=model):
            x = F.embedding(m.tokens, m.embed)
            for lay in m.layers:
                q, k, v = cpre(x, lay["ln1"], lay["qkv"], m.cos)
                lay["k"][:, :, -1:, :].copy_(k)
                lay["v"][:, :, -1:, :].copy_(v)
                att = F.scaled_dot_product_attention(q, lay["k"], lay["v"], enable_gqa=True)
                x = cpost(x, att, lay["o"], lay["ln2"], lay["gate_up"], lay["down"])
            return chead(x, m.final_ln, m.lm_head)

        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        kv = kv_bytes(c, batch, ctx)
        t, rep = graph_time_ms(step, calls=1, target_ms=200.0)
        row(w, fh, kind="decode_step_compiled", name="llama8b_bf16", dtype="bf16", batch=batch,
            context_tokens=ctx, time_ms=t, bytes=weights_bytes + kv, replays=rep,
            note=f"torch.compile (Inductor) + one CUDA graph; first call {compile_s:.1f} s")
        del model
        torch.cuda.empty_cache()


def environment() -> dict[str, object]:
    p = torch.cuda.get_device_properties(0)
    env: dict[str, object] = {
        "gpu": p.name, "sm_count": p.multi_processor_count, "memory_gib": round(p.total_memory / 2**30, 1),
        "torch": torch.__version__, "cuda": torch.version.cuda, "cublas_lt": True,
        "python": sys.version.split()[0], "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit",
             "--format=csv"], capture_output=True, text=True, timeout=20).stdout
    except Exception as exc:  # noqa: BLE001
        env["nvidia_smi"] = repr(exc)
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        env["cpu"] = ""
    return env


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    which = sys.argv[2] if len(sys.argv) > 2 else "base"
    sections = {
        "base": (measure_copy, measure_gemm_bf16, measure_decode_steps, measure_attention, measure_gemm_fp8),
        "extra": (measure_moe, measure_gemm_fp8_rowwise, measure_compiled_steps),
    }[which]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    env = environment()
    suffix = "" if which == "base" else f"_{which}"
    with open(os.path.join(out, f"gpu_kernels{suffix}.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        for section in sections:
            t0 = time.perf_counter()
            try:
                section(w, fh)
                env[section.__name__] = f"ok in {time.perf_counter() - t0:.1f} s"
            except Exception as exc:  # noqa: BLE001 - later sections still run
                env[section.__name__] = f"failed: {type(exc).__name__}: {exc}"
            print(section.__name__, env[section.__name__], flush=True)
            torch.cuda.empty_cache()
    write_environment(env, os.path.join(out, f"gpu_kernels{suffix}_env.json"))


def write_environment(env: dict[str, object], path: str) -> None:
    """``env`` with the clocks, temperature and power just after the run, written to ``path`` and printed."""
    env["nvidia_smi_after"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw", "--format=csv"],
        capture_output=True, text=True).stdout
    with open(path, "w") as fh:
        json.dump(env, fh, indent=1)
    print(json.dumps(env, indent=1))


if __name__ == "__main__":
    main()
