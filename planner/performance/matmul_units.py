"""Which units run a deployment's matmuls: the tensor cores, or the CUDA cores' int8 dot product (dp4a).

Every engine in catalogs/engines.yaml runs its GEMMs on tensor cores (``prompt_matmul: tensor_cores``): the
peak is the accelerator's dense tensor rate for the weight format's compute format. llama.cpp builds of
August-October 2023 did not: their CUDA backend ran every matrix-matrix product of quantized weights
(prompt processing included) in the MMQ kernels, which multiply int8-packed blocks with ``__dp4a`` on the
CUDA cores (ggml-cuda.cu at llama.cpp as vendored by llama-cpp-python 0.2.11, Oct 2023: ``g_mul_mat_q =
true`` and MMQ for every quantized src0 at compute capability >= 6.1). From llama.cpp PR 3776 (24 Oct 2023)
to mid-2024, Volta and newer ran batches above 32 tokens as de-quantize + cuBLAS FP16 GEMM on tensor cores
(llama-cpp-python 0.2.24 and 0.2.76: ``MMQ_MAX_BATCH_SIZE 32``); since mid-2024 MMQ uses int8 tensor-core
MMA. Engine ``llamacpp_2023_dp4a`` is the 2023 path.

Peak of the dp4a path (one dp4a = 4 int8 MACs = 8 ops; 64 per SM per clock, the int32 multiply-add rate):

    Π_dp4a = SMs × 64 × 8 × f_boost   (TOPS; Accelerator.cuda_core_int8_tops)

A100: 108 × 64 × 8 × 1.41 GHz = 78.0 TOPS, 25 % of its 312 TFLOP/s FP16 tensor peak. The step functions
apply the same GEMM efficiency η(n, t) to it as to a tensor-core peak (no separate efficiency).
Attention and the LM head (F16 in ggml) are charged at the same peak: < 2 % of a 512-token prompt's FLOPs.
"""

from __future__ import annotations

from planner.catalog.schema import Accelerator, Engine, NumericFormat


def uses_dp4a(engine: Engine, weight_format: NumericFormat) -> bool:
    """Whether ``engine`` runs the matmuls of ``weight_format`` on the CUDA cores' int8 dot product."""
    return engine.prompt_matmul == "dp4a" and weight_format.weight_only


def matmul_peak_tflops(
    gpu: Accelerator, weight_format: NumericFormat, engine: Engine, *, tensor_peak_tflops: float
) -> float | None:
    """Peak rate of the units the engine runs this format's matmuls on, TFLOP/s (TOPS for dp4a).

    ``tensor_peak_tflops`` (the dense tensor peak of the format's compute format) unless the engine runs
    quantized weights on dp4a; then ``gpu.cuda_core_int8_tops``, None when the catalog lacks it (the
    caller, performance.terms.deployment_terms, refuses the deployment with missing_dp4a_message).
    """
    if not uses_dp4a(engine, weight_format):
        return tensor_peak_tflops
    return gpu.cuda_core_int8_tops


def missing_dp4a_message(gpu: Accelerator, engine: Engine) -> str:
    """Why a dp4a engine cannot run on ``gpu``: the field to add, and the engine to use instead."""
    return (
        f"catalogs/accelerators.yaml: {gpu.id} has no cuda_core_int8_tops, which engine {engine.id} needs "
        "for dp4a matmuls; add it (SMs × 64 × 8 × boost GHz / 1000) or use engine llamacpp"
    )
