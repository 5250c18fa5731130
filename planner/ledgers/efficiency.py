"""Efficiency terms that separate a roofline from a real engine (the non-ideal part of every step time).

Each term is named, has a physical meaning and takes its parameters from the catalog (accelerator
``efficiency`` defaults and the per-family ``calibration`` record); ``EfficiencyTerms.ideal()`` turns them
all off (efficiency 1, no overhead, no paging waste), which is what ``--ideal`` prints.

Terms:
- decode bandwidth efficiency η_m (MBU of the weight/KV stream);
- prefill compute efficiency η_p(n) = η_max · n / (n + n_half): small prefills cannot fill the tensor cores;
- fixed per-step overhead T_overhead (scheduler, kernel launches, sampling);
- weight-read efficiency of de-quantizing kernels (W4A16/W8A16 read fewer bytes but not at full speed);
- TP all-reduce bus-bandwidth efficiency (achieved busbw / link spec);
- KV paging waste: a sequence of H tokens holds ceil(H/p)·p slots (p = page size in tokens).

References: card 1 (MFU/MBU), card 3 (paging waste; measured MBU 33–65 %, prefill MFU 58–62 %),
card 6 (busbw vs algbw), README rule "never add an overhead twice when an efficiency already contains it".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

Num = Any


@dataclass(frozen=True)
class EfficiencyTerms:
    """Parameters of the efficiency terms of one (accelerator, weight format)."""

    decode_mbu_frac: float = 1.0
    prefill_mfu_frac: float = 1.0
    prefill_half_tokens: float = 0.0
    """Tokens per prefill at which compute efficiency is half its maximum (0 = always at maximum)."""
    step_overhead_s: float = 0.0
    weight_read_efficiency_frac: float = 1.0
    """Bandwidth efficiency of the weight stream relative to η_m (below 1 for de-quantizing kernels)."""
    link_efficiency_frac: float = 1.0
    kv_page_tokens: float = 1.0

    @classmethod
    def ideal(cls) -> EfficiencyTerms:
        """All terms off: the roofline lower bound."""
        return cls()

    def as_dict(self) -> dict[str, float]:
        """Parameter values by name."""
        return asdict(self)


def decode_bandwidth_efficiency_frac(terms: EfficiencyTerms, batch: Num) -> Num:
    """Achieved fraction of peak bandwidth while streaming weights and KV, η_m (constant in batch).

    The rise of measured MBU with batch (33 % → 65 % on the book's RTX PRO 6000) is explained by the fixed
    per-step overhead, which is a separate term: counting it here too would add it twice.
    """
    return terms.decode_mbu_frac + 0.0 * batch


def prefill_compute_efficiency_frac(terms: EfficiencyTerms, tokens: Num) -> Num:
    """Prefill compute efficiency η_p(n) = η_max · n / (n + n_half), fraction of the dense peak."""
    return terms.prefill_mfu_frac * tokens / (tokens + terms.prefill_half_tokens)


def decode_compute_efficiency_frac(terms: EfficiencyTerms, tokens: Num) -> Num:
    """Compute efficiency of a decode step's matmuls (few rows): the same saturation curve as prefill."""
    return prefill_compute_efficiency_frac(terms, tokens)


def kv_paging_factor(terms: EfficiencyTerms, context_tokens: Num) -> Num:
    """KV slots held per token of history with paged allocation: ceil(H/p)·p / H (card 3 paging waste)."""
    page = terms.kv_page_tokens
    ctx = np.maximum(context_tokens, 1.0)
    return np.ceil(ctx / page) * page / ctx
