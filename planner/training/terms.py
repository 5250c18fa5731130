"""What the training ledgers need from a model, a GPU and its links (read once, then plain floats).

Kernel efficiency defaults (share of dense peak the forward/backward matmuls reach before pipeline
bubbles and exposed communication; the layout's MFU follows from it):

- nvidia_ampere 0.60: Korthikanti et al. 2022, Table 5 — 56.3 % end-to-end MFU for the 1T GPT on 3,072
  A100 with selective recomputation and sequence parallelism (so the kernels alone reach more).
- nvidia_hopper 0.50: Llama 3 (Dubey et al. 2024, Table 4) — 38–43 % BF16 MFU on 8,192–16,384 H100
  end-to-end with TP8 × PP16 and long pipelines; the kernels alone reach more.
- nvidia_blackwell 0.45: assumption (younger software stack), 0.05 below Hopper.
- any other family 0.40: the book's card-4 default MFU (40 %).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Interconnect, Model
from planner.errors import InputError
from planner.ledgers.architecture import (
    attention_flop_per_pair_per_layer,
    attention_pairs,
    linear_flop_per_token,
    lm_head_flop_per_token,
    params_total,
)
from planner.training.scenario import Precision

KERNEL_EFFICIENCY_BY_FAMILY: dict[str, float] = {
    "nvidia_ampere": 0.60,
    "nvidia_hopper": 0.50,
    "nvidia_blackwell": 0.45,
}
"""Calibrated default kernel efficiency per GPU family (sources in the module docstring)."""
DEFAULT_KERNEL_EFFICIENCY = 0.40
"""Card 4 default MFU for families without a calibration."""


@dataclass(frozen=True)
class ModelTerms:
    """Per-token FLOPs and shape of one model at one sequence length."""

    model_id: str
    n_params: float
    layers: int
    hidden_size: int
    heads: int
    vocab_size: int
    seq_len: int
    linear_fwd_flop_per_token: float
    """Matmuls of every layer plus the LM head on every position, forward, FLOP/token."""
    attention_fwd_flop_per_token: float
    """Causal score and value products, forward, averaged over the sequence, FLOP/token."""

    @property
    def train_flop_per_token(self) -> float:
        """Model FLOPs per trained token: 3·(linear + attention forward) = 6N-style + attention, FLOP."""
        return 3.0 * (self.linear_fwd_flop_per_token + self.attention_fwd_flop_per_token)


def model_terms(model: Model, *, seq_len: int) -> ModelTerms:
    """Model terms at ``seq_len``: F_lin = 2·N_active + 2·d·V per token; F_attn = f_pair·L·(s + 1)/2 per token.

    Notes
    -----
    Training FLOPs per token = 3·(F_lin + F_attn) (card 4: linear 6mkn, attention 3× its forward);
    Qwen3-8B at s = 8,192: 52.66 GFLOP/token (431.368 TFLOP per 8,192 tokens).
    """
    pairs = attention_pairs(float(seq_len))
    attention = attention_flop_per_pair_per_layer(model) * model.layers * pairs / seq_len
    return ModelTerms(
        model_id=model.id,
        n_params=float(params_total(model)),
        layers=model.layers,
        hidden_size=model.hidden_size,
        heads=model.q_heads,
        vocab_size=model.vocab_size,
        seq_len=seq_len,
        linear_fwd_flop_per_token=linear_flop_per_token(model) + lm_head_flop_per_token(model),
        attention_fwd_flop_per_token=attention,
    )


@dataclass(frozen=True)
class Link:
    """One link's per-GPU bandwidth per direction (GB/s) and start-up latency (µs)."""

    id: str
    gb_per_s: float
    latency_us: float


@dataclass(frozen=True)
class GpuTerms:
    """Peak, memory and links of one GPU type for training."""

    gpu_id: str
    family: str
    peak_tflops: float
    """Dense peak at the run's matmul precision, TFLOP/s."""
    bf16_peak_tflops: float
    memory_gb: float
    gpus_per_node: int
    local: Link
    """Fastest link inside a node: NVLink-class scale-up, or the host link (PCIe) without one."""
    local_domain_gpus: int
    scale_out: Link | None
    kernel_efficiency_frac: float

    @property
    def scale_up_gpus(self) -> int:
        """GPUs a tensor-parallel group may span: a node, or an NVL72-class scale-up domain."""
        return max(self.gpus_per_node, self.local_domain_gpus)


def _link(link: Interconnect) -> Link:
    return Link(link.id, link.gb_per_s_per_direction, link.latency_us)


def kernel_efficiency(gpu: Accelerator, override_frac: float | None = None) -> float:
    """The kernel efficiency of ``gpu``: the scenario's override or the family default (module docstring)."""
    if override_frac is not None:
        return override_frac
    return KERNEL_EFFICIENCY_BY_FAMILY.get(gpu.family, DEFAULT_KERNEL_EFFICIENCY)


def gpu_terms(
    catalog: Catalog, gpu_id: str, *, precision: Precision, mfu_frac: float | None = None
) -> GpuTerms:
    """Training terms of ``gpu_id`` (InputError when it has no peak at ``precision``)."""
    gpu = catalog.gpu(gpu_id)
    if precision not in gpu.dense_tflops:
        raise InputError(f"gpu {gpu_id}: no {precision} peak in the catalog — use precision bf16")
    if gpu.scale_up is not None:
        local = _link(catalog.interconnect(gpu.scale_up))
        domain = min(gpu.scale_up_domain_gpus, max(gpu.gpus_per_node, gpu.scale_up_domain_gpus))
    else:
        local = _link(catalog.interconnect(gpu.host_link))
        domain = gpu.gpus_per_node
    return GpuTerms(
        gpu_id=gpu.id,
        family=gpu.family,
        peak_tflops=gpu.dense_tflops[precision],
        bf16_peak_tflops=gpu.dense_tflops.get("bf16", gpu.dense_tflops[precision]),
        memory_gb=gpu.memory_gb,
        gpus_per_node=gpu.gpus_per_node,
        local=local,
        local_domain_gpus=domain,
        scale_out=_link(catalog.interconnect(gpu.scale_out)) if gpu.scale_out else None,
        kernel_efficiency_frac=kernel_efficiency(gpu, mfu_frac),
    )
