"""Training scenario parsing, inline architectures (dense and MoE) and FP8 precision."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog
from planner.errors import ScenarioError
from planner.ledgers.architecture import params_active_per_token, params_total
from planner.training.plan import candidate_gpus, plan_training
from planner.training.scenario import Architecture, architecture_model, parse_training_scenario
from planner.training.terms import gpu_terms, model_terms
from tests.training.helpers import BASE, scenario


def test_yaml_exponent_without_sign_is_a_number(catalog: Catalog) -> None:
    """PyYAML reads `1.0e11` as a string (YAML 1.1); the issue's example writes it that way."""
    assert scenario(catalog, training_tokens="1.0e11").training_tokens == 1.0e11
    with pytest.raises(ScenarioError, match="training_tokens"):
        scenario(catalog, training_tokens="many")


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"global_batch_tokens": 4096 * 8}, "exactly one of global_batch_tokens or global_batch_sequences"),
        ({"global_batch_sequences": None, "global_batch_tokens": 5000}, "multiple of seq_len_tokens"),
        ({"objective": "earliest_finish"}, "earliest_finish needs budget_usd"),
        ({"procurement": ["owned"]}, "owned needs an inventory"),
        ({"model": {"layers": 2, "hidden_size": 1000, "ffn_size": 10, "heads": 3}}, "multiple of heads"),
        ({"model": {"layers": 2, "hidden_size": 64, "ffn_size": 10, "heads": 4, "experts": 8}}, "MoE needs"),
        ({"extra": 1}, "extra"),
    ],
)
def test_invalid_scenarios(catalog: Catalog, changes: dict[str, object], fragment: str) -> None:
    data = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    with pytest.raises(ScenarioError, match=fragment):
        parse_training_scenario(data, catalog)


def test_inline_moe_counts_all_experts_for_states_and_active_ones_for_flops() -> None:
    dense = architecture_model(Architecture(layers=4, hidden_size=1024, ffn_size=4096, heads=8))
    moe = architecture_model(
        Architecture(
            layers=4,
            hidden_size=1024,
            ffn_size=0,
            heads=8,
            experts=8,
            experts_per_token=2,
            expert_ffn_size=4096,
        )
    )
    assert params_total(moe) > params_active_per_token(moe)
    assert params_total(dense) == params_active_per_token(dense)
    terms = model_terms(moe, seq_len=1024)
    assert terms.n_params == params_total(moe)
    # top-2 of 8 experts of width 4,096 run the FLOPs of one dense FFN of width 8,192 (+ the router)
    wide = model_terms(
        architecture_model(Architecture(layers=4, hidden_size=1024, ffn_size=8192, heads=8)), seq_len=1024
    )
    router = 4 * 2 * 1024 * 8
    assert terms.linear_fwd_flop_per_token == pytest.approx(wide.linear_fwd_flop_per_token + router, rel=1e-9)


def test_fp8_uses_the_fp8_peak_for_matmuls_and_drops_gpus_without_it(catalog: Catalog) -> None:
    sc = scenario(catalog, precision="fp8", hardware={"gpus": ["a100_sxm_80gb", "h100_sxm"], "max_gpus": 16})
    assert candidate_gpus(catalog, sc) == ["h100_sxm"]
    gpu = gpu_terms(catalog, "h100_sxm", precision="fp8")
    assert (gpu.peak_tflops, gpu.bf16_peak_tflops) == (1978.9, 989.4)
    plan = plan_training(catalog, sc)
    bf16 = plan_training(catalog, scenario(catalog, hardware={"gpus": ["h100_sxm"], "max_gpus": 16}))
    assert plan.chosen is not None and bf16.chosen is not None
    assert plan.chosen.total_cost_usd < bf16.chosen.total_cost_usd
