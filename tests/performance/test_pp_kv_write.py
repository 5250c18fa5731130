"""The KV write of a chunked-prefill step with pipeline stages (planner.performance.mixed_step.MixedStep).

Worked example: Llama-3.1-70B, BF16 KV, H100 SXM (3,350 GB/s), TP2 × PP2, ideal efficiencies (the KV stream at
peak bandwidth, no paging waste, no overlap loss). One token's KV is 2 (K, V) · 8 KV heads · 128 · 2 B = 4,096 B
per layer; TP2 holds 4 of the 8 KV heads per GPU (s_kv = 2) and each stage holds 40 of the 80 layers. A chunk
of a = 512 prompt tokens writes on each GPU of the stage it crosses

    a · 4,096 B · 40 layers / 2 = 41,943,040 B,

as vLLM's paged KV cache does (each PP rank caches its own layers' KV heads of every token it processes). The
micro-batch carrying the chunk crosses both stages: 2 · 41,943,040 B / 3.35e12 B/s = 25.04 µs of KV stream,
exactly the KV write of the same prompt prefilled alone (prefill_step). In the engine's step (no own chunk),
each of the p = 2 micro-batches carries c/p = 256 of the c = 512 prompt tokens: 2 · 20,971,520 B / 3.35e12 B/s
= 12.52 µs. The KV bytes were divided by p once more than this before (12.52 and 6.26 µs).

The KV stream is isolated by taking the attention FLOPs out (attention time = the KV stream, B = 0 so no KV
read) and differencing against the same terms with zero KV bytes per token.
"""

from __future__ import annotations

import dataclasses

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.performance.mixed_step import MixedStep

PROMPT_TOKENS = 512.0
BANDWIDTH_B_PER_S = 3.35e12
KV_BYTES_PER_TOKEN_PER_LAYER = 2 * 8 * 128 * 2  # K and V, 8 KV heads of 128 values, BF16


def _terms(catalog: Catalog, *, tp: int, pp: int) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog,
        model=catalog.model("llama_3_1_70b"),
        gpu=catalog.gpu("h100_sxm"),
        weight_format=catalog.format("bf16"),
        kv_format=catalog.format("bf16"),
        tp=tp,
        pp=pp,
        ideal=True,
    )


def _kv_write_s(terms: perf.DeploymentTerms, *, prefill_tokens: float, own_tokens: float) -> float:
    """Seconds the step spends on its KV write: the step minus the same step with no KV bytes, with the attention
    FLOPs taken out so the attention operator group is the KV stream alone (B = 0: nothing to read)."""
    kv_only = dataclasses.replace(terms, attention_flop_per_pair_per_layer=0.0)
    no_kv = dataclasses.replace(kv_only, kv_bytes_per_token_per_layer=0.0)

    def step(t: perf.DeploymentTerms) -> float:
        table = MixedStep(t, decode_context_tokens=2000.0, prompt_tokens=PROMPT_TOKENS)
        return float(table(decode_batch=0.0, prefill_tokens=prefill_tokens, own_tokens=own_tokens))

    return step(kv_only) - step(no_kv)


def test_worked_example_inputs(catalog: Catalog) -> None:
    t = _terms(catalog, tp=2, pp=2)
    assert float(t.kv_bytes_per_token_per_layer) == KV_BYTES_PER_TOKEN_PER_LAYER
    assert (int(t.full_attention_layers), int(t.window_layers)) == (80, 0)
    assert (float(t.kv_shards), float(t.stage_layers_frac)) == (2.0, 0.5)
    assert float(t.bandwidth_gb_per_s) * 1e9 == BANDWIDTH_B_PER_S


def test_a_chunk_through_two_stages_writes_its_kv_on_each(catalog: Catalog) -> None:
    """The chunk's micro-batch (own_tokens = c = 512): 2 stages · 41,943,040 B / 3.35e12 B/s = 25.04 µs."""
    stage_bytes = PROMPT_TOKENS * KV_BYTES_PER_TOKEN_PER_LAYER * 40 / 2
    assert stage_bytes == 41_943_040
    expected_s = 2 * stage_bytes / BANDWIDTH_B_PER_S
    assert expected_s == pytest.approx(25.0406e-6, rel=1e-5)
    t = _terms(catalog, tp=2, pp=2)
    got_s = _kv_write_s(t, prefill_tokens=PROMPT_TOKENS, own_tokens=PROMPT_TOKENS)
    assert got_s == pytest.approx(expected_s, rel=1e-9)


def test_the_engine_step_spreads_its_prompt_tokens_over_the_micro_batches(catalog: Catalog) -> None:
    """No own chunk: p = 2 micro-batches of c/p = 256 tokens, each 20,971,520 B per stage: 12.52 µs."""
    expected_s = 2 * (PROMPT_TOKENS / 2) * KV_BYTES_PER_TOKEN_PER_LAYER * 40 / 2 / BANDWIDTH_B_PER_S
    assert expected_s == pytest.approx(12.5203e-6, rel=1e-5)
    t = _terms(catalog, tp=2, pp=2)
    assert _kv_write_s(t, prefill_tokens=PROMPT_TOKENS, own_tokens=0.0) == pytest.approx(expected_s, rel=1e-9)


@pytest.mark.parametrize(("tp", "pp"), [(1, 1), (2, 1), (1, 2), (2, 2), (1, 4)])
def test_a_whole_prompt_chunk_writes_what_its_prefill_writes(catalog: Catalog, tp: int, pp: int) -> None:
    """At B = 0, c = a = P the step is a single prefill (mixed_step's docstring): the same KV write as
    prefill_step's, P · 4,096 B · 80 layers / s_kv over the p stages in turn, whatever p is."""
    t = _terms(catalog, tp=tp, pp=pp)
    prefill_kv_s = float(perf.prefill_step(t, prompt_tokens=PROMPT_TOKENS).kv_read_s)
    assert prefill_kv_s == pytest.approx(
        PROMPT_TOKENS * KV_BYTES_PER_TOKEN_PER_LAYER * 80 / min(tp, 8) / BANDWIDTH_B_PER_S, rel=1e-9
    )
    got_s = _kv_write_s(t, prefill_tokens=PROMPT_TOKENS, own_tokens=PROMPT_TOKENS)
    assert got_s == pytest.approx(prefill_kv_s, rel=1e-9)
