"""The refusal of a tensor-parallel group that leaves its scale-up domain names the domain the GPU has and the
group as the user wrote it (QA: 'the 1-GPU NVLink domain of apple_m4_max', and 'TP64' for --tp 8 --ep 8)."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.performance import PredictRequest, UnsupportedDeployment, predict

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("model", "gpu", "tp", "ep", "said"),
    [
        ("llama_3_1_70b", "h100_sxm", 16, 1, "TP16 leaves the 8-GPU NVLink domain of h100_sxm"),
        ("llama_3_1_70b", "mi300x", 16, 1, "TP16 leaves the 8-GPU infinity_fabric domain of mi300x"),
        ("llama_3_1_8b", "l4", 16, 1, "TP16 leaves one l4 node (8 GPUs, no scale-up link)"),
        ("llama_3_1_8b", "apple_m4_max", 2, 1, "TP2 leaves one apple_m4_max node (1 GPU, no scale-up link)"),
        ("qwen3_30b_a3b", "h100_sxm", 8, 8, "TP8×EP8 (64 GPUs per stage) leaves the 8-GPU NVLink domain of h100_sxm"),
    ],
)
def test_domain_refusal_names_the_domain_and_the_group(model: str, gpu: str, tp: int, ep: int, said: str) -> None:
    with pytest.raises(UnsupportedDeployment) as err:
        predict(CATALOG, PredictRequest(model=model, gpu=gpu, tp=tp, ep=ep))
    assert said in str(err.value)


def test_a_scenario_gpu_typed_in_capitals_gets_the_ids_it_begins() -> None:
    # QA: hardware.gpus: [A100] was answered "did you mean a10g?" (case-sensitive closest match)
    from planner.errors import did_you_mean

    gpus = list(CATALOG.accelerators)
    assert did_you_mean("A100", gpus) == " — did you mean a100_pcie_80gb or a100_sxm_80gb?"
    assert did_you_mean("H100-SXM", gpus) == " — did you mean h100_sxm?"
    assert did_you_mean("Llama-3.1-70B", list(CATALOG.models)) == " — did you mean llama_3_1_70b?"
