"""The mixture-of-experts paragraphs of the validation report's "Method and known gaps" (report.py)."""

from __future__ import annotations

MOE_NOTES = [
    "- EP rows (ML.ENERGY DeepSeek-V3.1 \"EP8\", vLLM on 8 x B200) are predicted as EP inside the TP group",
    "  (performance.moe ``ep_in_tp``: attention TP8, 32 whole experts per GPU, summed by the TP all-reduce,",
    "  no all-to-all). Evidence: in every ML.ENERGY row throughput x median ITL = 0.7-1.0 x max_num_seqs",
    "  (EP8: 7.6 of 8 and 1,742 of 2,048), the limit of ONE engine; eight attention-DP engines would run",
    "  8x that. TP8 → EP in TP: ITL 0.45 → 0.55x (B = 8) and 0.32 → 0.32x (B = 2,048), throughput",
    "  2.35 → 1.93x and 3.49 → 3.49x; TP1·DP8·EP8 would give ITL 0.67x and 0.18x. Validated, not fitted:",
    "  vLLM's DeepSeek decode sits near 16 ms at small batch (B200 EP8 B = 8: 16.8 ms, model 9.2; H100",
    "  AWQ TP8 batch 1: 16.1 ms, model 5.2) while SGLang on H200 TP8 at N = 8 measures 12.8 ms (model",
    "  13.9): ≈ 125-180 µs per layer of engine cost that one source cannot locate. ML.ENERGY prompt",
    "  lengths are not recorded (256 tokens assumed); NVLS in-switch all-reduce is not modelled.",
    "- Load imbalance over e expert groups: the expected maximum of e Gaussians, c_e = 1.424 at e = 8, in",
    "  place of the bound sqrt(2 ln e) = 2.04, and the weight stream charges the busiest group's touched",
    "  experts u + c_e·sqrt(u(1 − U/E)), u = U/e, in place of λ·U/e. A top-k routing simulation",
    "  (DeepSeek E = 256, k = 8, 8 groups; tests/test_moe_ep.py) gives token loads 1.52/1.18/1.06 and",
    "  touched experts 10.6/30.4/32 at n = 8/64/512 tokens; now 1.47/1.17/1.06 and 10.5/30.5/32 (was",
    "  1.67/1.24/1.08 and 12.0/32/32). Only EP layouts move; no example plan changes cost.",
    "- All-to-all floor (attention-DP EP): 2·(τ_e + (D − 1)·α) = 2·(4.4 + 7·0.82) = 20.3 µs per MoE layer",
    "  at EP8 with CUDA graphs, the 14 hops of one 8-GPU ring all-reduce plus one launch; one 8-GPU",
    "  all-reduce of 1 KiB measures 17.0 µs (MSCCLPP-NDMV4 A100), 25.6 (AZ-AIBG-H100), 29.9 (AZ-AIBG-H200)",
    "  in nccl_allreduce_small_msg.csv. DeepSeek (58 MoE layers) pays 1.18 ms per step, 1.5-1.7 ms at the",
    "  Azure figures: kept.",
    "- MoE bias left on the fitted TensorRT-LLM offline rows: Mixtral 8x22B +11/+15 % and Llama 4 Scout",
    "  +36 % fast, Qwen3-235B −5..−27 % and Llama 4 Maverick −43 % slow. Scout and Qwen3 both run 32",
    "  rows per expert, so no tokens-per-expert GEMM term moves them apart. Maverick at the 512-sequence",
    "  cap measures 16.1 ms per output step, less than its modelled weight read alone at 0.65 MBU plus KV,",
    "  all-reduces and host (15.8 + 3.0 + 4.0 + 1.4 ms): the run held more sequences than 512 or streamed",
    "  near peak. Examined, not adopted: a fixed time per MoE layer (routing, permute and combine kernels,",
    "  27 µs from the blog's gpt-oss-20b vs Llama-3.1-8B intercepts): gpt-oss-20b ITL 0.71 → 0.91x and",
    "  Mixtral 8x22B H100 1.15 → 1.08x, but Qwen3-235B 0.78/0.73 → 0.67/0.67x and SGLang DeepSeek N = 8",
    "  TPOT 1.09 → 1.21x; the vLLM DeepSeek rows gain only 0.55 → 0.64x (EP8) and 0.32 → 0.42x (AWQ).",
]
"""Lines of the report's method section on MoE rows, expert parallelism and the all-to-all (issue 12 scope 3)."""
