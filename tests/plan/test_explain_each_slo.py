"""An infeasible workload names every SLO no configuration meets, and a joint miss in words.

planner.optimize.explain_slo: a TPOT of 1 ms and a TTFT of 1 ms named the TPOT alone ("raise
chat.slo.tpot_ms"): the user raised it and met the TTFT cause on the next run. And SLOs each met by some
configuration but by none together read "lowest TTFT ... is 25 ms; the SLO is 30 ms" with a raise to 28 ms,
below the SLO the user already has."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from planner.catalog import Catalog
from planner.optimize.explain_slo import slo_misses
from planner.plan import plan
from planner.scenario import parse_scenario
from planner.scenario_base import Slo


def test_both_slos_out_of_reach_are_both_named(catalog: Catalog) -> None:
    scenario = yaml.safe_load(
        """
        name: tight
        horizon_months: 12
        workloads:
          - name: chat
            models: [llama_3_1_8b]
            requests_per_s: 4
            input_tokens: 1500
            output_tokens: 300
            slo: {ttft_ms: 1, tpot_ms: 1}
        hardware: {gpus: [h100_sxm]}
        procurement: [rent]
        """
    )
    result = plan(catalog, parse_scenario(scenario), with_alternatives=False)
    assert result.status == "infeasible"
    causes = {e.requirement: e for e in result.infeasibility}
    assert set(causes) == {"tpot_ms", "ttft_ms"}
    assert causes["tpot_ms"].relaxation == "raise chat.slo.tpot_ms to 2.7"
    assert causes["ttft_ms"].best_value_ms == pytest.approx(
        25.0, abs=0.5
    )  # 10 ms prefill at TP8 + 15 ms network
    assert causes["ttft_ms"].relaxation == "raise chat.slo.ttft_ms to 28 (with queueing headroom)"


def _fits(*rows: tuple[str, float, float, float]) -> pd.DataFrame:
    """Rows that fit (gpu, tpot_floor_ms, prefill_ms, network_ms) at TP1, none SLO-feasible."""
    return pd.DataFrame(
        [
            {
                "model": "m",
                "gpu": gpu,
                "tp": 1,
                "pp": 1,
                "quantization": "bf16",
                "site": site,
                "max_batch": 8,
                "tpot_floor_ms": tpot,
                "prefill_ms": prefill,
                "network_ms": net,
                "feasible": False,
                "reason": "misses the SLOs",
            }
            for (gpu, tpot, prefill, net), site in zip(rows, ("far", "near"), strict=False)
        ]
    )


def test_slos_met_apart_but_never_together_name_the_closest_configuration() -> None:
    # TPOT 10 ms is met only by the far GPU (5 ms, but 100 ms TTFT), TTFT 50 ms only by the near one (16 ms TPOT,
    # 20 ms TTFT): the near one misses least (16/10 = 1.6 against 100/50 = 2), by its TPOT.
    w = SimpleNamespace(name="chat", slo=Slo(tpot_ms=10, ttft_ms=50))
    fits = _fits(("b200", 5.0, 20.0, 80.0), ("l4", 16.0, 15.0, 5.0))
    (cause,) = slo_misses(w, fits, fits)  # type: ignore[arg-type]
    assert cause.requirement == "slo"
    assert cause.message == (
        "chat: fits as l4 TP1xPP1 bf16 at near but misses TPOT by 6.0 ms (16.0 ms > 10 ms) at its best configuration"
    )
    assert cause.relaxation == "raise chat.slo.tpot_ms to 16"


def test_a_configuration_that_meets_both_floors_but_not_with_queueing_asks_for_headroom() -> None:
    w = SimpleNamespace(name="chat", slo=Slo(tpot_ms=10, ttft_ms=50))
    fits = _fits(("h100_sxm", 9.0, 20.0, 10.0))
    (cause,) = slo_misses(w, fits, fits)  # type: ignore[arg-type]
    assert (
        cause.message
        == "chat: fits as h100_sxm TP1xPP1 bf16 at far but no operating point meets the SLOs with queueing"
    )
    assert (
        cause.relaxation
        == "raise chat.slo.tpot_ms or chat.slo.ttft_ms (queueing at the load leaves no headroom)"
    )
