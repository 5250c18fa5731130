"""The eager-engine paragraph of the validation report's "Method and known gaps" (report.py): why the
lambda_vllm_a100_h100 ITL error grows with TP, and the host-time compositions examined (issue 12)."""

from __future__ import annotations

EAGER_NOTES = [
    "- lambda_vllm_a100_h100 TPOT vs TP (examined, not shipped; branch h/eager10-unshipped). Signed median",
    "  error by TP 1/2/4/8: A100 -3/-10/-46/-40 %, H100 +4/-2/-23/-14 %. The rows are MEDIAN ITLs of a",
    "  320-prompt burst under vLLM 0.5.4's prefill-first scheduler: at most 64 admissions after the first 256",
    "  stall the running batch, < 25 % of the ~72k ITLs, so the median is a plain decode step, while the model",
    "  predicts B / throughput, whose amortised prefill (18.6 of 54.8 ms at Mistral-7B A100 TP1) shrinks 1/t.",
    "  Measured median minus the modelled GPU step is flat in TP (B = 256): Mistral-7B A100 30/39/36/34 ms,",
    "  H100 15/17/17/18 ms; Llama-3.1-8B-FP8 H100 13/15/17/15 ms — a per-step host cost 1.5-1.8x (H100) and",
    "  3-4x (A100) the catalog's 10 ms; the two clusters' hosts differ and no engine constant fits both.",
    "  Tried (lambda median |err|; A100 / H100 signed by TP): (a) launches under the GPU work, T = T_serial +",
    "  max(L·τ_layer, T_gpu), τ_layer 60 µs: 21.7 % (-7/-13/-50/-44; -3/-12/-32/-26); (b) τ_layer 175 µs =",
    "  14 launches × 12.4 µs (measurements/h200_kernels.csv: eager 11.70 vs graph 6.06 ms at batch 1, 940",
    "  launches; 19.02 vs 17.86 ms at batch 256, launches hidden): 15.4 % (-7/-13/-50/-44; -3/-8/-24/-15);",
    "  (c) (b) + median ITL = one decode step: 35.9 % (-26 to -63 everywhere); (d) (c) + τ_seq 66 µs (vLLM",
    "  v0.6.0 blog: 62 % of a v0.5.3 Llama-3-8B H100 step on the host, × the modelled 12.2 ms GPU step at",
    "  B = 256) — full run: 18.3 % (-19/-16/-37/-31; +17/+15/+10/+6), TP trend gone on H100 (Mistral-7B",
    "  +17/+11/+17/+19 %), A100 flat from TP2 (Mistral-7B -19/-36/-37/-36 %), but TPOT median 14.71 → 14.97 %,",
    "  TTFT 16.51 → 16.85 % (edge_llamacpp launches hidden in prefill), other sources within 0.4 points;",
    "  (e) (d) with τ_seq 47 µs: 13.6 %, H100 -1/-2/-6/-9, A100 -27/-24/-48/-41, but 47 µs comes from this",
    "  source's own H100 row. Not shipped: one host figure cannot serve both clusters' CPUs. Mixtral-8x22B TP4",
    "  (B = 1, -77/-67 %): 70.3 GB of weights per GPU leave -0.46 GB after the 2 GiB workspace + 10 % reserve,",
    "  while vLLM's 0.9 budget (weights + profiled activations + KV, 57 KB/token/GPU) holds ≈ 40-50 sequences;",
    "  at B = 53 the ITL is 62.1 / 40.8 ms vs 95.5 / 51.4 measured (A100 / H100).",
]
"""Lines of the report's method section on the eager vLLM 0.5 TP sweep (lambda_vllm_a100_h100)."""
