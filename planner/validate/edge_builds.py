"""Which llama.cpp code path an edge_llamacpp row ran (planner/performance/matmul_units.py has the paths).

llama.cpp's CUDA prompt processing ran quantized matmuls on CUDA-core dp4a (MMQ kernels) in builds of
August-October 2023, then (PR 3776, 24 Oct 2023) as de-quantize + cuBLAS FP16 GEMM on tensor cores, and
since mid-2024 as int8 tensor-core MMQ. A row whose build is dated (``llama.cpp CUDA (Dec 2023)``,
``CUDA 12.1 (May 2024)``), whose model came out after PR 3776 (Llama 3: April 2024; Qwen3: 2025) or that ran
another front end (Docker Model Runner, Ollama) ran a tensor-core path: engine ``llamacpp``. An undated
XDAI row of a model that a 2023 build could run (Llama 2, July 2023) is predicted on the 2023 path,
engine ``llamacpp_2023_dp4a``: its build is not recorded, so this is the one assumption of these rows
(reports/validation.md, 'Method and known gaps', states it with both paths' errors).
"""

from __future__ import annotations

from collections.abc import Mapping

DP4A_ENGINE = "llamacpp_2023_dp4a"
TENSOR_CORE_ENGINE = "llamacpp"
MODELS_BEFORE_PR3776 = frozenset({"Llama 2 7B", "Llama 2 13B", "Llama 2 70B"})
"""Models released before llama.cpp PR 3776 (24 Oct 2023) that a 2023 dp4a build could run."""
DP4A_NOTE = "build date not recorded: predicted on llama.cpp's 2023 dp4a path"


def edge_engine(row: Mapping[str, str]) -> str:
    """Engine id of an edge_llamacpp.csv row: the 2023 dp4a build for undated XDAI Llama 2 CUDA rows."""
    undated_cuda = row["backend"].strip() == "llama.cpp CUDA"
    if undated_cuda and row["source_key"] == "XDAI" and row["model"] in MODELS_BEFORE_PR3776:
        return DP4A_ENGINE
    return TENSOR_CORE_ENGINE
