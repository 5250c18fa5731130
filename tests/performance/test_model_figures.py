"""Shortcuts of the deployment terms and the step give the numbers the long way gives, bit for bit: the
model/format figures and calibrated efficiencies kept per catalog record (planner/performance/model_figures.py),
the routing figures a step computes once (planner.performance.moe.routing), stacked columns read in one pass
(planner.performance.stack.stack_terms), a step's load-independent parts prepared once for many loads
(planner.performance.mixed_step.MixedStep)."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from planner import performance as perf
from planner.catalog import Catalog
from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff
from planner.performance import model_figures as mf
from planner.performance import moe
from planner.performance.mixed_step import MixedStep, mixed_step
from planner.performance.stack import stack_terms
from planner.performance.steps import decode_step, prefill_step


def _terms(catalog: Catalog, model: str, weight: str = "fp8", *, tp: int = 1, ep: int = 1) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.models[model], gpu=catalog.accelerators["h200_sxm"],
        weight_format=catalog.formats[weight], kv_format=catalog.formats["fp8"], tp=tp, ep=ep,
    )


def test_model_figures_are_the_ledgers_numbers_and_change_with_their_inputs(catalog: Catalog) -> None:
    model, fp8, bf16 = catalog.models["qwen3_235b_a22b"], catalog.formats["fp8"], catalog.formats["bf16"]
    hp = catalog.format(fp8.high_precision).bytes_per_value
    first = mf.model_figures(model, fp8, fp8, high_precision_bytes_per_value=hp)
    assert mf.model_figures(model, fp8, fp8, high_precision_bytes_per_value=hp) is first  # kept
    assert first.weights_bytes == arch.weights_bytes(model, fp8, high_precision_bytes_per_value=hp)
    assert first.linear_flop_per_token == arch.linear_flop_per_token(model)
    assert first.kv_bytes_per_token_per_layer == arch.kv_bytes_per_token_per_layer(model, kv_bytes_per_value=1.0)
    # another weight format, KV format, high-precision width or model record: a new value, not the kept one
    other_weights = mf.model_figures(model, bf16, fp8, high_precision_bytes_per_value=hp)
    assert other_weights.weights_bytes == arch.weights_bytes(model, bf16, high_precision_bytes_per_value=hp)
    assert other_weights.weights_bytes > first.weights_bytes
    assert mf.model_figures(model, fp8, bf16, high_precision_bytes_per_value=hp).kv_bytes_per_token_per_layer == (
        2 * first.kv_bytes_per_token_per_layer
    )
    assert mf.model_figures(model, fp8, fp8, high_precision_bytes_per_value=4.0).weights_bytes > first.weights_bytes
    deeper = model.model_copy(update={"layers": model.layers + 2})
    assert mf.model_figures(deeper, fp8, fp8, high_precision_bytes_per_value=hp).weights_bytes > first.weights_bytes


def test_deployment_terms_equal_a_fresh_evaluation(catalog: Catalog) -> None:
    kept = [_terms(catalog, m, w, tp=2) for m in ("qwen3_235b_a22b", "llama_3_1_8b") for w in ("fp8", "bf16")]
    mf._FIGURES.clear()
    mf._EFFICIENCY.clear()
    fresh = [_terms(catalog, m, w, tp=2) for m in ("qwen3_235b_a22b", "llama_3_1_8b") for w in ("fp8", "bf16")]
    assert kept == fresh  # frozen dataclasses: every field equal
    assert fresh[0].efficiency is _terms(catalog, "qwen3_235b_a22b", "fp8", tp=4).efficiency  # one per GPU/format


def test_calibrated_efficiency_is_keyed_by_the_parameters_values(catalog: Catalog) -> None:
    gpu = catalog.accelerators["h200_sxm"]
    params = dict(catalog.calibration[gpu.family].parameters)
    base = mf.calibrated_efficiency(params, gpu, weight_only=False)
    assert base == eff.calibrated_efficiency_terms(
        params, decode_mbu_frac=gpu.efficiency.decode_mbu_frac, prefill_mfu_frac=gpu.efficiency.prefill_mfu_frac,
        link_efficiency_frac=gpu.efficiency.link_efficiency_frac, weight_only=False,
    )
    assert mf.calibrated_efficiency(dict(params), gpu, weight_only=False) is base  # same values, another dict
    slower = mf.calibrated_efficiency({**params, "step_overhead_ms": 9.0}, gpu, weight_only=False)
    assert slower.step_overhead_s == 9.0e-3 != base.step_overhead_s
    other_gpu = catalog.accelerators["l40s"]
    assert mf.calibrated_efficiency(params, other_gpu, weight_only=False).decode_mbu_frac == min(
        other_gpu.efficiency.decode_mbu_frac * params.get("decode_mbu_scale", 1.0), 1.0
    )


def test_a_steps_routing_figures_are_the_ones_each_term_computes(catalog: Catalog) -> None:
    terms = stack_terms([_terms(catalog, "qwen3_235b_a22b", tp=1, ep=8), _terms(catalog, "qwen3_235b_a22b", tp=8),
                         _terms(catalog, "llama_3_1_8b", tp=2)])
    tokens = np.array([[1.0, 3.0, 40.0, 700.0]])
    routed = moe.routing(terms, tokens)
    assert np.array_equal(moe.weights_read_bytes(terms, tokens, routed), moe.weights_read_bytes(terms, tokens))
    for kw in ({"peak_flop_per_s": 1e15, "eta_max": 0.6}, {"peak_flop_per_s": 2e14, "eta_max": 0.4}):
        assert np.array_equal(moe.expert_gemm_s(terms, tokens, routed=routed, **kw), moe.expert_gemm_s(terms, tokens, **kw))
    # the steps built on them: one pass per step gives the terms' numbers (imbalance > 1 on the EP row)
    assert float(routed[1][0, 0]) > 1.0 and np.all(routed[1][1:] == 1.0)
    union = moe.touched_experts(terms, tokens)
    e = terms.expert_parallel
    u = union / e
    busiest = e * np.minimum(u + moe.max_normal_constant(e) * np.sqrt(u * (1 - union / terms.experts_routed)),
                             terms.experts_routed / e)
    expected = terms.weights_read_fixed_bytes * terms.attention_dp + terms.moe_layers * busiest * terms.expert_bytes
    assert np.array_equal(perf.weights_read_bytes(terms, tokens), expected)
    step = mixed_step(terms, decode_batch=tokens, decode_context_tokens=2000.0, prefill_tokens=2 * tokens,
                      prompt_tokens=1500.0)
    assert step.shape == (3, 4) and np.all(np.isfinite(step))
    assert np.all(np.diff(decode_step(terms, batch=tokens, context_tokens=2000.0).total_s, axis=1) > 0)
    assert np.all(np.diff(prefill_step(terms, prompt_tokens=tokens).total_s, axis=1) > 0)


def test_stacked_columns_hold_each_records_numbers(catalog: Catalog) -> None:
    rows = [_terms(catalog, m, w, tp=t) for m in ("qwen3_235b_a22b", "llama_3_1_8b") for w in ("fp8", "bf16")
            for t in (1, 2)]
    stacked = stack_terms(rows)
    for f in fields(perf.DeploymentTerms):
        if f.name == "efficiency":
            continue
        column = getattr(stacked, f.name)
        assert column.shape == (len(rows), 1) and column.dtype == float
        assert np.array_equal(column[:, 0], np.array([getattr(r, f.name) for r in rows], dtype=float)), f.name
    for f in fields(eff.EfficiencyTerms):
        column = getattr(stacked.efficiency, f.name)
        assert np.array_equal(column[:, 0], np.array([getattr(r.efficiency, f.name) for r in rows], dtype=float))
    assert stacked.tp[:, 0].tolist() == [1, 2] * 4 and np.ravel(stacked.tp).flags["C_CONTIGUOUS"]


def _table(catalog: Catalog) -> perf.DeploymentTerms:
    """Dense and MoE rows, with and without EP, TP and PP (stacked)."""
    rows = [_terms(catalog, "qwen3_235b_a22b", tp=1, ep=8), _terms(catalog, "qwen3_235b_a22b", tp=8),
            _terms(catalog, "llama_3_1_8b", tp=2), _terms(catalog, "llama_3_1_8b", "bf16")]
    pp2 = perf.deployment_terms(
        catalog, model=catalog.models["llama_3_1_70b"], gpu=catalog.accelerators["h100_sxm"],
        weight_format=catalog.formats["fp8"], kv_format=catalog.formats["fp8"], tp=4, pp=2,
    )
    return stack_terms([*rows, pp2])


def test_a_prepared_step_gives_each_load_the_step_mixed_step_gives(catalog: Catalog) -> None:
    terms = _table(catalog)
    context = np.array([[3000.0], [9000.0], [1200.0], [500.0], [70000.0]])
    prompt = np.array([[2000.0], [800.0], [1000.0], [1.0], [60000.0]])
    prepared = MixedStep(terms, decode_context_tokens=context, prompt_tokens=prompt, verify_tokens=3.0,
                         cached_tokens=100.0)
    rng = np.random.default_rng(7)
    for _ in range(5):  # the same object at many loads, in any order: each one's own step
        batch, prefill = rng.uniform(0.0, 300.0, (5, 3)), rng.uniform(0.0, 4000.0, (5, 3))
        fresh = mixed_step(terms, decode_batch=batch, decode_context_tokens=context, prefill_tokens=prefill,
                           prompt_tokens=prompt, verify_tokens=3.0, cached_tokens=100.0)
        assert np.array_equal(prepared(decode_batch=batch, prefill_tokens=prefill), fresh)
    # what it was prepared with is read: another history, prompt or verify count gives another step
    load = {"decode_batch": np.full((5, 1), 64.0), "prefill_tokens": np.full((5, 1), 512.0)}
    base = prepared(**load)
    longer = MixedStep(terms, decode_context_tokens=2 * context, prompt_tokens=prompt, verify_tokens=3.0,
                       cached_tokens=100.0)(**load)
    assert np.all(longer > base)
    assert np.all(MixedStep(terms, decode_context_tokens=context, prompt_tokens=prompt)(**load) < base)


def test_the_parts_of_kv_all_to_all_and_imbalance_compose_to_the_formulas(catalog: Catalog) -> None:
    from planner.performance.memory import kv_bytes_of, kv_bytes_per_gpu, kv_bytes_per_sequence, kv_parts

    terms = _table(catalog)
    context, batch = np.array([[3000.0], [9000.0], [1200.0], [500.0], [70000.0]]), np.array([[1.0, 7.0, 300.0]])
    expected = (batch * kv_bytes_per_sequence(terms, context) * eff.kv_paging_factor(terms.efficiency, context)
                / (terms.kv_shards * terms.pp))
    assert np.array_equal(kv_bytes_per_gpu(terms, batch=batch, context_tokens=context), expected)
    assert np.array_equal(kv_bytes_of(batch, kv_parts(terms, context)), expected)
    tokens = np.array([[1.0, 16.0, 4096.0]])
    a2a = moe.all_to_all_s(terms, tokens)
    assert a2a[0, 0] > 0.0 and np.all(a2a[1:] == 0.0)  # only the EP8 row sends tokens to other ranks
    e = np.array([[8.0], [1.0]])
    lam = moe.imbalance_factor(e, tokens)
    mu = tokens / 8.0
    assert np.array_equal(lam[0], np.minimum(1.0 + moe.max_normal_constant(8.0) * np.sqrt((1.0 - 1.0 / 8.0) / mu[0]), 8.0))
    assert np.all(lam[1] == 1.0)


def test_group_links_are_kept_per_gpu_and_layout_refusals_included(catalog: Catalog) -> None:
    from planner.performance import links as links_module

    gpu = catalog.accelerators["h100_sxm"]
    first = perf.group_links(catalog, gpu, tp=8, pp=2)
    assert perf.group_links(catalog, gpu, tp=8, pp=2) is first  # kept
    assert first == links_module.pick_group_links(catalog, gpu, tp=8, pp=2)
    assert perf.group_links(catalog, gpu, tp=2, pp=1).pp is None and first.pp is not None  # another layout
    for _ in range(2):  # the refusal, evaluated once, is raised each time with its message
        with pytest.raises(perf.UnsupportedDeployment, match="leaves the 8-GPU NVLink domain"):
            perf.group_links(catalog, gpu, tp=16, pp=1)
    bigger = gpu.model_copy(update={"scale_up_domain_gpus": 16})  # another record: evaluated for itself
    assert perf.group_links(catalog, bigger, tp=16, pp=1).tp is not None


def test_the_prepared_round_is_kept_per_terms_and_column_bytes(catalog: Catalog) -> None:
    from planner.performance.optimizations import round_s
    from planner.performance.step_memo import kept_round_step

    terms = _table(catalog)
    context, prompt = np.full((5, 1), 3000.0), np.full((5, 1), 2000.0)
    step = kept_round_step(terms, None, context_tokens=context, prompt_tokens=prompt)
    assert kept_round_step(terms, None, context_tokens=context.copy(), prompt_tokens=prompt.copy()) is step
    load = {"decode_batch": np.full((5, 1), 32.0), "prefill_tokens": np.full((5, 1), 256.0)}
    plain = round_s(terms, None, decode_context_tokens=context, prompt_tokens=prompt, **load)
    assert np.array_equal(step(**load), plain)
    # a changed input is a new prepared round with its own numbers
    longer = kept_round_step(terms, None, context_tokens=context * 2, prompt_tokens=prompt)
    assert longer is not step and np.all(longer(**load) > plain)
    other_terms = _table(catalog)
    assert kept_round_step(other_terms, None, context_tokens=context, prompt_tokens=prompt) is not step
    assert kept_round_step(terms, None, context_tokens=context, prompt_tokens=prompt[:, 0]) is not step  # shape


def test_terms_left_out_of_tables_without_pp_ep_or_tp_rows_change_no_row(catalog: Catalog) -> None:
    """A table without pipeline stages, expert parallelism or TP ranks skips (p − 1)·T_pp, the all-to-all and
    the all-reduce (each +0 on its rows): its rows' steps are the ones they get in a table that has them all."""
    plain = [_terms(catalog, "llama_3_1_8b"), _terms(catalog, "llama_3_1_8b", "bf16"), _terms(catalog, "qwen3_235b_a22b")]
    alone = stack_terms(plain)
    mixed = _table(catalog)  # EP8, TP8, TP2 and PP2 rows
    together = stack_terms([*plain, _terms(catalog, "qwen3_235b_a22b", tp=1, ep=8), _terms(catalog, "llama_3_1_8b", tp=2)])
    assert not MixedStep(alone, decode_context_tokens=1000.0, prompt_tokens=800.0).expert_parallel
    assert MixedStep(mixed, decode_context_tokens=1000.0, prompt_tokens=800.0).pipelined
    load = {"decode_batch": np.array([[1.0, 30.0, 200.0]]), "prefill_tokens": np.array([[0.0, 100.0, 2000.0]])}
    kw = {"decode_context_tokens": 1000.0, "prompt_tokens": 800.0}
    by_itself = MixedStep(alone, **kw)(**load)
    among_others = MixedStep(together, **kw)(**load)[: len(plain)]
    assert by_itself.shape == among_others.shape == (3, 3)
    assert np.array_equal(by_itself, among_others)
    pp2 = perf.deployment_terms(
        catalog, model=catalog.models["llama_3_1_70b"], gpu=catalog.accelerators["h100_sxm"],
        weight_format=catalog.formats["fp8"], kv_format=catalog.formats["fp8"], tp=4, pp=2,
    )
    assert np.array_equal(MixedStep(stack_terms([plain[0], pp2]), **kw)(**load)[:1], by_itself[:1])


