"""Grouped expert GEMMs of ONE tensor-parallel rank: every expert's gate/up columns and down rows split t ways
(the layout of a MoE model served at TP t without expert parallelism), at n tokens routed top-k at random.

Run on a machine with a CUDA GPU and PyTorch (not a dependency of the planner):

    PYTHONUNBUFFERED=1 python3 tools/measure_gpu_moe_slices.py OUT_DIR

It writes OUT_DIR/gpu_moe_slices.csv (the columns of tools/measure_gpu_kernels.py, ``kind`` =
``moe_rank_gemms``: the two grouped GEMMs (torch._grouped_mm) and SwiGLU of one rank over rows already sorted
by expert; ``m_rows`` = tokens n, ``batch`` = experts E, ``n_cols`` = the rank's expert FFN width F/t,
``k_inner`` = hidden width; ``bytes`` = the touched experts' rank slices, read once) and
OUT_DIR/gpu_moe_slices_env.json; ``dtype`` fp8: the same GEMMs in FP8 W8A8 (torch._scaled_grouped_mm, rowwise
scales, bytes at 1 B per parameter). Times are medians of CUDA-graph replays over weights rotated beyond the L2.
"""

from __future__ import annotations

import csv
import os
import sys
import time

import torch
import torch.nn.functional as F
from measure_gpu_kernels import DEV, FIELDS, environment, graph_time_ms, rotation, row, write_environment

SHAPES = [  # (name, experts E, top-k, hidden H, expert FFN F, TP degrees)
    ("mixtral_8x7b", 8, 2, 4096, 14336, (1, 2, 4, 8)),
    ("qwen3_235b_a22b", 128, 8, 4096, 1536, (4, 8)),
    ("deepseek_v3", 256, 8, 7168, 2048, (8,)),
]
TOKENS = [1, 8, 32, 128, 512, 2048]


def measure_slices(w, fh) -> None:
    for name, e, k, h, f, tps in SHAPES:
        for tp in tps:
            fr = f // tp
            one = 2.0 * e * 3 * h * fr
            r = rotation(one)
            gate_up = [torch.randn(e, 2 * fr, h, device=DEV, dtype=torch.bfloat16) * 0.02 for _ in range(r)]
            down = [torch.randn(e, h, fr, device=DEV, dtype=torch.bfloat16) * 0.02 for _ in range(r)]
            for n in TOKENS:
                experts = torch.topk(torch.rand(n, e, device=DEV), k, dim=-1).indices.reshape(-1)
                counts = torch.bincount(experts, minlength=e)
                touched = int((counts > 0).sum())
                offs = torch.cumsum(counts, 0).to(torch.int32)
                x = torch.randn(n * k, h, device=DEV, dtype=torch.bfloat16)

                def step(i, x=x, offs=offs, gate_up=gate_up, down=down, r=r):
                    gu = torch._grouped_mm(x, gate_up[i % r].transpose(-2, -1), offs=offs)
                    g, u = gu.chunk(2, dim=-1)
                    return torch._grouped_mm(F.silu(g) * u, down[i % r].transpose(-2, -1), offs=offs)

                t, rep = graph_time_ms(step, calls=max(r, 4))
                row(w, fh, kind="moe_rank_gemms", name=f"{name}_tp{tp}", dtype="bf16", m_rows=n, n_cols=fr,
                    k_inner=h, batch=e, time_ms=t, flop=2.0 * n * k * 3 * h * fr, bytes=2.0 * touched * 3 * h * fr,
                    replays=rep, note=f"one TP{tp} rank's slices of {touched} touched experts; random top-{k} routing; "
                    "grouped gate/up + SwiGLU + grouped down")
                print(f"{name} TP{tp} n={n}: {t:.4f} ms ({touched} experts)", flush=True)
                if FP8_GROUPED:
                    measure_fp8(w, fh, name, tp, e, k, h, fr, n, touched, offs, r, gate_up, down)
            del gate_up, down
            torch.cuda.empty_cache()


FP8_GROUPED = hasattr(torch, "_scaled_grouped_mm")
FP8 = torch.float8_e4m3fn


def measure_fp8(w, fh, name, tp, e, k, h, fr, n, touched, offs, r, gate_up, down) -> None:
    """The same rank's GEMMs in FP8 (W8A8, per-token × per-output-channel scales, bf16 out:
    torch._scaled_grouped_mm), the layout of an FP8 checkpoint served by a fused MoE kernel."""
    try:
        gu8 = [g.to(FP8) for g in gate_up]
        dn8 = [d.to(FP8) for d in down]
        x8 = torch.randn(n * k, h, device=DEV).to(FP8)
        sx = torch.ones(n * k, device=DEV, dtype=torch.float32)
        s_gu = torch.ones(e, 2 * fr, device=DEV, dtype=torch.float32)
        s_dn = torch.ones(e, h, device=DEV, dtype=torch.float32)

        def step(i, x8=x8, offs=offs):
            gu = torch._scaled_grouped_mm(x8, gu8[i % r].transpose(-2, -1), sx, s_gu, offs=offs, out_dtype=torch.bfloat16)
            g, u = gu.chunk(2, dim=-1)
            a8 = (F.silu(g) * u).to(FP8)
            return torch._scaled_grouped_mm(a8, dn8[i % r].transpose(-2, -1), sx, s_dn, offs=offs, out_dtype=torch.bfloat16)

        t, rep = graph_time_ms(step, calls=max(r, 4))
        row(w, fh, kind="moe_rank_gemms", name=f"{name}_tp{tp}", dtype="fp8", m_rows=n, n_cols=fr, k_inner=h,
            batch=e, time_ms=t, flop=2.0 * n * k * 3 * h * fr, bytes=1.0 * touched * 3 * h * fr, replays=rep,
            note=f"FP8 W8A8 rowwise scales, torch._scaled_grouped_mm; {touched} touched experts")
        print(f"{name} TP{tp} n={n} fp8: {t:.4f} ms", flush=True)
    except Exception as exc:  # noqa: BLE001 - the bf16 rows stand without it
        print(f"{name} TP{tp} n={n} fp8: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    finally:
        torch.cuda.empty_cache()


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    env = environment()
    with open(os.path.join(out, "gpu_moe_slices.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        t0 = time.perf_counter()
        measure_slices(w, fh)
        env["measure_slices"] = f"ok in {time.perf_counter() - t0:.1f} s"
    write_environment(env, os.path.join(out, "gpu_moe_slices_env.json"))


if __name__ == "__main__":
    main()
