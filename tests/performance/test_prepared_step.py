"""The chunked step prepared once for many loads (planner.performance.mixed_step.MixedStep) evaluates its
load-free parts at construction: the decode rows' attention overlap loss per sequence, the TP all-reduce, the
pipeline-stage transfer, the expert all-to-all and the host time (planner.performance.steps / moe), through the
ledgers' own split formulas (ledgers.collectives.in_domain_allreduce, communication.transfer_at_s,
inference.engine_host_at_s). Each prepared part gives the numbers of the function it stands for (the TP
all-reduce: of the named algorithm choice, card 11), on a stacked table of dense and MoE models, TP 1-8, PP 1-2,
EP and an NVLink-switch GPU; and the ridge-loss factor evaluated as exp/log is the two powers to floating
rounding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from planner import performance as perf
from planner.catalog import Catalog
from planner.ledgers import efficiency as eff
from planner.ledgers.communication import collective_launch_s, transfer_s
from planner.performance import moe
from planner.performance.mixed_step import MixedStep, mixed_step
from planner.performance.stack import stack_terms
from planner.performance.steps import (
    _pp_parts,
    _pp_transfer_at,
    host_at,
    host_parts,
    host_s,
    tp_allreduce,
    tp_allreduce_choice,
)

LAYOUTS = [  # (model, gpu, format, tp, pp, ep)
    ("llama_3_1_8b", "h100_sxm", "fp8", 1, 1, 1),
    ("llama_3_1_70b", "h100_sxm", "fp8", 2, 1, 1),
    ("llama_3_1_70b", "h200_sxm", "fp8", 4, 2, 1),
    ("llama_3_1_70b", "gb200_nvl72", "fp8", 8, 1, 1),
    ("qwen3_30b_a3b", "h200_sxm", "fp8", 1, 1, 4),
    ("mixtral_8x7b", "h100_sxm", "bf16", 2, 2, 1),
]


def _table(catalog: Catalog) -> perf.DeploymentTerms:
    rows = [
        perf.deployment_terms(
            catalog, model=catalog.model(m), gpu=catalog.gpu(g), weight_format=catalog.format(f),
            kv_format=catalog.format("bf16"), tp=tp, pp=pp, ep=ep,
        )
        for m, g, f, tp, pp, ep in LAYOUTS
    ]
    return stack_terms(rows)


def test_overlap_factor_is_the_two_powers_to_rounding() -> None:
    """(1 + r^q)^(1/q) as exp(ln(1 + exp(q·ln r))/q): 2^(1/2.85) = 1.27534 at the ridge, 1 far from it, 0 for
    both times 0; within 4e-16 of the powers over r in [0, 1]."""
    r = np.concatenate([[0.0, 1e-300, 1e-12], np.linspace(0.0, 1.0, 1001)])
    for q in (1.0, 2.0, 2.85, 8.0):
        powers = (1.0 + r**q) ** (1.0 / q)
        assert eff.overlap_factor(q, r, 1.0) == pytest.approx(powers, rel=4e-16, abs=0.0)
    assert float(eff.overlap_factor(2.85, 1.0, 1.0)) == pytest.approx(2 ** (1 / 2.85), rel=1e-15)
    assert float(eff.overlap_factor(2.85, 1.0, 1.0)) == pytest.approx(1.27534, abs=1e-5)
    assert float(eff.overlap_factor(2.85, 0.0, 5e-3)) == 1.0
    e = eff.EfficiencyTerms(overlap_exponent=2.85)
    assert float(eff.overlapped_stage_s(e, 0.0, 0.0)) == 0.0 and float(eff.overlap_loss_s(e, 0.0, 0.0)) == 0.0
    # a q = ∞ element among finite ones takes the powers: its max
    mixed = eff.overlap_factor(np.array([2.85, np.inf]), np.array([1.0, 1.0]), np.array([1.0, 1.0]))
    assert mixed.tolist() == pytest.approx([2 ** (1 / 2.85), 1.0], rel=1e-15)


def test_prepared_parts_give_the_functions_numbers(catalog: Catalog) -> None:
    t = _table(catalog)
    message = np.array([[0.0, 8192.0 * 2, 256 * 8192.0 * 2, 4096 * 8192.0 * 2]] * len(LAYOUTS))
    batch = np.array([[0.0, 1.0, 37.5, 512.0]] * len(LAYOUTS))
    # the TP all-reduce kept for many loads is the named algorithm choice (card 11) + the engine launch
    prepared = tp_allreduce(t)
    launch_s = collective_launch_s(prepared.ranks, launch_us=t.collective_launch_us)
    choice = tp_allreduce_choice(t, message)
    assert prepared.time_s(message) == pytest.approx(choice.time_s + launch_s, rel=1e-12, abs=0.0)
    assert prepared.startup_s(message) == pytest.approx(choice.startup_s + launch_s, rel=1e-12, abs=0.0)
    assert np.all(prepared.time_s(message)[[0, 4]] == launch_s[[0, 4]])  # TP1 rows: the launch alone
    assert np.all(prepared.time_s(message)[[1, 2, 3, 5], 1:] > launch_s[[1, 2, 3, 5]])
    direct: Any = message  # transfer_s works on arrays
    assert np.array_equal(_pp_transfer_at(_pp_parts(t), message), (t.pp - 1) * transfer_s(
        direct, bandwidth_gb_per_s=t.pp_link_gb_per_s, latency_us=t.pp_link_latency_us))
    assert np.array_equal(host_at(host_parts(t, t.efficiency.step_overhead_s), batch),
                          t.efficiency.step_overhead_s + host_s(t, batch))
    a2a = moe.all_to_all_at(moe.all_to_all_parts(t), batch)
    assert np.all(a2a[[0, 1, 2, 3, 5]] == 0.0) and np.all(a2a[4, 1:] > 0.0)  # only the EP4 row sends tokens


def test_the_prepared_step_is_the_step(catalog: Catalog) -> None:
    """MixedStep (parts prepared once, the attention overlap loss per sequence) against the step built afresh
    for each load, row by row (a table of one deployment prepares nothing on row subsets): the same step to
    floating rounding, at decode-only, mixed and prefill-only loads."""
    t = _table(catalog)
    table = MixedStep(t, decode_context_tokens=2300.0, prompt_tokens=2048.0)
    loads = [(np.full((len(LAYOUTS), 1), b), np.full((len(LAYOUTS), 1), c)) for b, c in
             ((1.0, 0.0), (64.0, 512.0), (256.0, 2048.0), (0.0, 2048.0))]
    for b, c in loads:
        got = table(decode_batch=b, prefill_tokens=c)
        for i, layout in enumerate(LAYOUTS):
            row = perf.deployment_terms(
                catalog, model=catalog.model(layout[0]), gpu=catalog.gpu(layout[1]),
                weight_format=catalog.format(layout[2]), kv_format=catalog.format("bf16"), tp=layout[3],
                pp=layout[4], ep=layout[5],
            )
            one = mixed_step(row, decode_batch=float(b[i, 0]), decode_context_tokens=2300.0,
                             prefill_tokens=float(c[i, 0]), prompt_tokens=2048.0)
            assert float(got[i, 0]) == pytest.approx(float(one), rel=1e-14), (layout, b[i, 0], c[i, 0])
    # the decode rows' attention loss is b times one sequence's: ‖(b·a, b·k)‖_q = b·‖(a, k)‖_q
    assert np.all(table.attention_loss_per_sequence_s >= 0.0)