def test_plain_halvings_return_the_last_load_found_ok_without_asking_again() -> None:
    from planner.performance.bisection import BISECTION_ITERATIONS, CAPACITY_REL_TOL, largest_ok_load

    # the stated precision: the fewest halvings that narrow the bracket to CAPACITY_REL_TOL of its top
    assert 2.0**-BISECTION_ITERATIONS <= CAPACITY_REL_TOL < 2.0 ** -(BISECTION_ITERATIONS - 1)
    hi = np.array([[10.0], [10.0], [3.0], [1e-3]])
    limit = np.array([[7.3], [0.0], [3.0], [2e-16]])  # inside, none, the top itself, below the grid's first step
    asked: list[np.ndarray] = []

    def ok(lam: np.ndarray) -> np.ndarray:
        asked.append(np.array(lam, copy=True))
        return np.asarray(lam <= limit)

    got = largest_ok_load(ok, hi, schedule_size=10_000)  # a large table: one bit a round
    assert len(asked) == BISECTION_ITERATIONS  # one question per halving, none again at the end
    step = hi / 2.0**BISECTION_ITERATIONS
    assert got[0, 0] <= 7.3 < got[0, 0] + step[0, 0] and got[1, 0] == 0.0 and got[3, 0] == 0.0
    assert 7.3 - got[0, 0] <= CAPACITY_REL_TOL * hi[0, 0]  # never above the limit, at most tol·top below
    assert got[2, 0] == 3.0 - step[2, 0]  # the grid's last point below the top
    # each positive answer is a load ok was asked about (the same bits) and found ok
    for r in (0, 2):
        assert any(a[r, 0] == got[r, 0] and a[r, 0] <= limit[r, 0] for a in asked)
    small = largest_ok_load(ok, hi)  # 4 rows: four bits a round, and the answer checked once more
    assert small[0, 0] <= 7.3 < small[0, 0] + step[0, 0] and small[1, 0] == 0.0
